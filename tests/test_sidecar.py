"""The sidecar record (virtrepro.sidecar): every committed sidecar reads into it and writes back as
the same JSON object; a new one carries its version."""

from __future__ import annotations

import json

import pytest

from conftest import REPO
from virtrepro.rawdata import rawlog
from virtrepro.sidecar import ABSENT, SIDECAR_VERSION, Sidecar

COMMITTED = sorted((REPO / "data").glob("**/rep-*.json"))


def test_every_committed_sidecar_reads_and_writes_back_unchanged():
    assert len(COMMITTED) > 5000
    for path in COMMITTED:
        data = json.loads(path.read_text())
        record = Sidecar.from_json(data)
        assert record.to_json() == data, path
        assert record.version == data.get("sidecar_version", 1)


def test_a_record_names_what_the_harness_reads_and_keeps_the_rest():
    record = Sidecar.from_json({"testbed": "t", "platform": {"name": "native"}, "order": {"part": 2},
                                "repetition_rule": None, "tool_version": "x"})
    assert (record.platform_name, record.part, record.repetition_rule, record.scale) == ("native", 2, None, ABSENT)
    assert record.get("scale") is None and record.get("tool_version") == "x" and record.exited_zero
    assert "scale" not in record.to_json()


def test_a_new_record_carries_its_version_and_a_later_one_is_refused():
    written = Sidecar.new(testbed="t", exit_status=0).to_json()
    assert written["sidecar_version"] == SIDECAR_VERSION
    assert Sidecar.from_json(written).version == SIDECAR_VERSION
    with pytest.raises(ValueError, match="sidecar_version"):
        Sidecar.from_json({"sidecar_version": SIDECAR_VERSION + 1})


def test_a_run_in_rounds_records_its_round_and_an_older_one_its_part():
    """Version 3: round, position, round_order, frozen (docs/methodology.md, "Run order"); a version 2
    sidecar with its order of parts stays readable, its part where it was."""
    record = Sidecar.new(testbed="t", round=3, position=1, round_order=["lxc", "native"], frozen=["lxc"])
    assert (SIDECAR_VERSION, record.version) == (3, 3)
    assert (record.round, record.position, record.round_order, record.frozen, record.part) == (3, 1, ["lxc", "native"],
                                                                                                 ["lxc"], None)
    assert Sidecar.from_json(record.to_json()) == record
    old = {"testbed": "t", "order": {"part": 2, "parts": 2, "sequence": ["native:1", "native:2"], "slot": 1},
           "sidecar_version": 2}
    read = Sidecar.from_json(old)
    assert (read.version, read.part, read.round) == (2, 2, ABSENT) and read.to_json() == old


def test_commit_writes_the_record_with_the_logs_digest(tmp_path):
    partial, log = tmp_path / ".rep-0.log.1.partial", tmp_path / "rep-0.log"
    partial.write_text("out\n")
    rawlog.commit(partial, log, Sidecar.new(testbed="t", exit_status=0))
    record = rawlog.complete_record(log)
    assert record.complete and record.log == "rep-0.log" and record.log_bytes == 4
    assert record.version == SIDECAR_VERSION
