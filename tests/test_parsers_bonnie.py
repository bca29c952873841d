"""bonnie++ parser on real captured output (tests/data/bonnie++/): values asserted, bad-* rejected."""

from __future__ import annotations

import pytest

from conftest import DATA, bad_fixtures, fixture_text
from virtrepro.parsers import ParseError, ToolReportedError, TruncatedLogError
from virtrepro.parsers.bonnie import parse_bonnie

TOOL = "bonnie++"


def values(records):
    return {(r["run"], r["metric"]): r["value"] for r in records}


def test_quiet_csv_two_runs_fast_mode():
    records = parse_bonnie(fixture_text(TOOL, "quiet-fast-s2048-n128-x2.stdout"), "quiet.stdout")
    v = values(records)
    assert {r["from"] for r in records} == {"csv"}
    assert {r["run"] for r in records} == {0, 1}
    # Youseff 2006 columns: block output, rewrite, block input, random seeks (per-char skipped by -f)
    assert v[(0, "put_block")] == 375454
    assert v[(0, "rewrite")] == 1402164
    assert v[(0, "get_block")] == 3274113
    assert v[(0, "seeks")] == 10204
    assert v[(0, "seeks_cpu")] == 37
    assert v[(0, "put_block_latency")] == 5357
    assert v[(1, "rewrite")] == 1538717
    assert v[(1, "seeks")] == 14488
    assert (0, "putc") not in v and (0, "getc") not in v  # -f: per-char tests skipped
    # run 1 block input was '+++++' (too fast): no throughput, but its latency is kept
    assert (1, "get_block") not in v and (1, "get_block_cpu") not in v
    assert v[(1, "get_block_latency")] == 196
    assert v[(0, "seq_create")] == 55758
    assert v[(0, "seq_stat")] == 188106
    assert v[(1, "ran_del")] == 8743
    assert v[(1, "ran_del_latency")] == 83484
    units = {r["metric"]: r["unit"] for r in records}
    assert units["put_block"] == "KiB/s" and units["seeks"] == "seeks/s" and units["seq_create"] == "files/s"
    assert units["seeks_cpu"] == "%" and units["seq_del_latency"] == "us"
    assert all(r["file_size"] == "2G" and r["num_files_k"] == 128 and r["machine"] == "benchvm" for r in records)


def test_normal_output_uses_the_csv_line_and_keeps_latency_of_too_fast_tests():
    records = parse_bonnie(fixture_text(TOOL, "fast-s1024-r512-n1-split.stdout"), "fast.stdout")
    v = values(records)
    assert {r["from"] for r in records} == {"csv"}
    assert v[(0, "put_block")] == 1015075
    assert v[(0, "rewrite")] == 1435007
    assert v[(0, "rewrite_cpu")] == 41
    assert (0, "get_block") not in v and (0, "seeks") not in v  # '+++++'
    assert v[(0, "get_block_latency")] == 216
    assert v[(0, "seeks_latency")] == 12187
    assert v[(0, "seq_create_latency")] == 171
    assert v[(0, "ran_stat_latency")] == 5
    assert (0, "seq_create") not in v


def test_text_table_alone_is_normalised_from_k_m_g_suffixes():
    text = fixture_text(TOOL, "fast-s1024-r512-n1-split.stdout")
    table_only = "\n".join(line for line in text.splitlines() if not line.startswith("1.98,"))
    with pytest.raises(TruncatedLogError, match="CSV line"):  # bonnie++'s stdout always ends with it
        parse_bonnie(table_only, "table.stdout")
    v = values(parse_bonnie(table_only, "table.stdout", csv2txt=True))
    assert v[(0, "put_block")] == 991 * 1024  # '991m'
    assert v[(0, "rewrite")] == pytest.approx(1.4 * 1024 * 1024)  # '1.4g'
    assert v[(0, "put_block_cpu")] == 54
    assert v[(0, "seeks_latency")] == 12187
    assert v[(0, "ran_stat_latency")] == 5


@pytest.mark.parametrize("name", ["bon_csv2txt-of-data-rows-only.log", "bon_csv2txt-of-quiet-fast-x2.log"])
def test_bon_csv2txt_table_agrees_with_the_csv_it_was_made_from(name):
    table = parse_bonnie(fixture_text(TOOL, name), name, csv2txt=True)
    csv = values(parse_bonnie(fixture_text(TOOL, "quiet-fast-s2048-n128-x2.stdout")))
    assert {r["from"] for r in table} == {"table"}
    t = values(table)
    # cells wider than their column (188106, 140351) shift the rest of the row
    assert t[(0, "seq_stat")] == 188106 and t[(0, "seq_stat_cpu")] == 78
    assert t[(0, "ran_stat")] == 140351 and t[(0, "ran_stat_cpu")] == 70
    assert t[(0, "ran_del")] == 4058 and t[(0, "ran_del_cpu")] == 8
    assert t[(0, "get_block")] == pytest.approx(3.1 * 1024 * 1024)  # '3.1g'
    assert (1, "get_block") not in t  # '0k +++' is bon_csv2txt's rendering of '+++++'
    assert set(t) == set(csv)
    for key, value in t.items():
        if key[1] in ("put_block", "rewrite", "get_block"):
            assert value == pytest.approx(csv[key], rel=0.04), key  # '1.3g' keeps two digits
        else:
            assert value == csv[key], key


@pytest.mark.parametrize("path", bad_fixtures(TOOL), ids=lambda p: p.name)
def test_bad_logs_are_rejected_with_the_file_named(path):
    with pytest.raises(ParseError) as error:
        parse_bonnie(path.read_text(), str(path))
    assert str(path) in str(error.value)


def test_error_kinds():
    with pytest.raises(TruncatedLogError, match="progress lines"):
        parse_bonnie(fixture_text(TOOL, "bad-truncated-sigterm.log"))
    with pytest.raises(ToolReportedError, match='You must use the "-u" switch'):
        parse_bonnie(fixture_text(TOOL, "bad-root-without-u.log"))
    with pytest.raises(ToolReportedError, match="File size should be double RAM"):
        parse_bonnie(fixture_text(TOOL, "bad-size-less-than-2x-ram.log"))
    with pytest.raises(ToolReportedError, match="Can't change to directory"):
        parse_bonnie(fixture_text(TOOL, "bad-nonexistent-dir.log"))
    # split capture: empty stdout, the error is on stderr
    with pytest.raises(ToolReportedError, match='"-u" switch'):
        parse_bonnie(
            fixture_text(TOOL, "bad-root-without-u-split.stdout"),
            "split",
            stderr=fixture_text(TOOL, "bad-root-without-u-split.stderr"),
        )


def test_missing_repetition_and_cut_csv_row_are_rejected():
    text = fixture_text(TOOL, "quiet-fast-s2048-n128-x2.stdout")
    assert len({r["run"] for r in parse_bonnie(text, expected_runs=2)}) == 2
    with pytest.raises(TruncatedLogError, match="2 result rows, 3 were requested"):
        parse_bonnie(text, "x3.stdout", expected_runs=3)
    cut = text.rstrip("\n")[:-40]
    with pytest.raises(ParseError, match="fields, expected 50"):
        parse_bonnie(cut, "cut.stdout")


GOOD = [
    "quiet-fast-s2048-n128-x2.stdout",
    "fast-s1024-r512-n1-split.stdout",
    "bon_csv2txt-of-data-rows-only.log",
    "bon_csv2txt-of-quiet-fast-x2.log",
    "direct-fast-s256-x1.log",
]


def test_every_good_capture_parses_to_finite_non_negative_numbers():
    names = {p.name for p in (DATA / TOOL).iterdir() if not p.name.startswith("bad-")}
    # the .stderr companions of good split captures hold only progress lines (or nothing)
    assert names - set(GOOD) == {"fast-s1024-r512-n1-split.stderr", "quiet-fast-s2048-n128-x2.stderr"}
    for name in GOOD:
        records = parse_bonnie(fixture_text(TOOL, name), name, csv2txt=name.startswith("bon_csv2txt"))
        assert records and all(r["value"] >= 0 and r["value"] == r["value"] for r in records), name


def test_direct_fast_mode_block_tests_only():
    # bonnie++ -D -f (the direct variant): block tests with O_DIRECT, no per-character tests;
    # block input and seeks faster than bonnie++ times ('+++++') have no value
    v = values(parse_bonnie(fixture_text(TOOL, "direct-fast-s256-x1.log"), "direct.log", expected_runs=1))
    assert v[(0, "put_block")] == 149155 and v[(0, "put_block_cpu")] == 50
    assert v[(0, "rewrite")] == 381303
    assert v[(0, "put_block_latency")] == 1530 and v[(0, "get_block_latency")] == 46
    assert not {(0, "putc"), (0, "getc"), (0, "get_block"), (0, "seeks")} & set(v)


def test_direct_with_per_char_tests_is_the_tools_error():
    # bonnie++ -D without -f: the per-character write to an O_DIRECT file fails at once
    with pytest.raises(ToolReportedError, match=r"Can't write\(\) - disk full\?"):
        parse_bonnie(fixture_text(TOOL, "bad-direct-per-char.log"), "bad.log")


def test_direct_variant_runs_block_tests_only():
    from virtrepro.benchmarks import BENCHMARKS

    bonnie = BENCHMARKS["bonnie"]
    variant = bonnie.variants({"file_sizes": ["256m"], "num_files": 0, "direct": True})[0]
    assert " -D -f " in bonnie.run(variant)
    assert " -D" not in bonnie.run(bonnie.variants({"file_sizes": ["256m"], "num_files": 0})[0])
    text = fixture_text(TOOL, "direct-fast-s256-x1.log")
    assert {r["metric"] for r in bonnie.parse(text, "d.log", variant.param_dict)} >= {"put_block", "rewrite"}
    with pytest.raises(ParseError, match="per-character"):
        fields = text.strip().split(",")
        fields[9:11], fields[38] = ["2000", "90"], "900us"  # a putc result: value, %CPU, latency
        bonnie.parse(",".join(fields) + "\n", "d.log", variant.param_dict)
