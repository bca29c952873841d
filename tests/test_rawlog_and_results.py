"""Raw logs are kept, never replaced; the tidy table comes from them and only from them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import DATA, commit_capture
from virtrepro import datalayout, results
from virtrepro.rawdata import rawlog
from virtrepro.parsers import ParseError, TruncatedLogError
from virtrepro.parsers.iozone import parse_iozone

IOZONE_DIR = "raw/tb/native/iozone/record-1m_sizes-1m-64m_tests-write+read"
SYSBENCH_DIR = "raw/tb/native/sysbench_cpu/threads-1_prime-20000_seconds-10"
SYSBENCH_2_DIR = "raw/tb/native/sysbench_cpu/threads-2_prime-10000_seconds-6"


def place(data: Path, directory: str, rep: int, fixture: Path, status: str = "complete", parameters: dict | None = None) -> Path:
    """Put a capture at ``directory``/rep-<rep>.log with a sidecar that describes that place (its
    parameters as the key spells them, as text, unless given)."""
    target = data / directory / f"rep-{rep}.log"
    _, testbed, platform, benchmark, variant = Path(directory).parts
    if parameters is None:
        parameters = dict(part.split("-", 1) for part in variant.split("_"))
    commit_capture(fixture, target, {
        "command": "captured", "testbed": testbed, "platform": {"name": platform},
        "benchmark": benchmark, "variant": variant, "parameters": parameters, "repetition": rep,
    })
    if status != "complete":
        rawlog.write_json(rawlog.sidecar_path(target), {**rawlog.read_sidecar(target), "status": status})
    return target


@pytest.fixture
def data(tmp_path):
    place(tmp_path, IOZONE_DIR, 0, DATA / "iozone" / "auto-r1m-n1m-g64m-i0-i1.log")
    place(tmp_path, SYSBENCH_DIR, 0, DATA / "sysbench" / "cpu-1thread-10s.log")
    place(tmp_path, SYSBENCH_DIR, 1, DATA / "sysbench" / "cpu-1thread-10s.log")
    return tmp_path


def test_commit_gives_the_final_name_and_never_replaces(tmp_path):
    log = tmp_path / "rep-0.log"
    partial = rawlog.temporary_path(log)
    partial.write_text("first")
    rawlog.commit(partial, log, {"command": "x"})
    assert log.read_text() == "first" and not partial.exists()
    assert rawlog.is_complete(log)
    assert json.loads(rawlog.sidecar_path(log).read_text())["status"] == "complete"
    again = rawlog.temporary_path(log)
    again.write_text("second")
    with pytest.raises(rawlog.RawLogExists):
        rawlog.commit(again, log, {"command": "x"})
    assert log.read_text() == "first"


def test_failed_run_is_kept_under_another_name(tmp_path):
    log = tmp_path / "rep-3.log"
    partial = rawlog.temporary_path(log)
    partial.write_text("half a run")
    failed = rawlog.keep_failed(partial, log, {"error": "boom"}, "20261122T000000Z")
    assert failed.name == "rep-3.failed-20261122T000000Z.log" and failed.read_text() == "half a run"
    assert json.loads(failed.with_suffix(".json").read_text())["status"] == "failed"
    assert not log.exists() and not rawlog.is_complete(log)
    assert results.raw_logs(tmp_path.parent, tmp_path.name) == []


def test_table_has_the_documented_columns_and_real_values(data):
    frame = results.build_table(data, "tb")
    assert list(frame.columns) == results.COLUMNS and len(frame.columns) <= 16  # issue 17: a narrow table (16: round)
    assert frame["repetition"].dtype == "int64" and frame["value"].dtype == "float64"
    cpu = frame[(frame["benchmark"] == "sysbench_cpu") & (frame["metric"] == "events_per_second")]
    assert sorted(cpu["repetition"]) == [0, 1]
    assert set(cpu["value"]) == {1141.43}
    assert set(cpu["variant"]) == {"threads-1_prime-20000_seconds-10"}
    io = results.view(frame, "iozone")
    io = io[(io["metric"] == "read") & (io["file_size_kb"] == 32768)]
    assert io["value"].tolist() == [7811336]
    assert io["source_log"].tolist() == [f"{IOZONE_DIR}/rep-0.log"]
    assert set(frame["testbed"]) == {"tb"} and set(frame["platform"]) == {"native"}


def test_each_row_is_one_record_of_its_log_as_its_parser_reads_it(data):
    """Every row against the captured log parsed directly: metric, unit, value and the labels (the
    table's JSON ``labels`` column), in the parser's order; the parameters as the sidecar has them."""
    frame = results.build_table(data, "tb")
    rows = frame[frame["source_log"] == f"{IOZONE_DIR}/rep-0.log"]
    records = parse_iozone((DATA / "iozone" / "auto-r1m-n1m-g64m-i0-i1.log").read_text(), "capture")
    assert len(rows) == len(records) > 1
    for row, record in zip(rows.itertuples(), records):
        assert (row.metric, row.unit, row.value) == (record["metric"], record["unit"], record["value"])
        assert json.loads(row.labels) == {k: v for k, v in record.items() if k not in ("metric", "unit", "value")}
        assert json.loads(row.parameters) == {"record": "1m", "sizes": "1m-64m", "tests": "write+read"}
        assert json.loads(row.stopping) == {"n_repetitions": 1, "repetition_rule": "fixed", "stop_reason": "fixed count"}


def test_view_widens_one_benchmark_into_typed_columns(tmp_path):
    """Parameters as the sidecar typed them (ints stay ints: no notebook casts them back from text),
    labels typed from the parser's values, the stopping facts as columns; other benchmarks' fields
    are not there."""
    typed = {"threads": 1, "prime": 20000, "seconds": 10}
    place(tmp_path, SYSBENCH_DIR, 0, DATA / "sysbench" / "cpu-1thread-10s.log", parameters=typed)
    place(tmp_path, "raw/tb/native/sysbench_cpu/threads-all_prime-10000_seconds-6", 0,
          DATA / "sysbench" / "cpu-histogram-p99-interval.log", parameters={"threads": "all", "prime": 10000, "seconds": 6})
    place(tmp_path, IOZONE_DIR, 0, DATA / "iozone" / "auto-r1m-n1m-g64m-i0-i1.log")
    frame = results.build_table(tmp_path, "tb")
    cpu = results.view(frame, "sysbench_cpu")
    assert set(cpu["benchmark"]) == {"sysbench_cpu"} and cpu.index.isin(frame.index).all()
    assert "file_size_kb" not in cpu.columns and not set(results.JSON_COLUMNS) & set(cpu.columns)
    assert str(cpu["param_prime"].dtype) == "Int64" and str(cpu["param_seconds"].dtype) == "Int64"
    assert sorted(cpu["param_prime"].unique()) == [10000, 20000]
    # a number in one variant, a word in another: each value keeps its own type
    assert sorted(map(repr, cpu["param_threads"].unique())) == ["'all'", "1"]
    assert str(cpu["n_repetitions"].dtype) == "Int64" and set(cpu["stop_reason"]) == {"fixed count"}
    assert cpu["rel_half_width"].isna().all() and cpu["measures"].isna().all()
    one = cpu[(cpu["param_threads"] == 1) & (cpu["metric"] == "events_per_second")]
    assert one["value"].tolist() == [1141.43] and one["cpu_max_prime"].tolist() == [20000]
    io = results.view(frame, "iozone")
    assert str(io["file_size_kb"].dtype) == "Int64" and str(io["record_kb"].dtype) == "Int64"
    assert str(io["o_direct"].dtype) == "boolean" and str(io["param_record"].dtype) == "str"
    assert set(io["file_size_kb"]) == {1024, 2048, 4096, 8192, 16384, 32768, 65536}
    both = results.view(frame, ["sysbench_cpu", "iozone"])
    assert len(both) == len(frame) and both["param_prime"].isna().sum() == len(io)
    assert results.view(frame, "fio").empty
    reads = results.view(frame, "iozone", metric="read")
    assert set(reads["metric"]) == {"read"} and reads.index.equals(io.index[io["metric"] == "read"])
    assert set(results.view(frame, "iozone", metric=["read", "write"])["metric"]) == {"read", "write"}
    with pytest.raises(ValueError, match="no benchmark 'sysbench-cpu'"):
        results.view(frame, "sysbench-cpu")


def test_truncated_log_stops_the_table_naming_the_file(data):
    bad = place(data, IOZONE_DIR, 1, DATA / "iozone" / "bad-truncated-sigterm.log")
    with pytest.raises(TruncatedLogError) as error:
        results.build_table(data, "tb")
    assert str(bad.relative_to(data)) in str(error.value)


def test_log_without_complete_sidecar_is_refused(data):
    log = place(data, SYSBENCH_DIR, 2, DATA / "sysbench" / "cpu-1thread-10s.log")
    rawlog.sidecar_path(log).unlink()
    with pytest.raises(results.IncompleteLogError, match="rep-2.log"):
        results.build_table(data, "tb")
    place(data, SYSBENCH_DIR, 2, DATA / "sysbench" / "cpu-1thread-10s.log", status="running")
    with pytest.raises(ParseError, match="not 'complete'"):
        results.build_table(data, "tb")


def test_load_only_reads_and_refuses_a_missing_or_stale_table_naming_the_command(data):
    """The table rule (write_table) is the table's one writer: load() writes nothing, not even the
    builder's checksum cache, and refuses a table that is missing or not of the logs there now in one
    line that names the command which builds it."""
    paths = results.table_paths(data, "tb")
    with pytest.raises(results.TableError) as error:
        results.load("tb", data)
    message = str(error.value)
    assert "\n" not in message and "no table of testbed 'tb'" in message
    assert f"python -m virtrepro.results tb --data-dir {data}" in message
    assert not (data / "tables").exists()
    first = results.write_table(data, "tb")
    assert paths["parquet"].exists() and paths["manifest"].exists() and paths["csv"].exists() and paths["facts"].exists()
    written = {path: path.stat().st_mtime_ns for path in (data / "tables").rglob("*") if path.is_file()}
    pd.testing.assert_frame_equal(results.load("tb", data), first)
    place(data, SYSBENCH_2_DIR, 0, DATA / "sysbench" / "cpu-histogram-p99-interval.log")
    with pytest.raises(results.TableError, match=r"the table is stale .*python -m virtrepro\.results tb"):
        results.load("tb", data)
    assert written == {path: path.stat().st_mtime_ns for path in (data / "tables").rglob("*") if path.is_file()}
    third = results.write_table(data, "tb")
    assert len(third) > len(first) and 4565.97 in set(third["value"])
    pd.testing.assert_frame_equal(results.load("tb", data), third)
    csv = pd.read_csv(paths["csv"])
    assert len(csv) == len(third)
    manifest = json.loads(paths["manifest"].read_text())
    assert manifest["csv"] and manifest["csv_fingerprint"] == manifest["fingerprint"]
    place(data, SYSBENCH_2_DIR, 1, DATA / "sysbench" / "cpu-histogram-p99-interval.log")
    results.write_table(data, "tb", csv=False)  # the manifest says the CSV is of the table before
    manifest = json.loads(paths["manifest"].read_text())
    assert not manifest["csv"] and manifest["csv_fingerprint"] != manifest["fingerprint"]
    assert len(pd.read_csv(paths["csv"])) == len(csv)


def test_the_run_facts_are_of_the_tables_logs_and_probes(data):
    """The run facts beside the table (results.facts): each variant's runs, what its platform applied,
    its host; refused once a probe record changed until the table is built again."""
    results.write_table(data, "tb")
    facts = results.run_facts("tb", data)
    variant = facts["variants"][SYSBENCH_DIR.split("/", 2)[2]]
    assert variant["runs"] == len(list((data / SYSBENCH_DIR).glob("rep-*.log")))
    probe = datalayout.probe_path(data, "tb", datalayout.QEMU_PROBE)
    probe.parent.mkdir(parents=True, exist_ok=True)
    probe.write_text(json.dumps({"reason": "KVM works"}))
    with pytest.raises(results.FactsError, match="python -m virtrepro.results tb"):
        results.run_facts("tb", data)
    results.write_table(data, "tb")
    assert results.run_facts("tb", data)["probes"][datalayout.QEMU_PROBE] == {"reason": "KVM works"}


def test_a_record_label_named_like_a_column_never_replaces_it():
    """NPB's records carry their own ``benchmark`` ("EP"): view() keeps it as ``label_benchmark``."""
    row = {column: None for column in results.COLUMNS}
    row.update(benchmark="npb_serial", platform="native", variant="kernel-ep_class-S", metric="time", unit="s", value=1.5,
               parameters=json.dumps({"kernel": "ep", "class": "S"}), labels=json.dumps({"benchmark": "EP", "class": "S"}),
               stopping=json.dumps({"n_repetitions": 1}))
    wide = results.view(pd.DataFrame([row]), "npb_serial")
    assert wide.loc[0, "benchmark"] == "npb_serial" and wide.loc[0, "label_benchmark"] == "EP"
    assert wide.loc[0, "class"] == "S" and wide.loc[0, "param_class"] == "S" and wide.loc[0, "param_kernel"] == "ep"


def test_a_table_of_the_old_format_is_refused_in_one_line_and_rebuilt_by_the_builder(data):
    """A table of the wide format (a column per label and param_<name> as text, the variant key in
    ``parameters``): load() refuses it as stale (its fingerprint names another table format), naming
    the command; read as a file it is refused in one line naming the file; the builder makes it anew."""
    paths = results.table_paths(data, "tb")
    paths["parquet"].parent.mkdir(parents=True)
    wide = pd.DataFrame({"testbed": ["tb"], "platform": ["native"], "benchmark": ["sysbench_cpu"],
                         "parameters": ["threads-1_prime-20000_seconds-10"], "repetition": [0], "metric": ["events_per_second"],
                         "unit": ["events/s"], "value": [1.0], "source_log": ["x"], "param_threads": ["1"], "threads": [1]})
    wide.to_parquet(paths["parquet"])
    paths["manifest"].write_text(json.dumps({"fingerprint": "the fingerprint of an older format"}))
    with pytest.raises(results.TableError, match=r"stale .*python -m virtrepro\.results tb"):
        results.load("tb", data)
    with pytest.raises(results.TableError) as error:
        results.read_table(paths["parquet"])
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"{paths['parquet']}: the table has no column 'variant', 'labels'")
    assert f"table format {results.TABLE_FORMAT}" in message and "build it again from the raw logs" in message
    rebuilt = results.write_table(data, "tb")
    assert list(rebuilt.columns) == results.COLUMNS and 1141.43 in set(rebuilt["value"])
    assert list(pd.read_parquet(paths["parquet"]).columns) == results.COLUMNS


def test_the_fingerprint_names_the_table_format(data, monkeypatch):
    before = results.fingerprint(data, "tb")
    monkeypatch.setattr(results.cache, "TABLE_FORMAT", results.TABLE_FORMAT - 1)
    assert results.fingerprint(data, "tb") != before


def test_the_notebooks_read_the_table_through_view():
    """Issue 17: a notebook selects a benchmark's rows with results.view(), whose parameters are typed
    already: none selects by the benchmark column itself or casts a parameter back from text."""
    import re

    from conftest import REPO

    notebooks = sorted((REPO / "notebooks").glob("*.ipynb"))
    assert len(notebooks) >= 6
    for path in notebooks:
        code = "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code")
        assert not re.search(r'param_\w+"\]\)?\.astype\(', code), path.name
        assert not re.search(r'table\[\(?table\["benchmark"\]', code), path.name
        assert 'table["parameters"]' not in code and '["parameters"].str.extract' not in code, path.name


# --- the table at cluster scale: each log parsed once (issue 19) ---------------------------------


def _parsed(monkeypatch) -> list[str]:
    """The logs parse_log is asked to parse from now on."""
    seen = []
    real = results.parse_log

    def counting(log, data_dir):
        seen.append(str(Path(log).relative_to(data_dir)))
        return real(log, data_dir)

    monkeypatch.setattr(results.build, "parse_log", counting)
    return seen


def _full(data: Path) -> pd.DataFrame:
    """The table of the same logs built from nothing, in another directory (no cache, no earlier table)."""
    copy = data.parent / f"{data.name}-full"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(data / "raw", copy / "raw")
    return results.build_table(copy, "tb")


def test_a_new_log_is_the_only_one_parsed_and_its_variant_decided_anew(data, monkeypatch):
    results.write_table(data, "tb", csv=False)
    parsed = _parsed(monkeypatch)
    new = place(data, SYSBENCH_DIR, 2, DATA / "sysbench" / "cpu-1thread-10s.log")
    table = results.write_table(data, "tb", csv=False)
    assert parsed == [str(new.relative_to(data))]
    pd.testing.assert_frame_equal(table, _full(data))
    stopping = set(table.loc[table["variant"] == Path(SYSBENCH_DIR).name, "stopping"])
    assert stopping == {json.dumps({"n_repetitions": 3, "repetition_rule": "fixed", "stop_reason": "fixed count"})}


def test_a_changed_or_removed_log_is_seen_and_nothing_else_parsed(data, monkeypatch):
    results.write_table(data, "tb", csv=False)
    parsed = _parsed(monkeypatch)
    log = data / SYSBENCH_DIR / "rep-1.log"
    sidecar = json.loads(rawlog.sidecar_path(log).read_text())
    rawlog.sidecar_path(log).write_text(json.dumps({**sidecar, "scale": "paper"}))  # a new file, as rawlog writes
    table = results.write_table(data, "tb", csv=False)
    assert parsed == [str(log.relative_to(data))]
    assert set(table.loc[table["source_log"] == str(log.relative_to(data)), "scale"]) == {"paper"}
    pd.testing.assert_frame_equal(table, _full(data))
    rawlog.sidecar_path(log).unlink()
    log.unlink()
    parsed.clear()
    table = results.write_table(data, "tb", csv=False)
    assert parsed == [] and str(log.relative_to(data)) not in set(table["source_log"])
    assert '"n_repetitions": 1' in table.loc[table["variant"] == Path(SYSBENCH_DIR).name, "stopping"].iloc[0]
    pd.testing.assert_frame_equal(table, _full(data))


def test_variants_added_between_others_or_gone_leave_the_others_rows_as_one_block(data, monkeypatch):
    """The rows of an unchanged variant are kept as a block (manifest's variant_rows): the table stays
    in order when a variant sorts between kept ones, another is gone, and one more comes last."""
    results.write_table(data, "tb", csv=False)
    parsed = _parsed(monkeypatch)
    between = "raw/tb/native/sysbench_cpu/prime-20000_seconds-10_threads-1"  # the same run spelled in another order: sorts before SYSBENCH_DIR
    last = "raw/tb/podman/sysbench_cpu/threads-1_prime-20000_seconds-10"
    added = [place(data, between, 0, DATA / "sysbench" / "cpu-1thread-10s.log"),
             place(data, last, 0, DATA / "sysbench" / "cpu-1thread-10s.log")]
    shutil.rmtree(data / IOZONE_DIR)
    table = results.write_table(data, "tb", csv=False)
    assert sorted(parsed) == sorted(str(p.relative_to(data)) for p in added)  # nothing else parsed
    pd.testing.assert_frame_equal(table, _full(data))
    manifest = json.loads(results.table_paths(data, "tb")["manifest"].read_text())
    ranges = manifest["variant_rows"]
    assert list(ranges) == sorted(ranges, key=lambda v: tuple(v.split("/")))
    for variant, (first, stop) in ranges.items():  # each block is exactly that variant's rows
        rows = table.iloc[first:stop]
        assert {"/".join(r) for r in zip(rows["platform"], rows["benchmark"], rows["variant"])} == {variant}
    assert sum(stop - first for first, stop in ranges.values()) == len(table)


def test_a_table_replaced_without_its_manifest_is_built_anew_not_cut_at_old_blocks(data, monkeypatch):
    """The manifest's row blocks describe its own Parquet file: another file under it (here a table
    of the same logs in another row order) is not reused, so a new log cannot take wrong rows."""
    results.write_table(data, "tb", csv=False)
    paths = results.table_paths(data, "tb")
    shuffled = results.read_table(paths["parquet"]).iloc[::-1].reset_index(drop=True)
    shuffled.to_parquet(paths["parquet"], index=False)
    parsed = _parsed(monkeypatch)
    place(data, SYSBENCH_DIR, 2, DATA / "sysbench" / "cpu-1thread-10s.log")
    table = results.write_table(data, "tb", csv=False)
    assert len(parsed) == len(results.raw_logs(data, "tb"))  # every log parsed again: nothing taken from that file
    pd.testing.assert_frame_equal(table, _full(data))


def test_the_rows_of_a_changed_parser_are_made_anew(data, monkeypatch):
    """The table format is the parsers' version: another one reparses every log."""
    results.write_table(data, "tb", csv=False)
    parsed = _parsed(monkeypatch)
    monkeypatch.setattr(results.cache, "TABLE_FORMAT", results.TABLE_FORMAT + 1)
    results.write_table(data, "tb", csv=False)
    assert sorted(parsed) == sorted(str(p.relative_to(data)) for p in results.raw_logs(data, "tb"))


def test_a_log_rewritten_in_place_with_the_same_size_is_hashed_again(data):
    """The checksums are remembered by size, times and inode: a rewrite in place changes the times,
    so the log is read again, and refused: its bytes are not the ones its sidecar recorded."""
    results.write_table(data, "tb", csv=False)
    log = data / SYSBENCH_DIR / "rep-1.log"
    text = log.read_text()
    changed = text.replace("events per second:  1141.43", "events per second:  1141.44")
    assert changed != text and len(changed) == len(text)
    log.write_text(changed)
    with pytest.raises(rawlog.LogDigestError, match="rep-1.log"):
        results.write_table(data, "tb", csv=False)


def _write_concurrently(data: str, seed: int) -> int:
    import random
    import time

    time.sleep(random.Random(seed).random() / 20)
    return len(results.write_table(data, "tb"))


def test_tables_written_at_the_same_time_never_interleave(data):
    import concurrent.futures
    import multiprocessing

    for rep in range(2, 12):
        place(data, SYSBENCH_DIR, rep, DATA / "sysbench" / "cpu-1thread-10s.log")
    with concurrent.futures.ProcessPoolExecutor(6, mp_context=multiprocessing.get_context("spawn")) as pool:
        counts = set(pool.map(_write_concurrently, [str(data)] * 12, range(12)))
    paths = results.table_paths(data, "tb")
    table = results.read_table(paths["parquet"])
    assert counts == {len(table)}
    pd.testing.assert_frame_equal(table, _full(data))
    assert len(pd.read_csv(paths["csv"])) == len(table)
    assert json.loads(paths["manifest"].read_text())["rows"] == len(table)
    assert not list((data / "tables").rglob("*.partial"))
