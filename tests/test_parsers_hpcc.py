"""HPCC parser on real captured output: values asserted, every bad-* capture rejected."""

from __future__ import annotations

import pytest

from conftest import DATA, bad_fixtures, fixture_text
from virtrepro.parsers.errors import ParseError, ToolReportedError, TruncatedLogError
from virtrepro.parsers.hpcc import parse_hpcc, parse_hpccinf

GOOD = "mpirun-np2-N3000-NB80-P1Q2"
APPEND = "quirk-append-N1000-two-runs-same-dir"


def by_metric(records):
    return {r["metric"]: r for r in records}


def run_files(stem):
    """The files of one captured run: hpccoutf.txt, mpirun output (.log, or .stdout+.stderr), hpccinf.txt."""

    def read(suffix):
        path = DATA / "hpcc" / f"{stem}{suffix}"
        return path.read_text() if path.exists() else None

    log = read(".log")
    if log is None and read(".stderr") is not None:
        log = read(".stdout") + read(".stderr")
    return read(".hpccoutf.txt"), log, read(".hpccinf.txt")


def test_good_run_summary_values():
    outf, log, inf = run_files(GOOD)
    records = by_metric(parse_hpcc(outf, f"{GOOD}.hpccoutf.txt", mpirun_log=log, hpccinf=inf))
    assert records["hpl_tflops"]["value"] == 0.0019565
    assert records["hpl_tflops"]["unit"] == "Tflop/s"
    assert records["hpl_gflops"]["value"] == pytest.approx(1.9565)
    assert records["hpl_gflops"]["unit"] == "Gflop/s"
    assert records["hpl_time"]["value"] == 9.20701
    hpl = records["hpl_gflops"]
    assert (hpl["n"], hpl["nb"], hpl["p"], hpl["q"]) == (3000, 80, 1, 2)
    assert records["star_stream_triad"]["value"] == 15.2721
    assert records["star_stream_copy"]["value"] == 17.9775
    assert records["single_stream_copy"]["value"] == 29.6374
    assert records["single_stream_triad"]["unit"] == "GB/s"
    assert records["mpi_random_access"]["value"] == 0.00408693
    assert records["star_random_access"]["value"] == 0.0943674
    assert records["single_random_access_lcg"]["value"] == 0.160717
    assert records["star_random_access"]["unit"] == "GUP/s"
    assert records["star_dgemm"]["value"] == 2.61325
    assert records["ptrans"]["value"] == 0.318628
    assert records["mpi_fft"]["value"] == 0.845182
    # the summary's *_usec, not the section's msecs (0.000251)
    assert records["max_ping_pong_latency"]["value"] == 0.251241
    assert records["max_ping_pong_latency"]["unit"] == "us"
    assert records["min_ping_pong_bandwidth"]["value"] == 10.9471
    assert records["min_ping_pong_bandwidth"]["unit"] == "GB/s"
    assert all(r["processes"] == 2 and r["reports_in_file"] == 1 for r in records.values())
    assert "n" not in records["star_dgemm"]


def test_expected_instead_of_hpccinf():
    outf, _, _ = run_files(GOOD)
    records = by_metric(parse_hpcc(outf, "x", expected={"N": 3000, "NB": 80, "P": 1, "Q": 2, "processes": 2}))
    assert records["hpl_tflops"]["value"] == 0.0019565
    with pytest.raises(ToolReportedError, match="N=3000"):
        parse_hpcc(outf, "x", expected={"N": 4000})
    with pytest.raises(ToolReportedError, match="processes"):
        parse_hpcc(outf, "x", expected={"processes": 4})


def test_without_the_request_the_parser_refuses():
    outf, _, _ = run_files(GOOD)
    with pytest.raises(ParseError, match="hpccinf= or expected="):
        parse_hpcc(outf, "x.hpccoutf.txt")


def test_appended_file_reports_the_last_run_only():
    outf, log, inf = run_files(APPEND)
    records = by_metric(parse_hpcc(outf, APPEND, hpccinf=inf))
    assert records["hpl_tflops"]["value"] == 0.00206125  # the first report says 0.00203378
    assert records["hpl_time"]["value"] == 0.324157
    assert records["hpl_gflops"]["n"] == 1000
    assert records["star_dgemm"]["reports_in_file"] == 2
    # the empty stdout logs of both runs are accepted as mpirun output
    for run in ("quirk-append-N1000-run1", "quirk-append-N1000-run2-same-dir"):
        parse_hpcc(outf, APPEND, mpirun_log=fixture_text("hpcc", f"{run}.log"), hpccinf=inf)


def test_appended_file_whose_last_run_is_cut_is_refused():
    outf, _, inf = run_files(APPEND)
    second = outf.rindex("This is the DARPA/DOE HPC Challenge Benchmark")
    cut = outf[: outf.index("Begin of Summary section.", second)]
    with pytest.raises(TruncatedLogError, match="last of its reports"):
        parse_hpcc(cut, "cut.txt", hpccinf=inf)


def test_hpccinf_reader():
    request = parse_hpccinf(fixture_text("hpcc", "mpirun-np2-N2000+2500-NB64+128-P1Q2.hpccinf.txt"))
    assert request == {"N": [2000, 2500], "NB": [64, 128], "PMAP": 0, "grids": [(1, 2)]}
    request = parse_hpccinf(fixture_text("hpcc", "bad-PxQ-exceeds-np-P2Q2-np2.hpccinf.txt"))
    assert request["grids"] == [(2, 2)] and request["N"] == [3000]


def test_good_input_file_does_not_match_a_multi_size_request():
    outf, _, _ = run_files(GOOD)
    inf = fixture_text("hpcc", "mpirun-np2-N2000+2500-NB64+128-P1Q2.hpccinf.txt")
    with pytest.raises(ToolReportedError):
        parse_hpcc(outf, "x", hpccinf=inf)


BAD_RUNS = sorted({p.name.split(".")[0] for p in bad_fixtures("hpcc")})


def test_bad_runs_cover_every_bad_file():
    assert len(BAD_RUNS) == 7
    assert {p.name.split(".")[0] for p in bad_fixtures("hpcc")} == set(BAD_RUNS)


@pytest.mark.parametrize("stem", BAD_RUNS)
def test_hpcc_bad_runs_are_rejected_with_the_file_named(stem):
    outf, log, inf = run_files(stem)
    source = str(DATA / "hpcc" / f"{stem}.hpccoutf.txt")
    # what the workflow meant to run (the P2Q2 run brought its own input file)
    expected = None if inf else {"N": 3000, "NB": 80, "P": 1, "Q": 2, "processes": 2}
    with pytest.raises(ParseError) as error:
        parse_hpcc(outf or "", source, mpirun_log=log, hpccinf=inf, expected=expected)
    assert source in str(error.value)


@pytest.mark.parametrize("stem", ["bad-PxQ-exceeds-np-P2Q2-np2", "bad-missing-hpccinf", "bad-missing-hpccinf-split"])
def test_default_fallback_is_caught_from_the_log(stem):
    outf, log, inf = run_files(stem)
    with pytest.raises(ToolReportedError, match="HPL (ERROR|WARNING) from process # 0"):
        parse_hpcc(outf, stem, mpirun_log=log, hpccinf=inf, expected={"processes": 2})


@pytest.mark.parametrize("stem", ["bad-PxQ-exceeds-np-P2Q2-np2", "bad-missing-hpccinf", "bad-missing-hpccinf-split"])
def test_default_fallback_is_caught_without_the_log(stem):
    # hpccoutf.txt alone says Success=1; only the request shows it ran N=3520 instead
    outf, _, inf = run_files(stem)
    expected = None if inf else {"N": 3000, "NB": 80, "P": 1, "Q": 2}
    with pytest.raises(ToolReportedError, match="N=3520|3520|built-in defaults"):
        parse_hpcc(outf, stem, hpccinf=inf, expected=expected)


def test_mpirun_errors_and_truncation_kinds():
    for stem, message in [
        ("bad-mpirun-as-root-without-allow", "attempt to run as root"),
        ("bad-mpirun-np4-not-enough-slots", "not enough slots"),
        ("bad-mpirun-invalid-option", "unknown option"),
    ]:
        with pytest.raises(ToolReportedError, match=message):
            parse_hpcc("", stem, mpirun_log=fixture_text("hpcc", f"{stem}.log"), expected={"processes": 2})
    outf, log, _ = run_files("bad-truncated-sigterm-mpirun-at-15s")
    with pytest.raises(TruncatedLogError, match="no complete Summary"):
        parse_hpcc(outf, "t", mpirun_log=log, hpccinf=fixture_text("hpcc", f"{GOOD}.hpccinf.txt"))


def test_failed_residual_and_success_zero_are_refused():
    outf, _, inf = run_files(GOOD)
    with pytest.raises(ToolReportedError, match="FAILED"):
        parse_hpcc(outf.replace("...... PASSED", "...... FAILED"), "x", hpccinf=inf)
    with pytest.raises(ToolReportedError, match="Success=0"):
        parse_hpcc(outf.replace("Success=1", "Success=0"), "x", hpccinf=inf)


def test_other_tools_output_is_not_hpcc():
    with pytest.raises(ParseError):
        parse_hpcc(fixture_text("npb", "mpi_bt.S.np4.log"), "x", expected={"processes": 4})
