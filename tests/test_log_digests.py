"""Every raw log is bound to its run: its sidecar records the sha256 and size of its bytes (at
commit, or later from git's copy), and the table refuses a log that is not those bytes (edited, or
copied over another repetition), a log that is a symbolic link, a sidecar without a digest, a
sidecar that says ``complete`` with a non-zero exit status, and two repetitions that are one run.
On copies of the committed reference logs; the digests expected are computed here with hashlib
from the files and from git, not by the code under test."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import REPO
import virtrepro
from virtrepro.rawdata import rawlog
from virtrepro import results

REFERENCE = REPO / "data" / "raw" / "reference-vm"
INVESTIGATIONS = REPO / "data" / "investigations"
CPU = "native/sysbench_cpu/threads-1_prime-20000_seconds-5"
NPB_IS = "podman/npb_serial/kernel-is_class-A"  # rep-3 and rep-13 printed the same bytes (IS's time to 10 ms)
DIGEST_FIELDS = ("log_sha256", "log_bytes", "digest")  # written out here: the sidecar's contract, not the code's names


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def reference_copy(tmp_path: Path, *variants: str) -> Path:
    """A data directory holding copies of committed variants' logs and sidecars, in their layout."""
    for variant in variants:
        shutil.copytree(REFERENCE / variant, tmp_path / "raw" / "reference-vm" / variant)
    return tmp_path


def rep(data: Path, variant: str, k: int) -> Path:
    return data / "raw" / "reference-vm" / variant / f"rep-{k}.log"


def refused(data: Path, error: type[Exception]) -> str:
    """The one-line message of the table rule's refusal (write_table); load (the notebooks), which
    never builds, refuses the table too in one line: with the same error where it sees it (a log
    listed as a symbolic link), else as stale, naming the command that builds it."""
    with pytest.raises(error) as by_rule:
        results.write_table(data, "reference-vm")
    message = str(by_rule.value)
    assert "\n" not in message
    with pytest.raises((error, results.TableError)) as by_load:
        results.load("reference-vm", data)
    assert "\n" not in str(by_load.value)
    assert str(by_load.value) == message or "python -m virtrepro.results reference-vm" in str(by_load.value)
    return message


# ------------------------------------------------------------ the committed data carries its digests

def test_every_committed_log_has_a_sidecar_with_its_digest():
    logs = sorted(REFERENCE.parent.glob("*/*/*/*/rep-*.log")) + sorted(INVESTIGATIONS.glob("*/raw/*/*/*/*/rep-*.log"))
    logs = [log for log in logs if log.stem[4:].isdecimal()]
    assert len(logs) > 5000
    wrong = []
    for log in logs:
        sidecar = json.loads(log.with_suffix(".json").read_text())
        data = log.read_bytes()
        if (sidecar.get("log_sha256"), sidecar.get("log_bytes")) != (hashlib.sha256(data).hexdigest(), len(data)):
            wrong.append(str(log.relative_to(REPO)))
        elif sidecar["digest"]["taken"] not in ("at commit", "recorded later from git"):
            wrong.append(f"{log.relative_to(REPO)}: taken {sidecar['digest']!r}")
    assert wrong == []


# ------------------------------------------------------------ the table refuses a log that is not its run

def test_a_log_copied_over_another_repetition_is_refused_naming_both(tmp_path):
    data = reference_copy(tmp_path, CPU)
    results.write_table(data, "reference-vm", csv=False)  # built (and cached) before the copy
    shutil.copyfile(rep(data, CPU, 0), rep(data, CPU, 4))  # `cp rep-0.log rep-4.log`, rep-4.json kept
    message = refused(data, rawlog.LogDigestError)
    assert f"{CPU}/rep-4.log" in message and "rep-0.log" in message
    assert sha256(rep(data, CPU, 0))[:16] in message  # what the log is: rep-0's bytes


def test_a_symbolic_link_in_place_of_a_log_is_refused(tmp_path):
    data = reference_copy(tmp_path, CPU)
    results.write_table(data, "reference-vm", csv=False)
    rep(data, CPU, 4).unlink()
    os.symlink("rep-0.log", rep(data, CPU, 4))
    message = refused(data, rawlog.LinkedLogError)
    assert f"{CPU}/rep-4.log" in message and "symbolic link" in message and "rep-0.log" in message


def test_a_link_to_the_same_bytes_elsewhere_is_refused_though_its_content_is_unchanged(tmp_path):
    data = reference_copy(tmp_path / "data", CPU)
    results.write_table(data, "reference-vm", csv=False)
    log = rep(data, CPU, 2)
    elsewhere = tmp_path / "elsewhere.log"
    shutil.move(log, elsewhere)
    os.symlink(elsewhere, log)  # reads as the same bytes: the table's checksums alone would take it
    assert f"{CPU}/rep-2.log" in refused(data, rawlog.LinkedLogError)
    with pytest.raises(rawlog.LinkedLogError):
        results.parse_log(log, data)


def test_a_log_with_one_byte_changed_is_refused(tmp_path):
    data = reference_copy(tmp_path, CPU)
    results.write_table(data, "reference-vm", csv=False)
    log = rep(data, CPU, 3)
    text = log.read_bytes()
    at = text.index(b"events per second:") + len(b"events per second:") + 4
    changed = text[:at] + (b"1" if text[at:at + 1] != b"1" else b"2") + text[at + 1:]
    assert len(changed) == len(text) and changed != text
    log.write_bytes(changed)
    message = refused(data, rawlog.LogDigestError)
    assert f"{CPU}/rep-3.log" in message and hashlib.sha256(changed).hexdigest()[:16] in message
    assert hashlib.sha256(text).hexdigest()[:16] in message  # what the sidecar recorded


def test_a_sidecar_without_a_digest_is_refused_with_the_command_that_records_one(tmp_path):
    data = reference_copy(tmp_path, CPU)
    sidecar = rawlog.sidecar_path(rep(data, CPU, 1))
    record = json.loads(sidecar.read_text())
    sidecar.write_text(json.dumps({key: value for key, value in record.items() if key not in DIGEST_FIELDS}))
    message = refused(data, rawlog.LogDigestError)
    assert f"{CPU}/rep-1.log" in message and "no digest" in message
    assert f"python -m virtrepro.results.digests record --data {data} --testbed reference-vm" in message


def test_a_complete_sidecar_with_a_nonzero_exit_status_is_refused(tmp_path):
    data = reference_copy(tmp_path, CPU)
    log = rep(data, CPU, 2)
    sidecar = rawlog.sidecar_path(log)
    sidecar.write_text(json.dumps({**json.loads(sidecar.read_text()), "exit_status": 1}))
    message = refused(data, rawlog.IncompleteLogError)
    assert f"{CPU}/rep-2.log" in message and "exit_status 1" in message
    with pytest.raises(rawlog.IncompleteLogError, match="exit_status 1"):
        rawlog.is_complete(log)  # nor is it a complete run for the measurement
    with pytest.raises(rawlog.RawLogError, match="exit_status 1"):  # and never committed as one
        partial = rawlog.temporary_path(log.with_name("rep-9.log"))
        partial.write_text("a run that failed\n")
        rawlog.commit(partial, log.with_name("rep-9.log"), {"exit_status": 1})
    assert not log.with_name("rep-9.log").exists() and not log.with_name("rep-9.json").exists()


def test_two_repetitions_that_are_one_run_are_refused_naming_both(tmp_path):
    # rep-0's log and sidecar copied to rep-5, and the sidecar renumbered to fit its place
    data = reference_copy(tmp_path, CPU)
    shutil.copyfile(rep(data, CPU, 0), rep(data, CPU, 5))
    record = json.loads(rawlog.sidecar_path(rep(data, CPU, 0)).read_text())
    rawlog.sidecar_path(rep(data, CPU, 5)).write_text(json.dumps({**record, "repetition": 5, "log": "rep-5.log"}))
    message = refused(data, results.CopiedLogError)
    assert f"{CPU}/rep-5.log" in message and f"{CPU}/rep-0.log" in message and record["started_utc"] in message


def test_a_copy_added_after_a_table_was_built_is_refused_by_the_update(tmp_path):
    """The update after new logs looks for copies in the variants that changed (the earlier build
    looked at the rest): a copy added there is refused as in a full build."""
    data = reference_copy(tmp_path, CPU, NPB_IS)
    results.write_table(data, "reference-vm")
    count = len(list(rep(data, CPU, 0).parent.glob("rep-*.log")))
    shutil.copyfile(rep(data, CPU, 1), rep(data, CPU, count))
    record = json.loads(rawlog.sidecar_path(rep(data, CPU, 1)).read_text())
    rawlog.sidecar_path(rep(data, CPU, count)).write_text(
        json.dumps({**record, "repetition": count, "log": f"rep-{count}.log"}))
    message = refused(data, results.CopiedLogError)
    assert f"{CPU}/rep-{count}.log" in message and f"{CPU}/rep-1.log" in message


def test_the_update_looks_for_copies_in_the_variants_with_a_new_or_changed_log_only():
    from virtrepro.results.build import _of_changed_variants

    names = ["raw/t/a/b/v1/rep-0.log", "raw/t/a/b/v1/rep-1.log", "raw/t/a/b/v2/rep-0.log", "raw/t/a/b/v2/rep-1.log"]
    current = {"a/b/v1": [0, 1], "a/b/v2": [2, 3]}
    assert _of_changed_variants(names, current, {names[0], names[1], names[2]}) == names[2:]  # v2's rep-1 is new
    assert _of_changed_variants(names, current, set(names)) == []
    assert _of_changed_variants(names, current, set()) == names  # nothing kept: every log is looked at


def test_separate_runs_that_printed_the_same_bytes_are_kept(tmp_path):
    """Repetitions 3 and 13 of NPB IS in podman printed the same log (times to 10 ms); their sidecars
    say two runs (their start times), so both count, as measured."""
    data = reference_copy(tmp_path, NPB_IS)
    assert sha256(rep(data, NPB_IS, 3)) == sha256(rep(data, NPB_IS, 13))
    frame = results.write_table(data, "reference-vm")
    assert {3, 13} <= set(frame["repetition"])
    assert frame["source_log"].nunique() == len(list(rep(data, NPB_IS, 0).parent.glob("rep-*.log")))


# ------------------------------------------------------------ a commit records its log's digest

def test_a_committed_log_carries_its_sha256_and_size_taken_at_commit(tmp_path):
    log = tmp_path / "rep-0.log"
    partial = rawlog.temporary_path(log)
    shutil.copyfile(rep(REFERENCE.parent.parent, CPU, 0), partial)
    rawlog.commit(partial, log, {"command": "x", "exit_status": 0})
    sidecar = json.loads(rawlog.sidecar_path(log).read_text())
    assert sidecar["log_sha256"] == sha256(log) == sha256(REFERENCE / CPU / "rep-0.log")
    assert sidecar["log_bytes"] == log.stat().st_size
    assert sidecar["digest"] == {"taken": "at commit"}


# ------------------------------------------------------------ digests recorded later from git

def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                          capture_output=True, text=True, check=True).stdout


def without_digests(repo: Path) -> Path:
    """A git repository whose data directory holds two committed variants' logs with sidecars as
    they were before digests were recorded."""
    data = reference_copy(repo / "data", CPU, NPB_IS)
    for sidecar in data.glob("raw/*/*/*/*/rep-*.json"):
        record = json.loads(sidecar.read_text())
        sidecar.write_text(json.dumps({k: v for k, v in record.items() if k not in DIGEST_FIELDS}, indent=2) + "\n")
    git(repo, "init", "-q")
    git(repo, "add", "data")
    git(repo, "commit", "-q", "-m", "logs")
    return data


def record_command(data: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(virtrepro.__file__).parents[1])}  # the package under test
    return subprocess.run([sys.executable, "-m", "virtrepro.results.digests", "record", "--data", str(data), *args],
                          capture_output=True, text=True, env=env)


def test_recording_from_git_writes_the_blobs_digest_and_says_how_it_was_taken(tmp_path):
    data = without_digests(tmp_path)
    head = git(tmp_path, "rev-parse", "HEAD").strip()
    logs = sorted(data.glob("raw/*/*/*/*/rep-*.log"))
    texts = {log: log.read_bytes() for log in logs}
    before = datetime.now(timezone.utc).replace(microsecond=0)
    done = record_command(data)
    assert done.returncode == 0, done.stderr
    assert f"recorded the digests of {len(logs)} raw logs" in done.stdout
    for log in logs:
        blob = subprocess.run(["git", "-C", str(tmp_path), "show", f"HEAD:{log.relative_to(tmp_path)}"],
                              capture_output=True, check=True).stdout
        sidecar = json.loads(log.with_suffix(".json").read_text())
        assert sidecar["log_sha256"] == hashlib.sha256(blob).hexdigest() and sidecar["log_bytes"] == len(blob)
        assert sidecar["digest"]["taken"] == "recorded later from git" and sidecar["digest"]["commit"] == head
        assert before <= datetime.strptime(sidecar["digest"]["date"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
        assert log.read_bytes() == texts[log]  # no log changed
    assert len(results.write_table(data, "reference-vm"))  # the table takes them now


def test_recording_again_changes_nothing(tmp_path):
    data = without_digests(tmp_path)
    assert record_command(data).returncode == 0
    sidecars = {p: p.read_bytes() for p in data.glob("raw/*/*/*/*/rep-*.json")}
    again = record_command(data, "--testbed", "reference-vm")
    assert again.returncode == 0 and "recorded the digests of 0 raw logs" in again.stdout
    assert {p: p.read_bytes() for p in data.glob("raw/*/*/*/*/rep-*.json")} == sidecars


def test_a_log_that_differs_from_git_is_refused_and_nothing_is_written(tmp_path):
    data = without_digests(tmp_path)
    log = rep(data, CPU, 1)
    log.write_bytes(log.read_bytes() + b"\n")
    sidecars = {p: p.read_bytes() for p in data.glob("raw/*/*/*/*/rep-*.json")}
    done = record_command(data)
    assert done.returncode == 1
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"{CPU}/rep-1.log" in done.stderr and "differs from its copy in git" in done.stderr
    assert {p: p.read_bytes() for p in data.glob("raw/*/*/*/*/rep-*.json")} == sidecars


def test_a_recorded_digest_is_never_replaced_and_a_different_one_is_an_error(tmp_path):
    from virtrepro.results import digests

    data = without_digests(tmp_path)
    sidecar = rawlog.sidecar_path(rep(data, CPU, 0))
    wrong = {**json.loads(sidecar.read_text()), "log_sha256": "0" * 64, "log_bytes": 5, "digest": {"taken": "at commit"}}
    sidecar.write_text(json.dumps(wrong))
    with pytest.raises(digests.DigestError, match="rep-0.json.*never replaced"):
        digests.record(data)
    assert json.loads(sidecar.read_text()) == wrong


def test_a_log_git_does_not_hold_gets_no_digest_from_it(tmp_path):
    from virtrepro.results import digests

    data = without_digests(tmp_path)
    new = rep(data, CPU, 5)
    shutil.copyfile(rep(data, CPU, 0), new)
    shutil.copyfile(rawlog.sidecar_path(rep(data, CPU, 0)), rawlog.sidecar_path(new))
    with pytest.raises(digests.DigestError, match="rep-5.log: not committed"):
        digests.record(data)
    assert "log_sha256" not in json.loads(rawlog.sidecar_path(rep(data, CPU, 0)).read_text())
