"""What the project declares, shared by every layer above: how a metric is declared (:mod:`.metrics`),
every metric by benchmark (:mod:`.metric_catalog`), the platforms' names in figures and tables and
their stand-ins (:mod:`.platform_names`), where a number was measured (:mod:`.regimes`).

The declarations layer also holds ``benchmarks/``, ``parsers/`` and ``platforms.catalog`` (plain
data); it imports only those and the root's leaves (docs/architecture.md, "Layers").
"""
