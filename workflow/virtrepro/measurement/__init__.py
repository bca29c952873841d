"""The measurement: one job's benchmark variant on all its platforms of a testbed, in rounds, over SSH.

What a Snakemake measurement job runs (``python -m virtrepro.measurement.job``, its command line; also :mod:`.estimate`, what the planned jobs will cost, and :mod:`.interleave`, rounds of one's choice), one module
a job: :mod:`.variant` (the rounds, the guards, kept and frozen instances, the rule), :mod:`.repetition`
(one repetition: the benchmark's stages and the sidecar), :mod:`.instance` (facts, tools, the
command), :mod:`.peers` (runs over several instances), :mod:`.connections` (one connection per
instance and job), :mod:`.cpu` (the harness's CPU use), :mod:`.markers` (the job's marker) and
:mod:`.provenance` (commit, image; :class:`~virtrepro.errors.MeasurementError`).
"""
