"""Platform names: what each measured platform is called in figures and tables, and which measured
platform may stand for which of the papers' platforms, derived from each platform's declaration in
:mod:`virtrepro.platforms.catalog` (``docs/methodology.md``, "Platform names and what stands for what",
explains the choices).

* :data:`LABELS`: a measured platform's name for a reader. QEMU without KVM is binary translation
  (TCG), far slower than any hypervisor the papers ran, and is named so wherever a series is drawn.
* :data:`STAND_INS`: for each paper platform, the measured platforms that may stand for it and how
  closely (:data:`SAME`, :data:`SAME_KIND`, :data:`ANALOGUE`). A paper platform with no measured
  stand-in on a testbed (KVM where KVM does not work, Xen, Palacios) is not measured there; its
  claims get no verdict from another platform's data, unless the analogue table allows one.
* :data:`ANALOGUES`: the analogue table (``data/reference/analogues.yaml``, read here and nowhere
  else): per paper platform and measured stand-in of another kind, a rule per subsystem saying
  whether it may stand in (``stands``, ``one-way``, ``no``) and which way its bias runs. An entry
  with a ``stands`` subsystem, or a ``one-way`` one for a paper platform nothing measured is declared
  for, makes the stand-in an :data:`ANALOGUE` in :data:`STAND_INS` (figures may set the paper's
  numbers beside it); a ``one-way`` one only lets a claim's verdict use it where
  its bias works against the verdict (:func:`analogue_rule`, :mod:`virtrepro.analysis.conditions`).
"""

from __future__ import annotations

from pathlib import Path

from .. import yamlfile
from ..errors import VirtreproError
from .metrics import SUBSYSTEMS
from ..platforms.catalog import ALIASES, ANALOGUE, BY_NAME, PLATFORMS, SAME, SAME_KIND  # noqa: F401  (re-exported)

LABELS = {spec.name: spec.label for spec in PLATFORMS}

# paper platforms that nothing measured here may stand for (Youseff's CHAOS and RHEL4 builds as
# baselines: "specific kernels"); the others come from the platforms' declarations (stands_for)
UNMEASURED_PAPER_PLATFORMS = ("Xen", "Palacios", "Kitten", "EC2", "specific kernels")

STAND_INS: dict[str, dict[str, str]] = {}
for _spec in PLATFORMS:
    for _paper, _relation in _spec.stands_for.items():
        STAND_INS.setdefault(_paper, {})[_spec.name] = _relation
for _paper in UNMEASURED_PAPER_PLATFORMS:
    STAND_INS.setdefault(_paper, {})

ANALOGUES_PATH = Path(__file__).resolve().parents[3] / "data" / "reference" / "analogues.yaml"
USES = ("stands", "one-way", "no")
BIASES = ("worse", "better", "none")


class AnalogueTableError(VirtreproError, ValueError):
    """The analogue table (``data/reference/analogues.yaml``) is not what :func:`load_analogues` reads."""


def load_analogues(path: str | Path = ANALOGUES_PATH) -> dict[tuple[str, str], dict]:
    """(paper platform, measured stand-in) -> its entry of the analogue table, checked: a declared
    platform that is not declared the same as the paper platform, a rule name, and per subsystem (one of ``metrics.SUBSYSTEMS``)
    a ``use`` (:data:`USES`), for ``one-way`` a ``bias`` (:data:`BIASES`), and a ``why``. A subsystem
    may be qualified by another (``isolation.cpu``: the isolation of CPU time; see
    :func:`virtrepro.analysis.conditions.rule_subsystem`)."""
    path = Path(path)
    entries = yamlfile.load(path) or []  # a key given twice names its line
    table = {}
    for number, entry in enumerate(entries if isinstance(entries, list) else [entries], 1):
        where = f"{path}: entry {number}"
        if not isinstance(entry, dict):
            raise AnalogueTableError(f"{where}: expected a mapping with paper_platform, stand_in, rule, why, subsystems")
        missing = [k for k in ("paper_platform", "stand_in", "rule", "why", "subsystems") if not entry.get(k)]
        if missing:
            raise AnalogueTableError(f"{where}: lacks {', '.join(missing)}")
        paper, platform = entry["paper_platform"], entry["stand_in"]
        if platform not in BY_NAME:
            raise AnalogueTableError(f"{where}: stand_in {platform!r} is not a declared platform (known: {', '.join(BY_NAME)})")
        if BY_NAME[platform].stands_for.get(paper):
            raise AnalogueTableError(f"{where}: {platform} is declared the same as {paper} (platforms/catalog.py), not an analogue")
        for subsystem, rule in entry["subsystems"].items():
            at = f"{where} ({paper} by {platform}), subsystem {subsystem!r}"
            if any(part not in SUBSYSTEMS for part in str(subsystem).split(".", 1)):
                raise AnalogueTableError(f"{at}: not a subsystem or <subsystem>.<subsystem> (known: {', '.join(SUBSYSTEMS)})")
            if not isinstance(rule, dict) or rule.get("use") not in USES or not rule.get("why"):
                raise AnalogueTableError(f"{at}: needs use ({', '.join(USES)}) and why")
            if rule["use"] == "one-way" and rule.get("bias") not in BIASES[:2]:
                raise AnalogueTableError(f"{at}: a one-way rule needs bias worse or better")
            if rule.get("bias", "none") not in BIASES:
                raise AnalogueTableError(f"{at}: bias is one of {', '.join(BIASES)}")
        if (paper, platform) in table:
            raise AnalogueTableError(f"{where}: {paper} by {platform} is listed twice")
        table[(paper, platform)] = entry
    return table


# the analogue table; a stand-in is an ANALOGUE in STAND_INS when a subsystem lets it stand in two-way
# ("stands"), or one way where nothing measured is declared for the paper platform (VMware Server)
ANALOGUES: dict[tuple[str, str], dict] = load_analogues()
for (_paper, _platform), _entry in ANALOGUES.items():
    _declared = bool(STAND_INS.get(_paper))
    STAND_INS.setdefault(_paper, {})
    _uses = {rule["use"] for rule in _entry["subsystems"].values()}
    if "stands" in _uses or ("one-way" in _uses and not _declared):
        STAND_INS[_paper][_platform] = ANALOGUE

# A configuration alias (`qemu`: KVM if it boots, else TCG) read as a paper platform, for a claim that names none.
ALIAS_PAPER_PLATFORM = {alias.name: alias.paper_platform for alias in ALIASES.values()}


def label(platform: str) -> str:
    """A measured platform's name for a legend, axis or table: ``qemu-tcg`` is "QEMU TCG (binary
    translation, no KVM)"; unknown names are returned unchanged."""
    return LABELS.get(platform, platform)


def paper_label(paper_platform: str) -> str:
    """A paper's own series, named as the paper's: "KVM (paper)"."""
    return f"{paper_platform} (paper)"


def stand_in(paper_platform: str, platform: str) -> str | None:
    """How ``platform`` (measured) stands for ``paper_platform``: SAME, SAME_KIND, ANALOGUE, or None
    when it may not stand for it at all (qemu-tcg for KVM)."""
    if paper_platform not in STAND_INS:
        raise ValueError(f"unknown paper platform {paper_platform!r} (known: {', '.join(STAND_INS)})")
    return STAND_INS[paper_platform].get(platform)


def analogue_rule(paper_platform: str, platform: str, subsystem: str | None) -> dict | None:
    """The analogue table's rule for ``platform`` standing in for ``paper_platform`` on ``subsystem``:
    ``{"rule", "subsystem", "use", "bias", "why"}`` (``rule`` the entry's name, cited by verdicts);
    None when the table has no entry or the entry does not list the subsystem (it may not stand in).
    A qualified subsystem (``isolation.cpu``) not listed falls back to its first part (``isolation``)."""
    entry = ANALOGUES.get((paper_platform, platform))
    if entry is not None and subsystem not in entry["subsystems"] and subsystem and "." in subsystem:
        subsystem = subsystem.split(".", 1)[0]
    if entry is None or subsystem not in entry["subsystems"]:
        return None
    found = entry["subsystems"][subsystem]
    return {"rule": entry["rule"], "subsystem": subsystem, "use": found["use"], "bias": found.get("bias", "none"),
            "why": " ".join(str(found["why"]).split())}


def analogues_of(paper_platform: str) -> list[str]:
    """The measured platforms the analogue table lets stand in for ``paper_platform`` on some subsystem."""
    return [platform for (paper, platform) in ANALOGUES if paper == paper_platform]


def why_not_measured(paper_platform: str, present) -> str:
    """Why ``paper_platform`` has no stand-in among the measured platforms ``present``."""
    allowed = list(STAND_INS.get(paper_platform, {}))
    for name in present:
        if name in BY_NAME and paper_platform in BY_NAME[name].not_for:
            return BY_NAME[name].not_for[paper_platform]
    if not allowed:
        return f"no {paper_platform} on this testbed (nothing here may stand for it)"
    return f"no {' or '.join(allowed)} runs on this testbed (the stand-ins for {paper_platform})"
