"""Which host of a testbed measures what (virtrepro.testbed.placement), and the workflow's use of it: every
host gets measurements, one at a time per host, and all platforms of one variant share a host."""

from __future__ import annotations

import collections
import hashlib
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from virtrepro.testbed import placement

REPO = Path(__file__).resolve().parents[1]
HOSTS = ["tb/10.0.0.1", "tb/10.0.0.2", "tb/10.0.0.3", "tb/10.0.0.4"]


def sidecar(data: Path, platform: str, benchmark: str, key: str, rep: int, **fields) -> None:
    path = data / "raw" / "tb" / platform / benchmark / key / f"rep-{rep}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"status": "complete", **fields}))


def test_one_host_measures_everything(tmp_path):
    assert placement.host_for(["local"], tmp_path, "local", "fio", "mode-read") == "local"


def test_the_hash_spreads_variants_evenly_and_is_stable(tmp_path):
    keys = [f"threads-{t}_size-{s}" for t in range(20) for s in range(20)]  # 400 variants
    chosen = [placement.host_for(HOSTS, tmp_path, "tb", "sysbench_cpu", key) for key in keys]
    assert chosen == [placement.host_for(HOSTS, tmp_path, "tb", "sysbench_cpu", key) for key in keys]
    counts = collections.Counter(chosen)
    assert set(counts) == set(HOSTS)
    assert all(60 <= count <= 140 for count in counts.values()), counts  # 100 each expected; binomial sd ~8.7
    # computed here independently: the first 8 bytes of sha256("<benchmark>/<key>") modulo the host count
    digest = hashlib.sha256(b"sysbench_cpu/threads-3_size-7").digest()
    assert placement.host_for(HOSTS, tmp_path, "tb", "sysbench_cpu", "threads-3_size-7") == \
        HOSTS[int.from_bytes(digest[:8], "big") % 4]


def test_a_variant_stays_on_the_host_that_measured_it_first(tmp_path):
    key = "threads-1_prime-20000_seconds-5"
    hashed = placement.hashed_host(HOSTS, "sysbench_cpu", key)
    other = next(h for h in HOSTS if h != hashed)
    sidecar(tmp_path, "lxc", "sysbench_cpu", key, 0, host_name=other)
    # every platform of the variant follows, not only lxc
    assert placement.host_for(HOSTS, tmp_path, "tb", "sysbench_cpu", key) == other
    # a host no longer in the testbed, or a run that did not complete, does not count
    sidecar(tmp_path, "lxc", "sysbench_cpu", key, 0, host_name="tb/gone")
    sidecar(tmp_path, "native", "sysbench_cpu", key, 0, status="running", host_name=other)
    assert placement.host_for(HOSTS, tmp_path, "tb", "sysbench_cpu", key) == hashed


def test_the_workflow_holds_one_host_per_measurement_and_puts_a_variant_on_one_host(tmp_path):
    """A dry run on a testbed of three hosts: each measurement job holds exactly its host's resource,
    passes that host to the measurement, every platform of a variant has the same host (the one its key
    hashes to), and the variants are spread over more than one host."""
    hosts = ["10.9.0.1", "10.9.0.2", "10.9.0.3"]
    config = {
        "testbed": "three", "platforms": ["native", "lxc"], "benchmarks": ["sysbench_cpu", "fio"],
        "notebooks": [], "scale": "quick", "data_dir": str(tmp_path / "data"),
        "testbeds": {"three": {"kind": "ssh", "known_hosts": str(tmp_path / "known_hosts"),
                               "hosts": [{"hostname": h} for h in hosts]}},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--cores", "4", "--snakefile",
                             str(REPO / "Snakefile"), "--directory", str(tmp_path), "--configfile",
                             str(tmp_path / "config.yaml")], capture_output=True, text=True, timeout=300,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "VIRTREPRO_STATE": str(tmp_path / "state"),
                                 "PYTHONPATH": str(REPO / "workflow")})
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = [block for block in result.stdout.split("\n\n") if "virtrepro.measurement.job" in block]
    assert jobs
    by_variant = collections.defaultdict(set)
    for block in jobs:
        held = re.findall(r"testbed_host_(\d+)=(\d+)", block)
        assert sorted(index for index, count in held if count == "1") != [] and \
            sum(int(count) for _, count in held) == 1, block
        index = int(next(index for index, count in held if count == "1"))
        words = shlex.split(next(line for line in block.splitlines() if "virtrepro.measurement.job" in line))
        entry = json.loads(words[words.index("--plan-entry") + 1])  # the job's plan entry, as the rule passes it
        host = entry["host"]
        assert host == f"three/{hosts[index]}"
        assert not re.search(r"threads: [2-9]", block)  # a remote host's measurement leaves this machine's cores to the others
        plans = entry["rounds"]["plans"]  # one job: the variant on all its platforms, in rounds
        assert [plan["platform"] for plan in plans] == ["native", "lxc"]
        by_variant[(plans[0]["benchmark"], plans[0]["variant"])].add(host)
    assert all(len(chosen) == 1 for chosen in by_variant.values())
    # each variant on the host its key hashes to, computed here from sha256 alone
    for (benchmark, key), chosen in by_variant.items():
        digest = hashlib.sha256(f"{benchmark}/{key}".encode()).digest()
        assert chosen == {f"three/{hosts[int.from_bytes(digest[:8], 'big') % 3]}"}, (benchmark, key)
    assert len({host for chosen in by_variant.values() for host in chosen}) >= 2  # spread, not all on one
