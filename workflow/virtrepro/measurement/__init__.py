"""The measurement: one job's part of a benchmark variant on one platform of a testbed, over SSH.

What a Snakemake measurement job runs (``python -m virtrepro.measurement.job``, its command line; also
:mod:`.estimate`, what the planned jobs will cost, and :mod:`.interleave`, alternating rounds), one module
a job: :mod:`.variant` (the part's repetitions, the guards, a repetition rule), :mod:`.repetition`
(one repetition: the benchmark's stages and the sidecar), :mod:`.instance` (facts, tools, the
command), :mod:`.peers` (runs over several instances), :mod:`.connections` (one connection per
instance and job), :mod:`.cpu` (the harness's CPU use), :mod:`.markers` (the part's marker) and
:mod:`.provenance` (commit, image, order; :class:`~virtrepro.errors.MeasurementError`).
"""
