"""Application workloads of the thesis (Kumar 2013, section 1.2 and chapter 1's list of
workload-specific benchmarks): nginx under wrk, PostgreSQL under pgbench, RabbitMQ under a
publisher/consumer load, pyperformance's benchmarks under pyperf, and ``openssl speed``.

The servers run in instance 1 of the platform (a second guest, or for native a second
network namespace) and the load generator in instance 0, over the private network, like
netperf's netserver. Each server is started by the prepare stage (:meth:`prepare`) in a directory of its own
(``/var/tmp/virtrepro/peer-<server>-<address>``) with its own configuration, port and pid
file, never as the system service of its package (those are masked in the guest image), and
:meth:`cleanup` stops it and removes the directory after every run, also a failed one. RabbitMQ's
broker is the exception: it is started once for a measurement job (``peer_scope`` "job": its Erlang
VM takes minutes to boot in a QEMU TCG guest) and serves every repetition of the job's variant,
frozen with its instance between the platform's turns; each run purges its queue first, and the
sidecar's ``server`` says in which round the broker started.

MongoDB and Apache Jena TDB, the thesis' other middleware components, are in no archive
this project can reach; the notebook lists them as not run (:data:`NOT_RUN`).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from ..parsers import ParseError
from ..parsers.apps import (PYPERF_BEGIN, PYPERF_END, parse_amqp_load, parse_openssl_speed, parse_pgbench,
                            parse_pyperf, parse_wrk)
from .base import SCRATCH, SCRATCH_DIR, Benchmark, Preparation, Variant, peer, threads_arg
from .network import _wait_listening

# components of the thesis' Intelligent River middleware that are not run, and why
NOT_RUN = {
    "MongoDB": "removed from Debian's archive (SSPL licence); its server builds are published only on MongoDB's "
               "own download servers, which the machines this project runs on cannot reach",
    "Apache Jena TDB": "not packaged in Debian 12; published only by the Apache project (downloads, Maven "
                       "Central), which the machines this project runs on cannot reach",
}

PEER_ROOT = SCRATCH_DIR  # a server's data (PostgreSQL's) lives on the scratch file system too


def peer_dir(server: str) -> str:
    """The server's directory in instance 1, named after its private address: two testbeds on
    one machine (native instances share the host's file system) never share it."""
    return f"{PEER_ROOT}/peer-{server}-{peer(1)}"


def _check_labels(records: list[dict], source: str, tool: str, **expected) -> list[dict]:
    for name, value in expected.items():
        found = {record.get(name) for record in records}
        if found != {value}:
            raise ParseError(source, f"{tool} log is not a run with {name} {value} (found {sorted(map(str, found))})")
    return records


class NginxWrk(Benchmark):
    """nginx serving one static file of ``file_kb`` KiB to wrk (HTTP/1.1 keep-alive)."""

    name = "nginx_wrk"
    parameters = """
        required: [file_kb, connections, threads, seconds]
        properties:
          file_kb: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 1, maximum: 1048576}}
          connections: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 1, maximum: 10000}}
          threads: {$ref: "#/$defs/count_or_all"}
          seconds: {type: integer, minimum: 1}
    """
    metric_declaration = ("application", """
        latency_avg     ms             lower
        latency_max     ms             lower
        latency_p50     ms             lower
        latency_p75     ms             lower
        latency_p90     ms             lower
        latency_p99     ms             lower
        requests        requests       higher
        requests_per_s  requests/s     higher
        transfer        MiB/s          higher
    """)
    tool = "wrk"
    packages = ("nginx", "wrk")
    programs = ("wrk", "nginx", "ss")
    version_command = "nginx -v 2>&1 | sed 's/.*: //'; wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2"
    PORT = 8080

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [self._variant(file_kb=size, connections=connections, threads=params["threads"], seconds=params["seconds"])
                for size in params["file_kb"] for connections in params["connections"]]

    def instances(self, variant: Variant) -> int:
        return 2

    def prepare(self, variant: Variant, config: dict | None = None) -> Preparation:
        """nginx serving one file of ``file_kb`` in instance 1."""
        d = peer_dir("nginx")
        conf = (
            "worker_processes auto;\\n"
            f"pid {d}/nginx.pid;\\n"
            f"error_log {d}/logs/error.log;\\n"
            "events { worker_connections 4096; }\\n"
            "http {\\n  access_log off;\\n  sendfile on;\\n  keepalive_requests 1000000;\\n"
            f"  server {{ listen {self.PORT}; root {d}/html; }}\\n}}\\n"
        )
        return Preparation(peer_start=(
            f"{self.cleanup(variant)}; mkdir -p {d}/html {d}/logs && "
            f"head -c {int(variant.param_dict['file_kb']) * 1024} /dev/urandom > {d}/html/file.bin && "
            f"chmod -R a+rX {d} && printf '{conf}' > {d}/nginx.conf && nginx -p {d} -c {d}/nginx.conf && "
            + _wait_listening(self.PORT)
        ))

    def cleanup(self, variant: Variant) -> str:
        d = peer_dir("nginx")
        return (f"if [ -f {d}/nginx.pid ]; then pid=$(cat {d}/nginx.pid); kill $pid 2>/dev/null; "
                f"i=0; while kill -0 $pid 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; fi; "
                f"rm -rf {d}; true")

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        threads = threads_arg(p["threads"])
        return (f"t={threads}; c={int(p['connections'])}; [ $t -gt $c ] && t=$c; "
                f"wrk -t$t -c$c -d{int(p['seconds'])}s --latency http://{peer(1)}:{self.PORT}/file.bin")

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        records = parse_wrk(text, source)
        return _check_labels(records, source, "wrk", connections=int(params["connections"])) if params else records


class Pgbench(Benchmark):
    """PostgreSQL under pgbench: TPC-B-like read/write or select-only transactions from
    ``clients`` connections for ``seconds``, on a database of scale ``scale`` (initialised by
    the server side before the run, so only the timed run is in the log)."""

    name = "pgbench"
    parameters = """
        required: [modes, scale, clients, seconds]
        properties:
          modes: {type: array, minItems: 1, uniqueItems: true, items: {enum: [tpcb, select]}}
          scale: {type: integer, minimum: 1, description: "pgbench -s (1 = 100000 accounts, about 16 MB)"}
          clients: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 1, maximum: 1000}}
          seconds: {type: integer, minimum: 1}
          placements:
            type: array
            minItems: 1
            uniqueItems: true
            items: {enum: [unbound, same, split]}
            description: >-
              where client and server run: the scheduler's choice (unbound, the default), both on the
              instances' first CPU (same) or the server on the second (split); a bound variant's key
              names it
    """
    metric_declaration = ("application", """
        latency_avg   ms             lower
        tps           transactions/s higher
        transactions  transactions   higher
    """)
    tool = "pgbench"
    packages = ("postgresql",)
    programs = ("/usr/lib/postgresql/*/bin/pgbench", "/usr/lib/postgresql/*/bin/initdb", "/usr/lib/postgresql/*/bin/pg_ctl", "runuser")
    BIN = "$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
    check_command = f"test -x {BIN}/pgbench && test -x {BIN}/initdb && id postgres"
    version_command = f"{BIN}/pgbench --version"
    PORT = 5432
    scratch = "peers"
    # a bound placement: which CPU of its own instance's Cpus_allowed_list (0: the first) the client
    # (instance 0) and the server (instance 1) are bound to: a container's CPUs are the host's, so
    # `same` is one host CPU; a VM's are its vCPUs, so there `same` is each guest's first vCPU
    PLACEMENTS = {"same": {"client_cpu": 0, "server_cpu": 0}, "split": {"client_cpu": 0, "server_cpu": 1}}

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [self._variant(mode=mode, scale=params["scale"], clients=clients, seconds=params["seconds"],
                              **({} if placement == "unbound" else {"placement": placement}))
                for placement in params.get("placements", ["unbound"])
                for mode in params["modes"] for clients in params["clients"]]

    def instances(self, variant: Variant) -> int:
        return 2

    def placement(self, variant: Variant) -> dict | None:
        bound = self.PLACEMENTS.get(variant.param_dict.get("placement"))
        return None if bound is None else {
            **bound, "of": "each instance's Cpus_allowed_list (0: its first CPU)",
            "how": "taskset -c: pgbench (one thread), and the server's initdb and pg_ctl (its processes inherit it)"}

    def _bound(self, variant: Variant, side: str) -> tuple[str, str]:
        """The shell statement that finds the CPU ``side`` is bound to (in its own instance), and the
        prefix that binds a command to it; nothing for an unbound variant."""
        placement = variant.param_dict.get("placement")
        bound = self.PLACEMENTS.get(placement)
        if bound is None:
            return "", ""
        index = bound[side]
        find = ("sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr ',' '\\n' | "
                f"awk -F- '{{for (i = $1; i <= (NF > 1 ? $2 : $1); i++) if (k++ == {index}) {{print i; exit}}}}'")
        return (f'cpu=$({find}); [ -n "$cpu" ] || {{ echo "pgbench placement {placement}: this instance has no '
                f'CPU number {index + 1} in its Cpus_allowed_list" >&2; exit 2; }}; ', "taskset -c $cpu ")

    def prepare(self, variant: Variant, config: dict | None = None) -> Preparation:
        """A PostgreSQL server in instance 1, its database initialised at the variant's ``scale``
        (bound to the placement's server CPU: its backends inherit it)."""
        d = peer_dir("pgbench")
        b = self.BIN
        options = shlex.quote(f"-c listen_addresses='*' -c port={self.PORT} -c unix_socket_directories={d}")
        find, bind = self._bound(variant, "server_cpu")
        as_postgres = f"{bind}runuser -u postgres --"
        return Preparation(peer_start_timeout=900, peer_start=(  # initdb, start and pgbench -i: minutes under TCG
            f"{self.cleanup(variant)}; {find}b={b}; mkdir -p {d} && chown postgres {d} && "
            f"{{ {as_postgres} $b/initdb -D {d}/data --auth=trust -U postgres > {d}/initdb.log 2>&1 "
            f"|| {{ cat {d}/initdb.log; exit 1; }}; }} && "
            # trust on every address: only the instances' private network reaches this server
            f"echo 'host all all 0.0.0.0/0 trust' >> {d}/data/pg_hba.conf && "
            f"{{ {as_postgres} $b/pg_ctl -D {d}/data -l {d}/server.log -o {options} -w -t 600 start > /dev/null "
            f"|| {{ tail -n 30 {d}/server.log; exit 1; }}; }} && "
            f"{{ $b/pgbench -h 127.0.0.1 -p {self.PORT} -U postgres -i -q -s {int(variant.param_dict['scale'])} "
            f"postgres > {d}/init.log 2>&1 || {{ tail -n 30 {d}/init.log; exit 1; }}; }}"
        ))

    def cleanup(self, variant: Variant) -> str:
        d = peer_dir("pgbench")
        return (f"b={self.BIN}; if [ -f {d}/data/postmaster.pid ]; then "
                f"runuser -u postgres -- $b/pg_ctl -D {d}/data -m fast -w -t 60 stop > /dev/null 2>&1 || "
                f"kill -9 $(head -n 1 {d}/data/postmaster.pid) 2>/dev/null; fi; rm -rf {d}; true")

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        clients = int(p["clients"])
        select = " -S" if p["mode"] == "select" else ""
        find, bind = self._bound(variant, "client_cpu")
        threads = "j=1; " if bind else "j=$(nproc); [ $j -gt $c ] && j=$c; "  # bound: one CPU, one thread
        return (f"c={clients}; {find}{threads}"
                f"{bind}{self.BIN}/pgbench -h {peer(1)} -p {self.PORT} -U postgres "
                f"-c $c -j $j -T {int(p['seconds'])}{select} postgres")

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        records = parse_pgbench(text, source)
        if not params:
            return records
        kind = "select only" if params["mode"] == "select" else "TPC-B (sort of)"
        return _check_labels(records, source, "pgbench", transaction_type=kind, clients=int(params["clients"]),
                             scaling_factor=int(params["scale"]), duration_s=int(params["seconds"]))


class Rabbitmq(Benchmark):
    """RabbitMQ under a publisher/consumer load: ``producers`` processes publish ``messages``
    messages of ``size`` bytes to one queue while ``consumers`` processes consume and
    acknowledge them (``tools/amqp_load.py``, Python with Debian's pika, uploaded per run)."""

    name = "rabbitmq"
    parameters = """
        required: [messages, sizes, producers, consumers]
        properties:
          messages: {type: integer, minimum: 1}
          sizes: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 8}}
          producers: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 1, maximum: 64}}
          consumers: {type: integer, minimum: 1, maximum: 64}
    """
    metric_declaration = ("application", """
        latency_mean    ms             lower
        latency_p50     ms             lower
        latency_p95     ms             lower
        latency_p99     ms             lower
        messages_per_s  messages/s     higher
    """)
    tool = "rabbitmq"
    packages = ("rabbitmq-server", "python3-pika")
    programs = ("/usr/lib/rabbitmq/bin/rabbitmq-server", "epmd", "setsid", "ss",
                "/usr/bin/python3", "/usr/lib/python3/dist-packages/pika/__init__.py")
    check_command = "test -x /usr/lib/rabbitmq/bin/rabbitmq-server && /usr/bin/python3 -c 'import pika'"
    version_command = ("echo rabbitmq-server $(dpkg-query -W -f='${Version}' rabbitmq-server) "
                       "pika $(/usr/bin/python3 -c 'import pika; print(pika.__version__)')")
    scratch = "instance"
    PORT = 5672
    LOAD_SCRIPT = Path(__file__).parent / "tools" / "amqp_load.py"
    START_TIMEOUT = 900  # the Erlang VM boots in about 15 s natively, minutes under TCG

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [self._variant(messages=params["messages"], size=size, producers=producers, consumers=params["consumers"])
                for size in params["sizes"] for producers in params["producers"]]

    def instances(self, variant: Variant) -> int:
        return 2

    def _environment(self) -> str:
        d = peer_dir("rabbitmq")
        return (f"export HOME={d}/home RABBITMQ_NODENAME=virtrepro@localhost RABBITMQ_MNESIA_BASE={d}/mnesia "
                f"RABBITMQ_LOG_BASE={d}/log RABBITMQ_PID_FILE={d}/rabbitmq.pid RABBITMQ_CONFIG_FILE={d}/rabbitmq "
                f"RABBITMQ_ENABLED_PLUGINS_FILE={d}/enabled_plugins")

    def prepare(self, variant: Variant, config: dict | None = None) -> Preparation:
        """The broker in instance 1, and the load generator uploaded into every instance."""
        d = peer_dir("rabbitmq")
        return Preparation(uploads=((str(self.LOAD_SCRIPT), f"{SCRATCH}/amqp_load.py"),), peer_start_timeout=self.START_TIMEOUT,
                           peer_scope="job", peer_start=(
            f"{self.cleanup(variant)}; {self._environment()}; mkdir -p -m 700 {d}/home && "
            # guest/guest from other hosts: only the instances' private network reaches this broker
            f"printf 'loopback_users = none\\nlisteners.tcp.default = {self.PORT}\\n' > {d}/rabbitmq.conf && "
            # ready when the AMQP listener is up (RabbitMQ opens it last, once booted); not with
            # `rabbitmqctl wait`, which boots an Erlang VM of its own: seconds natively, a minute in TCG
            f"{{ setsid /usr/lib/rabbitmq/bin/rabbitmq-server > {d}/server.log 2>&1 < /dev/null & }} && "
            f"server=$! && echo $server > {d}/server.pgid && "
            + _wait_listening(self.PORT, self.START_TIMEOUT - 60, "$server", f"{d}/server.log")
        ))

    def cleanup(self, variant: Variant) -> str:
        # SIGTERM to the server's process group (setsid made it; `kill -SIG -PGID`: dash has no `--`): the Erlang VM shuts RabbitMQ down
        # cleanly, without `rabbitmqctl stop` (another VM boot); what is left after 60 s is killed
        d = peer_dir("rabbitmq")
        return (f"if [ -f {d}/server.pgid ]; then g=$(cat {d}/server.pgid); kill -TERM -$g 2>/dev/null; "
                f"i=0; while kill -0 -$g 2>/dev/null && [ $i -lt 600 ]; do i=$((i+1)); sleep 0.1; done; "
                f"kill -9 -$g 2>/dev/null; "
                # epmd refuses to stop until it has seen the node's connection close: ask again
                f"i=0; until epmd -kill > /dev/null 2>&1 || ! epmd -names > /dev/null 2>&1 || [ $i -ge 50 ]; do "
                f"i=$((i+1)); sleep 0.1; done; fi; rm -rf {d}; true")

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        return (f"/usr/bin/python3 {SCRATCH}/amqp_load.py --host {peer(1)} --port {self.PORT} "
                f"--messages {int(p['messages'])} --size {int(p['size'])} --producers {int(p['producers'])} "
                f"--consumers {int(p['consumers'])}")

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        records = parse_amqp_load(text, source)
        if not params:
            return records
        return _check_labels(records, source, "amqp_load", messages=int(params["messages"]), size=int(params["size"]),
                             producers=int(params["producers"]), consumers=int(params["consumers"]))


class Pyperformance(Benchmark):
    """One benchmark of the pyperformance suite under pyperf, run by the instance's own
    Python 3 (Debian's). pyperf and the benchmark's files come from this project's Python
    environment (the pinned pyperformance and pyperf packages) and are uploaded per run:
    the guests need no package index. ``mode``: fast, default or rigorous (pyperf's options);
    ``processes`` (optional): pyperf's worker processes (``-p``), with mode default only (pyperf's
    fast and rigorous set their own count, 10 and 40)."""

    name = "pyperformance"
    parameters = """
        required: [benchmarks, mode]
        properties:
          benchmarks:
            type: array
            minItems: 1
            uniqueItems: true
            description: names of pyperformance benchmarks that need nothing beyond the standard library and pyperf
            items: {enum: [chaos, deepcopy, deltablue, fannkuch, float, go, hexiom, json_dumps, json_loads, logging,
                           nbody, nqueens, pathlib, pickle_pure_python, pidigits, raytrace, regex_compile, regex_dna,
                           regex_effbot, regex_v8, richards, scimark, spectral_norm, unpack_sequence, generators,
                           coroutines]}
          mode: {enum: [fast, default, rigorous]}
          processes: {type: integer, minimum: 1, description: "pyperf -p (mode default only); absent: pyperf's 20"}
    """
    metric_declaration = ("application", """
        time        s              lower
        time_stdev  s              lower
    """)
    tool = "pyperformance"
    packages = ("python3", "python3-psutil")
    programs = ("/usr/bin/python3", "/usr/lib/python3/dist-packages/psutil/__init__.py")
    check_command = "/usr/bin/python3 -c 'import psutil'"
    version_command = "/usr/bin/python3 --version"
    scratch = "instance"
    MODES = {"fast": "--fast", "default": "", "rigorous": "--rigorous"}

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        processes = params.get("processes")
        if processes is not None and params["mode"] != "default":
            raise ValueError(f"pyperformance: processes ({processes}) needs mode default: pyperf's mode "
                             f"{params['mode']} sets its own count and ignores -p")
        extra = {} if processes is None else {"processes": int(processes)}
        return [self._variant(benchmark=name, mode=params["mode"], **extra) for name in params["benchmarks"]]

    @staticmethod
    def _package_dir(module: str) -> Path:
        import importlib.util

        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            raise ValueError(f"the Python package {module} is not installed in this environment (run the set-up script)")
        return Path(spec.origin).parent

    def prepare(self, variant: Variant, config: dict | None = None) -> Preparation:
        """pyperf and the variant's benchmark from the controller's pyperformance, uploaded."""
        pyperf = self._package_dir("pyperf")
        bench = self._package_dir("pyperformance") / "data-files" / "benchmarks" / f"bm_{variant.param_dict['benchmark']}"
        if not bench.is_dir():
            raise ValueError(f"pyperformance has no benchmark {variant.param_dict['benchmark']!r} ({bench} is missing)")
        files = [(path, f"{SCRATCH}/lib/pyperf/{path.relative_to(pyperf)}") for path in sorted(pyperf.rglob("*"))
                 if path.is_file() and "__pycache__" not in path.parts and "tests" not in path.relative_to(pyperf).parts]
        files += [(path, f"{SCRATCH}/{bench.name}/{path.relative_to(bench)}") for path in sorted(bench.rglob("*"))
                  if path.is_file() and "__pycache__" not in path.parts]
        return Preparation(uploads=tuple((str(local), remote) for local, remote in files))

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        flag = " ".join(filter(None, [self.MODES[p["mode"]], f"-p {int(p['processes'])}" if "processes" in p else ""]))
        return (
            f"cd {SCRATCH} && PYTHONPATH={SCRATCH}/lib /usr/bin/python3 bm_{p['benchmark']}/run_benchmark.py "
            f"{flag} --inherit-environ=PYTHONPATH -o {SCRATCH}/result.json; status=$?; "
            f"echo '{PYPERF_BEGIN}'; [ -f {SCRATCH}/result.json ] && cat {SCRATCH}/result.json; echo; "
            f"echo '{PYPERF_END}'; exit $status"
        )

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        records = parse_pyperf(text, source)
        return _check_labels(records, source, "pyperf", benchmark=params["benchmark"]) if params else records


class OpensslSpeed(Benchmark):
    """``openssl speed`` for one algorithm: digests and ciphers through EVP (throughput per
    block size), public-key algorithms (rsa2048, ecdsap256, ...) as sign/verify rates.
    Wall-clock time (``-elapsed``), since user CPU time hides what a hypervisor steals."""

    name = "openssl_speed"
    parameters = """
        required: [algorithms, seconds]
        properties:
          algorithms:
            type: array
            minItems: 1
            uniqueItems: true
            description: digests and ciphers (run through EVP) or rsaN / dsaN (sign and verify)
            items: {type: string, pattern: "^([a-z0-9]+(-[a-z0-9]+)*|(rsa|dsa)[0-9]+)$"}
          seconds: {type: integer, minimum: 1}
          block_bytes:
            type: [integer, "null"]
            minimum: 1
            description: one block size for digests and ciphers (openssl speed -bytes); absent or null, its six sizes
    """
    metric_declaration = ("cpu", """
        sign_per_s    operations/s   higher
        throughput    kB/s           higher
        verify_per_s  operations/s   higher
    """)
    tool = "openssl"
    version_command = "openssl version"
    PUBLIC_KEY = ("rsa", "dsa", "ecdsa", "ecdh", "eddsa", "ed25519", "ed448", "ffdh")

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        # block_bytes: one block size for digests and ciphers (openssl's -bytes; 1 run instead of 6);
        # absent: openssl's six sizes, 16 B to 16 KiB. Public-key algorithms have no block size.
        block = params.get("block_bytes")
        return [self._variant(algorithm=algorithm, seconds=params["seconds"],
                              **({"bytes": block} if block and not algorithm.startswith(self.PUBLIC_KEY) else {}))
                for algorithm in params["algorithms"]]

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        algorithm = p["algorithm"]
        evp = "" if algorithm.startswith(self.PUBLIC_KEY) else "-evp "
        size = f"-bytes {int(p['bytes'])} " if "bytes" in p else ""
        return f"openssl speed -seconds {int(p['seconds'])} -elapsed {size}{evp}{shlex.quote(algorithm)}"

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        records = parse_openssl_speed(text, source)
        if params:
            wanted = params["algorithm"].lower().replace("-", "")
            found = {str(r["algorithm"]).lower().replace("-", "").replace(" ", "") for r in records}
            if found != {wanted}:
                raise ParseError(source, f"openssl speed log is not a run of {params['algorithm']} (found {sorted(found)})")
            sizes = {r["block_bytes"] for r in records if "block_bytes" in r}
            if "bytes" in params and sizes != {int(params["bytes"])}:
                raise ParseError(source, f"openssl speed log has block sizes {sorted(sizes)}, not {params['bytes']} alone")
        return records
