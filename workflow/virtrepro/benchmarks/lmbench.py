"""lmbench: the operating-system microbenchmarks that paravirtualization papers report (system
call and context switch latency, memory load latency over array sizes, memory bandwidth), which
show where a virtualization layer costs."""

from __future__ import annotations

from ..parsers.lmbench import parse_lmbench
from .base import SCRATCH, Benchmark, Variant

# Debian's lmbench keeps its programs out of PATH, in a directory per architecture
BIN = "/usr/lib/lmbench/bin/*"
# sed's script printing the first CPU of /proc/self/status's Cpus_allowed_list ("0-1" or "2,5": 0, 2)
FIRST_CPU = r"'s/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p'"
PROGRAMS = ("lat_syscall", "lat_ctx", "lat_mem_rd", "bw_mem")
# each program's parameters: the scale's key -> the variant key's name
_KEYS = {
    "lat_syscall": {"syscalls": "calls"},
    "lat_ctx": {"ctx_sizes_kb": "ctxkb", "ctx_processes": "procs"},
    "lat_mem_rd": {"mem_rd_mib": "rdmib", "mem_rd_strides": "strides"},
    "bw_mem": {"bw_mem_mib": "bwmib", "bw_mem_ops": "ops"},
}


def _joined(value) -> str:
    return "+".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def _split(value: str, cast=str) -> list:
    return [cast(part) for part in str(value).split("+")]


class Lmbench(Benchmark):
    """lmbench 3: the chosen programs one after the other in one run; each measurement is timed
    ``tries`` times (``-N``; lmbench reports the median), each timing as many iterations as fill
    ``enough`` microseconds (lmbench's ``ENOUGH``), so a run takes about as long on every platform
    (a TCG VM does fewer iterations). ``ENOUGH`` is given rather than calibrated: lmbench's own
    calibration at each program's start took 33 s of CPU for one null call on a busy host (0.01 s
    with it given) and would give each platform another timing window; the timing and loop
    overheads are not subtracted (``TIMING_O=0 LOOP_O=0``), as lmbench's own script does by default.

    ``cpu: one`` runs every program on one CPU, the first this run may use (``taskset``; the children
    lat_ctx forks inherit it), on every platform alike: lat_ctx then times switches between processes
    on one CPU, what it is meant to time. Left to the scheduler (``cpu: any``) its processes land on
    one CPU or on several from one timing to the next, and a switch across CPUs is a wake-up of
    another CPU: on the 2-CPU reference host, 2 processes of 0 KiB took 1.5 to 31 us within one
    platform (a 95 % interval 25 % of the mean after 30 runs), which says where the scheduler put
    them, not what a platform costs."""

    name = "lmbench"
    parameters = """
        required: [programs, tries, enough_us, cpu, syscalls, ctx_processes, ctx_sizes_kb, mem_rd_mib, mem_rd_strides, bw_mem_mib, bw_mem_ops]
        properties:
          programs: {type: array, minItems: 1, uniqueItems: true, items: {enum: [lat_syscall, lat_ctx, lat_mem_rd, bw_mem]}}
          tries: {type: integer, minimum: 1, description: "lmbench -N: how often each measurement is timed (it reports the median)"}
          enough_us: {type: integer, minimum: 1000, description: "lmbench's ENOUGH: microseconds each timing fills"}
          cpu: {enum: [one, any], description: "one: every program on the first CPU the run may use (taskset); any: where the scheduler puts it"}
          syscalls: {type: array, minItems: 1, uniqueItems: true, items: {enum: ["null", read, write, stat, fstat, open]}}
          ctx_processes: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 2}}
          ctx_sizes_kb: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 0}}
          mem_rd_mib: {type: integer, minimum: 1, description: "lat_mem_rd's largest array, MiB (a power of two)"}
          mem_rd_strides: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 4}}
          bw_mem_mib: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 1}}
          bw_mem_ops: {type: array, minItems: 1, uniqueItems: true, items: {enum: [rd, wr, rdwr, cp, frd, fwr, fcp, bzero, bcopy]}}
    """
    metric_declaration = ("os", """
        context_switch    us             lower
        memory_bandwidth  MB/s           higher memory
        memory_latency    ns             lower  memory
        syscall_latency   us             lower
    """)
    tool = "lmbench"
    packages = ("lmbench",)  # taskset (cpu: one) is util-linux's, Essential in Debian: in every image and host
    programs = tuple(f"{BIN}/{program}" for program in PROGRAMS)
    version_command = "dpkg-query -W -f='lmbench ${Version}' lmbench"
    scratch = "instance"  # lat_syscall stat and open use a file there

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        mib = int(params["mem_rd_mib"])
        if "lat_mem_rd" in params["programs"] and mib & (mib - 1):
            raise ValueError(f"lmbench: mem_rd_mib {mib} is not a power of two (lat_mem_rd's sizes are 2^k and "
                             "1.5 x 2^k: the largest it measures would not be the one asked for)")
        chosen = {key: _joined(params[scale_key]) for program in PROGRAMS if program in params["programs"]
                  for scale_key, key in _KEYS[program].items()}
        return [self._variant(tries=params["tries"], enough=params["enough_us"], cpu=params["cpu"], **chosen)]

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        n = int(p["tries"])
        steps = [f"export ENOUGH={int(p['enough'])} TIMING_O=0 LOOP_O=0"]
        run = BIN
        if p["cpu"] == "one":  # the first CPU of this run's affinity list (a container's cpuset, a guest's vCPUs)
            steps.append(f"cpu=$(sed -n {FIRST_CPU} /proc/self/status) && test -n \"$cpu\"")
            run = f"taskset -c $cpu {BIN}"
        if "calls" in p:
            file = f"{SCRATCH}/lat_syscall.file"
            steps.append(f"touch {file}")
            steps += [f"{run}/lat_syscall -N {n} {call} {file}" for call in _split(p["calls"])]
        if "ctxkb" in p:
            processes = " ".join(map(str, _split(p["procs"], int)))
            steps += [f"{run}/lat_ctx -N {n} -s {kb} {processes}" for kb in _split(p["ctxkb"], int)]
        if "rdmib" in p:
            strides = " ".join(map(str, _split(p["strides"], int)))
            steps.append(f"{run}/lat_mem_rd -N {n} {int(p['rdmib'])} {strides}")
        if "bwmib" in p:
            for op in _split(p["ops"]):  # bw_mem does not print its operation: a title says it, as lmbench's script does
                steps.append(f"echo '\"bw_mem {op}' >&2")
                steps += [f"{run}/bw_mem -N {n} {mib}m {op}" for mib in _split(p["bwmib"], int)]
        return " && ".join(steps)

    def placement(self, variant: Variant) -> dict | None:
        if variant.param_dict["cpu"] != "one":
            return None
        return {"cpu": "the first of the run's Cpus_allowed_list", "how": "taskset -c (lat_ctx's processes inherit it)"}

    @staticmethod
    def expected(params: dict) -> dict:
        """What a complete log of a run with these variant parameters holds (parse_lmbench's ``expected``)."""
        expected = {}
        if "calls" in params:
            expected["syscalls"] = _split(params["calls"])
        if "ctxkb" in params:
            expected["ctx"] = [(kb, n) for kb in _split(params["ctxkb"], int) for n in _split(params["procs"], int)]
        if "rdmib" in params:
            expected["mem_rd"] = {"strides": _split(params["strides"], int), "mib": int(params["rdmib"])}
        if "bwmib" in params:
            # bw_mem prints the size in 10^6 bytes with two decimals
            expected["bw_mem"] = [(op, round(mib * 1024 * 1024 / 1e6, 2))
                                  for op in _split(params["ops"]) for mib in _split(params["bwmib"], int)]
        return expected

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        return parse_lmbench(text, source, self.expected(params) if params else None)
