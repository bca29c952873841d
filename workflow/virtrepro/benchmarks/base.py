"""What every benchmark shares: variants, the scratch placeholder and the Benchmark interface."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from ..declarations import metrics as metric_declarations
from ..layout import NETWORK, PREFIX, SCRATCH_DIR
# Commands write their files into SCRATCH; measure replaces it with a directory of
# its own per run (under SCRATCH_DIR), created before and removed after the run, so
# that two runs on one host never touch each other's files.
SCRATCH = "@SCRATCH@"
# Benchmarks over several instances (network, MPI) name the others in their commands
# with these placeholders; measure replaces them with private addresses.
HOSTS = "@HOSTS@"  # every instance's private address, comma-separated, instance 0 first
# A compiled benchmark's uploads name its built files under this placeholder ("@BUILT@/<path>"): the
# measurement resolves it through the benchmark's source build (virtrepro.builds.registry).
BUILT = "@BUILT@"
# Benchmarks whose instance 0 logs in to the others over SSH (MPI) name these files: a key made
# for the run (authorised on the peers during the run only) and a known_hosts file with the
# peers' real host keys at their private addresses. The measurement writes both (see Preparation.peer_ssh).
PEER_SSH_KEY = f"{SCRATCH}/.peer-ssh/id_ed25519"
PEER_KNOWN_HOSTS = f"{SCRATCH}/.peer-ssh/known_hosts"
# MPI across hosts (``across: hosts``): the command of such a variant starts its mpirun with this
# placeholder, which measure replaces with the testbed scheduler's launcher (a slurm testbed: mpirun
# inside the job's allocation, its daemons started by srun; virtrepro.testbed.kinds). No hostfile is written.
MPIRUN_SCHEDULED = "@MPIRUN@"
ACROSS_HOSTS = "hosts"


def mpi_across_instances() -> str:
    """mpirun options for MPI over several instances: its daemons start over SSH with the run's key,
    trusting only the peers' pinned host keys, and MPI traffic (and mpirun's own) stays on the
    instances' private network. Without the interface limit Open MPI also tries a VM's user-mode
    network address (the same 10.0.2.15 in every VM), which reaches the VM itself: HPCC's
    MPIRandomAccess then hung for 20 minutes between two QEMU guests."""
    network = f"{NETWORK}.0.0/{PREFIX}"
    rsh = f"-i {PEER_SSH_KEY} -o UserKnownHostsFile={PEER_KNOWN_HOSTS} -o StrictHostKeyChecking=yes -o BatchMode=yes"
    return f"--mca plm_rsh_args '{rsh}' --mca btl_tcp_if_include {network} --mca oob_tcp_if_include {network}"


def mpi_spread(params: dict, nodes: int, platform: str | None) -> dict | None:
    """The key parameters that say where an MPI variant over ``nodes`` instances runs: ``{}`` for
    one instance or instances on one host (the keys such runs always had), ``{"across": "hosts"}``
    for one instance on each of ``nodes`` hosts of the testbed; None when ``platform`` cannot run it
    (its instances cannot be on different hosts: no variant, so no comparison with a platform that
    ran on one host only)."""
    from ..platforms import catalog as platform_catalog

    if nodes <= 1 or params.get("across", "instances") != ACROSS_HOSTS:
        return {}
    if platform_catalog.lacks(platform, "spans_hosts"):
        return None
    return {"across": ACROSS_HOSTS}


_MAPPED_NODE = re.compile(r"^\s*Data for node: (\S+)\s+Num slots: \d+\s+Max slots: \d+\s+Num procs: (\d+)", re.M)


def check_rank_map(text: str, source: str, nodes: int, per_node: int | None = None) -> None:
    """A run across hosts is what its key says only if mpirun's map (``--display-map``) in its log put
    ranks on ``nodes`` different nodes, ``per_node`` on each (when known): a run whose ranks all
    landed on one node is refused, never kept as a number of a run across nodes."""
    from ..parsers import ParseError

    ranks: dict[str, int] = {}
    for node, count in _MAPPED_NODE.findall(text):
        ranks[node] = ranks.get(node, 0) + int(count)
    if len(ranks) != nodes or (per_node is not None and set(ranks.values()) != {per_node}):
        shown = ", ".join(f"{node}: {count}" for node, count in ranks.items()) or "no map in the log"
        wanted = f"{per_node} rank(s) on each of {nodes} nodes" if per_node is not None else f"ranks on {nodes} nodes"
        raise ParseError(source, f"mpirun's map of a run across hosts shows {shown}; the run asked for {wanted}")


def peer(index: int) -> str:
    """Placeholder for the private address of instance ``index`` (1 = the first peer)."""
    return f"@PEER{index}@"


@dataclass(frozen=True)
class Variant:
    benchmark: str
    key: str
    params: tuple = field(default=())  # sorted (name, value) pairs

    @property
    def param_dict(self) -> dict:
        return dict(self.params)


def size_to_kb(size: str) -> int:
    match = re.fullmatch(r"([0-9]+)([kmg])", size)
    if match is None:
        raise ValueError(f"size {size!r} is not like 64m")
    return int(match.group(1)) * {"k": 1, "m": 1024, "g": 1024 * 1024}[match.group(2)]


# helpers the commands use beside the benchmark's own programs (they come with the base system or with
# another package of the declaration): not what :attr:`Benchmark.check_command` asks for
HELPERS = ("ss", "setsid", "awk", "ssh")


def _check(program: str) -> str:
    """The shell test that ``program`` (a name on PATH, an executable or a shared library) is there."""
    if ".so." in program.rsplit("/", 1)[-1]:
        return f"ldconfig -p | grep -q {program.rsplit('/', 1)[-1]}"
    return f"test -x {program}" if program.startswith("/") else f"command -v {program}"


@dataclass(frozen=True)
class Preparation:
    """What the prepare stage does in the instances before a run (:meth:`Benchmark.prepare`)."""

    # files (local path, path in the instance) copied into every instance over SFTP; remote paths are
    # usually under SCRATCH, so they go away with the run's scratch directory (their directories are made)
    uploads: tuple = ()
    # command run in instances 1.. (a server); it must return once the server listens
    peer_start: str | None = None
    peer_start_timeout: int = 60  # seconds peer_start may take (servers that boot slowly raise it)
    # how long the server of peer_start lives: "run" (started before each run, stopped by the cleanup
    # stage after it) or "job" (where the job keeps the platform's instances up for its rounds: started
    # before the platform's first run of the job, frozen with its instance between turns, and stopped by
    # the cleanup stage when the job ends; each run's sidecar says which, and in which round it started)
    peer_scope: str = "run"
    # instance 0 logs in to instances 1.. over SSH during the run (PEER_SSH_KEY, PEER_KNOWN_HOSTS)
    peer_ssh: bool = False


class Benchmark:
    """A benchmark: a declaration (what it needs, its parameters and metrics) and four named stages,
    prepare / run / parse / cleanup, as PerfKitBenchmarker's; :meth:`variants` plans its runs.

    Declaration. ``tool`` is the program it measures with; ``packages`` (Debian packages) and
    ``programs`` (every program and file its commands use in an instance: a name is looked up on
    PATH, globs allowed; virtrepro.testbed.packages checks that the host's and the guest image's package
    lists install them) are ``(tool,)`` unless declared, and :attr:`check_command` is derived from
    ``programs`` unless declared."""

    name: str
    tool: str
    packages: tuple[str, ...]
    programs: tuple[str, ...]
    version_command: str
    # where its files go: "instance" (the command writes under SCRATCH in instance 0, made before
    # and removed after the run), "peers" (the servers in instances 1.. keep their data under
    # SCRATCH_DIR: a database), None (no files)
    scratch: str | None = None
    host_side = False  # True: the harness itself does the work on the host (no command in a guest)
    # a compiled benchmark: the name of its source build in virtrepro.builds.registry (obtained once per
    # testbed, with a recorded reason when it cannot be, and built before its first run); None: a package
    build: str | None = None
    # where the paper measured what this benchmark reproduces (virtrepro.declarations.regimes: disk, page-cache,
    # memory); None: no paper's disk or memory number stands beside it
    measures: str | None = None
    # its parameters in a scale of the configuration, besides ``repetitions``: a JSON schema in YAML
    # (``required``, ``properties``; ``$ref`` to the configuration schema's ``$defs``), read by
    # :meth:`parameter_schema` into the configuration's schema (virtrepro.planning.config.schema)
    parameters: str
    # what it reports: (subsystem, table of "metric unit higher|lower|none" lines, *overview metrics),
    # read by virtrepro.declarations.metrics; every metric its parser reports (tests/test_declarations.py)
    metric_declaration: tuple

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        tool = vars(cls).get("tool")
        if tool is not None:  # where they coincide, its package and program are its tool's name
            if "packages" not in vars(cls):
                cls.packages = (tool,)
            if "programs" not in vars(cls):
                cls.programs = (tool,)

    @property
    def check_command(self) -> str:
        """Is it installed? Each of its ``programs`` (:data:`HELPERS` aside) is on PATH, executable or
        a known shared library (a benchmark whose check is something else declares it)."""
        return " && ".join(_check(program) for program in self.programs if program not in HELPERS) or "true"

    @property
    def metrics(self) -> dict:
        """What it reports, by metric name: unit, which direction is better, subsystem
        (its ``metric_declaration``)."""
        return metric_declarations.read_declaration(self.name, self.metric_declaration)

    @property
    def subsystem(self) -> str:
        """The subsystem it measures (its ``metric_declaration``'s first item), as a platform's
        ``informs_nothing_on`` names it (virtrepro.platforms.catalog)."""
        return self.metric_declaration[0]

    def parameter_schema(self) -> dict:
        """The JSON schema of its entry in a scale: its declared ``parameters`` and ``repetitions``."""
        from ..yamlfile import loads

        declared = loads(textwrap.dedent(self.parameters), f"benchmark {self.name}'s parameters") or {}
        if not isinstance(declared, dict) or set(declared) - {"required", "properties", "oneOf", "anyOf", "allOf"}:
            raise TypeError(f"{self.name}: parameters must declare required, properties (and oneOf...): {declared!r}")
        return {
            "type": "object",
            "additionalProperties": False,
            "required": ["repetitions", *declared.get("required", [])],
            **{key: value for key, value in declared.items() if key not in ("required", "properties")},
            "properties": {"repetitions": {"$ref": "#/$defs/repetitions"}, **(declared.get("properties") or {})},
        }

    # -- what one variant asks of the platform
    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        """The runs a scale's ``params`` ask for on ``platform`` (see :func:`runnable_variants`)."""
        raise NotImplementedError

    def instances(self, variant: Variant) -> int:
        """How many instances of the platform one run uses. With more than one, every instance is a
        network instance on the private network, the command runs in instance 0, and the prepare
        stage's ``peer_start`` runs first in each of the others."""
        return 1

    def guest_overrides(self, variant: Variant) -> dict:
        """Changes to the configured guest spec that this variant needs (disk format, memory...)."""
        return {}

    def memory_mib(self, variant: Variant) -> int | None:
        """The memory one run holds at once, MiB, where it is large enough to matter against a
        guest's memory size (checked when the configuration is read); None: small."""
        return None

    def vm_resident_mib(self, variant: Variant, guest_mb: int) -> int:
        """The host memory one instance of a VM of ``guest_mb`` MiB holds while it runs this variant, and
        afterwards while it is kept up (frozen) for the variant's rounds: all of it (QEMU gives back no
        page the guest touched, and a guest's page cache fills its memory), unless the benchmark knows
        that its guest touches less (virtrepro.planning.memory.job_memory_mib)."""
        return guest_mb

    def placement(self, variant: Variant) -> dict | None:
        """The CPUs the run's processes are bound to (recorded in the sidecar); None: the scheduler's."""
        return None

    # -- the stages
    def prepare(self, variant: Variant, config: dict | None = None) -> Preparation:
        """What goes into the instances before the run: uploads, servers in instances 1.., peer SSH."""
        return Preparation()

    def run(self, variant: Variant) -> str:
        """The command run in instance 0, whose output is the run's log."""
        raise NotImplementedError

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        """Parse one run's log (a pure parser of virtrepro.parsers), checking it against the run's
        parameters where given and the tool's output alone cannot show a wrong or cut-short run (the
        number of requests or repetitions asked for)."""
        raise NotImplementedError

    def cleanup(self, variant: Variant) -> str | None:
        """Command run in instances 1.. after the run, also a failed one: nothing is left running."""
        return None

    def regime(self, params: dict, record: dict, sidecar: dict) -> str | None:
        """Where ``record`` was measured (a :data:`virtrepro.declarations.regimes.REGIMES` value), decided from the
        run's parameters and the facts its sidecar records; None for a record that is no disk or
        memory number (the table's ``regime`` column, beside ``measures``)."""
        return None

    def _variant(self, **params) -> Variant:
        return Variant(self.name, variant_key(params), tuple(sorted(params.items())))


def runnable_variants(benchmark: Benchmark, params: dict, platform: str | None = None) -> list[Variant]:
    """Its :meth:`~Benchmark.variants` that ``platform`` can run: those over several instances need
    instances with addresses of their own (the catalogue's ``private_network``; an unprivileged
    container's instances share the host's network, where a server of one would meet a client of
    another on the host's loopback, and a comparison with the others' private network would compare
    networks, not virtualization layers)."""
    from ..platforms import catalog as platform_catalog

    found = benchmark.variants(params, platform)
    if platform_catalog.lacks(platform, "private_network"):
        found = [variant for variant in found if benchmark.instances(variant) == 1]
    return found


def across_hosts(variant: Variant) -> bool:
    """True: its instances are on different hosts of the testbed, one each (``across: hosts``), and
    its command starts with :data:`MPIRUN_SCHEDULED`."""
    return variant.param_dict.get("across") == ACROSS_HOSTS


def hosts_used(benchmark: Benchmark, variant: Variant) -> int:
    """How many of the testbed's hosts one run holds (1 unless its instances span hosts)."""
    return benchmark.instances(variant) if across_hosts(variant) else 1


def variant_key(params: dict) -> str:
    """A variant's key (its directory name): ``name-value`` of each parameter, in the benchmark's order."""
    return "_".join(f"{name}-{value}" for name, value in params.items())


def key_spells(key: str, params: dict) -> bool:
    """True when ``key`` is the key of a variant with exactly ``params``, in any order (a sidecar
    keeps them sorted by name, the key in the benchmark's order)."""
    padded = f"_{key}_"
    ordered = sorted(params.items(), key=lambda item: padded.find(f"_{variant_key(dict([item]))}_"))
    return variant_key(dict(ordered)) == key


def threads_arg(value) -> str:
    """sysbench's --threads: a number, or every core of the platform (resolved on the host)."""
    return "$(nproc)" if value == "all" else str(int(value))
