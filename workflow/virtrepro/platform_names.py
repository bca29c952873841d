"""Platform names: what each measured platform is called in figures and tables, and which measured
platform may stand for which of the papers' platforms. The one place for both (``docs/methodology.md``,
"Platform names and what stands for what", explains the choices).

* :data:`LABELS`: a measured platform's name for a reader. QEMU without KVM is binary translation
  (TCG), far slower than any hypervisor the papers ran, and is named so wherever a series is drawn.
* :data:`STAND_INS`: for each paper platform, the measured platforms that may stand for it and how
  closely (:data:`SAME`, :data:`SAME_KIND`, :data:`ANALOGUE`). A paper platform with no measured
  stand-in on a testbed (KVM where KVM does not work, Xen, Palacios) is not measured there; its
  claims get no verdict from another platform's data.
"""

from __future__ import annotations

LABELS = {
    "native": "native",
    "lxc": "lxc",
    "podman": "podman",
    "qemu-kvm": "QEMU KVM",
    "qemu-tcg": "QEMU TCG (binary translation, no KVM)",
}

SAME = "same"  # the same software (KVM -> qemu-kvm, LXC -> lxc)
SAME_KIND = "same kind"  # another implementation of the same technique (OpenVZ -> lxc: OS-level containers)
ANALOGUE = "analogue"  # a different technique that shares the trait the claim is about; verdicts say so

STAND_INS: dict[str, dict[str, str]] = {
    "native": {"native": SAME},
    "OpenVZ": {"lxc": SAME_KIND, "podman": SAME_KIND},
    "LXC": {"lxc": SAME, "podman": SAME_KIND},
    # VMware Server virtualizes in software (binary translation of kernel code); QEMU TCG translates
    # all guest code, so it is slower still: an analogue for "software virtualization costs a lot",
    # never a measurement of VMware Server.
    "VMware Server": {"qemu-tcg": ANALOGUE},
    "KVM": {"qemu-kvm": SAME},
    "Xen": {},
    "Palacios": {},
    "Kitten": {},
    "EC2": {},
    "specific kernels": {},  # Youseff's CHAOS and RHEL4 builds as baselines
}

# The config's `qemu` (KVM if it boots, else TCG) read as a paper platform, for a claim that names none.
ALIAS_PAPER_PLATFORM = {"qemu": "KVM"}


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
    if paper_platform == "KVM" and "qemu-tcg" in present:
        return "no working KVM on this testbed (qemu-tcg is binary translation)"
    if not allowed:
        return f"no {paper_platform} on this testbed (nothing here may stand for it)"
    return f"no {' or '.join(allowed)} runs on this testbed (the stand-ins for {paper_platform})"
