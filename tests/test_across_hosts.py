"""MPI across the hosts of a testbed (``across: hosts``): which platforms run it and under which
key, which hosts a run holds, the mpirun it starts through SLURM, and the refusals made before
anything runs. The run itself on a real SLURM cluster of two nodes is in test_slurm_testbed.py."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from virtrepro.testbed import placement
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.benchmarks.base import MPIRUN_SCHEDULED, hosts_used, mpi_spread
from virtrepro.planning.config import Run
from virtrepro.testbed.hosts import Host
from virtrepro.measurement.job import MeasurementError, _spanned_hosts
from virtrepro.testbed.kinds import LocalTestbed, RemoteTestbed, SlurmTestbed

REPO = Path(__file__).resolve().parents[1]

HPCC = {"repetitions": 1, "procs": 1, "nodes": [1, 2], "n": 400, "nb": 40}
NPB = {"repetitions": 1, "kernels": ["ep", "cg"], "class": "A", "processes": [2, 4], "nodes": [1, 2]}


def test_the_spread_is_in_the_key_only_for_runs_across_hosts():
    assert mpi_spread({"across": "hosts"}, 1, "native") == {}  # one instance is on one host anyway
    assert mpi_spread({}, 2, "lxc") == {}  # the default: instances of one host
    assert mpi_spread({"across": "instances"}, 2, "lxc") == {}
    assert mpi_spread({"across": "hosts"}, 2, "native") == {"across": "hosts"}
    for guest in ("lxc", "podman", "qemu-tcg", "qemu-kvm", "qemu"):
        assert mpi_spread({"across": "hosts"}, 2, guest) is None  # a guest's network ends at its host


def test_hpcc_across_hosts_runs_on_native_only_and_keeps_the_other_keys():
    hpcc = BENCHMARKS["hpcc"]
    assert [v.key for v in hpcc.variants(HPCC, "lxc")] == ["procs-1_n-400_nb-40", "procs-1_n-400_nb-40_nodes-2"]
    across = {**HPCC, "across": "hosts"}
    assert [v.key for v in hpcc.variants(across, "native")] == ["procs-1_n-400_nb-40",
                                                                 "procs-1_n-400_nb-40_nodes-2_across-hosts"]
    assert [v.key for v in hpcc.variants(across, "lxc")] == ["procs-1_n-400_nb-40"]
    one, two = hpcc.variants(across, "native")
    assert (hosts_used(hpcc, one), hosts_used(hpcc, two)) == (1, 2)
    assert not hpcc.prepare(two).peer_ssh  # the scheduler starts the ranks, not SSH with a key of the run
    command = hpcc.run(two)
    assert f'{MPIRUN_SCHEDULED} --allow-run-as-root --bind-to none --display-map --map-by "ppr:$per_node:node"' in command
    assert "@HOSTS@" not in command and "plm_rsh_args" not in command
    assert "@HOSTS@" in hpcc.run(hpcc.variants(HPCC, "native")[1])  # on one host: as before


def test_npb_mpi_across_hosts_names_what_it_leaves_out_and_why():
    npb = BENCHMARKS["npb_mpi"]
    across = {**NPB, "across": "hosts"}
    keys = [v.key for v in npb.variants(across, "native")]
    assert "kernel-ep_class-A_procs-2_nodes-2_across-hosts" in keys and "kernel-ep_class-A_procs-2_nodes-1" in keys
    assert not [k for k in (v.key for v in npb.variants(across, "podman")) if "nodes-2" in k]
    skipped = npb.planning(across, "podman")[1]
    assert "npb_mpi ep class A, 2 processes on 2 host(s): podman's instances cannot be on different hosts" in skipped
    variant = next(v for v in npb.variants(across, "native") if v.key == "kernel-cg_class-A_procs-4_nodes-2_across-hosts")
    command = npb.run(variant)
    assert "per_node=2 && " in command and f"{MPIRUN_SCHEDULED} --allow-run-as-root" in command
    assert "--map-by ppr:2:node -np 4 " in command and "--host" not in command


def test_a_run_across_hosts_holds_the_first_hosts_of_the_testbed(tmp_path):
    hosts = ["c/n1", "c/n2", "c/n3"]
    assert placement.hosts_for(hosts, tmp_path, "c", "hpcc", "k", spanned=2) == ["c/n1", "c/n2"]
    assert placement.hosts_for(hosts, tmp_path, "c", "hpcc", "k", spanned=3) == hosts
    assert len(placement.hosts_for(hosts, tmp_path, "c", "hpcc", "k")) == 1
    with pytest.raises(ValueError, match="has 3 host.*needs 4.*sbatch -N 4"):
        placement.hosts_for(hosts, tmp_path, "c", "hpcc", "k", spanned=4)


def test_the_slurm_launcher_gives_mpirun_the_allocation_of_the_run():
    environ = {"SLURM_JOB_ID": "77", "SLURM_CONF": "/etc/slurm/test dir/slurm.conf", "PATH": "/usr/bin:/bin"}
    testbed = SlurmTestbed("c", {"kind": "slurm", "known_hosts": "kh"}, environ=environ)
    hosts = [Host(name=f"c/node{i}", hostname=f"10.0.0.{i}", port=22, user="root", identity=None,
                  known_hosts="kh", testbed="c") for i in (3, 4)]
    launcher = testbed.mpi_launcher(hosts)
    assert launcher.endswith(" mpirun --mca plm slurm --mca ras slurm")  # no fall back to SSH
    # what Open MPI then reads, evaluated by a shell as the benchmark's command does
    shown = subprocess.run(["sh", "-c", "per_node=3; " + launcher.removesuffix(" mpirun --mca plm slurm --mca ras slurm")
                            + " sh -c 'env | grep ^SLURM_ | sort'"], capture_output=True, text=True, check=True,
                           env={"PATH": "/usr/bin:/bin"}).stdout.split("\n")
    assert [line for line in shown if line] == [
        "SLURM_CONF=/etc/slurm/test dir/slurm.conf", "SLURM_JOBID=77", "SLURM_JOB_ID=77",
        "SLURM_JOB_NODELIST=node3,node4", "SLURM_JOB_NUM_NODES=2", "SLURM_NNODES=2", "SLURM_NODELIST=node3,node4",
        "SLURM_TASKS_PER_NODE=3(x2)"]


def _run(benchmark: str, key: str, platform: str = "native") -> Run:
    variant = next(v for v in BENCHMARKS[benchmark].variants({**HPCC, "across": "hosts"}, platform) if v.key == key)
    return Run(testbed="tb", platform=platform, variant=variant, repetition=0)


def test_runs_across_hosts_are_refused_before_anything_runs_without_hosts_or_scheduler(tmp_path):
    run = _run("hpcc", "procs-1_n-400_nb-40_nodes-2_across-hosts")
    local = LocalTestbed("tb", tmp_path)
    with pytest.raises(MeasurementError, match="testbed tb has 1 host.*needs 2"):
        _spanned_hosts(local, run, Host(name="tb", hostname="127.0.0.1", port=22, user="root", identity=None,
                                        known_hosts="kh", testbed="tb"), 2)
    remote = RemoteTestbed("tb", {"kind": "ssh", "known_hosts": "kh", "hosts": [{"hostname": "10.0.0.1"},
                                                                               {"hostname": "10.0.0.2"}]})
    first, _ = remote.hosts()
    with pytest.raises(MeasurementError, match="starts through the testbed's scheduler.*testbed tb has none"):
        _spanned_hosts(remote, run, first, 2)
    lxc = Run(testbed="tb", platform="lxc", variant=run.variant, repetition=0)
    with pytest.raises(MeasurementError, match="lxc's instances cannot be on different hosts"):
        _spanned_hosts(remote, lxc, first, 2)


def dry_run(tmp_path: Path, platforms: list[str], probe: dict | None) -> subprocess.CompletedProcess:
    """A dry run on a testbed of three hosts, with the given platform probe record (None: none yet)."""
    hosts = ["10.9.0.1", "10.9.0.2", "10.9.0.3"]
    data = tmp_path / "data"
    config = {
        "testbed": "three", "platforms": platforms, "benchmarks": ["hpcc"], "notebooks": [], "scale": "quick",
        "data_dir": str(data), "scales": {"quick": {"hpcc": {**HPCC, "across": "hosts"}}},
        "testbeds": {"three": {"kind": "ssh", "known_hosts": str(tmp_path / "known_hosts"),
                               "hosts": [{"hostname": h} for h in hosts]}},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    if probe is not None:
        (data / "raw" / "three" / "probes").mkdir(parents=True, exist_ok=True)
        (data / "raw" / "three" / "probes" / "platforms.json").write_text(json.dumps(probe))
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--cores", "4", "--snakefile",
                             str(REPO / "Snakefile"), "--directory", str(tmp_path), "--configfile",
                             str(tmp_path / "config.yaml")], capture_output=True, text=True, timeout=300,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "VIRTREPRO_STATE": str(tmp_path / "state"),
                                 "PYTHONPATH": str(REPO / "workflow")})
    return result


def measurement_jobs(result) -> dict:
    """(platform, variant) -> (the hosts whose resource the job holds, its --host), of a dry run that worked."""
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = {}
    for block in result.stdout.split("\n\n"):
        if "virtrepro.measurement.job" not in block:
            continue
        held = sorted(int(index) for index, count in re.findall(r"testbed_host_(\d+)=(\d+)", block) if count == "1")
        words = shlex.split(next(line for line in block.splitlines() if "virtrepro.measurement.job" in line))
        entry = json.loads(words[words.index("--plan-entry") + 1])  # the job's plan entry, as the rule passes it
        for plan in entry["rounds"]["plans"]:  # one job: the variant on all its platforms
            jobs[(plan["platform"], plan["variant"])] = (held, entry["host"])
    return jobs


AVAILABLE = {"platforms": {"native": {"status": "available"}, "lxc": {"status": "available"}}}


def test_the_workflow_holds_every_host_of_a_run_across_hosts(tmp_path):
    jobs = measurement_jobs(dry_run(tmp_path, ["native", "lxc"], AVAILABLE))
    across = {key: value for key, value in jobs.items() if key[1].endswith("_across-hosts")}
    assert list(across) == [("native", "procs-1_n-400_nb-40_nodes-2_across-hosts")]  # never a guest platform
    assert list(across.values()) == [([0, 1], "three/10.9.0.1")]  # the testbed's first two hosts, the first runs it
    one_host = {key: value for key, value in jobs.items() if key not in across}
    assert {key[0] for key in one_host} == {"native", "lxc"}
    assert all(len(held) == 1 for held, _ in one_host.values())


def test_an_unavailable_platform_is_left_out_with_its_reason(tmp_path):
    reason = "three/10.9.0.2: lxc needs root (or passwordless sudo) on the host, and alice has neither"
    probe = {"platforms": {"native": {"status": "available"}, "lxc": {"status": "unavailable", "reason": reason}}}
    result = dry_run(tmp_path, ["native", "lxc"], probe)
    assert {platform for platform, _ in measurement_jobs(result)} == {"native"}
    assert f"not measured on testbed three: lxc is unavailable ({reason})" in result.stderr


def test_a_platform_the_probe_did_not_ask_about_stops_the_run_naming_the_record(tmp_path):
    result = dry_run(tmp_path, ["native", "lxc"], {"platforms": {"native": {"status": "available"}}})
    assert result.returncode != 0
    assert "the platform probe did not ask about lxc (a platform added since it ran); delete it to probe again" in result.stderr


def test_a_dry_run_before_the_probe_plans_every_configured_platform(tmp_path):
    result = dry_run(tmp_path, ["native", "lxc"], None)
    assert result.returncode == 0, result.stderr[-3000:]
    assert {platform for platform, _ in measurement_jobs(result)} == {"native", "lxc"}


ACROSS_LOG = REPO / "tests" / "data" / "hpcc" / "across-two-slurm-nodes-p1.log"  # a real run on two SLURM nodes
ACROSS_PARAMS = {"procs": 1, "nodes": 2, "n": 400, "nb": 40, "across": "hosts"}


def test_a_run_across_hosts_counts_only_if_mpiruns_map_put_ranks_on_every_node():
    text = ACROSS_LOG.read_text()
    records = BENCHMARKS["hpcc"].parse(text, "log", ACROSS_PARAMS)
    assert {int(r["processes"]) for r in records} == {2}
    one_node = text.replace("Data for node: vrnode2", "Data for node: vrnode1")  # both ranks on one node
    with pytest.raises(Exception, match=r"map of a run across hosts shows vrnode1: 2; the run asked for 1 rank\(s\) on each of 2 nodes"):
        BENCHMARKS["hpcc"].parse(one_node, "log", ACROSS_PARAMS)
    no_map = "\n".join(line for line in text.splitlines() if "Data for node" not in line) + "\n"
    with pytest.raises(Exception, match="shows no map in the log"):
        BENCHMARKS["hpcc"].parse(no_map, "log", ACROSS_PARAMS)
    # the same log as a run on one host's instances (no `across`) is not asked for a map
    assert BENCHMARKS["hpcc"].parse(no_map, "log", {k: v for k, v in ACROSS_PARAMS.items() if k != "across"})
