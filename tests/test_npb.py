"""NAS Parallel Benchmarks: obtaining the tarball (checksums, skip record), run planning, and real runs.

The unit tests use small tarballs made here, never NPB itself. The integration
test builds and runs NPB only when a tarball is supplied:

    VIRTREPRO_NPB_TARBALL=/path/to/NPB3.4.x.tar.gz pytest tests/test_npb.py

(with VIRTREPRO_NPB_SHA256=<its sha256> for a tarball that is not NASA's, such as one made by
``python -m virtrepro.builds.npb pack-git``).
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import os
import re
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest
import yaml

from conftest import REPO, fixture_text, require_tools
from virtrepro.builds import npb
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.benchmarks.npb import process_count_problem
from virtrepro.planning.config import ConfigError, plan, validate_config
from virtrepro.parsers import ParseError


def make_tarball(directory: Path, name: str = "NPB3.4.9", content: str = "not NPB, a test file\n") -> Path:
    top = directory / "src" / name
    (top / "NPB3.4-OMP").mkdir(parents=True)
    (top / "NPB3.4-OMP" / "README").write_text(content)
    path = directory / f"{name}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        archive.add(top, arcname=name)
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def settings(**overrides) -> dict:
    return {**npb.DEFAULTS, "version": "3.4.9", **overrides}


# --- obtaining -------------------------------------------------------------------------------

def test_a_local_copy_is_used_and_verified(tmp_path):
    tarball = make_tarball(tmp_path)
    record = npb.obtain(settings(tarball=str(tarball), sha256=sha(tarball)), downloads=tmp_path / "dl")
    assert record["status"] == "available" and record["source"] == "local"
    assert record["tarball"] == str(tarball.resolve()) and record["sha256"] == sha(tarball)
    assert record["sha256_verified"] is True
    assert not (tmp_path / "dl").exists()  # nothing downloaded


def test_a_local_copy_without_known_checksum_is_used_but_marked_unverified(tmp_path):
    tarball = make_tarball(tmp_path)
    record = npb.obtain(settings(tarball=str(tarball)))
    assert record["status"] == "available" and record["sha256_verified"] is False
    assert "no published checksum" in record["note"]


def test_checksum_mismatch_is_refused_with_both_checksums(tmp_path):
    tarball = make_tarball(tmp_path)
    wrong = "0" * 64
    with pytest.raises(npb.NpbError) as error:
        npb.obtain(settings(tarball=str(tarball), sha256=wrong))
    message = str(error.value)
    assert "refused" in message and wrong in message and sha(tarball) in message


def test_the_pinned_checksum_of_the_version_applies_to_a_local_copy(tmp_path):
    tarball = make_tarball(tmp_path, name="NPB3.4.1")
    assert npb.PINNED_SHA256["3.4.1"] != sha(tarball)
    with pytest.raises(npb.NpbError, match="pinned for 3.4.1"):
        npb.obtain(settings(version="3.4.1", tarball=str(tarball)))


def test_a_relative_tarball_is_taken_from_the_repository_and_recorded_relative(tmp_path, monkeypatch):
    """Wherever the workflow runs, ``npb.tarball: .state/npb/x.tar.gz`` names the repository's file; the
    probe record keeps it relative, so a committed probe file names no directory of the measuring machine."""
    repository, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    tarball = make_tarball(repository / ".state" / "npb")
    elsewhere.mkdir()
    monkeypatch.setattr(npb, "REPOSITORY", repository)
    monkeypatch.chdir(elsewhere)
    relative = ".state/npb/NPB3.4.9.tar.gz"
    record = npb.obtain(settings(tarball=relative, sha256=sha(tarball)))
    assert record["status"] == "available" and record["sha256_verified"] is True
    assert record["tarball"] == relative
    with pytest.raises(npb.NpbError, match="refused"):
        npb.obtain(settings(tarball=relative, sha256="2" * 64))


def test_where_the_tarball_came_from_is_recorded_and_checked_by_the_schema(repo, tmp_path):
    tarball = make_tarball(tmp_path)
    source = {"repository": "github.com/example/npb", "commit": "800e0602abc6f56f05713219545a29707fc7a388",
              "path": "NPB3.4.9", "note": "packed with git archive"}
    record = npb.obtain(settings(tarball=str(tarball), sha256=sha(tarball), source=source))
    assert record["tarball_source"] == source
    assert npb.obtain(settings(tarball=str(tarball), sha256=sha(tarball)))["tarball_source"] is None
    config = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    config["npb"]["source"] = source
    validate_config(config)
    config["npb"]["source"] = {**source, "branch": "main"}
    with pytest.raises(ConfigError, match="branch"):
        validate_config(config)


def test_the_shipped_git_configuration_names_its_tarball_checksum_and_source(repo):
    """config/npb-from-git.yaml: a relative tarball under the git-ignored .state/, a pinned checksum, a source."""
    given = yaml.safe_load((repo / "config" / "npb-from-git.yaml").read_text())["npb"]
    assert given["tarball"].startswith(".state/") and re.fullmatch(r"[0-9a-f]{64}", given["sha256"])
    assert given["source"]["commit"] and given["source"]["repository"]
    config = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    config["npb"].update(given)
    validate_config(config)


def test_a_commit_of_a_git_clone_is_packed_reproducibly_with_only_the_npb_directory(tmp_path):
    require_tools("git")
    clone = tmp_path / "clone"
    (clone / "NPB3.4.1" / "NPB3.4-OMP").mkdir(parents=True)
    (clone / "NPB3.4.1" / "NPB3.4-OMP" / "README").write_text("NPB\n")
    (clone / "README").write_text("the repository's own readme\n")
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True,
                   env={**os.environ, "GIT_COMMITTER_DATE": "2020-09-12T19:47:50Z", "GIT_AUTHOR_DATE": "2020-09-12T19:47:50Z"})
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    first = npb.pack_git(clone, commit, tmp_path / "a" / "NPB3.4.1.tar.gz")
    (clone / "NPB3.4.1" / "NPB3.4-OMP" / "README").write_text("changed after the commit\n")  # not committed
    second = npb.pack_git(clone, commit, tmp_path / "b" / "NPB3.4.1.tar.gz")
    assert first == second == sha(tmp_path / "a" / "NPB3.4.1.tar.gz")
    with tarfile.open(tmp_path / "a" / "NPB3.4.1.tar.gz") as archive:
        members = {m.name: m for m in archive.getmembers()}
        assert archive.extractfile("NPB3.4.1/NPB3.4-OMP/README").read() == b"NPB\n"
    assert set(members) == {"NPB3.4.1", "NPB3.4.1/NPB3.4-OMP", "NPB3.4.1/NPB3.4-OMP/README"}
    assert members["NPB3.4.1/NPB3.4-OMP/README"].mtime == 1599940070  # the commit's time, not the packing's
    with pytest.raises(npb.NpbError, match="git archive"):
        npb.pack_git(clone, "0" * 40, tmp_path / "c.tar.gz")


def test_a_missing_configured_tarball_is_an_error(tmp_path):
    with pytest.raises(npb.NpbError, match="does not exist"):
        npb.obtain(settings(tarball=str(tmp_path / "nowhere.tar.gz")))


def test_no_tarball_and_no_network_gives_a_skip_record(tmp_path):
    """Nothing listens on port 9 of 127.0.0.1: the download really fails, as it does offline."""
    output = tmp_path / "data" / "raw" / "tb" / "probes" / "npb.json"
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["npb"] = settings(version="3.4.1", url="https://127.0.0.1:9/NPB{version}.tar.gz")
    config["benchmarks"] = ["npb_mpi"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow"), "VIRTREPRO_STATE": str(tmp_path / "state")}
    result = subprocess.run(
        [sys.executable, "-m", "virtrepro.builds.npb", "obtain", "--config", json.dumps(config), "--output", str(output)],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    record = json.loads(output.read_text())
    assert record["status"] == "skipped"
    assert "could not be downloaded" in record["reason"] and "npb.tarball" in record["reason"]
    assert any("BT needs a square number" in reason for reason in record["not_planned"])
    assert not list((tmp_path / "state").rglob("*.tar.gz*"))


def test_a_version_without_known_checksum_is_not_downloaded():
    record = npb.obtain(settings(version="3.4.2", url="https://127.0.0.1:9/NPB{version}.tar.gz"))
    assert record["status"] == "skipped"
    assert "no published sha256" in record["reason"] and "npb.sha256" in record["reason"]


@pytest.fixture
def http_server(tmp_path):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_download_is_verified_and_kept(tmp_path, http_server):
    tarball = make_tarball(tmp_path)
    url = http_server + "/NPB{version}.tar.gz"
    record = npb.obtain(settings(url=url, sha256=sha(tarball)), downloads=tmp_path / "dl")
    assert record["status"] == "available" and record["source"] == "download"
    assert sha(Path(record["tarball"])) == sha(tarball)


def test_a_download_with_the_wrong_checksum_is_refused_and_not_kept(tmp_path, http_server):
    make_tarball(tmp_path)
    with pytest.raises(npb.NpbError, match="refused"):
        npb.obtain(settings(url=http_server + "/NPB{version}.tar.gz", sha256="1" * 64), downloads=tmp_path / "dl")
    assert not list((tmp_path / "dl").iterdir())


# --- planning and parsing ----------------------------------------------------------------------

def test_bt_and_sp_are_planned_only_with_square_process_counts():
    params = {"kernels": ["bt", "sp", "ep", "cg"], "class": "S", "processes": [1, 2, 3, 4, 9], "nodes": [1]}
    variants, skipped = BENCHMARKS["npb_mpi"].planning(params)
    counts = {}
    for variant in variants:
        counts.setdefault(variant.param_dict["kernel"], []).append(variant.param_dict["procs"])
    assert counts == {"bt": [1, 4, 9], "sp": [1, 4, 9], "ep": [1, 2, 3, 4, 9], "cg": [1, 2, 4]}
    assert any("bt" in reason and "square" in reason and ", 2 processes" in reason for reason in skipped)
    assert process_count_problem("ep", 3, 2) == "3 processes do not spread evenly over 2 instances"


def test_mpi_across_instances_uses_every_instance_with_strict_host_keys():
    mpi = BENCHMARKS["npb_mpi"]
    variants = mpi.variants({"kernels": ["ep"], "class": "S", "processes": [4], "nodes": [2]})
    assert [v.key for v in variants] == ["kernel-ep_class-S_procs-4_nodes-2"]
    assert mpi.instances(variants[0]) == 2 and mpi.prepare(variants[0]).peer_ssh
    command = mpi.run(variants[0])
    assert "--allow-run-as-root" in command and "--bind-to none" in command
    assert "StrictHostKeyChecking=yes" in command and "@HOSTS@" in command


def test_the_repository_config_plans_npb_runs(repo):
    config = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    assert {"npb_serial", "npb_omp", "npb_mpi"} <= set(config["benchmarks"])  # in the default run; skipped without NPB
    config["benchmarks"] = ["npb_serial", "npb_omp", "npb_mpi"]
    config["platforms"] = ["native"]
    validate_config(config)
    keys = {run.variant.key for run in plan(config) if run.benchmark == "npb_mpi"}
    assert "kernel-bt_class-S_procs-4_nodes-2" in keys and "kernel-bt_class-S_procs-2_nodes-1" not in keys


def test_a_build_for_other_kernels_has_a_manifest_of_its_own(repo, tmp_path):
    """An earlier build's manifest (of fewer kernels) must not stand for this configuration's build."""
    config = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    config["scales"]["quick"]["npb_serial"]["kernels"] = ["ep"]
    only_ep = npb.manifest_path(config, tmp_path)
    config["scales"]["quick"]["npb_serial"]["kernels"] = ["ep", "lu"]
    more = npb.manifest_path(config, tmp_path)
    assert only_ep != more and only_ep.parent == more.parent == npb.build_dir(npb.settings(config), tmp_path)
    assert npb.manifest_path(config, tmp_path) == more  # stable for the same wanted binaries


def test_parse_checks_the_run_asked_for():
    mpi, omp = BENCHMARKS["npb_mpi"], BENCHMARKS["npb_omp"]
    text = fixture_text("npb", "mpi_ep.S.np2.log")
    assert mpi.parse(text, "x", {"kernel": "ep", "class": "S", "procs": 2, "nodes": 1})
    with pytest.raises(ParseError, match="processes 2, not the 4"):
        mpi.parse(text, "x", {"kernel": "ep", "class": "S", "procs": 4, "nodes": 1})
    with pytest.raises(ParseError, match="not the CG class S"):
        mpi.parse(text, "x", {"kernel": "cg", "class": "S", "procs": 2, "nodes": 1})
    with pytest.raises(ParseError):
        mpi.parse(fixture_text("npb", "bad_mpi_bt.S.np2-nonsquare.log"), "x",
                      {"kernel": "bt", "class": "S", "procs": 2, "nodes": 1})
    with pytest.raises(ParseError, match="threads 1, not the 2"):
        omp.parse(fixture_text("npb", "omp_cg.S.t1.log"), "x", {"kernel": "cg", "class": "S", "threads": 2})


def test_unverified_npb_output_is_a_failed_run():
    text = fixture_text("npb", "omp_ep.S.t2.log").replace("=               SUCCESSFUL", "=             UNSUCCESSFUL")
    assert "UNSUCCESSFUL" in text
    with pytest.raises(ParseError):
        BENCHMARKS["npb_omp"].parse(text, "x", {"kernel": "ep", "class": "S", "threads": 2})


# --- real build and runs (only with a tarball) -------------------------------------------------

TARBALL = os.environ.get("VIRTREPRO_NPB_TARBALL")


@pytest.mark.integration
@pytest.mark.skipif(not TARBALL, reason="needs NASA's NPB 3.4 tarball, which is in no package archive: "
                    "set VIRTREPRO_NPB_TARBALL=/path/to/NPB3.4.x.tar.gz (and VIRTREPRO_NPB_VERSION if its "
                    "name does not say, VIRTREPRO_NPB_SHA256 if it is not NASA's) to build and run EP class S")
def test_build_and_run_ep_serial_omp_mpi_and_mpi_over_two_instances(tmp_path, monkeypatch):
    from virtrepro.measurement.job import measure
    from virtrepro.testbed.kinds import LocalTestbed

    require_tools("/usr/sbin/sshd", "gfortran", "mpif90", "mpirun", "make")
    monkeypatch.setenv("VIRTREPRO_STATE", str(tmp_path / "state"))
    name = re.search(r"NPB(\d+\.\d+(?:\.\d+)?)", Path(TARBALL).name)
    version = os.environ.get("VIRTREPRO_NPB_VERSION") or (name.group(1) if name else "3.4.2")
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    source = {"note": "the tarball of VIRTREPRO_NPB_TARBALL"}
    config["npb"].update(version=version, tarball=TARBALL, sha256=os.environ.get("VIRTREPRO_NPB_SHA256"), source=source)
    config.update(testbed="pytest-npb", repetitions=1, platforms=["native"],
                  benchmarks=["npb_serial", "npb_omp", "npb_mpi"])
    config["testbeds"]["pytest-npb"] = {"kind": "local"}
    quick = config["scales"]["quick"]
    quick["npb_serial"].update(kernels=["ep"], **{"class": "S"})
    quick["npb_omp"].update(kernels=["ep"], threads=[2], **{"class": "S"})
    quick["npb_mpi"].update(kernels=["ep"], processes=[2], nodes=[1, 2], **{"class": "S"})
    validate_config(config)

    source = npb.obtain(npb.settings(config))
    assert source["status"] == "available"
    with open(tmp_path / "build.log", "w") as log:
        manifest = json.loads(npb.build(config, source, log=log).read_text())
    assert set(manifest["binaries"]) == {"serial", "omp", "mpi"}
    # NPB 3.4 has no serial code: the serial binary is the OpenMP code without OpenMP (no libgomp)
    needed = {flavour: subprocess.run(["readelf", "-d", manifest["binaries"][flavour]["ep.S"]["path"]],
                                      capture_output=True, text=True, check=True).stdout for flavour in ("serial", "omp")}
    assert "libgomp" in needed["omp"] and "libgomp" not in needed["serial"]

    runs = plan(config)
    assert {(r.benchmark, r.variant.key) for r in runs} == {
        ("npb_serial", "kernel-ep_class-S"), ("npb_omp", "kernel-ep_class-S_threads-2"),
        ("npb_mpi", "kernel-ep_class-S_procs-2_nodes-1"), ("npb_mpi", "kernel-ep_class-S_procs-2_nodes-2"),
    }
    try:
        for run in runs:
            log = measure(run, config, tmp_path / "data")
            records = BENCHMARKS[run.benchmark].parse(log.read_text(), str(log), run.variant.param_dict)
            assert records[0]["benchmark"] == "EP" and records[0]["verification"] == "SUCCESSFUL"
            sidecar = json.loads(log.with_suffix(".json").read_text())
            assert sidecar["npb"]["tarball_sha256"] == source["sha256"] == sha(Path(TARBALL))
            assert sidecar["npb"]["tarball_source"] == config["npb"]["source"]
            assert sidecar["uploads"][0]["sha256"] == manifest["binaries"][
                {"npb_serial": "serial", "npb_omp": "omp", "npb_mpi": "mpi"}[run.benchmark]]["ep.S"]["sha256"]
            if run.variant.param_dict.get("nodes") == 2:
                assert len(sidecar["peers"]) == 1 and len(sidecar["peer_ssh"]["known_hosts"]) == 2
    finally:
        LocalTestbed("pytest-npb", tmp_path / "state").down()


def test_a_class_per_kernel_plans_and_builds_each_kernel_at_its_class():
    """`class: {default: W, is: A}`: IS at class A, every other kernel at W, in the variants of all
    three flavours and in what is built; a mapping without a default is refused naming the key."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["benchmarks"] = ["npb_serial", "npb_omp", "npb_mpi"]
    for name in config["benchmarks"]:
        config["scales"]["quick"][name].update(kernels=["ep", "is"], **{"class": {"default": "W", "is": "A"}})
    config["scales"]["quick"]["npb_omp"]["threads"] = [2]
    config["scales"]["quick"]["npb_mpi"].update(processes=[2], nodes=[1])
    validate_config(config)
    keys = sorted({(run.benchmark, run.variant.key) for run in plan(config, ["native"])})
    assert keys == [("npb_mpi", "kernel-ep_class-W_procs-2_nodes-1"), ("npb_mpi", "kernel-is_class-A_procs-2_nodes-1"),
                    ("npb_omp", "kernel-ep_class-W_threads-2"), ("npb_omp", "kernel-is_class-A_threads-2"),
                    ("npb_serial", "kernel-ep_class-W"), ("npb_serial", "kernel-is_class-A")]
    assert npb.wanted_binaries(config) == {flavour: ["ep.W", "is.A"] for flavour in ("mpi", "omp", "serial")}
    config["scales"]["quick"]["npb_serial"]["class"] = {"is": "A"}
    with pytest.raises(ConfigError, match="scales.quick.npb_serial.class"):
        validate_config(config)
