"""Source builds: the benchmarks no package archive carries, obtained and compiled by the workflow.

:mod:`.registry` maps a benchmark's build to its module (:mod:`.npb`, :mod:`.mitgcm`, with
:mod:`.mitgcm_pack`); :mod:`.sourcebuild` is the command line they share
(``python -m virtrepro.builds.npb obtain|build``). Part of the measurement layer, below
``measurement/`` (docs/architecture.md, "Layers"). This ``__init__`` imports nothing, so that
``python -m`` runs a build module once.
"""
