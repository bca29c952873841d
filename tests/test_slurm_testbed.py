"""The `slurm` testbed kind against a real SLURM (Debian's slurmctld, slurmd and munged, 22.05): a
controller and two compute nodes made of namespaces on this machine (``tests/slurmcluster.py``),
started here and torn down after the tests, also when they fail. The workflow is submitted as a
researcher on a cluster submits it (``sbatch scripts/slurm_run.sh``): it runs on the allocation's
first node and measures on both nodes at once; MPI across the two nodes (HPCC, ``across: hosts``)
starts through the scheduler; a cancelled job stops within seconds, keeps nothing partial as
complete, and the job submitted again measures only what is missing."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from conftest import require_tools
from slurmcluster import PARTITION, SlurmCluster
from virtrepro.rawdata import rawlog
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.platforms import catalog as platform_catalog
from virtrepro.testbed.kinds import SlurmTestbed

REPO = Path(__file__).resolve().parents[1]
TESTBED = "vr-slurm"
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    require_tools("slurmctld", "slurmd", "munged", "sbatch", "/usr/sbin/sshd", "sysbench")
    cluster = SlurmCluster(tmp_path_factory.mktemp("slurm"), 2)
    try:
        cluster.up()
        yield cluster
    finally:
        cluster.down()
        assert cluster.leftovers() == []


def config(cluster: SlurmCluster, work: Path, benchmarks: dict, platforms: tuple = ("native",)) -> Path:
    path = work / "config.yaml"
    path.write_text(yaml.safe_dump({
        "testbed": TESTBED, "platforms": list(platforms), "benchmarks": list(benchmarks), "notebooks": [], "scale": "quick",
        "data_dir": str(work / "data"), "figures_dir": str(work / "figures"),
        "testbeds": {TESTBED: cluster.testbed_spec()}, "scales": {"quick": benchmarks},
    }))
    return path


def submit(cluster: SlurmCluster, work: Path, configfile: Path) -> str:
    """sbatch of the repository's script, as a user submits it: returns the job id."""
    env = {**cluster.env(), "PYTHONPATH": str(REPO / "workflow"), "VIRTREPRO_STATE": str(work / "state")}
    for name in ("VIRTREPRO_CONFIG", "VIRTREPRO_TESTBED_OWNER", "VIRTREPRO_INVOCATION"):
        env.pop(name, None)
    result = subprocess.run(["sbatch", "--parsable", "-N", "2", "-p", PARTITION, "-o", str(work / "slurm-%j.out"),
                             "-D", str(REPO), str(REPO / "scripts" / "slurm_run.sh"), "measurements", "--snakefile",
                             str(REPO / "Snakefile"), "--directory", str(work), "--configfile", str(configfile)],
                            capture_output=True, text=True, env=env, timeout=60, check=True)
    return result.stdout.strip().split(";")[0]


def wait_gone(cluster: SlurmCluster, job: str, timeout: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        state = cluster.run("squeue", "-h", "-j", job, "-o", "%T", check=False).stdout.strip()
        if not state:
            return time.monotonic() - start
        time.sleep(0.5)
    raise AssertionError(f"job {job} still there after {timeout} s: {state}")


def sidecars(work: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((work / "data" / "raw" / TESTBED).glob("*/*/*/rep-*.json"))]


def parse_utc(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


TINY = {
    "sysbench_cpu": {"repetitions": 2, "threads": [1, "all"], "cpu_max_prime": 5000, "seconds": 1},
    "sysbench_memory": {"repetitions": 2, "operations": ["read", "write"], "block_sizes": ["4K", "1M"], "threads": [1],
                        "total_size": "1G", "seconds": 1},
}


def test_the_testbed_is_the_allocation_and_refuses_to_run_outside_one(cluster):
    outside = SlurmTestbed(TESTBED, cluster.testbed_spec(), environ={**cluster.env(), "SLURM_JOB_ID": ""})
    with pytest.raises(Exception, match="no SLURM_JOB_ID.*salloc -N 2"):
        outside.hosts()
    out = cluster.run("salloc", "-N", "2", sys.executable, "-c",
                      "import json, os; from virtrepro.testbed.kinds import SlurmTestbed; "
                      f"t = SlurmTestbed({TESTBED!r}, {cluster.testbed_spec()!r}); h = t.hosts(); "
                      "print(json.dumps([[x.name, x.hostname, x.remote_state_dir] for x in h] + [t.scheduler(h[1])]))",
                      env={"PYTHONPATH": str(REPO / "workflow")}, timeout=60).stdout
    *hosts, scheduler = json.loads(out.strip().splitlines()[-1])
    assert hosts == [[f"{TESTBED}/vrnode{i}", node.address, f"{cluster.state_root}-vrnode{i}"]
                     for i, node in enumerate(cluster.nodes, 1)]
    assert scheduler["kind"] == "slurm" and scheduler["partition"] == PARTITION and scheduler["node"] == "vrnode2"
    assert scheduler["nodes"] == ["vrnode1", "vrnode2"] and scheduler["job_id"].isdigit()


def test_a_submitted_workflow_measures_on_both_nodes_at_once(cluster, tmp_path):
    job = submit(cluster, tmp_path, config(cluster, tmp_path, TINY))
    wait_gone(cluster, job, 600)
    output = next(tmp_path.glob("slurm-*.out")).read_text()
    records = sidecars(tmp_path)
    assert len(records) == 2 * (2 + 4), output[-3000:]  # 2 repetitions of 2 + 4 variants
    spans = defaultdict(list)
    for record in records:
        assert record["status"] == "complete"
        assert record["scheduler"]["job_id"] == job and record["scheduler"]["partition"] == PARTITION
        assert record["scheduler"]["nodes"] == ["vrnode1", "vrnode2"]
        node = record["scheduler"]["node"]
        assert record["host_name"] == f"{TESTBED}/{node}"
        assert record["host"]["hostname"] == node  # the benchmark ran on that node (its own host name)
        spans[node].append((parse_utc(record["started_utc"]), parse_utc(record["ended_utc"])))
    assert set(spans) == {"vrnode1", "vrnode2"}
    for intervals in spans.values():  # never two measurements on one node at once
        intervals.sort()
        assert all(later[0] >= earlier[1] for earlier, later in zip(intervals, intervals[1:]))
    # and the two nodes did measure at the same time
    assert any(a[0] < b[1] and b[0] < a[1] for a in spans["vrnode1"] for b in spans["vrnode2"])


def test_mpi_across_the_two_nodes_starts_through_the_scheduler(cluster, tmp_path):
    require_tools("hpcc", "mpirun", "srun")
    across = {"hpcc": {"repetitions": 1, "procs": 1, "nodes": [2], "across": "hosts", "n": 400, "nb": 40}}
    job = submit(cluster, tmp_path, config(cluster, tmp_path, across))
    wait_gone(cluster, job, 600)
    output = next(tmp_path.glob("slurm-*.out")).read_text()
    [record] = sidecars(tmp_path)
    assert record["status"] == "complete", output[-3000:]
    assert record["variant"] == "procs-1_n-400_nb-40_nodes-2_across-hosts"
    assert record["spanned_hosts"] == [f"{TESTBED}/vrnode1", f"{TESTBED}/vrnode2"] and record["mpi_launch"] == "slurm"
    assert record["host"]["hostname"] == "vrnode1" and record["peers"][0]["host"]["hostname"] == "vrnode2"
    assert "--mca plm slurm" in record["command"] and "--host" not in record["command"]
    assert f"SLURM_JOB_ID={job} " in record["command"] and "SLURM_NODELIST=vrnode1,vrnode2 " in record["command"]
    log = next((tmp_path / "data" / "raw" / TESTBED).glob("native/hpcc/*/rep-0.log")).read_text()
    # mpirun's map (--display-map): one rank on each node, the second started by srun as a step of the job
    for node in ("vrnode1", "vrnode2"):
        assert re.search(rf"Data for node: {node}\s+Num slots: 1\s+Max slots: 0\s+Num procs: 1", log), log[:3000]
    # the platform probe asked both nodes about every platform (a later run with others reads the same record)
    probe = json.loads((tmp_path / "data" / "raw" / TESTBED / "probes" / "platforms.json").read_text())
    assert set(probe["hosts"]) == {f"{TESTBED}/vrnode1", f"{TESTBED}/vrnode2"}
    assert set(probe["platforms"]) == set(platform_catalog.config_names())
    assert probe["platforms"]["native"] == {"status": "available"}
    # the nodes give no one root here either way, but unprivileged user namespaces: the container a
    # cluster allows is available on both
    assert probe["platforms"]["charliecloud"] == {"status": "available"}
    assert {facts["userns"] for facts in probe["hosts"].values()} == {"yes"}
    records = BENCHMARKS["hpcc"].parse(log, "log", {"procs": 1, "nodes": 2, "n": 400, "nb": 40})
    assert {r["metric"] for r in records} >= {"hpl_gflops", "avg_ping_pong_latency"}
    assert {int(r["processes"]) for r in records} == {2}


def test_the_unprivileged_container_runs_on_a_node_through_the_scheduler(cluster, tmp_path, built_image):
    require_tools("ch-run", "setpriv")
    from virtrepro.guests.image import recipe_hash

    # the nodes' own image of the same recipe, hard links to this machine's (a node has no archive
    # to build one from here; on a cluster the workflow builds it on the node, or finds it there)
    seeded = [Path(f"{cluster.state_root}-{node}") / "images" / recipe_hash() for node in ("vrnode1", "vrnode2")]
    one = {"sysbench_cpu": {"repetitions": 1, "threads": [1], "cpu_max_prime": 5000, "seconds": 1}}
    try:
        for target in seeded:
            subprocess.run(["rm", "-rf", str(target)], check=True)
            target.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["cp", "-al", str(built_image), str(target)], check=True)
        job = submit(cluster, tmp_path, config(cluster, tmp_path, one, platforms=("charliecloud",)))
        wait_gone(cluster, job, 600)
    finally:
        for target in seeded:
            subprocess.run(["rm", "-rf", str(target)], check=True)
    output = next(tmp_path.glob("slurm-*.out")).read_text()
    [record] = sidecars(tmp_path)
    assert record["status"] == "complete", output[-3000:]
    assert record["platform"]["name"] == "charliecloud" and record["platform"]["applied"]["runtime"] == "ch-run"
    assert record["endpoint"]["user"] == "nobody"  # the node's user is root: the instance drops to nobody
    assert record["scheduler"]["job_id"] == job and record["host"]["hostname"] == record["scheduler"]["node"]
    records = BENCHMARKS["sysbench_cpu"].parse(
        next((tmp_path / "data" / "raw" / TESTBED).glob("charliecloud/sysbench_cpu/*/rep-0.log")).read_text(), "log",
        record["parameters"])
    assert [r["value"] > 0 for r in records if r["metric"] == "events_per_second"] == [True]


def test_a_cancelled_job_stops_in_seconds_and_the_next_measures_only_what_is_missing(cluster, tmp_path):
    longer = {"sysbench_cpu": {"repetitions": 6, "threads": [1, "all"], "cpu_max_prime": 5000, "seconds": 2}}
    configfile = config(cluster, tmp_path, longer)
    job = submit(cluster, tmp_path, configfile)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len([r for r in sidecars(tmp_path) if r["status"] == "complete"]) < 2:
        time.sleep(0.5)
    cluster.run("scancel", job)
    assert wait_gone(cluster, job, 60) < 30
    time.sleep(2)
    processes = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert [line for line in processes.splitlines() if str(tmp_path) in line] == []
    kept = {}
    for log in sorted((tmp_path / "data" / "raw" / TESTBED).glob("*/*/*/rep-*.log")):
        assert rawlog.is_complete(log)  # what was cut is a partial, never a complete log
        kept[log] = log.read_bytes()
    assert 2 <= len(kept) < 12
    job = submit(cluster, tmp_path, configfile)
    wait_gone(cluster, job, 600)
    logs = sorted((tmp_path / "data" / "raw" / TESTBED).glob("*/*/*/rep-*.log"))
    assert len(logs) == 12 and all(rawlog.is_complete(log) for log in logs)
    assert all(log.read_bytes() == data for log, data in kept.items())  # complete logs are never measured again
    second = [r for r in sidecars(tmp_path) if r["scheduler"]["job_id"] == job]
    assert len(second) == 12 - len(kept)
