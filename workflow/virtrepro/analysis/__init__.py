"""The analysis layer: what the tidy table (:mod:`virtrepro.results`) says, as statistics and verdicts.

- ``analysis.stats``       the intervals and comparisons (rank intervals, the shift bootstrap, the figures'
  comparisons, the normal-theory shape estimates): a leaf that imports nothing else of the package, so
  the planning's repetition rule (:mod:`virtrepro.planning.adaptive`) uses it too
- ``analysis.conditions``  a claim's conditions and the analogue rules, decided on the records
- ``analysis.claims``      the verdicts on the papers' claims (``data/reference/claims.yaml``);
  ``python -m virtrepro.analysis.claims`` writes a testbed's claims CSV

It sits above ``results`` and below ``figures`` (docs/architecture.md, "Layers"; tests/test_imports.py).
This ``__init__`` imports nothing: importing ``analysis.stats`` loads no claim.
"""
