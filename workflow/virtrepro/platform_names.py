"""Platform names: what each measured platform is called in figures and tables, and which measured
platform may stand for which of the papers' platforms, derived from each platform's declaration in
:mod:`virtrepro.platforms.catalog` (``docs/methodology.md``, "Platform names and what stands for what",
explains the choices).

* :data:`LABELS`: a measured platform's name for a reader. QEMU without KVM is binary translation
  (TCG), far slower than any hypervisor the papers ran, and is named so wherever a series is drawn.
* :data:`STAND_INS`: for each paper platform, the measured platforms that may stand for it and how
  closely (:data:`SAME`, :data:`SAME_KIND`, :data:`ANALOGUE`). A paper platform with no measured
  stand-in on a testbed (KVM where KVM does not work, Xen, Palacios) is not measured there; its
  claims get no verdict from another platform's data.
"""

from __future__ import annotations

from .platforms.catalog import ALIASES, ANALOGUE, BY_NAME, PLATFORMS, SAME, SAME_KIND  # noqa: F401  (re-exported)

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


def why_not_measured(paper_platform: str, present) -> str:
    """Why ``paper_platform`` has no stand-in among the measured platforms ``present``."""
    allowed = list(STAND_INS.get(paper_platform, {}))
    for name in present:
        if name in BY_NAME and paper_platform in BY_NAME[name].not_for:
            return BY_NAME[name].not_for[paper_platform]
    if not allowed:
        return f"no {paper_platform} on this testbed (nothing here may stand for it)"
    return f"no {' or '.join(allowed)} runs on this testbed (the stand-ins for {paper_platform})"
