"""The papers' claims as the repetition rule's targets: which variants a testable claim selects, and
the tightest threshold it checks them by (``target: claims``: :func:`claim_targets`). The claims are
read as data; their verdicts are the analysis' business."""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

from .. import yamlfile
from ..benchmarks import Variant
from ..errors import ConfigError
from .adaptive import Target

# the papers' claims, read here as data (which variants they select, and how tightly): the rule that
# serves the verdict (``target: claims``) takes its targets from them (:func:`claim_targets`)
CLAIMS_PATH = Path(__file__).resolve().parents[3] / "data" / "reference" / "claims.yaml"


# the threshold, as a relative difference, of the claims whose kinds compare a ratio with one; every other
# claim (order, better without a threshold, trends, spreads, ratios of overheads ...) selects its variants
# with this margin, the verdicts' default equivalence margin (virtrepro.analysis.claims.evaluate's ``margin``)
THRESHOLD_KINDS = ("overhead_at_most", "overhead_at_least", "equivalent", "better")
DEFAULT_MARGIN = 0.05


def _text(value) -> str:
    """A parameter's value as the text a claim's ``where`` is compared by (1024 == "1024" == 1024.0)."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _selects(where: dict, variant: Variant) -> bool:
    """Whether a claim's ``where`` selects ``variant``: every key that is one of the variant's
    parameters has one of the listed values (a key that is not a parameter, such as a record's
    field, is decided later, on the records: here it selects every variant)."""
    params = variant.param_dict
    for key, value in (where or {}).items():
        if key in params and _text(params[key]) not in {_text(v) for v in (value if isinstance(value, list) else [value])}:
            return False
    return True


def _claim_margin(check: dict) -> float:
    threshold = check.get("threshold")
    if check.get("kind") in THRESHOLD_KINDS and isinstance(threshold, (int, float)) and threshold != 0:
        return abs(float(threshold))
    return DEFAULT_MARGIN


@lru_cache(maxsize=None)
def _claims(path: Path) -> tuple[dict, ...]:
    loaded = yamlfile.load(path)
    if not isinstance(loaded, list):
        raise ConfigError(f"{path}: the claims are not a list")
    return tuple(loaded)


def claim_targets(benchmark: str, variant: Variant, claims_path: str | Path | None = None) -> tuple[Target, ...]:
    """For each metric of ``variant`` that a testable claim of ``claims_path`` checks (its ``check``'s
    benchmark, metric and ``where``, or its ``versus`` selection), the tightest claim threshold and the
    claims that set it (:class:`adaptive.Target`), sorted by metric (``claims_path``: :data:`CLAIMS_PATH`). The claims are read as data: the
    claim's verdict and its conditions are no business of the plan."""
    best: dict[str, tuple[float, list[str]]] = {}
    for claim in _claims(Path(claims_path or CLAIMS_PATH)):
        check = claim.get("check") if isinstance(claim, dict) and claim.get("testable") else None
        if not isinstance(check, dict) or not check.get("metric"):
            continue
        versus = check.get("versus") or {}
        selections = [(check.get("benchmark"), check.get("where"))]
        if versus:
            selections.append((versus.get("benchmark", check.get("benchmark")), versus.get("where")))
        if not any(name == benchmark and _selects(where, variant) for name, where in selections):
            continue
        margin = _claim_margin(check)
        tightest, ids = best.get(check["metric"], (math.inf, []))
        if margin < tightest:
            best[check["metric"]] = (margin, [str(claim.get("id"))])
        elif margin == tightest:
            ids.append(str(claim.get("id")))
    return tuple(Target(metric, margin, tuple(ids)) for metric, (margin, ids) in sorted(best.items()))
