"""bench/reference_run_time.py: a run's parts and wall time from its sidecars' start and end times."""

from __future__ import annotations

import importlib.util
import json

from conftest import REPO

spec = importlib.util.spec_from_file_location("reference_run_time", REPO / "bench" / "reference_run_time.py")
reference_run_time = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reference_run_time)


def sidecar(root, platform, rep, start, end, duration):
    where = root / "raw" / "tb" / platform / "sysbench_cpu" / "threads-1"
    where.mkdir(parents=True, exist_ok=True)
    (where / f"rep-{rep}.json").write_text(json.dumps({
        "platform": {"name": platform}, "started_utc": start, "ended_utc": end, "duration_s": duration}))


def test_pauses_longer_than_the_gap_split_the_run_into_parts_and_only_the_parts_count(tmp_path):
    sidecar(tmp_path, "native", 0, "2026-11-24T10:00:00.000Z", "2026-11-24T10:10:00.000Z", 590)
    sidecar(tmp_path, "native", 1, "2026-11-24T10:20:00.000Z", "2026-11-24T10:30:00.000Z", 580)  # 10 min pause: same part
    sidecar(tmp_path, "lxc", 0, "2026-11-24T13:00:00.000Z", "2026-11-24T13:30:00.000Z", 1790)  # 2.5 h later: a new part
    got = reference_run_time.summary(tmp_path, "tb", gap_min=15)
    assert [(p["start"], p["end"], p["repetitions"], p["largest_gap_min"]) for p in got["parts"]] == [
        ("2026-11-24T10:00Z", "2026-11-24T10:30Z", 2, 10.0), ("2026-11-24T13:00Z", "2026-11-24T13:30Z", 1, 0.0)]
    assert got["wall_h"] == 1.0  # 30 min + 30 min; the 2.5 h between the parts is not counted
    assert got["benchmarks_h"] == round((590 + 580 + 1790) / 3600, 2)
    assert got["benchmarks_h_per_platform"] == {"lxc": round(1790 / 3600, 2), "native": round(1170 / 3600, 2)}
    # with a shorter allowed pause the 10 min pause splits the first part too
    assert len(reference_run_time.summary(tmp_path, "tb", gap_min=5)["parts"]) == 3
