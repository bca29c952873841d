"""virtrepro: re-run classic virtualization-for-HPC studies on today's stack.

The package is shared by the Snakemake rules, the notebooks and the tests. Its layers, bottom to top
(each a folder; a module imports only its own layer and those below: docs/architecture.md, "Layers"):

- the leaves at this root: ``errors``, ``cli`` (the named errors' base, the one error path of every
  command line), ``yamlfile``, ``datalayout`` (every path of the data), ``sidecar``, ``layout``
  (where things live on a testbed host), ``benchmark_packages``; and ``analysis.stats``
- declarations: ``benchmarks`` (what runs), ``parsers`` (a tool's text output to records),
  ``platforms.catalog`` (each platform declared once, as plain data), ``declarations`` (metrics, the
  metric catalog, platform names, regimes)
- ``rawdata``     raw logs with provenance sidecars, the machine a run names, the probes' records
- ``planning``    the configuration, the plan, the repetition rule, the estimate
- ``testbed``     hosts and SSH, the kinds of testbed, the host agent; with ``platforms`` (where a
  benchmark runs on a host) and ``guests``
- ``builds``, ``measurement``  the source builds; one measurement job and its command lines
- ``results``     the tidy table (one per testbed) built from raw logs
- ``analysis``    the statistics and the claims' verdicts
- ``report``, ``figures``  figure styling, the notebooks' parameters, the release; the figures
- ``__main__``    ``python -m virtrepro``: Snakemake, with its ``--configfile`` files checked first
"""

__version__ = "0.1.0"

import sys as _sys

if _sys.argv[:1] == ["-m"]:
    # `python -m virtrepro.<module>` (Python sets argv[0] to "-m" until it has found the module):
    # a Ctrl-C while the module imports its dependencies is the line "interrupted" and status 130,
    # as it is once the module's cli.run has started (which puts Python's own handler back)
    from .cli import exits_130_while_importing

    exits_130_while_importing()
