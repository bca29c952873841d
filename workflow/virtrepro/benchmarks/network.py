"""Network benchmarks between two instances of one platform over its private network.

netserver / the iperf3 server run in instance 1 (a second guest, or for native a
second network namespace), the client in instance 0; the servers are stopped after
every run, so nothing is left listening.

Client and server are bound to one CPU, the same on every platform (:data:`PLACEMENT`):
left to the scheduler, a request-response test measures where it put the two
processes (on a 2-CPU VM host TCP_RR did 35-45 k transactions/s on one CPU and
2-3 k across two), not the network path (docs/methodology.md, "Fair conditions").
"""

from __future__ import annotations

from ..parsers import ParseError, parse_iperf3, parse_netperf
from .base import Benchmark, Preparation, Variant, peer


def _start_server(argv: str, pid_file: str, port: int) -> str:
    """Shell: start a server in the background with its pid in ``pid_file`` and wait until it listens.

    The pid file, not the process name, says what to stop: a native instance
    shares the host's processes, and a server of the user's must not be killed."""
    return (
        f"{_stop_server(pid_file)}; setsid {argv} < /dev/null > /dev/null 2>&1 & echo $! > {pid_file}; "
        + _wait_listening(port)
    )


def _stop_server(pid_file: str) -> str:
    return f"[ -f {pid_file} ] && kill $(cat {pid_file}) 2>/dev/null; rm -f {pid_file}; true"


def _wait_listening(port: int, seconds: int = 5, pid: str | None = None, log: str | None = None) -> str:
    """Shell: wait up to ``seconds`` until something listens on TCP ``port``. With ``pid`` (a
    shell expression for the server's process id) the wait ends early, with the last lines of
    ``log``, when that process is gone: a server that dies while starting is not waited for."""
    gone = (f"if ! kill -0 {pid} 2>/dev/null; then echo 'server exited before listening on port {port}'; "
            f"{f'tail -n 30 {log}; ' if log else ''}exit 1; fi; ") if pid else ""
    return (
        f"i=0; while ! ss -Hltn 'sport = :{port}' | grep -q .; do {gone}"
        f"i=$((i+1)); [ $i -gt {seconds * 10} ] && echo 'server is not listening on port {port}' && exit 1; sleep 0.1; done"
    )


# CPU of the client (instance 0) and of the server (instance 1), each numbered in its own instance:
# CPU 0 of a native network namespace or a container is the host's CPU 0, so both ends share one
# CPU; in two VMs each end is on its VM's first vCPU (where the vCPU threads run is the VM's layer).
PLACEMENT = {"client_cpu": 0, "server_cpu": 0}


# what iperf3 reports, for each benchmark that runs it (Benchmark.metric_declaration)
IPERF3_METRICS = """
    cpu_utilization_host    %              lower
    cpu_utilization_remote  %              lower
    jitter                  ms             lower
    loss                    %              lower
    lost_datagrams          datagrams      lower
    retransmits             segments       lower
    throughput              Mbit/s         higher
    total_datagrams         datagrams      higher
    transfer                bytes          higher
"""


class Netperf(Benchmark):
    """netperf TCP_RR latency and TCP_STREAM bandwidth over a sweep of message sizes
    (Walters 2008 Fig. 1, Regola 2010 Fig. 2). One variant per test and message size."""

    name = "netperf"
    parameters = """
        required: [seconds, rr_sizes, stream_sizes]
        properties:
          seconds: {type: integer, minimum: 1}
          rr_sizes: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 1}}
          stream_sizes: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 1}}
    """
    metric_declaration = ("network", """
        half_round_trip_latency  us             lower
        round_trip_latency       us             lower
        rtt_latency_mean         us             lower
        rtt_latency_p50          us             lower
        rtt_latency_p99          us             lower
        rtt_latency_stddev       us             lower
        throughput               Mbit/s         higher
        transaction_rate         trans/s        higher
    """, "half_round_trip_latency", "throughput")
    tool = "netperf"
    programs = ("netperf", "netserver", "ss", "setsid")
    version_command = "netperf -V 2>&1 | sed -n 's/^Netperf version \\(.*\\)/netperf \\1/p'"
    PORT = 12865
    PID_FILE = "/run/virtrepro-netserver.pid"

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [
            self._variant(test="TCP_RR", size=size, seconds=params["seconds"]) for size in params["rr_sizes"]
        ] + [
            self._variant(test="TCP_STREAM", size=size, seconds=params["seconds"]) for size in params["stream_sizes"]
        ]

    def instances(self, variant: Variant) -> int:
        return 2

    def prepare(self, variant: Variant, config: dict | None = None) -> Preparation:
        return Preparation(peer_start=_start_server(f"netserver -D -p {self.PORT}", self.PID_FILE, self.PORT))

    def cleanup(self, variant: Variant) -> str:
        return _stop_server(self.PID_FILE)

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        size, seconds = int(p["size"]), int(p["seconds"])
        options = f"-r {size},{size}" if p["test"] == "TCP_RR" else f"-m {size}"
        cpus = f"{PLACEMENT['client_cpu']},{PLACEMENT['server_cpu']}"
        return f"netperf -H {peer(1)} -p {self.PORT} -t {p['test']} -l {seconds} -T {cpus} -- {options}"

    def placement(self, variant: Variant) -> dict:
        return {**PLACEMENT, "how": "netperf -T client,server (netserver binds its test process)"}

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        records = parse_netperf(text, source)
        if params:
            field = "request_size" if params["test"] == "TCP_RR" else "message_size"
            if records[0]["test"] != params["test"] or records[0].get(field) != int(params["size"]):
                raise ParseError(source, f"netperf log is not a {params['test']} run with {field} {params['size']}")
        return records


class Iperf3(Benchmark):
    """iperf3 TCP bandwidth between two instances (thesis chapter 4 network)."""

    name = "iperf3"
    parameters = """
        required: [seconds, streams]
        properties:
          seconds: {type: integer, minimum: 1}
          streams: {type: array, minItems: 1, uniqueItems: true, items: {type: integer, minimum: 1, maximum: 128}}
    """
    metric_declaration = ("network", IPERF3_METRICS, "throughput")
    tool = "iperf3"
    programs = ("iperf3", "ss", "setsid")
    version_command = "iperf3 --version 2>&1 | head -n 1 | cut -d' ' -f1-2"
    PORT = 5201
    PID_FILE = "/run/virtrepro-iperf3-server.pid"

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        return parse_iperf3(text, source)

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        return [self._variant(streams=streams, seconds=params["seconds"]) for streams in params["streams"]]

    def instances(self, variant: Variant) -> int:
        return 2

    def prepare(self, variant: Variant, config: dict | None = None) -> Preparation:
        return Preparation(peer_start=_start_server(f"iperf3 -s -p {self.PORT}", self.PID_FILE, self.PORT))

    def cleanup(self, variant: Variant) -> str:
        return _stop_server(self.PID_FILE)

    def run(self, variant: Variant) -> str:
        p = variant.param_dict
        cpus = f"{PLACEMENT['client_cpu']},{PLACEMENT['server_cpu']}"
        return f"iperf3 -c {peer(1)} -p {self.PORT} -t {int(p['seconds'])} -P {int(p['streams'])} -A {cpus} -J"

    def placement(self, variant: Variant) -> dict:
        return {**PLACEMENT, "how": "iperf3 -A client,server (the server binds itself for the test)"}
