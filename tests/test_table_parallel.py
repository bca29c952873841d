"""A full build parses its logs in worker processes (results.build._variants_apart): the same table,
manifest and run facts as a build in one process, and the same refusal of a bad log."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from virtrepro import results
from virtrepro.rawdata import rawlog
from virtrepro.results import build

REPO = Path(__file__).resolve().parents[1]
TESTBED = "fair-quick"


@pytest.fixture
def data(tmp_path):
    shutil.copytree(REPO / "data" / "raw" / TESTBED, tmp_path / "raw" / TESTBED)
    return tmp_path


def _in_workers(monkeypatch) -> None:
    monkeypatch.setattr(build, "PARALLEL_FROM", 1)
    monkeypatch.setattr(build, "CHUNK", 3)
    monkeypatch.setattr(build, "_cores", lambda: 2)


def _files(data: Path) -> dict[str, bytes]:
    tables = data / "tables"
    return {path.name: path.read_bytes() for path in sorted(tables.glob(f"{TESTBED}.*"))}


def test_workers_build_the_table_one_process_builds(data, monkeypatch):
    alone = results.write_table(data, TESTBED, reparse=True)
    written = _files(data)
    _in_workers(monkeypatch)
    made = []
    real = build._variants_apart
    monkeypatch.setattr(build, "_variants_apart", lambda *args: made.append(real(*args)) or made[-1])
    apart = results.write_table(data, TESTBED, reparse=True)
    assert made and made[0] is not None and len(made[0]) > 2  # built by the workers, in parts
    assert apart.equals(alone)
    assert _files(data) == written
    assert written == {name: (REPO / "data" / "tables" / name).read_bytes() for name in written}


def test_workers_refuse_an_edited_log_as_one_process_does(data, monkeypatch):
    logs = sorted((data / "raw" / TESTBED).glob("*/*/*/rep-*.log"))
    edited = logs[len(logs) // 2]
    edited.write_bytes(edited.read_bytes() + b"1\n")
    with pytest.raises(rawlog.LogDigestError) as alone:
        results.write_table(data, TESTBED, reparse=True)
    _in_workers(monkeypatch)
    with pytest.raises(rawlog.LogDigestError) as apart:
        results.write_table(data, TESTBED, reparse=True)
    assert str(apart.value) == str(alone.value)
    assert not (data / "tables" / f"{TESTBED}.parquet").exists()


def test_an_incremental_build_parses_changed_logs_in_workers_to_the_same_table(data, monkeypatch):
    import json

    results.write_table(data, TESTBED, csv=False)
    logs = sorted((data / "raw" / TESTBED).glob("*/*/*/rep-*.log"))
    for log in (logs[1], logs[-2], logs[len(logs) // 2]):  # each in a variant with other, kept logs
        sidecar = json.loads(rawlog.sidecar_path(log).read_text())
        rawlog.sidecar_path(log).write_text(json.dumps({**sidecar, "note": "changed"}))
    _in_workers(monkeypatch)
    monkeypatch.setattr(build, "CHUNK", 1)
    pools = []

    class Pool(build.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            pools.append(args)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(build, "ProcessPoolExecutor", Pool)
    incremental = results.write_table(data, TESTBED, csv=False)
    assert pools == [(2,)]  # the three changed logs parsed by two workers
    monkeypatch.setattr(build, "PARALLEL_FROM", 10**9)
    assert incremental.equals(results.write_table(data, TESTBED, reparse=True, csv=False))
