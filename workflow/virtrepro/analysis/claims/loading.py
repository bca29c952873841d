"""Reading and checking the claims (``data/reference/claims.yaml``) and the causes' registry
(``data/reference/faster_than_native.yaml``): every key's form, what each kind needs, the paper's
platforms behind a check's platforms. A :class:`ClaimsError` names the file, the claim (or entry) and the key."""

from __future__ import annotations

import math
from pathlib import Path

from .. import conditions
from ...declarations import platform_names
from ... import yamlfile
from ...errors import VirtreproError
from ...platforms import catalog as platform_catalog


KINDS = ("overhead_at_most", "overhead_at_least", "equivalent", "better", "order", "trend", "spread", "saturation",
         "ratio_of_overheads", "better_in_some")
# the kinds about one platform's variants or its scatter, not a relative difference of means
SHAPE_KINDS = {"trend": ("worsens", "improves", "flat"), "spread": ("larger", "smaller"), "saturation": None}


class ClaimsError(VirtreproError, ValueError):
    """A claims file (``claims.yaml``) or the causes' registry (``faster_than_native.yaml``) that does not
    say what evaluation needs: the message names the file, the claim (or entry) and the key."""


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)  # true is no number


# what each key of a claim, of its check and of a cause's entry holds (data/reference/README.md), by
# the words that say so (None: checked by its own module, conditions.check_conditions); a key not listed is
# refused (a misspelt ``treshold`` would otherwise be ignored)
VALUE_FORMS = {
    "text": lambda v: isinstance(v, str),
    "true or false": lambda v: isinstance(v, bool),
    "a mapping": lambda v: isinstance(v, dict),
    "a number": _number,
    "a list of names": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "[low, high]": lambda v: isinstance(v, list) and len(v) == 2 and all(map(_number, v)) and v[0] <= v[1],
}
CLAIM_KEYS = {"id": "text", "paper": "text", "source": "text", "quote": "text", "published": "text",
              "paper_platform": ("text", "a list of names"), "testable": "true or false", "note": "text",
              "reason": "text", "conditions": None, "check": "a mapping"}  # fmt: skip
CHECK_KEYS = {"kind": "text", "benchmark": "text", "metric": "text", "where": "a mapping", "platform": "text",
              "baseline": "text", "platforms": "a list of names", "threshold": "a number", "aggregate": "text",
              "over": "text", "direction": "text", "derived": "text", "between": "[low, high]", "gain": "a number",
              "victim_metric": "text", "versus": "a mapping"}  # fmt: skip
CAUSE_KEYS = {"platform": "text", "benchmark": "text", "metric": ("text", "a list of names"), "where": "a mapping",
              "cause": "text", "confounded": "true or false"}  # fmt: skip


def _check_keys(given: dict, allowed: dict, prefix: str = "") -> None:
    """ValueError ``<key>: ...`` for a key not in ``allowed`` or a value of another form (an empty
    value is left to the check that needs it)."""
    for key, value in given.items():
        if key not in allowed:
            raise ValueError(f"{prefix}{key}: unknown key (known: {', '.join(allowed)})")
        forms = allowed[key] if isinstance(allowed[key], tuple) else (allowed[key],)
        if value is not None and allowed[key] is not None and not any(VALUE_FORMS[form](value) for form in forms):
            raise ValueError(f"{prefix}{key}: {' or '.join(forms)}, not {value!r}")


def _check_claim(claim: dict) -> None:
    """One claim's keys and its check, as evaluation needs them; ValueError ``<key>: what is wrong``."""
    _check_keys(claim, CLAIM_KEYS)
    missing = [key for key in ("paper", "testable") if claim.get(key) is None]
    if missing:
        raise ValueError(f"{', '.join(missing)}: missing")
    if claim["testable"]:
        if claim.get("check") is None:
            raise ValueError("check: missing (a testable claim needs one)")
        check = claim["check"]
        _check_keys(check, CHECK_KEYS, "check.")
        kind = check.get("kind")
        if kind not in KINDS:
            raise ValueError(f"check.kind: unknown check kind {kind!r} (one of {', '.join(KINDS)})")
        needed = ["benchmark", "metric"] + (["platforms"] if kind == "order" else ["platform"])
        needed += {"trend": ["over", "direction"], "spread": ["baseline", "direction"],
                   "saturation": ["over", "between", "gain"]}.get(kind, [] if kind == "order" else ["baseline"])  # fmt: skip
        if kind not in ("order", "equivalent", *SHAPE_KINDS) or check.get("direction") == "flat":
            needed.append("threshold")
        if check.get("metric") == "isolation_efficiency":
            needed.append("victim_metric")
        if kind == "ratio_of_overheads":
            needed.append("versus")
        missing = [k for k in needed if check.get(k) is None]
        if missing:
            raise ValueError(f"check: check lacks {', '.join(missing)} (a {kind} check needs them)")
        if SHAPE_KINDS.get(kind) and check["direction"] not in SHAPE_KINDS[kind]:
            raise ValueError(f"check.direction: {kind} direction is one of {', '.join(SHAPE_KINDS[kind])}, "
                             f"not {check['direction']!r}")
        if kind == "order" and len(check["platforms"]) < 2:
            raise ValueError(f"check.platforms: two or more platforms to order, not {check['platforms']!r}")
        if check.get("aggregate") not in (None, "mean"):
            raise ValueError(f"check.aggregate: only 'mean' (or none: each variant), not {check['aggregate']!r}")
    elif not claim.get("reason"):
        raise ValueError("reason: an untestable claim needs a reason")
    _check_paper_platforms(claim)
    conditions.check_conditions(claim)


def load_claims(path: str | Path) -> list[dict]:
    """The claims of ``claims.yaml``, checked for the fields evaluation needs: a ClaimsError (or a
    :class:`~virtrepro.yamlfile.YamlFileError` for broken YAML or a key given twice) names the file,
    the claim and the key."""
    claims = yamlfile.load(path)
    if not isinstance(claims, list):
        raise ClaimsError(f"{path}: expected a list of claims, not {type(claims).__name__}")
    seen: dict[str, int] = {}
    for number, claim in enumerate(claims, 1):
        ident = claim.get("id") if isinstance(claim, dict) else None
        if not isinstance(ident, str) or not ident:
            raise ClaimsError(f"{path}: claim {number} of the list: no id (a mapping with an id: text), in {claim!r}")
        if ident in seen:
            raise ClaimsError(f"{path}: claim {ident!r}: id repeated (claims {seen[ident]} and {number} of the list)")
        seen[ident] = number
        try:
            _check_claim(claim)
        except ValueError as error:  # the conditions' own check names the claim too
            raise ClaimsError(f"{path}: claim {ident!r}: {str(error).removeprefix(f'{ident}: ')}") from None
    return claims


def _check_platforms(check: dict) -> list[str]:
    if not check:
        return []
    if check.get("kind") == "order":
        return list(check["platforms"])
    return [check["platform"]] + ([check["baseline"]] if check.get("baseline") else [])


def paper_platforms(claim: dict) -> list[str | None]:
    """The paper's platform behind each of the check's platforms, in the check's order (``platform``,
    ``baseline``, or the ``order`` list); for an untestable claim, the platforms it names.

    ``paper_platform`` in claims.yaml is a name when one platform is compared with native (the
    baseline's paper platform is then ``native``), else a list in the check's order. A claim without
    it (a hand-made one) reads ``qemu`` as KVM and every other name as itself (None)."""
    given = claim.get("paper_platform")
    names = _check_platforms(claim.get("check") or {}) if claim.get("testable") else []
    if given is None:
        return [platform_names.ALIAS_PAPER_PLATFORM.get(n) for n in names]
    given = [given] if isinstance(given, str) else list(given)
    if names and len(given) == 1 and len(names) == 2 and names[1] == platform_catalog.BASELINE:
        given.append(platform_catalog.BASELINE)  # the baseline's paper platform has its name
    return given


def _check_paper_platforms(claim: dict) -> None:
    """claims.yaml: every claim names its paper platforms, and each check platform may stand for its own
    (ValueError ``<key>: ...``; :func:`load_claims` adds the file and the claim)."""
    if claim.get("paper_platform") is None:
        raise ValueError("paper_platform missing (the paper's platform, e.g. KVM)")
    papers = paper_platforms(claim)
    for paper in papers:
        if paper not in platform_names.STAND_INS:
            raise ValueError(f"paper_platform: unknown paper platform {paper!r} "
                             f"(known: {', '.join(platform_names.STAND_INS)})")
    if not claim.get("testable"):
        return
    names = _check_platforms(claim["check"])
    if len(papers) != len(names):
        raise ValueError(f"paper_platform names {len(papers)} platforms, the check compares {len(names)}")
    for name, paper in zip(names, papers):
        candidates = list(platform_catalog.ALIASES[name].candidates) if name in platform_catalog.ALIASES else [name]
        if not any(platform_names.stand_in(paper, c) for c in candidates):
            raise ValueError(f"check: {name} may not stand for {paper} (platform_names.STAND_INS)")
CAUSES_PATH = Path(__file__).resolve().parents[4] / "data" / "reference" / "faster_than_native.yaml"


def load_causes(path: str | Path = CAUSES_PATH) -> list[dict]:
    """The registry of explained faster-than-native results: entries with ``platform``, ``benchmark``,
    optional ``metric`` (a name or a list of names) and ``where`` (as in a claim's check), the ``cause`` found, with evidence, and
    optional ``confounded: true`` when the cause is a difference in the conditions of the measurement
    rather than of the platform (the host drifting between the platforms' runs): a claim on those
    records is then inconclusive, its note naming the cause."""
    path = Path(path)
    entries = (yamlfile.load(path) if path.exists() else None) or []
    if not isinstance(entries, list):
        raise ClaimsError(f"{path}: expected a list of entries, not {type(entries).__name__}")
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            raise ClaimsError(f"{path}: entry {number} of the list: a mapping of keys, not {entry!r}")
        name = f"entry {number} of the list ({entry.get('platform')}/{entry.get('benchmark')})"
        missing = [k for k in ("platform", "benchmark", "cause") if not entry.get(k)]
        if missing:
            raise ClaimsError(f"{path}: {name}: lacks {', '.join(missing)}")
        try:
            _check_keys(entry, CAUSE_KEYS)
        except ValueError as error:  # confounded must be true or false, and so on
            raise ClaimsError(f"{path}: {name}: {error}") from None
    return entries
