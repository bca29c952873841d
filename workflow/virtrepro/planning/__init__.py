"""The planning: the configuration (:mod:`.config`: validation and the run plan), a variant's
repetition rule (:mod:`.adaptive`) and what the planned jobs will cost (:mod:`.plan`).

It reads the raw data (:mod:`virtrepro.rawdata`: the logs already there, the probes' records) and
nothing of the testbed or the measurement (docs/architecture.md, "Layers").
"""
