"""MIT GCM exp2 (Youseff 2006 Fig. 3b): packing a commit reproducibly, obtaining the tarball (checksum,
skip record), the namelist of a run's length, planning, the parser on real captures (good and bad),
and a real build and run.

The unit tests use a small git repository and tarballs made here, never MITgcm itself. The
integration test builds exp2 and runs it for 4 time steps only when a tarball is supplied:

    VIRTREPRO_MITGCM_TARBALL=/path/to/MITgcm-checkpoint69p.tar.gz pytest tests/test_mitgcm.py

(packed with ``python -m virtrepro.builds.mitgcm pack``, docs/mitgcm.md; VIRTREPRO_MITGCM_SHA256 to check it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from conftest import DATA, REPO, fixture_text, git_available, require_tools
from virtrepro.builds import registry as builds, mitgcm
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.benchmarks.mitgcm import time_steps
from virtrepro.planning.config import ConfigError, plan, validate_config
from virtrepro.builds.mitgcm_pack import PackError, pack
from virtrepro.parsers import ParseError, ToolReportedError, TruncatedLogError
from virtrepro.parsers.mitgcm import parse_mitgcm

TARBALL = os.environ.get("VIRTREPRO_MITGCM_TARBALL")
GOOD = "exp2-days-5-steps-4.log"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def repository_config() -> dict:
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


# --- packing ---------------------------------------------------------------------------------

def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": "2020-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2020-01-02T03:04:05Z",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout.strip()


@pytest.fixture
def clone(tmp_path) -> Path:
    if not git_available():
        pytest.skip("git is not installed")
    repo = tmp_path / "mitgcm-clone"
    (repo / "verification" / "exp2" / "input").mkdir(parents=True)
    (repo / "verification" / "exp2" / "input" / "data").write_text(" deltaTClock =108000.0,\n")
    (repo / "verification" / "other").mkdir()
    (repo / "verification" / "other" / "big.bin").write_bytes(b"\0" * 100)
    (repo / "doc").mkdir()
    (repo / "doc" / "manual.txt").write_text("not packed\n")
    for name in ("eesupp", "model", "pkg", "tools"):
        (repo / name).mkdir()
        (repo / name / "file.F").write_text(f"C {name}\n")
    (repo / "tools" / "genmake2").write_text("#!/bin/sh\n")
    (repo / "tools" / "genmake2").chmod(0o755)
    (repo / "LICENSE.txt").write_text("licence\n")
    (repo / "README.md").write_text("readme\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "init")
    return repo


def test_a_commit_is_packed_reproducibly_with_only_what_exp2_needs(clone, tmp_path):
    commit = _git(clone, "rev-parse", "HEAD")
    first = pack(clone, commit, tmp_path / "a.tar.gz")
    (clone / "README.md").touch()  # a file's time in the work tree changes nothing: the commit's is used
    second = pack(clone, "HEAD", tmp_path / "b.tar.gz")
    assert first == {**second} and first["sha256"] == sha(tmp_path / "a.tar.gz") == sha(tmp_path / "b.tar.gz")
    with tarfile.open(tmp_path / "a.tar.gz") as archive:
        members = archive.getmembers()
    top = f"MITgcm-{commit[:12]}"
    names = [m.name for m in members]
    assert f"{top}/verification/exp2/input/data" in names and f"{top}/tools/genmake2" in names
    assert not any("doc/" in n or "verification/other" in n for n in names)
    files = [m for m in members if m.isfile()]
    assert {m.mtime for m in members} == {1577934245} and {(m.uid, m.gid) for m in members} == {(0, 0)}
    assert next(m for m in files if m.name.endswith("genmake2")).mode == 0o755
    assert [m.name for m in files] == sorted(m.name for m in files)


def test_packing_a_bare_clone_gives_the_same_tarball(clone, tmp_path):
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(clone), str(bare)], check=True)
    assert pack(bare, "HEAD", tmp_path / "bare.tar.gz")["sha256"] == pack(clone, "HEAD", tmp_path / "work.tar.gz")["sha256"]


def test_packing_a_commit_without_the_paths_or_a_missing_commit_is_refused(clone, tmp_path):
    with pytest.raises(PackError, match="has no nowhere"):
        pack(clone, "HEAD", tmp_path / "x.tar.gz", paths=("nowhere",))
    with pytest.raises(PackError, match="rev-parse"):
        pack(clone, "0" * 40, tmp_path / "x.tar.gz")


def test_the_pack_command_prints_the_checksum(clone, tmp_path, capsys):
    assert mitgcm.main(["pack", "--clone", str(clone), "--commit", "HEAD", "--out", str(tmp_path / "p.tar.gz")]) == 0
    assert capsys.readouterr().out.split()[0] == sha(tmp_path / "p.tar.gz")


# --- obtaining -------------------------------------------------------------------------------

def test_without_a_tarball_mitgcm_is_skipped_with_the_reason():
    record = mitgcm.obtain(mitgcm.settings({}))
    assert record["status"] == "skipped" and "mitgcm.tarball" in record["reason"] and "pack" in record["reason"]


def test_a_tarball_is_checked_against_its_checksum(clone, tmp_path):
    tarball = tmp_path / "m.tar.gz"
    digest = pack(clone, "HEAD", tarball)["sha256"]
    record = mitgcm.obtain({**mitgcm.DEFAULTS, "tarball": str(tarball), "sha256": digest, "source": {"commit": "abc1234"}})
    assert record["status"] == "available" and record["sha256_verified"] is True and record["sha256"] == digest
    assert record["tarball"] == "m.tar.gz"  # outside the repository: its name only, no directory of this machine
    assert record["tarball_source"] == {"commit": "abc1234"}
    with pytest.raises(mitgcm.MitgcmError, match="refused") as error:
        mitgcm.obtain({**mitgcm.DEFAULTS, "tarball": str(tarball), "sha256": "0" * 64})
    assert digest in str(error.value)
    unverified = mitgcm.obtain({**mitgcm.DEFAULTS, "tarball": str(tarball)})
    assert unverified["sha256_verified"] is False and "unverified" in unverified["note"]
    with pytest.raises(mitgcm.MitgcmError, match="does not exist"):
        mitgcm.obtain({**mitgcm.DEFAULTS, "tarball": str(tmp_path / "missing.tar.gz")})


def test_the_configuration_keys_are_checked_by_the_schema():
    config = repository_config()
    config["mitgcm"] = {"tarball": "x.tar.gz", "sha256": "z" * 64}
    with pytest.raises(ConfigError, match="mitgcm.sha256"):
        validate_config(config)
    config["mitgcm"] = {"tarball": None, "url": "https://example.invalid/x"}
    with pytest.raises(ConfigError, match="mitgcm"):
        validate_config(config)


def test_the_shipped_git_configuration_names_its_checksum_and_source(repo):
    shipped = yaml.safe_load((repo / "config" / "mitgcm-from-git.yaml").read_text())["mitgcm"]
    assert re.fullmatch(r"[0-9a-f]{64}", shipped["sha256"]) and shipped["tarball"] is None
    assert re.fullmatch(r"[0-9a-f]{40}", shipped["source"]["commit"])
    assert shipped["source"]["repository"] == "github.com/MITgcm/MITgcm"
    config = repository_config()
    config["mitgcm"] = shipped
    validate_config(config)


# --- planning and the run's length -----------------------------------------------------------

def test_the_scales_set_the_simulated_period_in_time_steps():
    config = repository_config()
    scales = config["scales"]
    assert time_steps(scales["quick"]["mit_gcm"]["days"]) == 4
    assert scales["reference"]["mit_gcm"]["days"] == scales["paper"]["mit_gcm"]["days"] == 365
    assert time_steps(365) == 292
    with pytest.raises(ValueError, match="multiple of 5"):
        time_steps(7)
    assert "mit_gcm" in config["benchmarks"] and builds.of("mit_gcm") is mitgcm
    validate_config(config)
    runs = [r for r in plan(config, ["native", "lxc"]) if r.benchmark == "mit_gcm"]
    assert {(r.platform, r.variant.key) for r in runs} == {("native", "days-5"), ("lxc", "days-5")}
    assert mitgcm.wanted(config) == {"time_steps": [4]}


def test_the_namelist_sets_the_time_steps_in_place_of_the_end_time():
    original = " &PARM03\n startTime=0,\n#endTime=3110400000,\n endTime=2808000.,\n deltaTClock =108000.0,\n &\n"
    made = mitgcm.namelist(original, 292)
    assert " nTimeSteps=292,\n" in made and "endTime=2808000" not in made and "#endTime=3110400000" in made
    assert made.index("startTime") < made.index("nTimeSteps")
    with pytest.raises(mitgcm.MitgcmError, match="deltaTClock"):
        mitgcm.namelist(original.replace("108000.0", "86400.0"), 4)


def test_every_run_uploads_the_executable_its_namelist_and_the_input():
    benchmark = BENCHMARKS["mit_gcm"]
    variant = benchmark.variants({"days": 365})[0]
    uploads = dict(benchmark.prepare(variant).uploads)
    assert uploads["@BUILT@/exp2/mitgcmuv"] == "@SCRATCH@/exp2/mitgcmuv"
    assert uploads["@BUILT@/exp2/data.steps-292"] == "@SCRATCH@/exp2/data"
    assert "@BUILT@/exp2/input/topog.bin" in uploads
    assert "/usr/bin/time -p ./mitgcmuv" in benchmark.run(variant)


def test_a_figure_without_runs_says_that_mitgcm_was_skipped(tmp_path, monkeypatch):
    from virtrepro import results
    from virtrepro.figures.common import short_why
    from virtrepro.figures.registry import Setting

    probes = tmp_path / "raw" / "tb" / "probes"
    probes.mkdir(parents=True)
    (probes / "mitgcm.json").write_text(json.dumps({"status": "skipped", "reason": "no tarball"}))
    # the run facts the table rule writes beside the table: here of the probe alone
    monkeypatch.setattr(results, "run_facts", lambda testbed, data_dir: {
        **results.facts.probes(data_dir, testbed)[0], "variants": {}})
    why = short_why(Setting(testbed="tb", data_dir=tmp_path), "mit_gcm")
    assert "MITgcm was not obtained" in why and "probes/mitgcm.json" in why
    assert "no tarball" in mitgcm.why_no_runs(tmp_path, "tb")


# --- the parser on real captures -------------------------------------------------------------

def test_a_complete_run_gives_times_the_model_timers_and_what_it_wrote():
    records = {r["metric"]: r for r in parse_mitgcm(fixture_text("mitgcm", GOOD), GOOD, time_steps=4)}
    assert records["time"]["value"] == 0.18 and records["user_time"]["value"] == 0.08 and records["sys_time"]["value"] == 0.02
    assert records["sys_share"]["value"] == pytest.approx(0.2)
    assert records["model_wall_time"]["value"] == pytest.approx(0.16573906)
    assert records["output_bytes"]["value"] == 11371483 and records["output_files"]["value"] == 303
    assert {r["time_steps"] for r in records.values()} == {4}


@pytest.mark.parametrize("name, error, reason", [
    ("bad-diverged-deltaTmom-96000.log", ToolReportedError, "EXTREME Pot.Temp"),
    ("bad-missing-topog-bin.log", ToolReportedError, "MDS_READ_FIELD"),
    ("bad-killed-sigterm.log", TruncatedLogError, "stopped at time step"),
])
def test_a_failed_diverged_or_killed_run_is_refused(name, error, reason):
    text = fixture_text("mitgcm", name)
    with pytest.raises(error, match=reason):
        parse_mitgcm(text, name)
    assert "real " in text  # time -p reported on each: its times alone would have been a number


def test_a_run_of_other_time_steps_than_asked_is_refused():
    with pytest.raises(ParseError, match="set up for 4 time steps, not the 292"):
        BENCHMARKS["mit_gcm"].parse(fixture_text("mitgcm", GOOD), GOOD, {"days": 365})


@pytest.mark.parametrize("damage, reason", [
    (lambda t: re.sub(r"(%MON dynstat_theta_max\s+=\s+)\S+", r"\1NaN", t, count=3), "diverged"),
    (lambda t: re.sub(r"(%MON ke_max\s+=\s+)\S+", r"\1Infinity", t, count=1), "diverged"),
    (lambda t: re.sub(r"(%MON advcfl_uvel_max\s+=\s+)\S+", r"\1****************", t, count=1), "not a number"),
    (lambda t: t.replace("real 0.18\n", ""), "no real time"),
    (lambda t: t.split("virtrepro: end of files written")[0], "ends before"),
    (lambda t: t.split("PROGRAM MAIN: Execution ended Normally")[0], "stopped at time step|ends before|timing summary"),
    (lambda t: t + t, "2 runs"),
])
def test_a_damaged_log_is_refused(damage, reason):
    text = fixture_text("mitgcm", GOOD)
    damaged = damage(text)
    assert damaged != text
    with pytest.raises(ParseError, match=reason):
        parse_mitgcm(damaged, "damaged.log", time_steps=4)


def test_every_capture_is_described():
    described = (DATA / "mitgcm" / "README.md").read_text()
    assert all(f"`{p.name}`" in described for p in (DATA / "mitgcm").glob("*.log"))


# --- a real build and run ----------------------------------------------------------------------

@pytest.mark.integration
@pytest.mark.skipif(not TARBALL, reason="needs a tarball of MITgcm, which is in no package archive: pack one from a "
                    "clone of its public repository (python -m virtrepro.builds.mitgcm pack, docs/mitgcm.md) and set "
                    "VIRTREPRO_MITGCM_TARBALL=/path/to/it (VIRTREPRO_MITGCM_SHA256 to check it) to build and run exp2")
def test_build_and_run_exp2_for_four_time_steps(tmp_path, monkeypatch):
    from virtrepro.measurement.job import measure
    from virtrepro.testbed.kinds import LocalTestbed

    require_tools("/usr/sbin/sshd", "gfortran", "make", "cpp", "/usr/bin/time")
    monkeypatch.setenv("VIRTREPRO_STATE", str(tmp_path / "state"))
    config = repository_config()
    config["mitgcm"] = {"tarball": TARBALL, "sha256": os.environ.get("VIRTREPRO_MITGCM_SHA256"),
                        "source": {"note": "the tarball of VIRTREPRO_MITGCM_TARBALL"}}
    config.update(testbed="pytest-mitgcm", repetitions=1, platforms=["native"], benchmarks=["mit_gcm"])
    config["testbeds"]["pytest-mitgcm"] = {"kind": "local"}
    config["scales"]["quick"]["mit_gcm"]["days"] = 5
    validate_config(config)

    source = mitgcm.obtain(mitgcm.settings(config))
    assert source["status"] == "available"
    with open(tmp_path / "build.log", "w") as log:
        manifest = json.loads(mitgcm.build(config, source, log=log).read_text())
    assert manifest["tarball_sha256"] == sha(Path(TARBALL)) and set(manifest["namelists"]) == {"4"}
    runs = plan(config)
    assert [(r.benchmark, r.variant.key) for r in runs] == [("mit_gcm", "days-5")]
    try:
        log = measure(runs[0], config, tmp_path / "data")
        records = {r["metric"]: r for r in BENCHMARKS["mit_gcm"].parse(log.read_text(), str(log), {"days": 5})}
        assert records["time"]["value"] > 0 and records["output_files"]["value"] > 100
        sidecar = json.loads(log.with_suffix(".json").read_text())
        assert sidecar["mitgcm"]["tarball_sha256"] == source["sha256"]
        assert sidecar["mitgcm"]["executable_sha256"] == manifest["executable_sha256"]
        assert {u["remote"].rsplit("/", 1)[1] for u in sidecar["uploads"]} >= {"mitgcmuv", "data", "topog.bin"}
    finally:
        LocalTestbed("pytest-mitgcm", tmp_path / "state").down()
