"""The measured platforms as plain data: the one declaration of each platform's name, family, label
and colour in figures, private address block, capabilities, the papers' platforms it may stand
for, and the class that implements it. Everything outside ``virtrepro.platforms`` that treats
platforms differently asks this module (``tests/test_declarations.py`` refuses a platform name
written anywhere else).

A leaf module, standard library only (and so is ``virtrepro.platforms``' ``__init__``, which only
looks the classes up when asked): the host agent (``python3 -S`` on a remote host) reads it, and
so do the analysis modules (plotting, claims, results) without loading any platform's code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# families
NATIVE = "native"
CONTAINER = "container"
FULL_VM = "full-vm"
FAMILY_LABELS = {NATIVE: "native", CONTAINER: "container", FULL_VM: "full VM"}

# how a measured platform stands for a paper's platform (docs/methodology.md)
SAME = "same"  # the same software (KVM -> qemu-kvm, LXC -> lxc)
SAME_KIND = "same kind"  # another implementation of the same technique (OpenVZ -> lxc: OS-level containers)
ANALOGUE = "analogue"  # a different technique sharing the claim's trait (data/reference/analogues.yaml); verdicts say so


@dataclass(frozen=True)
class PlatformSpec:
    name: str
    implementation: str  # "<module of virtrepro.platforms>:<class>"
    family: str  # NATIVE, CONTAINER or FULL_VM
    label: str  # its name for a reader, in every legend, axis and table
    colour: str  # the same in every figure
    first_host: int  # private address block (guests/network.py): instance i is first_host + i
    stands_for: dict = field(default_factory=dict)  # paper platform -> SAME or SAME_KIND (analogues: analogues.yaml)
    # why it may not stand for a paper platform it resembles (read when nothing else there may)
    not_for: dict = field(default_factory=dict)
    # capabilities
    guest: bool = True  # runs in a guest made from the guest image (False: on the host itself)
    sized_guest: bool = True  # its guest has a memory size and vCPU count of its own (thesis scenarios)
    own_memory: bool = False  # the guest's memory is allocated on the host as a whole (a VM): overcommit matters
    disk_formats: bool = False  # runs each VM disk format and cache mode (iozone_disk)
    resource_limits: bool = True  # CPU and memory limits can be set on it (isolation)
    lifecycle: bool = True  # provision, boot, reboot, clone, destroy (thesis Tables 5.1-5.3)
    # its instances of one run can be on different hosts of the testbed (MPI across a cluster's nodes,
    # benchmarks' `across: hosts`): only the host itself; a guest's private network ends at its host
    spans_hosts: bool = False
    # what its host must give (probed on every host of the testbed before the plan: virtrepro.testbed.availability):
    # root (or passwordless sudo) to make bridges, namespaces, containers and VMs; a usable /dev/kvm
    needs_root: bool = True
    needs_kvm: bool = False
    # unprivileged user namespaces (what a rootless container runtime is made of)
    needs_userns: bool = False
    # its instances have addresses of their own on the testbed's private network, so runs over several
    # instances (network pairs, MPI across instances) can run in it; False: they share the host's network
    private_network: bool = True
    # it executes guest code by binary translation (no hardware virtualization): its runs take 10-50
    # times as long, so a scale's repetition rule may cap them lower (`max_translated`)
    translated: bool = False
    # the subsystems (a benchmark's declared subsystem, virtrepro.declarations.metrics) on which its runs
    # inform no claim of the papers, with why: at a scale the configuration's `informative_only` names,
    # planning leaves it out of benchmarks of these subsystems (virtrepro.planning.config.left_out)
    informs_nothing_on: dict = field(default_factory=dict)


# why a binary-translating VM informs no CPU or HPC claim: the analogue table (data/reference/analogues.yaml)
# lets it stand in for VMware Server's CPU and HPC numbers nowhere (`no`), and for KVM's never (qemu-kvm
# stands for KVM; TCG is one way, worse, at a slowdown no claim's threshold comes near)
_TRANSLATED_CPU = ("binary translation runs guest code 8-57x slower than native; the analogue table lets it stand in "
                   "for no paper platform's CPU or HPC numbers")


PLATFORMS: tuple[PlatformSpec, ...] = (
    PlatformSpec("native", "native:Native", NATIVE, "native", "#222222", 70, stands_for={"native": SAME},
                 guest=False, sized_guest=False, resource_limits=False, lifecycle=False, spans_hosts=True,
                 needs_root=False),
    PlatformSpec("lxc", "lxc:Lxc", CONTAINER, "lxc", "#1b9e77", 10, stands_for={"OpenVZ": SAME_KIND, "LXC": SAME}),
    PlatformSpec("podman", "podman:Podman", CONTAINER, "podman", "#66a61e", 30, stands_for={"OpenVZ": SAME_KIND, "LXC": SAME_KIND}),
    PlatformSpec("qemu-kvm", "qemu:QemuKvm", FULL_VM, "QEMU KVM", "#7570b3", 50, stands_for={"KVM": SAME},
                 own_memory=True, disk_formats=True, needs_kvm=True),
    # QEMU TCG translates all guest code: it is the same as none of the papers' platforms. Where it may
    # stand in as an analogue (VMware Server; KVM one way only) is the analogue table's to say
    # (data/reference/analogues.yaml, read by virtrepro.declarations.platform_names), never a measurement of them.
    PlatformSpec("qemu-tcg", "qemu:QemuTcg", FULL_VM, "QEMU TCG (binary translation, no KVM)", "#d95f02", 50,
                 not_for={"KVM": "no working KVM on this testbed (qemu-tcg is binary translation)"},
                 own_memory=True, disk_formats=True, translated=True,
                 informs_nothing_on={"cpu": _TRANSLATED_CPU, "hpc": _TRANSLATED_CPU}),
    # the unprivileged container HPC centres allow (no root, no cgroups, no network namespace): it stands
    # for none of the papers' platforms and answers what the runtime a cluster allows costs
    PlatformSpec("charliecloud", "charliecloud:Charliecloud", CONTAINER, "Charliecloud (unprivileged)", "#e7298a", 90,
                 sized_guest=False, resource_limits=False, lifecycle=False, private_network=False,
                 needs_root=False, needs_userns=True),
)

# the platform every other is compared with (its paper platform has the same name)
BASELINE = "native"


@dataclass(frozen=True)
class Alias:
    """A name in the configuration that a probe on the testbed resolves to one of ``candidates``."""

    name: str
    candidates: tuple  # in order of preference
    paper_platform: str  # what the alias stands for in a claim that names no paper platform
    unprobed: str  # what it is taken as before the probe ran (it works everywhere)


ALIASES = {"qemu": Alias("qemu", ("qemu-kvm", "qemu-tcg"), "KVM", unprobed="qemu-tcg")}
AUTO = ALIASES["qemu"]  # the configuration's QEMU: KVM if a KVM guest boots on the testbed, else TCG

BY_NAME = {spec.name: spec for spec in PLATFORMS}
NAMES = tuple(BY_NAME)


class UnknownPlatform(ValueError):
    pass


def get(name: str) -> PlatformSpec:
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnknownPlatform(f"unknown platform {name!r}; known: {', '.join(NAMES)}") from None


def config_names() -> tuple:
    """Every name the configuration's ``platforms`` may hold (the schema's enum)."""
    return NAMES + tuple(ALIASES)


def implementation(name: str) -> str:
    """The platform whose code runs ``name``: an alias' candidates share one implementation."""
    return ALIASES[name].candidates[0] if name in ALIASES else get(name).name


def runs_in_guest(name: str) -> bool:
    """Whether ``name`` (a platform or an alias) runs in a guest made from the guest image."""
    return get(implementation(name)).guest


def has(name: str | None, capability: str) -> bool:
    """Whether platform ``name`` has ``capability`` (a PlatformSpec field); False for no platform."""
    if name is None:
        return False
    spec = get(implementation(name))
    if not hasattr(spec, capability):
        raise AttributeError(f"no platform capability {capability!r}")
    return bool(getattr(spec, capability))


def lacks(name: str | None, capability: str) -> bool:
    """Whether platform ``name`` lacks ``capability``; False for no platform (planning for any)."""
    return name is not None and not has(name, capability)


def informs_nothing(name: str, subsystem: str) -> str | None:
    """Why platform ``name``'s runs inform no claim on ``subsystem`` (its ``informs_nothing_on``); None: they may."""
    return get(implementation(name)).informs_nothing_on.get(subsystem)


def alias_of(name: str) -> str | None:
    """The configuration alias that may resolve to platform ``name`` (None if none)."""
    return next((a.name for a in ALIASES.values() if name in a.candidates), None)


def unavailable_reason(name: str, facts: dict) -> str | None:
    """Why platform ``name`` (or an alias: what all its candidates need) cannot run on a host with
    ``facts`` (virtrepro.testbed.availability: ``root`` yes/sudo/no, ``kvm`` yes/denied/missing,
    ``user``); None: it can. An alias needs only what its least demanding candidate needs (qemu:
    TCG where KVM is missing)."""
    specs = [get(c) for c in ALIASES[name].candidates] if name in ALIASES else [get(name)]
    reasons = []
    for spec in specs:
        if spec.needs_root and facts.get("root") not in ("yes", "sudo"):
            reasons.append(f"{spec.name} needs root (or passwordless sudo) on the host, and {facts.get('user', 'the user')} "
                           "has neither (containers, VMs and their networks are made by root)")
        elif spec.needs_userns and facts.get("userns") != "yes":
            reasons.append(f"{spec.name} needs unprivileged user namespaces, and the host refuses them to "
                           f"{facts.get('userns_user') or facts.get('user', 'the user')} (user.max_user_namespaces, "
                           "kernel.unprivileged_userns_clone or a security module)")
        elif spec.needs_kvm and facts.get("kvm") != "yes":
            reasons.append(f"{spec.name} needs a usable /dev/kvm, and it is "
                           + ("missing (no KVM on the host: a compute node without virtualization)"
                              if facts.get("kvm") == "missing" else "not usable by " + facts.get("user", "the user")))
        else:
            return None
    return "; ".join(reasons)
