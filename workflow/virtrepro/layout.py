"""Where things live on a testbed host, and what a host offers (a leaf module: imports nothing of the package).

``SCRATCH_DIR``: where runs keep their files. Container instances get this very directory of the
host bind-mounted at the same path, so that every platform but the VMs (whose virtual disk is the
layer measured) writes to one file system (docs/methodology.md, "Fair conditions").

``NETWORK``/``PREFIX``: the instances' private network (:mod:`virtrepro.guests.network` gives each
instance its address in it; the benchmarks' MPI options keep their traffic on it).

:func:`host_memory_mb`, :func:`overcommit_policy`: this host's memory and its overcommit policy, read
by the platforms (a guest larger than the host) and by the benchmarks that size their guests.
"""

from pathlib import Path

SCRATCH_DIR = "/var/tmp/virtrepro"

NETWORK = "10.251"
PREFIX = 16  # the instances' address prefix: 10.251.0.0/16 is the private network of all testbeds


REPOSITORY = Path(__file__).resolve().parents[2]


def recorded_path(path: Path, outside: str | None = None, root: Path | None = None) -> str:
    """A path as the records keep it: relative to the repository (``root``) when it is inside, so that
    committed sidecars and probe files name no directory of the machine that measured; else
    ``outside`` (or the path's name)."""
    try:
        return str(Path(path).resolve().relative_to(root or REPOSITORY))
    except ValueError:
        return outside if outside is not None else Path(path).name


def host_memory_mb() -> int:
    """The host's MemTotal in MB."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    raise RuntimeError("/proc/meminfo has no MemTotal")


def overcommit_policy() -> int:
    """The host's vm.overcommit_memory: 0 heuristic, 1 always, 2 never (strict accounting)."""
    try:
        return int(Path("/proc/sys/vm/overcommit_memory").read_text())
    except (OSError, ValueError):
        return 0
