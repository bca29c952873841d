"""NPB 3.4 parser on real captured output: values asserted, every bad capture rejected."""

from __future__ import annotations

import pytest

from conftest import DATA, fixture_text
from virtrepro.parsers.errors import ParseError, ToolReportedError, TruncatedLogError
from virtrepro.parsers.npb import parse_npb


def by_metric(records):
    return {r["metric"]: r for r in records}


# NPB captures name their bad runs bad_<mode>_<kernel>... (underscore), not bad-...
BAD = sorted((DATA / "npb").glob("bad[_-]*"))
GOOD = sorted(p for p in (DATA / "npb").glob("*.log") if p.name.startswith(("mpi_", "omp_", "ser_")))


def test_mpi_bt_four_processes():
    records = by_metric(parse_npb(fixture_text("npb", "mpi_bt.S.np4.log"), "mpi_bt.S.np4.log"))
    total = records["mops_total"]
    assert total["value"] == 4741.56 and total["unit"] == "Mop/s"
    assert records["mops_per_process"]["value"] == 1185.39
    assert records["time"]["value"] == 0.05 and records["time"]["unit"] == "s"
    assert total["benchmark"] == "BT" and total["class"] == "S" and total["size"] == "12x12x12"
    assert total["iterations"] == 60
    assert total["mode"] == "mpi" and total["processes"] == 4 and total["active_processes"] == 4
    assert total["verification"] == "SUCCESSFUL" and total["version"] == "3.4.1"
    assert "mops_per_thread" not in records and "threads" not in total


def test_omp_cg_two_threads():
    records = by_metric(parse_npb(fixture_text("npb", "omp_cg.S.t2.log")))
    assert records["mops_total"]["value"] == 171.97
    assert records["mops_per_thread"]["value"] == 85.99
    assert records["time"]["value"] == 0.39
    label = records["mops_total"]
    assert label["mode"] == "omp" and label["threads"] == 2 and label["available_threads"] == 2
    assert label["size"] == "1400" and label["iterations"] == 15
    assert "mops_per_process" not in records and "processes" not in label


@pytest.mark.parametrize("name, benchmark, total, seconds", [("ser_ep.W.log", "EP", 37.47, 1.79),
                                                              ("ser_is.W.log", "IS", 556.57, 0.02)])
def test_the_openmp_code_compiled_without_openmp_is_serial(name, benchmark, total, seconds):
    """NPB 3.4 has no serial code: its OpenMP code built without -fopenmp prints no thread lines."""
    text = fixture_text("npb", name)
    assert "(NPB3.4-OMP)" in text and "Total threads" not in text
    records = by_metric(parse_npb(text, name))
    assert records["mops_total"]["value"] == total and records["time"]["value"] == seconds
    label = records["mops_total"]
    assert label["benchmark"] == benchmark and label["class"] == "W"
    assert label["mode"] == "serial" and label["threads"] == 1 and "mops_per_thread" not in records


@pytest.mark.parametrize(
    "name, benchmark, workers, total, per_worker, seconds",
    [
        ("mpi_ep.S.np2.log", "EP", 2, 151.91, 75.96, 0.22),
        ("mpi_ft.S.np2.log", "FT", 2, 3989.01, 1994.50, 0.04),
        ("mpi_is.S.np4.log", "IS", 4, 310.08, 77.52, 0.00),
        ("mpi_lu.S.np2.log", "LU", 2, 10556.27, 5278.14, 0.01),
        ("mpi_mg.S.np1.log", "MG", 1, 6499.78, 6499.78, 0.00),
        ("mpi_sp.S.np4.log", "SP", 4, 2607.89, 651.97, 0.04),
        ("omp_bt.S.t1.log", "BT", 1, 4086.29, 4086.29, 0.06),
        ("omp_is.S.t2.log", "IS", 2, 13.13, 6.56, 0.05),
        ("omp_mg.S.t2.log", "MG", 2, 10315.83, 5157.91, 0.00),
        ("omp_sp.S.t2.log", "SP", 2, 600.48, 300.24, 0.16),
    ],
)
def test_kernels(name, benchmark, workers, total, per_worker, seconds):
    records = by_metric(parse_npb(fixture_text("npb", name), name))
    worker_metric = "mops_per_process" if name.startswith("mpi") else "mops_per_thread"
    worker_label = "processes" if name.startswith("mpi") else "threads"
    assert records["mops_total"]["value"] == total
    assert records[worker_metric]["value"] == per_worker
    assert records["time"]["value"] == seconds
    assert records["mops_total"]["benchmark"] == benchmark
    assert records["mops_total"][worker_label] == workers
    assert records["mops_total"]["class"] == "S"


def test_ep_and_is_labels():
    ep = by_metric(parse_npb(fixture_text("npb", "omp_ep.S.t1.log")))["mops_total"]
    assert ep["size"] == "33554432" and ep["iterations"] == 0
    assert ep["operation_type"] == "Random numbers generated"
    # "IS Benchmark Completed" has no full stop
    is_ = by_metric(parse_npb(fixture_text("npb", "mpi_is.S.np1.log")))["mops_total"]
    assert is_["operation_type"] == "keys ranked" and is_["value"] == 535.38


def test_every_good_capture_parses():
    assert len(GOOD) == 40
    for path in GOOD:
        records = parse_npb(path.read_text(), str(path))
        assert {r["metric"] for r in records} >= {"mops_total", "time"}, path
        assert all(0 <= r["value"] < float("inf") for r in records), path
        assert by_metric(records)["mops_total"]["value"] > 0, path
        kernel = path.name.split(".")[0].split("_")[1].upper()
        assert records[0]["benchmark"] == kernel, path


def test_bad_captures_exist():
    assert [p.name for p in BAD] == ["bad_mpi_bt.S.np2-nonsquare.log", "bad_omp_lu.W.t1-sigterm-unbuffered.log"]


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_npb_bad_logs_are_rejected_with_the_file_named(path):
    with pytest.raises(ParseError) as error:
        parse_npb(path.read_text(), str(path))
    assert str(path) in str(error.value)


def test_npb_error_kinds():
    with pytest.raises(ToolReportedError, match="processor topology"):
        parse_npb(fixture_text("npb", "bad_mpi_bt.S.np2-nonsquare.log"))
    with pytest.raises(TruncatedLogError, match="LU Benchmark Completed"):
        parse_npb(fixture_text("npb", "bad_omp_lu.W.t1-sigterm-unbuffered.log"))


@pytest.mark.parametrize("verdict", ["UNSUCCESSFUL", "NOT PERFORMED"])
def test_unverified_run_gives_no_numbers(verdict):
    text = fixture_text("npb", "omp_cg.S.t2.log").replace("=               SUCCESSFUL", f"=  {verdict}")
    with pytest.raises(ToolReportedError, match=verdict):
        parse_npb(text, "x.log")


def test_cut_summary_is_truncated():
    text = fixture_text("npb", "mpi_cg.S.np2.log")
    with pytest.raises(TruncatedLogError, match="Verification"):
        parse_npb(text[: text.index(" Verification    =")], "cut.log")


def test_availability_check_is_not_a_benchmark_output():
    with pytest.raises(ParseError, match="availability-check.log"):
        parse_npb(fixture_text("npb", "availability-check.log"), "availability-check.log")
