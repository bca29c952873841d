"""Which machine measured a run, and whether two runs can be compared.

A platform's difference from native is the platform's only when both were measured on the same
machine: the same CPU, caches, microcode and host kernel. A measurement run that spans several
sessions can land on another machine between them (a cloud host is replaced; the reference run
has seen an AMD EPYC and an Intel Xeon host under the same testbed name), and so can a user's
resumed run after an upgrade. So every benchmark's runs, on every platform, must come from one
machine: the measurement refuses to add a repetition beside runs of the same benchmark from
another machine (``virtrepro.measurement.job``), and the tidy table refuses to put them together
(``virtrepro.results``). Different benchmarks may come from different machines; each figure's
caption then names its machine. In the same way a benchmark's guest runs (containers, VMs) share one
guest image (:func:`image`, :func:`other_images`): a rebuilt image may hold other package versions.

The machine of a run is read from its sidecar: the testbed host's facts (``testbed_host`` for a
guest; a container's and native's own facts are the host's: the same CPU, caches and kernel).
A guest's sidecar written before ``testbed_host`` was recorded names no machine (None): it
conflicts with nothing. Two machines differ when a fact that both record differs.

Standard library only (with :mod:`virtrepro.declarations.regimes`); :func:`this_machine` runs the facts
shell script here, the rest is pure.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .. import datalayout
from ..declarations.regimes import sidecar_facts

# The host facts of every sidecar, in one shell script that starts few processes (uname, sed,
# nproc, systemd-detect-virt; the rest are shell built-ins): it runs at the start of every
# measurement job. The memory limit is the smallest on the way from the
# shell's memory cgroup (cgroup v1) up to its root: a container's limit is set on the container,
# its sshd sits in a child cgroup. What changes results is recorded too: CPU microcode, frequency
# governor, transparent huge pages, the CPUs the instance may use, its CPU cache sizes.
HOST_FACTS_COMMAND = r"""
set -- $(uname -rmn)
echo "kernel=$2"
echo "machine=$3"
PRETTY_NAME=; [ -r /etc/os-release ] && . /etc/os-release 2>/dev/null
echo "os=$PRETTY_NAME"
echo "cpu_model=$(sed -n '/^model name/{s/^model name[[:space:]]*: //p;q;}' /proc/cpuinfo)"
echo "cores=$(nproc)"
while read -r key value unit; do [ "$key" = MemTotal: ] && break; done < /proc/meminfo
echo "mem_total_kb=$value"
echo "hostname=$1"
read -r one five fifteen rest < /proc/loadavg
echo "loadavg=$one $five $fifteen"
echo "virtualization=$(systemd-detect-virt 2>/dev/null)"
echo "microcode=$(sed -n '/^microcode/{s/^microcode[[:space:]]*: //p;q;}' /proc/cpuinfo)"
g=; { read -r g < /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor; } 2>/dev/null; echo "cpu_governor=${g:-none (no cpufreq)}"
t=; { read -r t < /sys/kernel/mm/transparent_hugepage/enabled; } 2>/dev/null; echo "transparent_hugepages=$t"
while read -r key value; do [ "$key" = Cpus_allowed_list: ] && break; done < /proc/self/status
echo "cpus_allowed=$value"
m=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup); echo "cgroup_memory=$m"
limit=; while :; do l=; { read -r l < /sys/fs/cgroup/memory$m/memory.limit_in_bytes; } 2>/dev/null; \
  [ -n "$l" ] && { [ -z "$limit" ] || [ "$l" -lt "$limit" ]; } && limit=$l; [ -z "$m" ] || [ "$m" = / ] && break; m=${m%/*}; done
echo "memory_limit_bytes=$limit"
sizes=; for c in /sys/devices/system/cpu/cpu0/cache/index*; do t=; l=; s=; { read -r t < $c/type; read -r l < $c/level; read -r s < $c/size; } 2>/dev/null
  case $t in D*) t=d;; I*) t=i;; U*) t=;; *) t=${t%"${t#?}"};; esac; sizes="${sizes}L$l$t=$s "; done
echo "cache_sizes=$sizes"
"""


# The facts that make two machines the same for a comparison (of the host facts above). Not the
# host name (a replaced machine keeps it), the load or the CPUs an instance may use (a container's
# own limits).
FACTS = ("cpu_model", "cache_sizes", "microcode", "kernel", "machine")



def parse_facts(text: str) -> dict:
    """The ``key=value`` lines that :data:`HOST_FACTS_COMMAND` prints, as a dict (counts as integers)."""
    facts = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key:
            facts[key.strip()] = value.strip()
    for key in ("cores", "mem_total_kb", "memory_limit_bytes"):
        if facts.get(key, "").isdigit():
            facts[key] = int(facts[key])
    return facts


def this_machine() -> dict | None:
    """The machine this process runs on (:func:`identity` of its host facts): the local testbed's host."""
    result = subprocess.run(["bash", "-c", HOST_FACTS_COMMAND], capture_output=True, text=True, check=False)
    return identity({"host": parse_facts(result.stdout)})


def identity(sidecar: dict) -> dict | None:
    """The machine that measured the run of ``sidecar`` (the recorded subset of :data:`FACTS`), or
    None when the sidecar does not say (a guest's sidecar without ``testbed_host``)."""
    _, host, _ = sidecar_facts(sidecar)
    if not isinstance(host, dict):
        return None
    found = {fact: str(host[fact]).strip() for fact in FACTS if host.get(fact) not in (None, "")}
    return found or None


def differ(one: dict | None, other: dict | None) -> list[str]:
    """The facts both machines record and that differ (empty: the same machine, as far as known)."""
    if not one or not other:
        return []
    return [fact for fact in FACTS if fact in one and fact in other and one[fact] != other[fact]]


def describe(machine: dict | None) -> str:
    """A machine in words: ``Intel(R) Xeon(R) Processor (L2=2048K L3=491520K), microcode 0x1, kernel 6.18.44``."""
    if not machine:
        return "an unrecorded machine"
    caches = " ".join(part for part in machine.get("cache_sizes", "").split() if part.startswith(("L2", "L3")))
    text = machine.get("cpu_model", "an unnamed CPU") + (f" ({caches})" if caches else "")
    if machine.get("microcode"):
        text += f", microcode {machine['microcode']}"
    if machine.get("kernel"):
        text += f", kernel {machine['kernel']}"
    return text


def _complete_runs(data_dir: str | Path, testbed: str, benchmark: str):
    """(sidecar path, sidecar) of every complete run of ``benchmark`` on any platform of the testbed's
    data. A sidecar that cannot be read is the table's concern, not this."""
    for path in datalayout.sidecars_of(data_dir, testbed, benchmark=benchmark):
        if not datalayout.is_complete_sidecar_name(path.name):
            continue
        try:
            sidecar = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(sidecar, dict) and sidecar.get("status") == "complete":
            yield path, sidecar


def recorded(data_dir: str | Path, testbed: str, benchmark: str) -> list[tuple[Path, dict]]:
    """Every complete run of ``benchmark`` on any platform of the testbed's data that names its
    machine: (sidecar path, machine)."""
    return [(path, machine) for path, sidecar in _complete_runs(data_dir, testbed, benchmark)
            if (machine := identity(sidecar)) is not None]


def image(sidecar: dict) -> dict | None:
    """The guest image a run's sidecar names (``{"recipe", "record_sha256"}``; the record's sha256 is
    None where the image was built on a remote host), or None (native, an older sidecar)."""
    record = sidecar.get("image")
    if isinstance(record, dict) and record.get("recipe"):
        return {"recipe": record["recipe"], "record_sha256": record.get("record_sha256")}
    return None


def other_images(wanted: dict, data_dir: str | Path, testbed: str, benchmark: str) -> list[tuple[Path, dict]]:
    """The complete runs of ``benchmark`` (any guest platform) that ran in another guest image than
    ``wanted``: another recipe, or the same recipe built again (its record's sha256 differs: the
    packages were fetched from Debian's archive again and may differ in version)."""
    found = []
    for path, sidecar in _complete_runs(data_dir, testbed, benchmark):
        other = image(sidecar)
        if other is None:
            continue
        if other["recipe"] != wanted["recipe"] or (
                other["record_sha256"] and wanted.get("record_sha256") and other["record_sha256"] != wanted["record_sha256"]):
            found.append((path, other))
    return found


def conflicts(machine: dict, runs: list[tuple[Path, dict]]) -> list[tuple[Path, dict, list[str]]]:
    """The runs (from :func:`recorded`) measured on another machine than ``machine``, with the facts
    that differ."""
    return [(path, other, facts) for path, other in runs if (facts := differ(machine, other))]


def mixed(machines: list[dict | None]) -> list[dict]:
    """The distinct recorded machines among ``machines`` when they are more than one (a benchmark
    measured on several machines), else an empty list."""
    distinct: list[dict] = []
    for machine in machines:
        if machine is not None and all(differ(machine, seen) for seen in distinct):
            distinct.append(machine)
    return distinct if len(distinct) > 1 else []


def in_words(pairs, mark=str) -> list[str]:
    """``(benchmark, machine description)`` pairs as one line per machine, ``measured on <machine>:
    <benchmarks>`` (sorted, each through ``mark``), machines in the order of their first benchmark:
    what the artifact description, the notebooks and the dry run say of the data's machines."""
    grouped: dict[str, list[str]] = {}
    for benchmark, name in sorted(set(pairs)):
        grouped.setdefault(name, []).append(benchmark)
    return [f"measured on {name}: {', '.join(map(mark, found))}" for name, found in grouped.items()]
