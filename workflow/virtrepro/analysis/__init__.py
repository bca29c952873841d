"""The analysis layer: what the tidy table (:mod:`virtrepro.results`) says, as statistics and verdicts.

- ``analysis.stats``   the intervals and comparisons (rank intervals, the shift bootstrap, the figures'
  comparisons, the normal-theory shape estimates)
- ``analysis.claims``  the verdicts on the papers' claims (``data/reference/claims.yaml``)

It sits above ``results`` and below ``figures`` (docs/architecture.md, "Modules"; tests/test_imports.py).
``virtrepro.claims`` and ``virtrepro.stats`` are the same modules under their earlier names.
"""
