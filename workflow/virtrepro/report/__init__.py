"""What goes out with the figures: the figures' style (:mod:`.plotting`), what each paper notebook checks
first (:mod:`.notebook`: its parameters) and the release for an archive (:mod:`.release`).

Below ``figures/`` in the top layer (docs/architecture.md, "Layers").
"""
