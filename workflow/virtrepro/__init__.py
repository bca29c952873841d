"""virtrepro: re-run classic virtualization-for-HPC studies on today's stack.

The package is shared by the Snakemake rules, the notebooks and the tests:

- ``config``      load and validate the workflow configuration
- ``hosts``       SSH endpoints and the connection to them
- ``testbed``     the kinds of testbed that bring hosts up (the embedded local one, ssh)
- ``platforms``   where a benchmark runs on a host (native, containers, VMs)
- ``benchmarks``  what runs: command lines, tool installation, parser choice
- ``platforms.catalog``  each platform declared once, as plain data (standard library only), for
  every module that lists or compares platforms
- ``metric_catalog``  every metric: what each benchmark class declares (``metrics``: how) and
  the papers' own metrics
- ``parsers``     pure functions from a tool's text output to records
- ``rawlog``      atomic raw logs with provenance sidecars, each recording its log's sha256
- ``digests``     the digests of raw logs committed before sidecars recorded them, from git
- ``results``     the tidy table (one per testbed) built from raw logs
- ``analysis``    the statistics (``analysis.stats``, also ``stats``) and the claims' verdicts
  (``analysis.claims``, also ``claims``), above ``results`` and below ``figures``
- ``plotting``    consistent figure styling
- ``notebook``    what every notebook checks first (its parameters)
- ``errors``, ``cli``  the named errors' base, and the one error path of every command line
- ``run``         Snakemake, with its ``--configfile`` files checked first
"""

__version__ = "0.1.0"

import sys as _sys

if _sys.argv[:1] == ["-m"]:
    # `python -m virtrepro.<module>` (Python sets argv[0] to "-m" until it has found the module):
    # a Ctrl-C while the module imports its dependencies is the line "interrupted" and status 130,
    # as it is once the module's cli.run has started (which puts Python's own handler back)
    from .cli import exits_130_while_importing

    exits_130_while_importing()
