"""The lmbench figure (virtrepro.figures.microbenchmarks): ratios checked against means computed here from
the captured logs, the panels drawn with the platforms' declared colours, and a clear note when
the data hold no lmbench runs (the committed reference data do not yet)."""

from __future__ import annotations

import math

import matplotlib
import pandas as pd
import pytest

from conftest import fixture_text, table_row
from virtrepro.report import plotting
from virtrepro.figures import microbenchmarks
from virtrepro.parsers.lmbench import parse_lmbench

matplotlib.use("Agg")

SEPARATE = ("lat_syscall-N3-null-read-write-stat-open.log", "lat_ctx-N3-s0-s16-p2-p8.log",
            "lat_mem_rd-N3-4MiB-stride64-stride128.log", "bw_mem-N3-64MiB-rd-wr-cp.log")
# two native repetitions: the four separate captures, and the quick scale's run of all four programs
NATIVE = {1: [r for name in SEPARATE for r in parse_lmbench(fixture_text("lmbench", name), name)],
          2: parse_lmbench(fixture_text("lmbench", "quick-all-programs.log"), "quick-all-programs.log")}
# the other platforms' repetitions: native's values times these factors (repetition 1, 2)
FACTORS = {"lxc": (2.0, 2.0), "qemu-tcg": (30.0, 50.0)}


def table() -> pd.DataFrame:
    rows = []
    for platform, factors in {"native": (1.0, 1.0), **FACTORS}.items():
        for repetition, records in NATIVE.items():
            for record in records:
                rows.append(table_row(**{**record, "value": record["value"] * factors[repetition - 1],
                                         "platform": platform, "benchmark": "lmbench", "repetition": repetition}))
    rows.append(table_row(platform="native", benchmark="mbw", metric="copy_bandwidth", value=1.0, repetition=1))
    return pd.DataFrame(rows)


def value(repetition: int, metric: str, **labels) -> float:
    (found,) = [r["value"] for r in NATIVE[repetition] if r["metric"] == metric and labels.items() <= r.items()]
    return found


def test_ratios_are_each_platforms_hodges_lehmann_ratio_to_the_baselines():
    rows = microbenchmarks.lmbench_rows(table())
    frame = microbenchmarks.ratios(rows, "syscall_latency", ("syscall",), "native").set_index(["platform", "syscall"])
    assert set(frame.index) == {(p, s) for p in FACTORS for s in ("null", "read", "write", "stat", "open")}
    a, b = value(1, "syscall_latency", syscall="null"), value(2, "syscall_latency", syscall="null")
    assert (a, b) == (0.1862, 0.1678)  # as printed in the two captures
    assert frame.loc[("lxc", "null"), "ratio"] == pytest.approx(2.0)
    # qemu-tcg ran 30 a and 50 b: the four ratios to native's a, b are 30, 30 a / b, 50 b / a and 50;
    # their median (on the log scale) is the geometric mean of the middle two, sqrt(30 * 50) whatever a, b
    assert frame.loc[("qemu-tcg", "null"), "ratio"] == pytest.approx(math.sqrt(30 * 50))
    # 2 + 2 runs: even the widest Mann-Whitney interval has 1 - 2 / C(4, 2) = 66.7 %: no 95 % interval
    assert frame[["low", "high"]].isna().all().all() and set(frame["method"]) == {"none"}

    ctx = microbenchmarks.ratios(rows, "context_switch", ("size_kb", "processes"), "native")
    assert len(ctx) == 2 * 4  # 2 platforms x (0, 16 KiB) x (2, 8 processes)
    one = ctx[(ctx["platform"] == "qemu-tcg") & (ctx["size_kb"] == 16) & (ctx["processes"] == 8)]["ratio"].item()
    assert value(1, "context_switch", size_kb=16, processes=8) == 4.84 and one == pytest.approx(math.sqrt(30 * 50))


def test_the_figure_has_its_four_panels_in_the_declared_colours():
    fig = microbenchmarks.lmbench_figure(table())
    syscalls, ctx, bandwidth, staircase = fig.axes[:4]
    assert syscalls.get_yscale() == "log"  # 2x beside 30-50x: more than a factor of ten
    assert "higher is better" in bandwidth.get_ylabel() and "lower is better" in ctx.get_ylabel()
    lines = {line.get_label(): line for line in staircase.get_lines()}
    # native 4 MiB with strides 64 and 128 (repetition 1) and 8 MiB with stride 128 (repetition 2)
    assert set(lines) == {f"{p}, stride {s} B" for p in ("native", *FACTORS) for s in (64, 128)}
    assert lines["qemu-tcg, stride 128 B"].get_color() == plotting.PLATFORM_COLORS["qemu-tcg"]
    assert max(lines["native, stride 128 B"].get_xdata()) == 8.0
    assert staircase.get_xscale() == "log" and staircase.get_yscale() == "log"


def test_a_bar_without_an_interval_is_said_to_have_none(monkeypatch):
    """Two runs a side give no ratio an interval at 95 %: the panel and the figure's note say so.
    Ratios with intervals (patched in) make both silent."""
    rows = microbenchmarks.lmbench_rows(table())

    def panel() -> bool:
        ax = matplotlib.pyplot.figure().add_subplot()
        return microbenchmarks._ratio_panel(ax, rows, "syscall_latency", ("syscall",), "t", lambda r, caches: r["syscall"],
                                            "native", 0.95)

    def notes() -> list[str]:
        return [text.get_text() for text in microbenchmarks.lmbench_figure(
            table()[lambda t: t["metric"] != "memory_bandwidth"]).texts]

    assert panel() is True and microbenchmarks.NO_INTERVAL in notes()
    original = microbenchmarks.ratios

    def with_intervals(rows, metric, *args, **kwargs):
        found = original(rows, metric, *args, **kwargs)
        return found.assign(low=found["ratio"] * 0.9, high=found["ratio"] * 1.1)

    monkeypatch.setattr(microbenchmarks, "ratios", with_intervals)
    assert panel() is False and microbenchmarks.NO_INTERVAL not in notes()
    assert "memory bandwidth (bw_mem): not measured" in [t.get_text() for ax in microbenchmarks.lmbench_figure(
        table()[lambda t: t["metric"] != "memory_bandwidth"]).axes for t in ax.texts]


def test_runs_of_several_variants_are_refused_not_pooled():
    """Pinned and unpinned runs (or two scales') in one table would be averaged into one bar."""
    mixed = table()
    mixed.loc[mixed["repetition"] == 2, "variant"] = "cpu-any"
    with pytest.raises(ValueError, match="several variants.*cpu-any"):
        microbenchmarks.lmbench_rows(mixed)


def test_the_title_says_where_the_programs_ran():
    """The variant's ``cpu`` parameter, in the suptitle; a table without it says nothing of it."""
    assert "CPU" not in microbenchmarks.lmbench_figure(table())._suptitle.get_text()
    pinned = table().assign(parameters='{"cpu": "one"}')
    assert "; every program on one CPU)" in microbenchmarks.lmbench_figure(pinned)._suptitle.get_text()


def test_without_lmbench_runs_the_figure_says_so():
    fig = microbenchmarks.lmbench_figure(table()[lambda t: t["benchmark"] != "lmbench"])
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert texts == [microbenchmarks.NOT_MEASURED] and "not measured in this data yet" in texts[0]
    assert microbenchmarks.lmbench_figure(pd.DataFrame()).axes


def test_without_the_baseline_the_ratio_panels_say_why_and_the_staircase_is_drawn():
    fig = microbenchmarks.lmbench_figure(table()[lambda t: t["platform"] != "native"])
    notes = [t.get_text() for ax in fig.axes[:3] for t in ax.texts]
    assert len(notes) == 3 and all("no native runs to compare with" in n.lower() for n in notes)
    assert len(fig.axes[3].get_lines()) == 2 * 2


def test_the_staircase_marks_the_hosts_caches_and_says_when_it_never_leaves_the_last_level():
    from virtrepro.declarations import regimes

    xeon = regimes.cache_sizes({"cache_sizes": "L1d=48K L1i=64K L2=2048K L3=491520K"})  # the reference host
    staircase = microbenchmarks.lmbench_figure(table(), caches=xeon).axes[3]
    marks = [line for line in staircase.get_lines() if line.get_gid() == microbenchmarks.CACHE_LINE]
    assert sorted(line.get_xdata()[0] for line in marks) == [48 / 1024, 2.0, 480.0]  # MiB; no L1i mark
    assert {t.get_text() for t in staircase.texts} == {"L1d 48 KiB", "L2 2 MiB", "L3 480 MiB"}
    assert "largest array 8 MiB: within the L3 the host's CPU reports" in staircase.get_title()
    assert "main-memory" not in staircase.get_title()  # a reported cache is no proof that no step shows
    small = regimes.cache_sizes({"cache_sizes": "L1d=32K L2=512K L3=4096K"})  # the 8 MiB array leaves a 4 MiB L3
    assert "within the" not in microbenchmarks.lmbench_figure(table(), caches=small).axes[3].get_title()


def test_the_registered_figure_reads_the_cache_sizes_from_the_tables_manifest(tmp_path):
    """The machine the table's manifest records for the benchmark's logs (the table is the only door:
    the figure reads no sidecar)."""
    import json

    from virtrepro import datalayout
    from virtrepro.figures.registry import Setting

    manifest = datalayout.table_paths(tmp_path, "tb")["manifest"]
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"variant_machines": {"native/lmbench/some-variant": [
        {"cpu_model": "AMD EPYC", "kernel": "6.18.44-fc-v669", "cache_sizes": "L1d=32K L1i=32K L2=1024K L3=32768K "}]}}))
    drawn = microbenchmarks.lmbench_relative(table(), Setting(testbed="tb", data_dir=tmp_path))
    staircase = drawn.fig.axes[3]
    assert {t.get_text() for t in staircase.texts} == {"L1d 32 KiB", "L2 1 MiB", "L3 32 MiB"}
    assert "largest array 8 MiB: within the L3 the host's CPU reports" in staircase.get_title()  # 8 MiB < 32 MiB
