"""The summary's bars: never pooled over two machines, each comparison paired by round where both
sides were measured in rounds (else the unpaired Hodges-Lehmann ratio, as before), with values
computed by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from virtrepro import figures  # noqa: E402
from virtrepro.figures import summary  # noqa: E402
from virtrepro.figures.registry import Setting  # noqa: E402
from virtrepro.results.records import COLUMNS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
INTEL = {"cpu_model": "Intel(R) Xeon(R) Processor", "cache_sizes": "L1d=48K L1i=64K L2=2048K L3=491520K",
         "microcode": "0x1", "kernel": "6.1", "machine": "x86_64"}
AMD = {"cpu_model": "AMD EPYC", "cache_sizes": "L1d=32K L1i=32K L2=512K L3=32768K", "microcode": "0x2",
       "kernel": "6.1", "machine": "x86_64"}
# two CPU benchmarks of the overview, higher is better both
SYSBENCH, HPCC = ("sysbench_cpu", "events_per_second", "events/s"), ("hpcc", "hpl_gflops", "GFLOP/s")
NATIVE = [100.0, 120.0, 140.0, 160.0, 180.0, 200.0]  # six rounds, the host drifting upwards
LXC_PER_ROUND = [0.80, 0.95, 0.85, 1.0, 0.9, 0.82]  # lxc / native within each round


def _rows(benchmark, metric, unit, platform, values, rounds=True) -> list[dict]:
    return [{"testbed": "syn", "platform": platform, "benchmark": benchmark, "variant": "v1", "parameters": "{}",
             "labels": "{}", "repetition": i, "part": 1 + (i >= len(values) // 2),
             "round": i if rounds else pd.NA, "scale": "reference", "metric": metric, "unit": unit, "value": v,
             "source_log": f"raw/syn/{platform}/{benchmark}/v1/{i}.log", "regime": "", "stopping": "{}"}
            for i, v in enumerate(values)]


def _table(benchmarks=(SYSBENCH,), rounds=True) -> pd.DataFrame:
    rows = []
    for benchmark, metric, unit in benchmarks:
        rows += _rows(benchmark, metric, unit, "native", NATIVE, rounds)
        rows += _rows(benchmark, metric, unit, "lxc", [b * r for b, r in zip(NATIVE, LXC_PER_ROUND)], rounds)
    table = pd.DataFrame(rows)[COLUMNS]
    return table.astype({"round": "Int64", "part": "Int64", "repetition": "Int64"})


def _setting(tmp_path, machines: dict) -> Setting:
    """A data directory whose table manifest records ``machines`` (benchmark -> machine) for every platform."""
    tables = tmp_path / "data" / "tables"
    tables.mkdir(parents=True)
    variant_machines = {f"{p}/{b}/v1": [m] for b, m in machines.items() for p in ("native", "lxc")}
    (tables / "syn.manifest.json").write_text(json.dumps({"variant_machines": variant_machines}))
    return Setting(testbed="syn", data_dir=str(tmp_path / "data"), reference_dir=str(ROOT / "data" / "reference"))


def _paired_hand() -> float:
    """lxc / native paired by round, by hand: the Hodges-Lehmann estimate of the rounds' log ratios,
    the median of their 21 Walsh averages (d_i + d_j) / 2, i <= j."""
    d = np.log(LXC_PER_ROUND)
    walsh = [(d[i] + d[j]) / 2 for i in range(6) for j in range(i, 6)]
    assert len(walsh) == 21
    return math.exp(sorted(walsh)[10])


def _unpaired_hand() -> float:
    """lxc / native unpaired: the median of the 36 log ratios lxc_i / native_j."""
    lxc = [b * r for b, r in zip(NATIVE, LXC_PER_ROUND)]
    logs = sorted(math.log(p / b) for p in lxc for b in NATIVE)
    return math.exp((logs[17] + logs[18]) / 2)


def _bars(ax) -> dict:
    """{(bar label, x tick's first line): height} of the bars in ``ax`` that have a height."""
    ticks = [t.get_text().split("\n")[0] for t in ax.get_xticklabels()]
    return {(c.get_label(), ticks[round(b.get_x() + b.get_width() / 2)]): b.get_height()
            for c in ax.containers for b in c if not math.isnan(b.get_height())}


def _container_axis(drawn):
    (ax,) = [ax for ax in drawn.fig.axes if ax.get_title().startswith(summary.CONTAINER)]
    return ax


def test_the_hand_example_differs_paired_and_unpaired():
    # paired: the 11th of the 21 Walsh averages in order, that of rounds 1 and 5 (from 0): sqrt(0.95 * 0.82)
    assert _paired_hand() == pytest.approx(math.sqrt(0.95 * 0.82)) == pytest.approx(0.882610, abs=1e-6)
    # unpaired: the 18th and 19th of the 36 log ratios, lxc 160 and 162 (rounds 3 and 1) / native 180 (round 4)
    assert _unpaired_hand() == pytest.approx(math.sqrt(160 * 162) / 180) == pytest.approx(0.894427, abs=1e-6)
    assert abs(math.log(_paired_hand() / _unpaired_hand())) > 0.01  # the drift moves the unpaired estimate


def test_a_comparison_in_rounds_is_the_paired_one():
    ours = summary.today(_table(), "native", {"sysbench_cpu": "Intel Xeon"})
    (row,) = ours.itertuples()
    assert row.ratio == pytest.approx(_paired_hand())
    assert row.overhead_percent == pytest.approx((1 - _paired_hand()) * 100)
    assert row.machine == "Intel Xeon" and row.era == "today (ours, Intel Xeon)"


def test_a_comparison_without_rounds_is_the_unpaired_one_as_before():
    ours = summary.today(_table(rounds=False), "native")
    (row,) = ours.itertuples()
    assert row.ratio == pytest.approx(_unpaired_hand())
    assert row.era == summary.TODAY and row.machine == ""


@pytest.mark.parametrize("rounds, expected", [(True, _paired_hand), (False, _unpaired_hand)])
def test_the_overview_bar_on_one_machine_names_it_and_keeps_its_number(tmp_path, rounds, expected):
    setting = _setting(tmp_path, {"sysbench_cpu": INTEL})
    drawn = figures.draw("summary", "overview-overhead-then-now", _table(rounds=rounds), setting, tmp_path / "figs")
    bars = _bars(_container_axis(drawn))
    plt.close(drawn.fig)
    ours = {key: h for key, h in bars.items() if key[0] != summary.THEN}
    # one bar, of the one machine, its label naming it; the height: how many times worse, log2 (1 / ratio: a rate)
    assert ours == {("today (ours, Intel Xeon)", "CPU"): pytest.approx(math.log2(1 / expected()))}


def test_two_machines_give_two_bars_and_no_pooled_one(tmp_path):
    table = _table((SYSBENCH, HPCC))
    # hpcc's lxc 20 % slower in every round: its comparison differs from sysbench's
    hpcc = (table["benchmark"] == "hpcc") & (table["platform"] == "lxc")
    table.loc[hpcc, "value"] = [b * 0.8 for b in NATIVE]
    setting = _setting(tmp_path, {"sysbench_cpu": INTEL, "hpcc": AMD})
    drawn = figures.draw("summary", "overview-overhead-then-now", table, setting, tmp_path / "figs")
    bars = _bars(_container_axis(drawn))
    drawn_labels = {label for ax in drawn.fig.axes for label, _ in _bars(ax)}
    numbers = next(iter(drawn.numbers.values()))
    plt.close(drawn.fig)
    ours = {key: h for key, h in bars.items() if key[0] != summary.THEN}
    assert ours == {("today (ours, Intel Xeon)", "CPU"): pytest.approx(math.log2(1 / _paired_hand())),
                    ("today (ours, AMD EPYC)", "CPU"): pytest.approx(math.log2(1 / 0.8))}
    assert summary.TODAY not in drawn_labels  # no bar pools the two machines
    eras = set(numbers.loc[("container", "CPU")].index)
    assert eras == {"today (ours, Intel Xeon)", "today (ours, AMD EPYC)"} | (eras & {summary.THEN})


def test_the_side_by_side_figure_splits_a_subsystem_by_machine(tmp_path):
    setting = _setting(tmp_path, {"sysbench_cpu": INTEL, "hpcc": AMD})
    drawn = figures.draw("summary", "testbeds-side-by-side", _table((SYSBENCH, HPCC)), setting, tmp_path / "figs")
    ticks = [t.get_text() for t in drawn.fig.axes[0].get_xticklabels()]
    plt.close(drawn.fig)
    assert sorted(ticks) == ["CPU\nAMD EPYC\n(n=1)", "CPU\nIntel Xeon\n(n=1)"]  # no slot pools them


def test_a_comparison_never_spans_two_machines():
    """The baseline measured on another machine than the platform: no comparison at all, never a pooled one."""
    table = _table((SYSBENCH,))
    # the same benchmark cannot be on two machines (the table's builder refuses it); two machines' names per
    # benchmark are an error here too
    with pytest.raises(ValueError, match="more than one machine"):
        import virtrepro.results as results

        original = results.recorded_machines
        results.recorded_machines = lambda *a, **k: {"sysbench_cpu": [INTEL, AMD]}
        try:
            summary.machines_of("syn", "nowhere")
        finally:
            results.recorded_machines = original
    assert len(summary.today(table, "native", {"sysbench_cpu": "Intel Xeon"})) == 1


def test_short_cpu_names():
    assert summary.short_cpu(INTEL) == "Intel Xeon"
    assert summary.short_cpu(AMD) == "AMD EPYC"
    assert summary.short_cpu({"cpu_model": "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz"}) == "Intel Core i7-8700"
    assert summary.short_cpu(None) == ""


def test_the_committed_reference_summary_splits_disk_and_keeps_one_machine_subsystems():
    """reference-vm: disk measured on both machines (iozone, bonnie, sysbench_fileio on the Intel Xeon, fio
    and dd on the AMD EPYC); each bar is the median of its own machine's comparisons, by hand from today()."""
    from virtrepro import results

    table = results.read_table(ROOT / "data" / "tables" / "reference-vm.parquet")
    setting = Setting(testbed="reference-vm", data_dir=str(ROOT / "data"), reference_dir=str(ROOT / "data" / "reference"))
    machines = summary.machines_of(setting.testbed, setting.data_dir, summary.OVERVIEW_BENCHMARKS)
    assert machines["iozone"] == machines["npb_serial"] == "Intel Xeon"
    assert machines["fio"] == machines["netperf"] == "AMD EPYC"
    pooled = summary.today(table, "native")  # as before: every comparison, no machine
    split = summary.today(table, "native", machines)
    key = ["platform", "benchmark", "metric", "overhead_percent"]
    assert split[key].sort_values(key).to_numpy().tolist() == pooled[key].sort_values(key).to_numpy().tolist()
    disk = split[(split["panel"] == summary.CONTAINER) & (split["subsystem"] == "disk")]
    assert set(disk["era"]) == {"today (ours, Intel Xeon)", "today (ours, AMD EPYC)"}
    cpu = split[(split["panel"] == summary.CONTAINER) & (split["subsystem"] == "CPU")]
    cpu_before = pooled[(pooled["panel"] == summary.CONTAINER) & (pooled["subsystem"] == "CPU")]
    assert set(cpu["era"]) == {"today (ours, Intel Xeon)"}
    assert cpu["times"].median() == cpu_before["times"].median()  # one machine: the number as before
