"""HPC Challenge (HPCC 1.5) on one instance: HPL, STREAM, RandomAccess, PingPong... (Kudryavtsev 2012 Fig. 3)."""

from __future__ import annotations

import math
import re

from ..declarations import regimes
from ..parsers import ParseError, TruncatedLogError, parse_hpcc, parse_hpccinf
from .base import (HOSTS, MPIRUN_SCHEDULED, SCRATCH, Benchmark, Preparation, Variant, across_hosts, check_rank_map,
                   mpi_across_instances,
                   mpi_spread)

# hpccinf.txt: the HPL part (lines 1-31) follows HPL's defaults except N, NB and P x Q; then PTRANS
_HPCCINF = """HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
@N@         Ns
1            # of NBs
@NB@           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
@P@            Ps
@Q@            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
"""

_FACTS = re.compile(
    r"^virtrepro: hpcc procs=(?P<procs>\d+) mem_total_kb=(?P<mem_kb>\d+) N=(?P<n>\d+) NB=(?P<nb>\d+)"
    r" P=(?P<p>\d+) Q=(?P<q>\d+)(?: nodes=(?P<nodes>\d+))?(?: usable_kb=(?P<usable_kb>\d+) llc_kb=(?P<llc_kb>\d+))?\s*$",
    re.M,
)
_SECTIONS = ("mpirun output", "hpccinf.txt", "hpccoutf.txt")


def problem_size(memory_fraction: float, mem_total_kb: int, nb: int) -> int:
    """The HPL N whose N x N matrix of doubles fills ``memory_fraction`` of the memory, a multiple of NB."""
    return int(math.sqrt(memory_fraction * mem_total_kb * 1024 / 8) / nb) * nb


# N sized for STREAM's rule is used only while HPL's matrix stays within this share of the memory
STREAM_MEMORY_CAP = 0.8


def sized_n(n: int, usable_kb: int, nb: int, stream_multiple: float | None, llc_kb: int, procs: int) -> int:
    """HPL N (fixed, or from the memory: :func:`problem_size`) raised where asked (``stream_multiple``)
    until HPCC's STREAM arrays are that many times the last-level cache per process
    (regimes.hpcc_min_n), unless that matrix would take more than STREAM_MEMORY_CAP of the memory
    (the regime label then says ``cpu-cache``). ``usable_kb``: all instances' usable memory together."""
    if stream_multiple and llc_kb:
        wanted = regimes.hpcc_min_n(llc_kb * 1024, procs, nb, stream_multiple)
        if wanted * wanted * 8 <= STREAM_MEMORY_CAP * usable_kb * 1024:
            n = max(n, wanted)
    return n


def process_grid(procs: int) -> tuple[int, int]:
    """P x Q = procs with P <= Q and P as large as possible (square when it can be)."""
    p = int(math.isqrt(procs))
    while procs % p:
        p -= 1
    return p, procs // p


class Hpcc(Benchmark):
    """HPCC on every core (or ``procs``) of one instance with one MPI process per core.

    The command writes ``hpccinf.txt`` in the run's scratch directory: N is fixed
    (``n``) or sized so that HPL's matrix takes ``memory_fraction`` of the
    instance's usable memory (MemTotal, or its cgroup limit where lower), and with
    ``stream_llc_multiple`` at least so large that STREAM's arrays (HPCC sizes them from
    N) are that many times the last-level cache per process (:func:`sized_n`); NB from
    the configuration; the process grid is
    as square as the process count allows. It prints a line with the facts it used,
    runs ``mpirun -np <procs> hpcc`` there, and copies ``hpccinf.txt`` and
    ``hpccoutf.txt`` into the log between ``virtrepro: begin/end`` marker lines
    (hpcc writes its results to that file and appends to it: it is removed first).
    """

    name = "hpcc"
    parameters = """
        required: [procs, nb]
        oneOf:
          - required: [n]
          - required: [memory_fraction]
        properties:
          procs: {$ref: "#/$defs/count_or_all"}
          nodes:
            description: instances HPCC runs across (MPI over the private network); procs is per instance
            type: array
            minItems: 1
            uniqueItems: true
            items: {type: integer, minimum: 1, maximum: 20}
          across: {$ref: "#/$defs/mpi_across"}
          n: {type: integer, minimum: 100}
          stream_llc_multiple:
            description: raise N until HPCC's STREAM arrays are this many times the last-level cache per process
            type: number
            minimum: 1
          memory_fraction: {type: number, exclusiveMinimum: 0, maximum: 0.9}
          nb: {type: integer, minimum: 1, maximum: 1024}
    """
    metric_declaration = ("hpc", """
        avg_ping_pong_bandwidth           GB/s           higher
        avg_ping_pong_latency             us             lower
        hpl_gflops                        Gflop/s        higher cpu
        hpl_tflops                        Tflop/s        higher cpu
        hpl_time                          s              lower cpu
        max_ping_pong_bandwidth           GB/s           higher
        max_ping_pong_latency             us             lower
        min_ping_pong_bandwidth           GB/s           higher
        min_ping_pong_latency             us             lower
        mpi_fft                           Gflop/s        higher
        mpi_random_access                 GUP/s          higher
        mpi_random_access_lcg             GUP/s          higher
        naturally_ordered_ring_bandwidth  GB/s           higher
        naturally_ordered_ring_latency    us             lower
        ptrans                            GB/s           higher
        ptrans_time                       s              lower
        randomly_ordered_ring_bandwidth   GB/s           higher
        randomly_ordered_ring_latency     us             lower
        single_dgemm                      Gflop/s        higher cpu
        single_fft                        Gflop/s        higher cpu
        single_random_access              GUP/s          higher memory
        single_random_access_lcg          GUP/s          higher memory
        single_stream_add                 GB/s           higher memory
        single_stream_copy                GB/s           higher memory
        single_stream_scale               GB/s           higher memory
        single_stream_triad               GB/s           higher memory
        star_dgemm                        Gflop/s        higher cpu
        star_fft                          Gflop/s        higher cpu
        star_random_access                GUP/s          higher memory
        star_random_access_lcg            GUP/s          higher memory
        star_stream_add                   GB/s           higher memory
        star_stream_copy                  GB/s           higher memory
        star_stream_scale                 GB/s           higher memory
        star_stream_triad                 GB/s           higher memory
    """, "avg_ping_pong_latency", "hpl_gflops", "mpi_random_access", "single_stream_triad", "star_random_access")
    tool = "hpcc"
    packages = ("hpcc", "openmpi-bin", "openssh-client")
    programs = ("hpcc", "mpirun", "awk", "ssh")  # ssh: mpirun starts its daemons in the other instances
    version_command = "dpkg-query -W -f='hpcc ${Version}' hpcc 2>/dev/null || echo hpcc"
    scratch = "instance"
    measures = regimes.MEMORY  # Kudryavtsev 2012: N=30000 on 16 GB nodes; Youseff 2006: STREAM's memory bandwidth
    NOT_MEMORY = ("ping_pong", "ring")  # PingPong and ring latency and bandwidth: the network

    def regime(self, params: dict, record: dict, sidecar: dict) -> str | None:
        """STREAM's rule for every HPCC kernel sized from HPL's matrix: arrays (per process) at least
        four times the last-level cache of the instance and of the host its vCPUs run on."""
        if any(part in record["metric"] for part in self.NOT_MEMORY):
            return None
        instance, host, _ = regimes.sidecar_facts(sidecar)
        array = regimes.hpcc_stream_array_bytes(int(record["hpl_n"]), int(record["processes"]))
        return regimes.memory_regime(array, regimes.llc_bytes(instance, host))

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        has_n, has_fraction = params.get("n") is not None, params.get("memory_fraction") is not None
        if has_n == has_fraction:
            raise ValueError("hpcc: give exactly one of n and memory_fraction")
        size = {"n": int(params["n"])} if has_n else {"mem": float(params["memory_fraction"])}
        if params.get("stream_llc_multiple"):
            size["stream"] = params["stream_llc_multiple"]
        # one instance: no `nodes` in the key (the key runs on one instance always had)
        variants = []
        for nodes in params.get("nodes", [1]):
            spread = mpi_spread(params, nodes, platform)
            if spread is not None:
                variants.append(self._variant(procs=params["procs"], **size, nb=int(params["nb"]),
                                              **({"nodes": nodes} if nodes > 1 else {}), **spread))
        return variants

    def instances(self, variant: Variant) -> int:
        return int(variant.param_dict.get("nodes", 1))

    def prepare(self, variant: Variant, config: dict | None = None) -> Preparation:
        """Over several instances on one host, instance 0's mpirun logs in to the others over SSH."""
        return Preparation(peer_ssh=self.instances(variant) > 1 and not across_hosts(variant))

    def run(self, variant: Variant) -> str:
        """``procs`` processes per instance; with ``nodes`` > 1, mpirun in instance 0 starts the ranks of
        the other instances over SSH (a per-run key and their pinned host keys, see measure) and the
        problem size follows the memory of all of them. Across hosts (``across: hosts``) mpirun is
        started through the testbed's scheduler, ``procs`` ranks on each host, and prints its map."""
        p = variant.param_dict
        procs = "$(nproc)" if p["procs"] == "all" else str(int(p["procs"]))
        nodes = int(p.get("nodes", 1))
        fixed_n = int(p.get("n", 0))
        fraction = float(p.get("mem", 0))
        stream = float(p.get("stream", 0))
        nb = int(p["nb"])
        inf = _HPCCINF.replace("@NB@", str(nb)).replace("@N@", "$1").replace("@P@", "$2").replace("@Q@", "$3")
        if nodes == 1:
            mpirun = 'mpirun --allow-run-as-root --bind-to none -np "$procs" hpcc'
            facts = ""
        elif across_hosts(variant):
            mpirun = (f'{MPIRUN_SCHEDULED} --allow-run-as-root --bind-to none --display-map'
                      ' --map-by "ppr:$per_node:node" -np "$procs" hpcc')
            facts = f" nodes={nodes}"
        else:
            mpirun = (
                f"mpirun --allow-run-as-root --bind-to none --host \"$(echo {HOSTS} | sed -e \"s/,/:$per_node,/g\" -e \"s/\\$/:$per_node/\")\""
                f" -np \"$procs\" {mpi_across_instances()} hpcc"
            )
            facts = f" nodes={nodes}"
        return (
            f"cd {SCRATCH} || exit 1\n"
            f"per_node={procs}\n"
            f"procs=$((per_node * {nodes}))\n"
            "mem_kb=$(sed -n 's/^MemTotal: *\\([0-9]*\\) kB/\\1/p' /proc/meminfo)\n"
            # a container's memory limit caps what HPL may fill (cgroup v2, else v1 as the instance sees it)
            "limit=$(cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null | grep -m1 '^[0-9]')\n"
            "usable_kb=$mem_kb; [ -n \"$limit\" ] && [ $((limit / 1024)) -lt \"$mem_kb\" ] && usable_kb=$((limit / 1024))\n"
            # the largest cache of CPU 0 (the last level)
            "llc_kb=0; for f in /sys/devices/system/cpu/cpu0/cache/index*/size; do s=$(tr -d 'K\\n' < $f 2>/dev/null); "
            "[ -n \"$s\" ] && [ \"$s\" -gt \"$llc_kb\" ] && llc_kb=$s; done\n"
            f"set -- $(awk -v procs=\"$procs\" -v mem_kb=\"$usable_kb\" -v llc_kb=\"$llc_kb\" -v n={fixed_n} -v frac={fraction} -v stream={stream} -v nb={nb} -v nodes={nodes} 'BEGIN {{\n"
            "  if (n == 0) n = int(sqrt(frac * mem_kb * nodes * 1024 / 8) / nb) * nb\n"
            "  if (stream > 0 && llc_kb > 0) { s = nb * int((sqrt(3 * stream * llc_kb * 1024 * procs / 8) + nb - 1) / nb)\n"
            "    while (s * s * 8 / procs / 3 < stream * llc_kb * 1024) s += nb\n"
            f"    if (s * s * 8 <= {STREAM_MEMORY_CAP} * mem_kb * nodes * 1024 && s > n) n = s }}\n"
            "  p = int(sqrt(procs)); while (procs % p) p--\n"
            "  printf \"%d %d %d\\n\", n, p, procs / p }')\n"
            f'echo "virtrepro: hpcc procs=$procs mem_total_kb=$mem_kb N=$1 NB={nb} P=$2 Q=$3{facts} usable_kb=$usable_kb llc_kb=$llc_kb"\n'
            f"cat > hpccinf.txt <<EOF\n{inf}EOF\n"
            "rm -f hpccoutf.txt\n"
            'echo "virtrepro: begin mpirun output"\n'
            f"{mpirun}\n"
            "status=$?\n"
            'echo "virtrepro: end mpirun output"\n'
            'echo "virtrepro: begin hpccinf.txt"; cat hpccinf.txt; echo "virtrepro: end hpccinf.txt"\n'
            'echo "virtrepro: begin hpccoutf.txt"; [ -f hpccoutf.txt ] && cat hpccoutf.txt; echo "virtrepro: end hpccoutf.txt"\n'
            "exit $status"
        )

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        facts = _FACTS.search(text)
        if facts is None:
            raise TruncatedLogError(source, "hpcc log lacks the 'virtrepro: hpcc procs=...' line (the command did not get that far)")
        ran = {key: int(value) for key, value in facts.groupdict(default="1").items()}
        if facts.group("usable_kb") is None:  # logs from before the line said so: MemTotal, no cache size
            ran["usable_kb"], ran["llc_kb"] = ran["mem_kb"], 0
        sections = {}
        for name in _SECTIONS:
            begin, end = f"virtrepro: begin {name}\n", f"virtrepro: end {name}\n"
            start = text.find(begin)
            stop = text.find(end, start + len(begin)) if start >= 0 else -1
            if stop < 0:
                raise TruncatedLogError(source, f"hpcc log has no complete '{name}' section (killed or timed out?)")
            sections[name] = text[start + len(begin) : stop]
        inf = parse_hpccinf(sections["hpccinf.txt"], f"{source} (hpccinf.txt)")
        if (inf["N"], inf["NB"], inf["grids"]) != ([ran["n"]], [ran["nb"]], [(ran["p"], ran["q"])]):
            raise ParseError(source, f"hpccinf.txt in the log ({inf}) is not the one the command wrote ({ran})")
        if ran["p"] * ran["q"] != ran["procs"] or ran["n"] < ran["nb"]:
            raise ParseError(source, f"hpcc input N={ran['n']} NB={ran['nb']} P x Q={ran['p']}x{ran['q']} for {ran['procs']} processes is not usable")
        if params is not None:
            wanted = {"nb": int(params["nb"])}
            wanted["nodes"] = int(params.get("nodes", 1))
            usable_kb = ran["usable_kb"] * wanted["nodes"]
            base = int(params["n"]) if params.get("n") is not None else problem_size(float(params["mem"]), usable_kb, wanted["nb"])
            procs = int(params["procs"]) * wanted["nodes"] if params["procs"] != "all" else ran["procs"]
            wanted["n"] = sized_n(base, usable_kb, wanted["nb"], float(params.get("stream", 0)), ran["llc_kb"], procs)
            if params["procs"] != "all":
                wanted["procs"] = int(params["procs"]) * wanted["nodes"]
            wanted["p"], wanted["q"] = process_grid(wanted.get("procs", ran["procs"]))
            for key, value in wanted.items():
                if ran[key] != value:
                    raise ParseError(source, f"hpcc ran with {key}={ran[key]}, the configuration asks for {key}={value}")
        if params is not None and params.get("across") == "hosts":  # the ranks really were on that many nodes
            check_rank_map(sections["mpirun output"], source, ran["nodes"],
                           None if params["procs"] == "all" else int(params["procs"]))
        records = parse_hpcc(
            sections["hpccoutf.txt"],
            source,
            mpirun_log=sections["mpirun output"],
            hpccinf=sections["hpccinf.txt"],
            # the command removes hpccoutf.txt before the run: it holds exactly one report
            expected={"N": ran["n"], "NB": ran["nb"], "P": ran["p"], "Q": ran["q"], "processes": ran["procs"], "reports": 1},
        )
        # hpl_n on every record: HPCC sizes STREAM, RandomAccess, FFT and DGEMM from HPL's N (regime)
        return [{**r, "mem_total_kb": ran["mem_kb"], "nodes": ran["nodes"], "hpl_n": ran["n"]} for r in records]
