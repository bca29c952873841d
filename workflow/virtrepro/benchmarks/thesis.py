"""Kumar 2013 thesis scenarios: CPU with 1-8 vCPUs, guest memory around the host's, isolation between neighbours.

* ``cpu_scaling`` (Figs. 4.1-4.4): sysbench cpu in a guest of 1, 2, 4, 8 vCPUs, as many threads as vCPUs
  (``native``: the thread count alone). More vCPUs than the host has CPUs are planned only with
  ``oversubscribe: true``, and then carry ``oversubscribed-yes`` in their key: VMs run their vCPU
  threads on fewer CPUs, containers get a cpuset capped at the host's CPUs (both recorded by the
  platform in the sidecar's ``platform.applied``).
* ``memory_scaling`` (Figs. 4.5-4.7): sysbench memory in guests whose memory is a fraction of the
  host's MemTotal (below, equal to, above), for containers as their memory cgroup limit. A size the
  host cannot back is not planned; :meth:`MemoryScaling.skipped` says which and why.
* ``isolation`` (Figs. 6.2-6.5): a victim (instance 0) runs a CPU, memory, disk or network benchmark
  while a neighbour (instance 1, same platform, same host) idles or runs a stressor of the same kind,
  with the platform's resource limits off or on (see :class:`Isolation`).

Caps and sizes follow the machine that plans the runs: guest platforms run on the local testbed only,
so that is the testbed's host. Only MemTotal and the CPU count are used, never a fluctuating value
such as MemAvailable: the plan is recomputed by every measurement job and must give the same keys.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from ..platforms import catalog as platform_catalog
from ..layout import host_memory_mb, overcommit_policy
from ..parsers import ParseError, parse_fio, parse_iperf3, parse_sysbench
from .base import SCRATCH, Benchmark, Preparation, Variant, peer, size_to_kb
from .cpu_memory import SYSBENCH_METRICS, Sysbench, sysbench_cpu_expected, sysbench_memory_command, sysbench_memory_expected
from .disk import FIO_METRICS, _DIRECT_LINE, _direct_probe
from .network import IPERF3_METRICS, _wait_listening



def host_cpu_count() -> int:
    return len(os.sched_getaffinity(0))


class CpuScaling(Sysbench):
    """sysbench cpu with the guest's vCPU count as the variable (thesis Figs. 4.1-4.4)."""

    name = "cpu_scaling"
    parameters = """
        required: [vcpus, cpu_max_prime, seconds]
        properties:
          vcpus: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 1, maximum: 256}}
          oversubscribe: {type: boolean, default: false}
          cpu_max_prime: {type: integer, minimum: 3}
          seconds: {type: integer, minimum: 1}
    """
    metric_declaration = ("cpu", SYSBENCH_METRICS)

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        host = host_cpu_count()
        planned = []
        for vcpus in params["vcpus"]:
            over = vcpus > host
            if over and not params.get("oversubscribe", False):
                continue
            mark = {"oversubscribed": "yes"} if over else {}
            planned.append(self._variant(vcpus=vcpus, prime=params["cpu_max_prime"], seconds=params["seconds"], **mark))
        return planned

    def skipped(self, params: dict, platform: str | None = None) -> list[tuple[str, str]]:
        host = host_cpu_count()
        if params.get("oversubscribe", False):
            return []
        return [(f"vcpus-{v}", f"{v} vCPUs exceed the host's {host} CPUs (set oversubscribe: true to run them oversubscribed)")
                for v in params["vcpus"] if v > host]

    def guest_overrides(self, variant: Variant) -> dict:
        return {"vcpus": int(variant.param_dict["vcpus"])}

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        return f"sysbench cpu --cpu-max-prime={int(p['prime'])} --threads={int(p['vcpus'])} --time={int(p['seconds'])} run"

    def expected(self, params: dict) -> dict:
        return sysbench_cpu_expected(params["prime"], params["vcpus"], params["seconds"])


class MemoryScaling(Sysbench):
    """sysbench memory in guests with memory below, equal to and above the host's (thesis Figs. 4.5-4.7).

    Guest memory = ``fraction`` x the host's MemTotal, rounded down to 64 MB; containers get it as their
    memory limit. ``native`` runs the same workload once (``mem-host``), the baseline. A fraction is
    refused (not planned, see :meth:`skipped`) when the host could not survive it: above
    ``max_overcommit`` x MemTotal, or when what the run really touches on the host (the guest's base
    system, its page tables and struct pages, about 1/64 of its memory, and the benchmark's buffers)
    does not fit in MemTotal minus ``reserve_mb``.
    """

    name = "memory_scaling"
    parameters = """
        required: [fractions, operations, block_size, threads, total_size, seconds, max_overcommit, reserve_mb]
        properties:
          fractions: {type: array, minItems: 1, uniqueItems: true, items: {type: number, exclusiveMinimum: 0}}
          operations: {type: array, minItems: 1, uniqueItems: true, items: {enum: [read, write]}}
          block_size: {type: string, pattern: "^[0-9]+[KMGkmg]$"}
          threads: {type: integer, minimum: 1}
          total_size: {type: string, pattern: "^[0-9]+[KMGT]$"}
          seconds: {type: integer, minimum: 1}
          max_overcommit: {type: number, exclusiveMinimum: 0}
          reserve_mb: {type: integer, minimum: 0}
    """
    metric_declaration = ("memory", SYSBENCH_METRICS)
    GUEST_BASE_MB = 512  # a booted guest's own use (kernel, systemd, sshd), generous

    def _sizes(self, params: dict, platform: str | None = None) -> list[tuple[float, int, str | None]]:
        total = host_memory_mb()
        touched_by_benchmark = size_to_kb(params["block_size"].lower()) * int(params["threads"]) // 1024 + 1
        sizes = []
        for fraction in params["fractions"]:
            memory = int(fraction * total) // 64 * 64
            reason = None
            touched = self.GUEST_BASE_MB + memory // 64 + touched_by_benchmark
            if fraction > params["max_overcommit"]:
                reason = (f"guest memory {memory} MB is {fraction:g} x the host's MemTotal ({total} MB), "
                          f"above max_overcommit {params['max_overcommit']:g}: refused, the host could not back it")
            elif touched > total - params["reserve_mb"]:
                reason = (f"a guest of {memory} MB would touch about {touched} MB, more than the host's MemTotal "
                          f"({total} MB) minus the {params['reserve_mb']} MB reserve: refused")
            elif platform_catalog.has(platform, "own_memory") and memory > total and overcommit_policy() == 2:
                reason = (f"a VM of {memory} MB is larger than the host's MemTotal ({total} MB) and the host's "
                          "vm.overcommit_memory=2 forbids overcommitting memory: refused")
            sizes.append((fraction, memory, reason))
        return sizes

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        common = {"block": params["block_size"], "threads": params["threads"], "total": params["total_size"],
                  "seconds": params["seconds"]}
        if platform_catalog.lacks(platform, "sized_guest"):
            return [self._variant(oper=oper, **common, mem="host") for oper in params["operations"]]
        return [
            self._variant(oper=oper, **common, fraction=fraction, mem=memory)
            for fraction, memory, reason in self._sizes(params, platform) if reason is None
            for oper in params["operations"]
        ]

    def skipped(self, params: dict, platform: str | None = None) -> list[tuple[str, str]]:
        if platform_catalog.lacks(platform, "sized_guest"):
            return []
        return [(f"fraction-{fraction}_mem-{memory}", reason) for fraction, memory, reason in self._sizes(params, platform) if reason]

    def guest_overrides(self, variant: Variant) -> dict:
        memory = variant.param_dict["mem"]
        return {} if memory == "host" else {"memory_mb": int(memory)}

    def vm_resident_mib(self, variant: Variant, guest_mb: int) -> int:
        """What a guest of ``guest_mb`` touches (:meth:`_sizes`' model): its own base, its page tables
        and the run's block per thread; the rest of a guest larger than the host is never touched."""
        p = variant.param_dict
        touched_by_benchmark = size_to_kb(str(p["block"]).lower()) * int(p["threads"]) // 1024 + 1
        return min(guest_mb, self.GUEST_BASE_MB + guest_mb // 64 + touched_by_benchmark)

    def run(self, variant: Variant) -> str:
        return sysbench_memory_command(variant.param_dict)

    def expected(self, params: dict) -> dict:
        return sysbench_memory_expected(params)


# what the neighbour (instance 1) and the network variants' server (instance 2) leave behind, by name,
# so that cleanup finds it and a test can check that nothing is left
MARK = "virtrepro-isolation"
NEIGHBOUR_DIR = f"/var/tmp/{MARK}-neighbour"
PID_DIR = "/run"
PORTS = {"victim": 5211, "neighbour": 5212}  # iperf3 servers in instance 2, one per flow
MEMORY_VICTIM_TOTAL = "10000G"  # more than the memory victim can move in its seconds: it runs for its time
SETTLE_S = 1  # the victim waits this long after the neighbour started (also when it idles)
STRESS_TIMEOUT_S = 900  # a stressor whose stop was lost ends by itself after this


def _background(argv: str, name: str) -> str:
    """Shell: start ``argv`` in a session of its own, its pid (= process group) in a pid file."""
    pid_file = f"{PID_DIR}/{MARK}-{name}.pid"
    return f"setsid {argv} < /dev/null > /dev/null 2>&1 & echo $! > {pid_file}"


def _alive(name: str, what: str) -> str:
    pid_file = f"{PID_DIR}/{MARK}-{name}.pid"
    return (f"sleep 0.5; kill -0 $(cat {pid_file}) 2>/dev/null || "
            f"{{ echo '{what} did not start (or died at once)'; exit 1; }}")


class Isolation(Benchmark):
    """Victim alone vs beside a stressing neighbour, limits off and on (thesis Figs. 6.2-6.5).

    Every run uses two instances of the platform (three for ``network``): the victim runs in
    instance 0; instance 1 is the neighbour, idle (``neighbour-none``, the "alone" baseline: the
    neighbour guest exists but does nothing) or running a stressor of the victim's kind
    (``neighbour-stress``), started in the background by :meth:`prepare` with a pid file and
    stopped with its whole process group by :meth:`cleanup`:

    ======== ======================================== ==========================================
    resource victim (instance 0)                      neighbour stressor (instance 1)
    ======== ======================================== ==========================================
    cpu      sysbench cpu, one thread per CPU it has  stress-ng --cpu, one worker per CPU it has
    memory   sysbench memory write, one thread per    stress-ng --vm, one worker per CPU it has
             CPU
    disk     fio sequential write, O_DIRECT           fio sequential write, O_DIRECT, own file
    network  iperf3 to instance 2, port 5211          iperf3 to instance 2, port 5212, looped
    ======== ======================================== ==========================================

    Network: instance 2 stands for the remote end of both flows (two iperf3 servers); the flows
    share the bridge, the host's kernel and the receiving instance, as two guests' flows to one
    outside host would share a NIC. ``limits-on`` starts every instance with the platform's
    limits (guest spec overrides): ``cpu_partition`` (each instance its own block of ``cpus`` host
    CPUs: a cpuset for containers, vCPU pinning for VMs), ``memory_mb`` (cgroup memory limit,
    VM memory) and ``disk_bps`` (blkio throttle, QEMU block throttling). ``native`` has no
    limits: only ``limits-off`` is planned there.
    """

    name = "isolation"
    parameters = """
        required: [resources, neighbours, limits, seconds, cpu_max_prime, memory_block_size, vm_bytes,
                   disk_block_size, disk_file_size, limit_memory_mb, limit_disk_bps]
        properties:
          resources: {type: array, minItems: 1, uniqueItems: true, items: {enum: [cpu, memory, disk, network]}}
          neighbours: {type: array, minItems: 1, uniqueItems: true, items: {enum: [none, stress]}}
          limits: {type: array, minItems: 1, uniqueItems: true, items: {enum: ["off", "on"]}}
          seconds: {type: integer, minimum: 1}
          cpu_max_prime: {type: integer, minimum: 3}
          memory_block_size: {type: string, pattern: "^[0-9]+[KMGkmg]$"}
          vm_bytes: {type: string, pattern: "^[0-9]+[KMG]$"}
          disk_block_size: {$ref: "#/$defs/size"}
          disk_file_size: {$ref: "#/$defs/size"}
          limit_memory_mb: {type: integer, minimum: 256}
          limit_disk_bps: {$ref: "#/$defs/size"}
    """
    metric_declaration = ("isolation", SYSBENCH_METRICS + FIO_METRICS + IPERF3_METRICS + """
        cpu_isolation_efficiency      1              higher
        disk_io_isolation_efficiency  1              higher
        isolation_efficiency          1              higher
        memory_isolation_efficiency   1              higher
        network_isolation_efficiency  1              higher
    """)
    tool = "isolation (sysbench, stress-ng, fio, iperf3)"
    packages = ("sysbench", "stress-ng", "fio", "iperf3")
    programs = ("sysbench", "stress-ng", "fio", "iperf3", "ss", "setsid")
    version_command = ("echo \"$(sysbench --version); $(stress-ng --version 2>&1 | head -n 1); $(fio --version); "
                       "$(iperf3 --version 2>&1 | head -n 1 | cut -d' ' -f1-2)\"")
    scratch = "instance"
    RESOURCES = ("cpu", "memory", "disk", "network")

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        planned = []
        for resource in params["resources"]:
            extra = self._resource_params(resource, params)
            for limits in params["limits"]:
                if limits == "on" and platform_catalog.lacks(platform, "resource_limits"):
                    continue
                caps = self._limit_params(params) if limits == "on" else {}
                for neighbour in params["neighbours"]:
                    planned.append(self._variant(resource=resource, neighbour=neighbour, limits=limits,
                                                 seconds=params["seconds"], **extra, **caps))
        return planned

    def skipped(self, params: dict, platform: str | None = None) -> list[tuple[str, str]]:
        if platform_catalog.lacks(platform, "resource_limits") and "on" in params["limits"]:
            return [("limits-on", f"{platform} has no resource limits to turn on")]
        return []

    @staticmethod
    def _resource_params(resource: str, params: dict) -> dict:
        if resource == "cpu":
            return {"prime": params["cpu_max_prime"]}
        if resource == "memory":
            return {"block": params["memory_block_size"], "vmbytes": params["vm_bytes"]}
        if resource == "disk":
            size_to_kb(params["disk_file_size"])
            return {"bs": params["disk_block_size"], "size": params["disk_file_size"]}
        if resource == "network":
            return {}
        raise ValueError(f"isolation: unknown resource {resource!r}")

    @staticmethod
    def _limit_params(params: dict) -> dict:
        size_to_kb(params["limit_disk_bps"])
        return {"cpus": max(1, host_cpu_count() // 2), "mem": params["limit_memory_mb"], "bps": params["limit_disk_bps"]}

    def guest_overrides(self, variant: Variant) -> dict:
        p = variant.param_dict
        if p["limits"] != "on":
            return {}
        return {"vcpus": int(p["cpus"]), "cpu_partition": True, "memory_mb": int(p["mem"]),
                "disk_bps": size_to_kb(p["bps"]) * 1024}

    def instances(self, variant: Variant) -> int:
        return 3 if variant.param_dict["resource"] == "network" else 2

    # --- the victim ------------------------------------------------------------------------

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        seconds = int(p["seconds"])
        settle = f"sleep {SETTLE_S}; "
        if p["resource"] == "cpu":
            return settle + f"sysbench cpu --cpu-max-prime={int(p['prime'])} --threads=$(nproc) --time={seconds} run"
        if p["resource"] == "memory":
            return settle + sysbench_memory_command({"block": p["block"], "total": MEMORY_VICTIM_TOTAL, "oper": "write",
                                                     "threads": "all", "seconds": seconds})
        if p["resource"] == "disk":
            return settle + (f"{_direct_probe(SCRATCH, True)}; fio --name=victim --directory={SCRATCH} --rw=write "
                             f"--bs={p['bs']} --size={p['size']} --runtime={seconds} --time_based --ioengine=psync "
                             "--direct=$direct --output-format=json")
        return settle + f"iperf3 -c {peer(2)} -p {PORTS['victim']} -t {seconds} -J"

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        resource = (params or {}).get("resource")
        if resource is None:
            resource = "disk" if '"fio version"' in text else "network" if '"start"' in text else "sysbench"
        if resource in ("cpu", "memory", "sysbench"):
            return parse_sysbench(text, source, self._victim_expected(params) if resource != "sysbench" else None)
        if resource == "disk":
            if params and _DIRECT_LINE.search(text) is None:
                raise ParseError(source, "fio log lacks the 'virtrepro: direct=' line: O_DIRECT use unknown")
            records = parse_fio(text, source)
            if params and not any(r["metric"] == "bw" and r.get("direction") == "write" and r["value"] > 0 for r in records):
                raise ParseError(source, "the victim's fio job wrote nothing")
            return records
        return parse_iperf3(text, source)

    @staticmethod
    def _victim_expected(p: dict) -> dict:
        """What the sysbench victim of :meth:`run` echoes (its thread count is the instance's CPU count)."""
        if p["resource"] == "cpu":
            return sysbench_cpu_expected(p["prime"], "all", p["seconds"])
        return sysbench_memory_expected({"block": p["block"], "total": MEMORY_VICTIM_TOTAL, "oper": "write",
                                         "threads": "all", "seconds": p["seconds"]})

    # --- the neighbour and the remote end --------------------------------------------------

    def _stressor(self, p: dict) -> tuple[str, str]:
        """(shell that starts the neighbour's stressor in the background, what it is)."""
        if p["resource"] == "cpu":
            argv = (f"stress-ng --cpu $(nproc) --cpu-method matrixprod --timeout {STRESS_TIMEOUT_S}s "
                    f"--temp-path {NEIGHBOUR_DIR}")
        elif p["resource"] == "memory":
            argv = (f"stress-ng --vm $(nproc) --vm-bytes {p['vmbytes']} --timeout {STRESS_TIMEOUT_S}s "
                    f"--temp-path {NEIGHBOUR_DIR}")
        elif p["resource"] == "disk":
            argv = (f"fio --name={MARK}-neighbour --directory={NEIGHBOUR_DIR} --rw=write --bs={p['bs']} "
                    f"--size={p['size']} --runtime={STRESS_TIMEOUT_S} --time_based --ioengine=psync --direct=$direct")
        else:
            loop = (f"while :; do iperf3 -c {peer(2)} -p {PORTS['neighbour']} -t {STRESS_TIMEOUT_S} > /dev/null 2>&1; "
                    f"sleep 0.2; done # {MARK}-neighbour")
            argv = f"sh -c {shlex.quote(loop)}"
        start = f"mkdir -p {NEIGHBOUR_DIR} && "
        if p["resource"] == "disk":
            start += _direct_probe(NEIGHBOUR_DIR, True) + " > /dev/null; "
        return start + _background(argv, "neighbour") + "; " + _alive("neighbour", f"the {p['resource']} stressor"), argv

    def prepare(self, variant: Variant, config: dict | None = None) -> Preparation:
        p = variant.param_dict
        neighbour = self._stressor(p)[0] if p["neighbour"] == "stress" else "true"
        neighbour = f"{self._stop('neighbour', NEIGHBOUR_DIR)}; {neighbour}"
        if p["resource"] != "network":
            return Preparation(peer_start=neighbour)
        servers = "; ".join(
            f"{_background(f'iperf3 -s -p {port}', f'server-{port}')}; {_wait_listening(port)}" for port in PORTS.values()
        )
        # the same command runs in instances 1 and 2: each finds its role by its own address (native
        # instances share /run, so each role stops only its own leftovers first)
        return Preparation(peer_start=(f"if ip -o -4 addr show | grep -qF ' {peer(2)}/'; then {self._stop('server-*')}; {servers}; "
                                       f"else {neighbour}; fi"))

    @staticmethod
    def _stop(names: str = "*", directory: str | None = None) -> str:
        """Shell: stop every process group our pid files ``names`` name (TERM, then KILL after 5 s)."""
        return (
            f"for f in {PID_DIR}/{MARK}-{names}.pid; do [ -f \"$f\" ] || continue; pid=$(cat \"$f\"); "
            "kill -TERM -$pid $pid 2>/dev/null; i=0; "
            "while kill -0 -$pid 2>/dev/null || kill -0 $pid 2>/dev/null; do "
            "i=$((i+1)); [ $i -gt 50 ] && { kill -KILL -$pid $pid 2>/dev/null; break; }; sleep 0.1; done; "
            f"rm -f \"$f\"; done; {f'rm -rf {directory}; ' if directory else ''}true"
        )

    def cleanup(self, variant: Variant) -> str:
        return self._stop("*", NEIGHBOUR_DIR)
