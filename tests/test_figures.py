"""Figures as code (virtrepro.figures): the registry agrees with the notebooks, notebooks.smk, the schema and
the claims, and each figure function draws the committed reference table with the numbers that pandas
computes from the table directly (the JSON columns read with json, not through results.view)."""

from __future__ import annotations

import fnmatch
import json
import os
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import yaml

from virtrepro.analysis import claims
from virtrepro import figures, results
from virtrepro.figures import Setting, kumar2013, regola2010, summary, walters2008, youseff2006

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "data" / "tables" / "reference-vm.parquet"
SETTING = Setting(testbed="reference-vm", data_dir=str(ROOT / "data"), reference_dir=str(ROOT / "data" / "reference"))


def _notebook_code(paper: str) -> str:
    cells = json.loads((ROOT / "notebooks" / f"{paper}.ipynb").read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def _claims() -> list[dict]:
    return claims.load_claims(ROOT / "data" / "reference" / "claims.yaml")


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return results.read_table(TABLE)


def _labels(rows: pd.DataFrame, key: str) -> pd.Series:
    return rows["labels"].map(lambda text: json.loads(text).get(key))


def _parameter(rows: pd.DataFrame, key: str) -> pd.Series:
    return rows["parameters"].map(lambda text: json.loads(text).get(key))


# --- the registry, the notebooks, notebooks.smk, the schema and the claims agree -------------------


def test_every_registered_figure_is_drawn_by_its_notebook_and_nothing_else_is_saved():
    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    assert set(figures.by_paper()) == set(schema["properties"]["notebooks"]["items"]["enum"])
    for paper, ids in figures.by_paper().items():
        code = _notebook_code(paper)
        drawn = re.findall(r'nb\.draw\("([a-z0-9-]+)"\)', code)
        assert sorted(drawn) == sorted(ids), paper  # each registered figure once, and only those
        assert "plotting.save(" not in code and "savefig(" not in code, paper  # a figure is drawn in one place


def test_the_notebooks_figure_cells_are_the_registrys():
    """The figure list is written once, in the registry: each notebook's figure cells are generated
    from it (python -m virtrepro.figures.cells) and the committed notebooks are as generated."""
    from virtrepro.figures import cells

    assert cells.main(["--check"]) == 0


def _notebooks_copy(tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks", ignore=shutil.ignore_patterns(".*"))
    return tmp_path / "notebooks"


def test_a_registered_figure_without_cells_or_cells_of_an_unregistered_one_fail_the_check(tmp_path, capsys):
    from virtrepro.figures import cells

    copy = _notebooks_copy(tmp_path)
    path = copy / "walters2008.ipynb"
    notebook = json.loads(path.read_text())
    gone = "fig2-iozone-reader-writer"
    notebook["cells"] = [c for c in notebook["cells"] if cells.figure_of(c) != gone]  # a registered figure without cells
    path.write_text(cells.text(notebook))
    assert cells.main(["--check", "--notebooks", str(copy)]) == 1
    assert "walters2008.ipynb: its figure cells are not the registry's" in capsys.readouterr().out
    assert cells.main(["--notebooks", str(copy)]) == 0  # generated again: in place after the last figure's cells
    assert [c for c in json.loads(path.read_text())["cells"] if cells.figure_of(c) == gone]
    assert cells.main(["--check", "--notebooks", str(copy)]) == 0
    notebook = json.loads(path.read_text())
    notebook["cells"].append(cells._new_cell("fig9-not-registered", 0, 'fig9 = nb.draw("fig9-not-registered")'))
    path.write_text(cells.text(notebook))
    assert cells.main(["--check", "--notebooks", str(copy)]) == 1  # a cell of an unregistered figure
    unmarked = {"cell_type": "code", "execution_count": None, "id": "by-hand", "metadata": {}, "outputs": [],
                "source": ['mine = nb.draw("fig1-netperf-latency-bandwidth")']}
    notebook["cells"] = [c for c in notebook["cells"] if cells.figure_of(c) != "fig9-not-registered"] + [unmarked]
    path.write_text(cells.text(notebook))
    capsys.readouterr()
    assert cells.main(["--check", "--notebooks", str(copy)]) == 1  # a figure drawn by hand
    assert "a cell draws a figure the registry did not make" in capsys.readouterr().out


def test_the_workflow_lists_the_registered_figures_without_copying_them():
    text = (ROOT / "workflow" / "rules" / "notebooks.smk").read_text()
    assert "by_paper()" in text and "write_captions(" in text
    assert not [name for _, name in figures.FIGURES if f'"{name}"' in text]
    assert not (ROOT / "workflow" / "report").exists()  # captions come from the registry


def test_captions_are_written_from_the_registry(tmp_path):
    written = figures.write_captions(tmp_path)
    assert set(written) == set(figures.FIGURES)
    fig = figures.get("walters2008", "fig1-netperf-latency-bandwidth")
    text = written[("walters2008", fig.id)].read_text()
    assert text == f"Walters 2008 Fig. 1: {fig.caption} Notebook ``walters2008``.\n" and fig.title == "Walters 2008 Fig. 1"
    assert all(f.caption and f.title and f.benchmarks for f in figures.FIGURES.values())
    # with the reading its notebook wrote beside the figure, in RST
    (tmp_path / "figs" / "walters2008").mkdir(parents=True)
    (tmp_path / "figs" / "walters2008" / f"{fig.id}.reading.md").write_text("It shows `lxc`.\n\n- **holds**.\n")
    text = figures.write_captions(tmp_path / "captions", tmp_path / "figs")[("walters2008", fig.id)].read_text()
    assert text == f"Walters 2008 Fig. 1: {fig.caption} Notebook ``walters2008``.\n\nIt shows ``lxc``.\n\n- **holds**.\n"


def test_a_figure_names_the_claims_it_tests_and_reads_their_benchmarks():
    found = _claims()
    by_id = {c["id"]: c for c in found}
    for fig in figures.FIGURES.values():
        for pattern in fig.claims:
            assert [c for c in found if c["paper"] == fig.paper and fnmatch.fnmatchcase(c["id"], pattern)], (fig.id, pattern)
        for claim_id in fig.claim_ids(found):
            check = by_id[claim_id].get("check")
            if check:
                assert check["benchmark"] in fig.benchmarks, (fig.id, claim_id)


def test_every_testable_claim_on_a_drawn_benchmark_has_its_figure():
    found = _claims()
    tested = {i for fig in figures.FIGURES.values() for i in fig.claim_ids(found)}
    drawn = {(fig.paper, b) for fig in figures.FIGURES.values() for b in fig.benchmarks}
    missing = [c["id"] for c in found if c.get("testable") and (c["paper"], c["check"]["benchmark"]) in drawn
               and c["id"] not in tested]
    assert missing == []


def test_the_registry_refuses_a_figure_twice():
    fig = figures.get("walters2008", "fig1-netperf-latency-bandwidth")
    with pytest.raises(ValueError, match="twice"):
        figures.figure(fig.paper, fig.id, title="t", caption="c", benchmarks=["netperf"])(lambda table, s: None)
    with pytest.raises(KeyError, match="registered"):
        figures.get("walters2008", "no-such-figure")


# --- every figure draws the committed table ------------------------------------------------------


@pytest.mark.parametrize("key", list(figures.FIGURES), ids=lambda key: "/".join(key))
def test_every_figure_draws_the_reference_table(key, table, tmp_path):
    drawn = figures.draw(*key, table, SETTING, tmp_path)
    plt.close(drawn.fig)
    assert sorted(p.name for p in drawn.paths) == [f"{key[1]}.pdf", f"{key[1]}.png"]
    assert all((tmp_path / key[0] / p.name).stat().st_size > 0 for p in drawn.paths)
    png = drawn._repr_png_()  # the notebook embeds the written PNG
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png == (tmp_path / key[0] / f"{key[1]}.png").read_bytes()
    assert drawn.key == key
    assert drawn.text() or not drawn.numbers


def _numbers(key, table, name_start):
    drawn = figures.get(*key).draw(table, SETTING)
    plt.close(drawn.fig)
    return next(v for k, v in drawn.numbers.items() if k.startswith(name_start))


def _hl(x, y) -> float:
    """The Hodges-Lehmann ratio of x to y, by its definition: exp of the median of every log x_i - log y_j."""
    x, y = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    return float(np.exp(np.median(np.subtract.outer(x, y))))


def test_walters_fig1_latency_and_bandwidth_are_the_medians_of_the_table(table):
    rows = table[table["benchmark"] == "netperf"]
    lat = rows[rows["metric"] == "half_round_trip_latency"]
    expected = lat.groupby([lat["platform"], _labels(lat, "request_size").rename("size")])["value"].median()
    shown = _numbers(("walters2008", "fig1-netperf-latency-bandwidth"), table, "one-way latency")
    assert len(expected) == shown.size > 0
    for (platform, size), mean in expected.items():
        assert shown.loc[size, platform] == pytest.approx(mean)
    bw = rows[rows["metric"] == "throughput"]
    size = _labels(bw, "message_size")
    largest = {p: g["value"] for p, g in bw[size == size.max()].groupby("platform")}
    ours = _numbers(("walters2008", "fig1-netperf-latency-bandwidth"), table, "ours")
    for platform, values in largest.items():
        assert ours.loc[platform].filter(like="bandwidth").iloc[0] == pytest.approx(_hl(values, largest["native"]) * 100)


def test_walters_fig2_bandwidth_is_mb_per_s_of_1_mb_records(table):
    rows = table[(table["benchmark"] == "iozone") & table["metric"].isin(["read", "write"])]
    rows = rows[_labels(rows, "record_kb") == 1024]
    key = [rows["platform"], rows["metric"].map({"read": "reader", "write": "writer"}),
           (_labels(rows, "file_size_kb") // 1024).rename("mb")]
    expected = rows.groupby(key)["value"].median() / 1024
    shown = _numbers(("walters2008", "fig2-iozone-reader-writer"), table, "median bandwidth")
    assert len(expected) == shown.size > 0
    for (platform, test, mb), mean in expected.items():
        assert shown.loc[(test, mb), platform] == pytest.approx(mean)


def test_walters_fig2_shows_each_untranslated_platform_near_1_with_the_claims_bound(table):
    """Under each log panel of Fig. 2, the bandwidth of the platforms that do not translate relative to
    native per file size: the Hodges-Lehmann ratio of the runs (computed here from its definition), on a
    linear axis, with the 10 % bound of the one IOZone claim on that test (reader: read, writer: write)."""
    rows = table[(table["benchmark"] == "iozone") & table["metric"].isin(["read", "write"])]
    rows = rows[_labels(rows, "record_kb") == 1024]
    drawn = figures.get("walters2008", "fig2-iozone-reader-writer").draw(table, SETTING)
    for test, metric in [("reader", "read"), ("writer", "write")]:
        shown = drawn.numbers[f"{test}: bandwidth / native"]
        part = rows[rows["metric"] == metric]
        mb = (_labels(part, "file_size_kb") // 1024).astype(str)
        samples = {key: g["value"] for key, g in part.groupby([mb.rename("mb"), part["platform"]])}
        untranslated = {p for _, p in samples if p not in ("native", "qemu-tcg")}
        assert untranslated and set(shown.columns) == untranslated
        for (size, platform), values in samples.items():
            if platform in untranslated:
                assert shown.loc[size, platform] == pytest.approx(_hl(values, samples[(size, "native")]))
    near = [ax for ax in drawn.fig.axes if "near 1" in ax.get_title()]
    assert [ax.get_title().split(":")[0] for ax in near] == ["reader", "writer"]
    assert all(ax.get_yscale() == "linear" for ax in near)
    # the bound at 0.9 (bandwidth: higher is better), said once: the reader's claim and the conclusion's
    # (on reads), the writer's claim
    for ax, count in zip(near, ["2 claims", "1 claim"]):
        bounds = [t.get_text() for t in ax.texts if t.get_text().startswith("claims:")]
        assert bounds == [f"claims: at most 10% worse ({count})"]
        assert any(abs(line.get_ydata()[0] - 0.9) < 1e-9 for line in ax.get_lines() if len(line.get_ydata()))
    plt.close(drawn.fig)


def test_without_a_translating_platform_npb_figures_draw_one_row_near_1():
    """Where no platform translates guest code (QEMU TCG runs no NPB at the reference scale), Walters
    Fig. 3, Regola Figs. 4-5 and Kudryavtsev Fig. 1 draw only the linear row near 1 with the claims'
    bounds: a log row of bars at 1 would repeat it with whiskers too small to see. With a translating
    platform the log row is there (test_npb_figures_say_what_a_reader_otherwise_guesses)."""
    from virtrepro.figures import common

    assert common.log_row_needed(["native", "lxc", "qemu-tcg"]) and not common.log_row_needed(["native", "lxc", "podman"])
    table = results.read_table(TABLE)
    table = table[table["platform"] != "qemu-tcg"]
    for key, panels in [(("walters2008", "fig3-npb-relative-time"), 2), (("regola2010", "fig4-5-npb-relative-time"), 4),
                        (("kudryavtsev2012", "fig1-npb-cg-ft-mg-is"), 4)]:
        drawn = figures.get(*key).draw(table, SETTING)
        axes = [ax for ax in drawn.fig.axes if ax.get_visible() and ax.axison]
        assert len(axes) == panels, key
        assert all(ax.get_yscale() == "linear" and "no translation" in ax.get_ylabel() for ax in axes[:1]), key
        labels = {line.get_label() for ax in axes for line in ax.containers}
        assert {"lxc", "podman"} <= labels and "qemu-tcg" not in labels, key
        legends = [ax.get_legend() for ax in axes if ax.get_legend() is not None] + list(drawn.fig.legends)
        assert legends, key
        plt.close(drawn.fig)


def test_a_bar_without_its_interval_is_explained_under_the_figure_not_in_its_title():
    """Kumar's disk figure: a median without an interval is marked, and the note under the figure says why;
    the title says only what the bars are."""
    frame = pd.DataFrame({"benchmark": "dd", "platform": ["native"] * 6 + ["lxc"] * 3, "metric": "write",
                          "unit": "MB/s", "value": [100.0, 101, 99, 100, 102, 98, 97, 96, 95]})
    from virtrepro.figures import common

    summary = common.summarize(frame, ["platform"], SETTING)
    assert summary.set_index("platform")["ci_low"].isna().to_dict() == {"lxc": True, "native": False}
    text = common.no_interval_text(summary, "ci_low", "ci_high", "median")
    assert text.startswith(f"{common.NO_INTERVAL_MARK} no interval: ")
    # a ratio per vCPU count (Kumar Figs. 4.1-4.4) keeps stats.overhead's reason
    rows = common.ratio_rows([("lxc", frame[frame["platform"] == "lxc"])],  # 3 runs against 3: no 95 % interval
                             lambda _: frame.loc[frame["platform"] == "native", "value"].iloc[:3], SETTING,
                             platform=lambda key, _: key)
    assert np.isnan(rows[0]["ratio_ci_low"]) and rows[0]["ci_note"]
    said = common.no_interval_text(pd.DataFrame(rows), "ratio_ci_low", "ratio_ci_high", "ratio")
    assert said.startswith(f"{common.NO_INTERVAL_MARK} no interval: ") and not said.endswith("no interval: no interval")


def test_kumar_lifecycle_seconds_are_the_medians_per_step(table):
    rows = table[table["benchmark"] == "lifecycle"]
    expected = rows.groupby(["platform", "metric"])["value"].median()
    shown = _numbers(("kumar2013", "tables5-operational-flexibility"), table, "median seconds")
    assert list(shown.columns) == kumar2013.STEPS
    for (platform, step), mean in expected.items():
        if step in kumar2013.STEPS:
            assert shown.loc[platform, step] == pytest.approx(mean)


def test_kumar_isolation_efficiency_is_the_hodges_lehmann_ratio_beside_a_neighbour_and_alone(table):
    rows = table[(table["benchmark"] == "isolation") & (table["metric"] == "events_per_second")]
    rows = rows[_parameter(rows, "resource") == "cpu"]
    neighbour, limits = _parameter(rows, "neighbour"), _parameter(rows, "limits")
    shown = _numbers(("kumar2013", "fig6-2-6-5-isolation"), table, "isolation").set_index(["resource", "platform", "limits"])
    checked = 0
    for (platform, limit), group in rows.groupby([rows["platform"], limits]):
        stressed = group[neighbour[group.index] == "stress"]["value"]
        alone = group[neighbour[group.index] == "none"]["value"]
        assert shown.loc[("cpu", platform, limit), "efficiency"] == pytest.approx(_hl(stressed, alone))
        checked += 1
    assert checked >= 4


def test_kumar_cpu_vcpus_is_each_platform_over_the_baseline_per_vcpu_count(table):
    rows = table[(table["benchmark"] == "cpu_scaling") & (table["metric"] == "events_per_second")]
    vcpus = _parameter(rows, "vcpus")
    samples = {key: g["value"] for key, g in rows.groupby([vcpus.rename("vcpus"), rows["platform"]])}
    shown = _numbers(("kumar2013", "fig4-1-4-4-cpu-vcpus"), table, "events/s").set_index(["vcpus", "platform"])
    assert len(shown) == len(samples) - [p for _, p in samples].count("native") > 0
    for (n, platform), values in samples.items():
        if platform != "native":
            assert shown.loc[(n, platform), "ratio"] == pytest.approx(_hl(values, samples[(n, "native")]))


def test_regola_table2_is_mb_per_s_per_configuration_beside_the_paper(table):
    rows = table[(table["benchmark"] == "iozone_disk") & table["metric"].isin(list(regola2010.OPS))]
    disk, cache = _parameter(rows, "disk"), _parameter(rows, "cache")
    config = [p if d == "host" else f"{p} {d} {c}" for p, d, c in zip(rows["platform"], disk, cache)]
    expected = rows.groupby([pd.Series(config, index=rows.index, name="c"), rows["metric"]])["value"].median() / 1024
    shown = _numbers(("regola2010", "table2-iozone-disk-formats"), table, "MB/s")
    for (configuration, metric), mean in expected.items():
        assert shown.loc[configuration, (regola2010.OPS[metric], "ours")] == pytest.approx(mean)
    published = pd.read_csv(ROOT / "data" / "reference" / "regola2010.csv")
    native_read = published[(published["source"] == "Table I") & (published["platform_in_paper"] == "native")
                            & (published["metric"] == "read")]["value"].iloc[0]
    assert shown.loc["native", ("Read", "paper")] == pytest.approx(native_read)
    openvz = published[(published["platform_in_paper"] == "OpenVZ") & (published["metric"] == "write")]["value"].iloc[0]
    assert shown.loc["lxc", ("Write", "paper")] == pytest.approx(openvz)  # OpenVZ's row is drawn beside lxc's


def test_youseff_stream_ratio_is_platform_over_baseline(table):
    rows = table[(table["benchmark"] == "hpcc") & (table["metric"] == "single_stream_triad")]
    samples = {p: g["value"] for p, g in rows.groupby("platform")}
    shown = _numbers(("youseff2006", "fig1-stream"), table, "tests").set_index(["operation", "platform"])
    for platform, values in samples.items():
        if platform != "native":
            assert shown.loc[("triad", platform), "ratio"] == pytest.approx(_hl(values, samples["native"]))
    assert set(youseff2006.STREAM) >= {"single_stream_triad"}


def test_youseff_bonnie_says_why_a_slot_is_empty_from_the_rates_and_latencies_logged(table):
    """A test with its latency but no rate on every platform is bonnie++'s +++++ (too fast to time),
    not a test that -f left out: get_block and seeks once read "not in the logs (... -f: no
    per-character tests)". Expected here from the table's rows directly."""
    rows = table[table["benchmark"] == "bonnie"]
    platforms = set(rows["platform"])
    reasons = _numbers(("youseff2006", "fig2-bonnie-relative"), table, "file size")
    by_test = dict(line.split(": ", 1) for line in reasons.splitlines())
    for test in youseff2006.BONNIE:
        rated = set(rows.loc[rows["metric"] == test, "platform"])
        timed = set(rows.loc[rows["metric"] == f"{test}_latency", "platform"])
        if not rated and timed == platforms:
            assert by_test[test] == "bonnie++ printed +++++ (too fast to time) on every platform", test
        elif not rated and not timed:
            assert by_test[test].startswith("not run") and "-f" in by_test[test], test
        elif "native" not in rated:
            assert by_test[test].startswith("native has no rate (bonnie++ printed +++++"), test
        else:
            assert test not in by_test, test
    assert {"get_block", "seeks"} <= set(by_test) and not any("-f" in by_test[t] for t in ("get_block", "seeks"))


def test_youseff_bonnie_shows_every_slot_whole(table):
    drawn = figures.get("youseff2006", "fig2-bonnie-relative").draw(table, SETTING)
    ax = drawn.fig.axes[0]
    assert ax.get_xlim() == (-0.5, len(youseff2006.BONNIE) - 0.5)
    plt.close(drawn.fig)


def test_regola_table2_marks_each_rows_regime_and_says_why_a_row_is_not_ours(table):
    """Each of our rows measured elsewhere than the paper (the page cache) is marked, and each row of the
    paper's without ours says whether the paper scale of config/config.yaml runs it: expected from the
    table's regime column and the configuration, read here directly."""
    rows = table[(table["benchmark"] == "iozone_disk") & table["metric"].isin(list(regola2010.OPS))]
    disk, cache = _parameter(rows, "disk"), _parameter(rows, "cache")
    names = pd.Series([p if d == "host" else f"{p} {d} {c}" for p, d, c in zip(rows["platform"], disk, cache)], index=rows.index)
    regime = rows.groupby(names)["regime"].agg(set)
    drawn = figures.get("regola2010", "table2-iozone-disk-formats").draw(table, SETTING)
    labels = [t.get_text() for t in drawn.fig.axes[0].get_yticklabels()]
    plt.close(drawn.fig)
    for name, regimes in regime.items():
        (label,) = [t for t in labels if t == name or t.startswith(name + " ")]
        assert label.endswith("\u2020") == (regimes == {"page-cache"}), (name, label)
    paper_scale = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["scales"]["paper"]["iozone_disk"]
    ran = set(disk[disk != "host"]) | set(cache[cache != "host"])
    only_paper = sorted((set(paper_scale["disk_formats"]) | set(paper_scale["cache_modes"])) - ran)
    assert only_paper  # the reference scale runs fewer formats and modes than the paper scale
    elsewhere = [t for t in labels if t.startswith("(")]
    published = pd.read_csv(ROOT / "data" / "reference" / "regola2010.csv")
    kvm = published[published["source"] == "Table II"].drop_duplicates(["disk_format", "cache"])
    expected = sorted(f"({f} {c}: paper scale only)" for f, c
                      in zip(kvm["disk_format"], kvm["cache"]) if f != "block" and (f in only_paper or c in only_paper))
    assert sorted(t for t in elsewhere if "paper scale only" in t) == expected
    assert "(block device: not reproduced)" in elsewhere and "(not measured here)" not in labels


def test_regola_fig2_draws_the_papers_gigabit_throughput_and_says_ours_had_no_wire(table):
    published = pd.read_csv(ROOT / "data" / "reference" / "regola2010_text.csv")
    gige = published[(published["benchmark"] == "netperf") & (published["unit"] == "Mbit/s")
                     & published["parameters"].fillna("").str.contains("network=gige") & published["available"]]
    drawn = figures.get("regola2010", "fig2-netperf-latency-throughput").draw(table, SETTING)
    flat = {line.get_ydata()[0] for line in drawn.fig.axes[1].get_lines()
            if len(set(line.get_ydata())) == 1 and line.get_linestyle() == "--"}
    assert flat == set(gige["value"].astype(float)) and {941.0, 520.0} <= flat
    notes = " ".join(t.get_text() for t in drawn.fig.texts).replace("\n", " ")
    assert "one host" in notes and "no wire" in notes and "Gigabit Ethernet" in notes
    sizes = sorted(set(_labels(table[(table["benchmark"] == "netperf") & (table["metric"] == "throughput")], "message_size")))
    assert f"rests on {len(sizes)} message sizes" in drawn.summary
    plt.close(drawn.fig)


def test_youseff_npb_names_class_and_processes_in_each_tick(table):
    rows = table[(table["benchmark"] == "npb_mpi") & (table["metric"] == "time")]
    kernel, cls, procs, nodes = (_parameter(rows, k) for k in ("kernel", "class", "procs", "nodes"))
    one = rows[(nodes == 1) & kernel.isin(["ep", "is", "mg", "lu", "cg"])].index
    expected = {f"{k.upper()} {c}, {p} proc." for k, c, p in zip(kernel[one], cls[one], procs[one])}
    drawn = figures.get("youseff2006", "fig3a-npb-relative").draw(table, SETTING)
    ticks = {t.get_text() for t in drawn.fig.axes[0].get_xticklabels()}
    assert ticks == expected and drawn.fig.axes[0].get_yscale() == "log"
    plt.close(drawn.fig)


def test_summary_overview_compares_memory_bandwidth_and_fio(table):
    """The overview once looked up ("mbw", "bandwidth") and ("fio", "bandwidth"), which match no
    metric: memory bandwidth and fio dropped out unnoticed. Both are in it now, with the overhead
    pandas computes for one of them."""
    today = summary.today(table, "native")
    assert {"mbw", "fio"} <= set(today["benchmark"])
    assert set(today.loc[today["benchmark"] == "mbw", "subsystem"]) == {"memory"}
    assert set(today.loc[today["benchmark"] == "fio", "subsystem"]) == {"disk"}
    (metric,) = {m for b, m in summary.SUBSYSTEM if b == "mbw"}
    rows = table[(table["benchmark"] == "mbw") & (table["metric"] == metric)]
    variant = rows["variant"]
    samples = {key: g["value"] for key, g in rows.groupby([variant, rows["platform"]])}
    expected = sorted((1 - _hl(samples[(v, "lxc")], samples[(v, "native")])) * 100 for v in variant.unique())
    ours = sorted(today[(today["benchmark"] == "mbw") & (today["platform"] == "lxc")]["overhead_percent"])
    assert ours == pytest.approx(expected)


def test_summary_then_pairs_the_papers_numbers_with_their_native_value():
    then = summary.then(ROOT / "data" / "reference")
    assert set(then["family"]) <= {summary.CONTAINER, summary.FULL_VM} and len(then) > 10
    published = pd.read_csv(ROOT / "data" / "reference" / "regola2010.csv")
    table1 = published[published["source"] == "Table I"].set_index(["platform_in_paper", "metric"])["value"]
    expected = (1 - table1[("OpenVZ", "read")] / table1[("native", "read")]) * 100
    regola = then[(then["paper"] == "regola2010") & (then["platform"] == "OpenVZ")]["overhead_percent"]
    assert any(v == pytest.approx(expected) for v in regola)


def test_walters_marks_the_papers_bandwidth_on_the_stand_in():
    assert walters2008.PAPER_BANDWIDTH == {"OpenVZ": 35.3, "VMware Server": 25.9}
    from virtrepro.figures.common import stand_in_present

    assert stand_in_present("OpenVZ", ["podman", "lxc", "native"]) == "lxc"
    assert stand_in_present("VMware Server", ["native"]) is None


def test_the_notebook_says_what_its_numbers_carry_and_reports_its_papers_claims(table, monkeypatch, tmp_path):
    from virtrepro.figures.reading import Notebook

    monkeypatch.setattr(results, "load", lambda testbed, data_dir: table)
    nb = Notebook("kudryavtsev2012", testbed="reference-vm", data_dir=SETTING.data_dir, reference_dir=SETTING.reference_dir,
                  figures_dir=str(tmp_path), confidence=0.97, baseline="native")
    about = nb.about().splitlines()
    assert about[0].startswith(f"scale of the data: {table['scale'].dropna().iloc[0]} (")
    assert f"platforms measured: {', '.join(sorted(set(table['platform'])))}" in about
    probe = json.loads((ROOT / "data" / "raw" / "reference-vm" / "probes" / "qemu-accel.json").read_text())
    assert about[-1] == f"QEMU accelerator probe: {probe['reason']}"
    verdicts = nb.verdicts()
    listed = yaml.safe_load((ROOT / "data" / "reference" / "claims.yaml").read_text())
    assert sorted(verdicts["id"]) == sorted(c["id"] for c in listed if c["paper"] == "kudryavtsev2012")
    assert nb.claims().splitlines()[0].startswith("claim")
    drawn = nb.draw("fig3-hpcc")
    assert (tmp_path / "kudryavtsev2012" / "fig3-hpcc.png").is_file() and drawn.numbers


def test_the_notebook_names_the_platforms_its_testbed_could_not_run_with_the_reason(table, monkeypatch, tmp_path):
    from virtrepro.figures.reading import Notebook

    probes = tmp_path / "data" / "raw" / "cluster" / "probes"
    probes.mkdir(parents=True)
    (probes / "platforms.json").write_text(json.dumps({"hosts": {}, "platforms": {
        "native": {"status": "available"},
        "lxc": {"status": "unavailable", "reason": "node1: neither root nor passwordless sudo"}}}))
    monkeypatch.setattr(results, "load", lambda testbed, data_dir: table)
    # the run facts the table rule writes beside the table: here of the probe alone
    monkeypatch.setattr(results, "run_facts", lambda testbed, data_dir: {
        **results.facts.probes(data_dir, testbed)[0], "variants": {}})
    nb = Notebook("kudryavtsev2012", testbed="cluster", data_dir=str(tmp_path / "data"), reference_dir=SETTING.reference_dir,
                  figures_dir=str(tmp_path / "figures"), confidence=0.97, baseline="native")
    about = nb.about().splitlines()
    assert "unavailable on this testbed: lxc (node1: neither root nor passwordless sudo)" in about
    assert not [line for line in about if "native" in line and "unavailable" in line]


def test_a_figures_reading_says_what_it_rests_on_and_each_verdict_it_tests(table, monkeypatch, tmp_path):
    """The text after a figure: its summary or caption, the data (scale, repetitions, platforms, as
    counted here from the table) and one sentence per claim it tests, with our number and verdict."""
    from virtrepro.figures.reading import Notebook

    monkeypatch.setattr(results, "load", lambda testbed, data_dir: table)
    nb = Notebook("walters2008", testbed="reference-vm", data_dir=SETTING.data_dir, reference_dir=SETTING.reference_dir,
                  figures_dir=str(tmp_path))
    drawn = nb.draw("fig1-netperf-latency-bandwidth")
    text = nb.reading(drawn)
    assert text._repr_markdown_() == str(text)
    paragraphs = str(text).split("\n\n")
    assert paragraphs[0] == (drawn.summary or figures.get("walters2008", "fig1-netperf-latency-bandwidth").caption)
    netperf = table[table["benchmark"] == "netperf"]
    reps = netperf.groupby(["platform", "variant"])["repetition"].nunique()
    assert f"{reps.min()} to {reps.max()} repetitions" in paragraphs[1] or f", {reps.min()} repetitions" in paragraphs[1]
    assert f"{sorted(set(netperf['scale']))[0]} scale" in paragraphs[1]
    tested = figures.get("walters2008", "fig1-netperf-latency-bandwidth").claim_ids(_claims())
    bullets = paragraphs[2].splitlines()
    assert len(bullets) == len(tested) and all(b.startswith("- The paper: ") for b in bullets)
    verdicts = nb.verdicts().set_index("id")
    first = verdicts.loc[tested[0]]
    assert f"**{first['verdict']}**" in bullets[0] and first["published"] in bullets[0]
    if first["value"] == first["value"]:
        assert f"{100 * first['value']:+.1f}%" in bullets[0]


def test_a_figure_without_our_runs_reads_as_the_papers_numbers(table, monkeypatch, tmp_path):
    from virtrepro.figures.reading import Notebook

    monkeypatch.setattr(results, "load", lambda testbed, data_dir: table[table["benchmark"] != "netperf"])
    nb = Notebook("walters2008", testbed="reference-vm", data_dir=SETTING.data_dir, reference_dir=SETTING.reference_dir,
                  figures_dir=str(tmp_path))
    text = str(nb.reading(nb.draw("fig1-netperf-latency-bandwidth")))
    assert "No runs of netperf on testbed 'reference-vm'" in text and "**not measured**" in text


def test_a_notebooks_parameters_default_in_one_place():
    """Every notebook's parameters cell sets each parameter to None; Notebook fills in DEFAULTS, and a
    parameter papermill passes wins over it."""
    from virtrepro.figures.reading import DEFAULTS, Notebook

    for paper in figures.by_paper():
        nb = json.loads((ROOT / "notebooks" / f"{paper}.ipynb").read_text())
        (cell,) = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert "".join(cell["source"]).splitlines()[-1] == " = ".join([*DEFAULTS, "None"]), paper
    cwd = os.getcwd()
    os.chdir(ROOT / "notebooks")
    try:
        nb = Notebook("walters2008", testbed=None, data_dir=None, reference_dir=None, figures_dir="/nonexistent/x",
                      confidence=0.9, baseline=None, margin=None)
    finally:
        os.chdir(cwd)
    assert (nb.setting.testbed, nb.setting.confidence, nb.setting.baseline) == ("reference-vm", 0.9, "native")
    os.chdir(ROOT / "notebooks")
    try:  # Kudryavtsev 2012's intervals are 97 % ones unless papermill says otherwise
        assert Notebook("kudryavtsev2012", figures_dir="x").setting.confidence == 0.97
        assert Notebook("walters2008", figures_dir="x").setting.confidence == 0.95
    finally:
        os.chdir(cwd)
    assert nb.figures_dir == "/nonexistent/x" and str(nb.setting.data_dir) == "../data"
    with pytest.raises(TypeError, match="no parameter colour"):
        Notebook("walters2008", colour="red")


def test_an_empty_panels_reason_stays_inside_its_panel():
    """Two side-by-side empty panels with a long reason: each text's box lies within its own half."""
    from virtrepro.report import plotting

    fig, axes = plt.subplots(1, 2, figsize=(14, 4))
    reason = "no NPB runs: NPB was skipped (NPB 3.4.1 could not be downloaded from a long address (URLError: " \
             "[Errno -2] Name or service not known); set npb.tarball to a local copy of the tarball (see docs/npb.md))"
    for ax in axes:
        plotting.unavailable(ax, reason)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    left, right = (ax.texts[0].get_window_extent(renderer) for ax in axes)
    assert left.x1 < right.x0  # no overlap
    assert left.x1 <= fig.bbox.width / 2 + 5 and right.x0 >= fig.bbox.width / 2 - 5
    assert " ".join(axes[0].texts[0].get_text().split()) == " ".join(reason.split())  # nothing cut
    plt.close(fig)


# --- what a reader sees in the committed notebooks ------------------------------------------------


@pytest.mark.parametrize("paper", list(figures.by_paper()))
def test_each_committed_notebook_shows_every_figure_it_draws_and_reads_it(paper):
    """Every figure a notebook draws is embedded as a PNG in its committed outputs, and the next cell
    shows its reading (Markdown text computed from the data)."""
    cells = json.loads((ROOT / "notebooks" / f"{paper}.ipynb").read_text())["cells"]
    draws = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and re.search(r"= nb\.draw\(", "".join(c["source"]))]
    assert len(draws) == len(figures.by_paper()[paper])
    for i in draws:
        images = [o for o in cells[i]["outputs"] if "image/png" in o.get("data", {})]
        assert images and len(images[0]["data"]["image/png"]) > 1000, (paper, i)
        reading = cells[i + 1]
        assert "nb.reading(" in "".join(reading["source"]), (paper, i)
        text = [o["data"]["text/markdown"] for o in reading["outputs"] if "text/markdown" in o.get("data", {})]
        assert text and len("".join(text[0])) > 40, (paper, i)


def test_the_summary_answers_first():
    """summary.ipynb: right after its title, a cell whose output answers in words with numbers."""
    cells = json.loads((ROOT / "notebooks" / "summary.ipynb").read_text())["cells"]
    title = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown")
    assert "".join(cells[title]["source"]).startswith("# Summary")
    first = cells[title + 1]
    (answer,) = [o["data"]["text/markdown"] for o in first["outputs"] if "text/markdown" in o.get("data", {})]
    answer = "".join(answer)
    assert answer.startswith("**What the data can carry**")  # summary.opening, then the answer
    assert "**The answer, on testbed `reference-vm`**" in answer
    for heading in ("CPU", "Memory", "Disk", "Network", "HPC kernels, MPI and MIT GCM", "Operations", "Isolation"):
        assert f"- **{heading}" in answer, heading
    assert re.search(r"[\d.]+x (worse|better) \(median of \d+\)", answer)


def test_no_colour_that_means_a_platform_is_used_for_anything_else():
    from virtrepro.report import plotting
    from virtrepro.figures import common

    platform_colours = {c.lower() for c in plotting.PLATFORM_COLORS.values()}
    others = [*kumar2013.LIMITS_COLOURS.values(), *summary.ERA_COLORS.values(), common.PUBLISHED_GREY]
    assert not {c.lower() for c in others} & platform_colours


@pytest.mark.parametrize("key, kernels", [
    (("walters2008", "fig3-npb-relative-time"), None), (("youseff2006", "fig3a-npb-relative"), None),
    (("regola2010", "fig4-5-npb-relative-time"), None),
    # Kudryavtsev's Figs. 1 and 2 show different kernels: each only the statements on its own
    (("kudryavtsev2012", "fig1-npb-cg-ft-mg-is"), {"cg", "ft", "mg", "is"}),
    (("kudryavtsev2012", "fig2-npb-ep-lu"), {"ep", "lu"})])
def test_a_figure_without_our_runs_draws_the_papers_numbers_and_one_short_line(key, kernels, table, tmp_path):
    """No NPB runs (as on a testbed where NPB could not be obtained): the paper's stated numbers in
    per cent are drawn, one marker each, with one short line on why ours are missing, never the error."""
    without = table[~table["benchmark"].str.startswith("npb")]
    drawn = figures.draw(*key, without, SETTING, tmp_path)
    published = pd.concat([pd.read_csv(p) for p in (ROOT / "data" / "reference").glob(f"{key[0]}*.csv")])
    stated = published[published["benchmark"].str.startswith("npb") & (published["unit"] == "%")
                       & published["available"].astype(bool) & pd.to_numeric(published["value"], errors="coerce").notna()]
    if kernels is not None:  # the kernel named in the statement's parameters (kernel=is+mg: both)
        named = stated["parameters"].str.extract(r"kernel=([a-z+]+)")[0].fillna("").str.split("+")
        stated = stated[named.map(lambda names: bool(set(names) & kernels))]
    markers = [line for ax in drawn.fig.axes for line in ax.get_lines() if len(line.get_xdata()) == 1]
    assert len(markers) == len(stated) > 0
    assert sorted(float(m.get_xdata()[0]) for m in markers) == sorted(stated["value"].astype(float))
    texts = [t.get_text() for ax in drawn.fig.axes for t in ax.texts] + [t.get_text() for t in drawn.fig.texts]
    assert not [t for t in texts if "URLError" in t or "http" in t]
    assert all(len(t) < 160 for t in texts if t.startswith("no npb"))
    plt.close(drawn.fig)


def test_a_legend_never_covers_data(tmp_path):
    """A legend drawn over bars moves out of its panel when the figure is saved; the same legend in
    several panels becomes one above them."""
    from virtrepro.report import plotting

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar([0, 1, 2], [10, 10, 10], label="tall bars")  # they fill the panel: any legend inside covers them
    ax.legend(loc="center")
    plotting.save(fig, tmp_path, "t", "one")
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    bars = [patch.get_window_extent(renderer) for patch in ax.patches]
    assert not any(legend.overlaps(bar) for bar in bars)
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(6, 3))
    for ax in axes:
        ax.bar([0], [1], label="lxc")
        ax.legend()
    plotting.save(fig, tmp_path, "t", "two")
    assert [ax.get_legend() for ax in axes] == [None, None] and len(fig.legends) == 1
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["lxc"]
    plt.close(fig)


def test_a_saturation_size_and_a_trend_per_step_are_not_read_as_relative_differences():
    row = {"id": "p-s", "kind": "saturation", "paper_platform": "OpenVZ", "published": "saturates at 256 bytes",
           "platforms": "lxc", "value": 65536.0, "ci_low": 4096.0, "ci_high": float("inf"), "threshold": None,
           "n_platform": 9, "n_baseline": 0, "verdict": "inconclusive", "note": ""}
    assert claims.sentence(row) == ("The paper: OpenVZ: saturates at 256 bytes. Here, lxc: saturates at 65536 "
                                    "(bounds 4096..inf) (n = 9/0): **inconclusive**.")
    trend = {**row, "kind": "trend", "value": 0.05, "ci_low": 0.01, "ci_high": 0.09}
    assert claims.estimate_text("trend", 0.05, 0.01, 0.09) == "+5.0% per step [+1.0%, +9.0%]"
    assert "+5.0% per step [+1.0%, +9.0%] (n = 9/0)" in claims.sentence(trend)
    table = claims.report(pd.DataFrame([{**row, "value": 65536.0}, trend]).rename(columns={"notes": "note"}))
    assert "saturates at 65536 (bounds 4096..inf)" in table and "6553600" not in table


def test_a_verdict_reads_as_one_sentence_and_a_listing_never_cuts_a_note():
    row = {"id": "p-x", "paper_platform": "OpenVZ vs native", "published": "OpenVZ 84.62 us vs native 80.0 us",
           "platforms": "lxc vs native", "value": 0.123, "ci_low": 0.05, "ci_high": 0.2, "threshold": 0.1,
           "n_platform": 6, "n_baseline": 7, "verdict": "inconclusive", "note": "the interval straddles 10 %"}
    assert claims.sentence(row) == ("The paper: OpenVZ vs native: OpenVZ 84.62 us vs native 80.0 us. Here, lxc vs native: "
                                    "+12.3% [+5.0%, +20.0%] (n = 6/7, threshold 10 %): **inconclusive** "
                                    "(the interval straddles 10 %).")
    missing = {**row, "value": float("nan"), "platforms": None, "note": float("nan"), "verdict": "not measured"}
    assert claims.sentence(missing) == "The paper: OpenVZ vs native: OpenVZ 84.62 us vs native 80.0 us. Here: **not measured**."
    long_note = "word " * 60
    listed = claims.listing(pd.DataFrame([{**row, "note": long_note.strip()}]), width=50)
    assert listed.splitlines()[0] == "p-x"
    assert listed.split("why:")[1].split() == long_note.split()  # every word of the note, none cut
    assert max(len(line) for line in listed.splitlines()) <= 50


def test_an_interval_of_the_median_is_drawn_around_the_median_and_the_label_says_so():
    """A skewed sample at small n gets an interval of the median (stats.location_ci), which need not
    hold the mean the bar shows: matplotlib refused the negative error bar that made (the lifecycle
    figure on the reference data); now the whisker is centred on the median and marked."""
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    from virtrepro.report import plotting
    from virtrepro.analysis import stats
    from virtrepro.figures.common import ci_label
    from virtrepro.figures.registry import Setting

    values = [0.50, 0.51, 0.52, 0.53, 0.53, 0.54, 0.54, 0.55, 0.55, 0.56, 0.57, 0.58, 0.59, 2.8, 2.9]
    # two slow runs pull the mean (0.86) above all but those two
    summary = stats.summarize(pd.DataFrame({"platform": "lxc", "step": "provision", "value": values}),
                              by=["platform", "step"])
    row = summary.iloc[0]
    assert row["ci_of"] == "median" and row["mean"] > row["ci_high"]  # the case: the mean outside
    fig, ax = plt.subplots()
    plotting.grouped_bars(ax, summary, "step", "mean", "ci_low", "ci_high")
    (caps, bars) = ax.containers[-1].lines[1:]
    segment = bars[0].get_segments()[0]
    assert np.allclose([segment[0][1], segment[1][1]], [row["ci_low"], row["ci_high"]])
    assert ax.containers[-1].lines[0].get_ydata()[0] == np.median(values) == 0.55  # the marked median
    plt.close(fig)
    assert ci_label(Setting(testbed="tb"), summary) == ci_label(Setting(testbed="tb")) == "median with 95% CI (order statistics; \u2020: too few runs for one)"


def test_no_committed_notebook_names_a_path_of_the_machine_that_ran_it():
    """A warning printed by a library names its file by absolute path; a committed output must not
    carry the path of the clone that refreshed it (summary.today silences scipy's precision warning)."""
    named = [nb.name for nb in sorted((ROOT / "notebooks").glob("*.ipynb")) if str(ROOT) in nb.read_text()]
    assert not named, named


def test_the_footer_names_the_machine_each_figure_was_measured_on(table, tmp_path):
    """A figure of one host's benchmarks names that host (CPU model and kernel, as its sidecars
    record them); the overview, whose benchmarks came from two hosts, names both."""

    def host_of(benchmark):
        sidecar = next((ROOT / "data" / "raw" / "reference-vm" / "native" / benchmark).glob("*/rep-0.json"))
        host = json.loads(sidecar.read_text())["host"]
        return host["cpu_model"], host["kernel"]

    def footer(key):
        drawn = figures.draw(*key, table, SETTING, tmp_path)
        plt.close(drawn.fig)
        return next(t.get_text() for t in drawn.fig.texts if "measured on" in t.get_text())

    netperf, npb = host_of("netperf"), host_of("npb_mpi")
    assert netperf != npb  # the reference data's two machines
    one = footer(("walters2008", "fig1-netperf-latency-bandwidth"))
    assert "measured on " in one and all(fact in one for fact in netperf) and npb[1] not in one
    both = footer(("summary", "overview-overhead-then-now"))
    assert "measured on 2 machines" in both and all(fact in both for fact in (*netperf, *npb))


# --- what a figure says in words is what its data say ---------------------------------------------


def _words(fig) -> list[str]:
    """Every text a reader sees in ``fig``: titles, labels, tick labels, legends, notes."""
    texts = [t.get_text() for t in fig.texts] + ([fig._suptitle.get_text()] if fig._suptitle else [])
    for legend in list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]:
        texts += [t.get_text() for t in legend.get_texts()]
    for ax in fig.axes:
        texts += [ax.get_title(loc) for loc in ("left", "center", "right")] + [ax.get_xlabel(), ax.get_ylabel()]
        texts += [t.get_text() for t in ax.texts + ax.get_xticklabels() + ax.get_yticklabels()]
    return [t for t in texts if t]


def _drawn_words(key, table, tmp_path) -> list[str]:
    drawn = figures.draw(*key, table, SETTING, tmp_path)
    plt.close(drawn.fig)
    return _words(drawn.fig)


def test_kumar_isolation_names_the_limits_its_runs_had_and_what_efficiency_divides_by(table, tmp_path):
    rows = table[table["benchmark"] == "isolation"]
    on = rows[_parameter(rows, "limits") == "on"]
    limits = {(p["cpus"], p["mem"], p["bps"]) for p in on["parameters"].map(json.loads)}
    assert len(limits) == 1  # the reference scale: one setting
    cpus, mem, bps = limits.pop()
    mib_per_s = int(bps[:-1]) * {"k": 1 / 1024, "m": 1, "g": 1024}[bps[-1].lower()]
    words = _drawn_words(("kumar2013", "fig6-2-6-5-isolation"), table, tmp_path)
    legend = next(t for t in words if t.startswith("limits on"))
    for fact in (f"{cpus} CPU", f"{mem} MiB memory", f"disk {mib_per_s:g} MiB/s"):
        assert fact in legend, (fact, legend)
    assert any("alone: same limits" in t for t in words)  # the denominator
    # native has no "limits on" runs: its slot is marked in every panel drawn
    resources = set(_parameter(rows, "resource"))
    assert (~_parameter(rows[rows["platform"] == "native"], "limits").eq("off")).sum() == 0
    assert words.count(kumar2013.NO_LIMITS) == len(resources)
    # what the limits cost the victim alone, per panel
    assert sum(t.startswith("victim alone, limits on / off") for t in words) == len(resources)


def test_kumar_disk_and_memory_say_where_their_numbers_were_measured(table, tmp_path):
    fileio = table[table["benchmark"] == "sysbench_fileio"]
    assert set(fileio["regime"]) == {"page-cache"}
    words = _drawn_words(("kumar2013", "fig4-9-to-4-11-disk"), table, tmp_path)
    titles = [t for t in words if t.startswith("Fig. 4.")]
    assert [("page cache" in t) for t in titles] == [True, True, False]  # 4.9, 4.10 sysbench fileio; 4.11 dd
    assert not any(t.startswith("Disk I/O") for t in words)
    assert any(t.startswith("ours: ") and "page cache" in t for t in words)  # the regime footnote

    rows = table[table["benchmark"] == "memory_scaling"]
    params = rows["parameters"].map(json.loads)
    blocks = {p["block"] for p in params}
    operations = set(params.map(lambda p: p["oper"]))
    words = _drawn_words(("kumar2013", "fig4-5-4-7-memory"), table, tmp_path)
    note = next(t for t in words if t.startswith("sysbench memory moves"))
    assert blocks == {"1M"} and "one 1 MiB block per thread" in note and "not exercised" in note
    assert "in the CPU caches" in note and any(t.startswith("ours: in the CPU caches") for t in words)
    for operation in {"read", "write"} - operations:  # sysbench memory's operations
        assert f"{operation}: not run at this scale" in note
    assert "read and write" not in figures.get("kumar2013", "fig4-5-4-7-memory").caption


def test_kumar_apps_name_each_workloads_size_and_only_servers_run_in_a_second_instance(table, tmp_path):
    words = _drawn_words(("kumar2013", "apps-relative-performance"), table, tmp_path)
    pgbench = table[table["benchmark"] == "pgbench"]["parameters"].map(json.loads)
    for p in pgbench:
        assert f"pgbench {p['mode']}\nscale {p['scale']}, {p['clients']} clients" in words
    for p in table[table["benchmark"] == "nginx_wrk"]["parameters"].map(json.loads):
        assert f"nginx {p['file_kb']} KiB\n{p['connections']} connections" in words
    caption = figures.get("kumar2013", "apps-relative-performance").caption
    assert "pyperformance and openssl speed, which have no server, in one instance" in caption


def test_kumar_cpu_figures_name_their_benchmark(table, tmp_path):
    for key, benchmark in ((("kumar2013", "fig4-cpu-overhead"), "sysbench_cpu"),
                           (("kumar2013", "fig4-1-4-4-cpu-vcpus"), "cpu_scaling")):
        primes = set(table[table["benchmark"] == benchmark]["parameters"].map(lambda t: json.loads(t)["prime"]))
        title = next(t for t in _drawn_words(key, table, tmp_path) if "thesis Figs. 4.1-4.4" in t)
        assert "sysbench cpu" in title and f"prime {primes.pop()}" in title, title
        assert (benchmark == "cpu_scaling") == title.startswith("cpu_scaling")


def test_lmbench_bw_mem_sizes_are_the_mib_the_variant_asked_for(table, tmp_path):
    rows = table[(table["benchmark"] == "lmbench") & (table["metric"] == "memory_bandwidth")]
    asked = {int(m) for text in _parameter(rows, "bwmib") for m in text.split("+")}
    words = _drawn_words(("microbenchmarks", "lmbench-relative"), table, tmp_path)
    cases = [t for t in words if t.startswith(("rd\n", "wr\n", "cp\n"))]
    assert cases and {int(t.split("\n")[1].removesuffix(" MiB")) for t in cases} == asked
    assert not any(" MB" in t for t in cases)
    # an array within the L2 the host reports (its sidecar's cache_sizes, e.g. "L2=2048K") is marked so
    sidecar = next((ROOT / "data" / "raw" / "reference-vm" / "native" / "lmbench").glob("*/rep-0.json"))
    caches = dict(item.split("=") for item in json.loads(sidecar.read_text())["host"]["cache_sizes"].split())
    l2_mib = int(caches["L2"].removesuffix("K")) / 1024
    in_l2 = [t for t in cases if int(t.split("\n")[1].removesuffix(" MiB")) <= l2_mib]
    assert in_l2 and all(t.endswith("(in L2)") for t in in_l2)


def test_npb_figures_say_what_a_reader_otherwise_guesses(table):
    """Walters Figs. 3-4 and Kudryavtsev Fig. 1 on the reference table: a log axis, so
    that a binary-translating VM's tens of times do not flatten the containers' bars; every bar without a
    whisker marked and the reason below the figure; the NPB class of each kernel named; a panel whose
    kernel cannot run a process count the others ran says why; Fig. 4's reading says what its
    two-instance points show."""
    from virtrepro.benchmarks.npb import process_count_problem
    from virtrepro.figures import common

    def texts(fig):
        return [t.get_text() for ax in fig.axes for t in ax.texts] + [t.get_text() for t in fig.texts]

    # Walters Fig. 3: ratios with Fieller intervals (error bars), log axis, kernel.class ticks from the data
    drawn = figures.get("walters2008", "fig3-npb-relative-time").draw(table, SETTING)
    serial = table[(table["benchmark"] == "npb_serial") & (table["metric"] == "time")]
    classes = {f"{_parameter(serial, 'kernel').loc[i].upper()}.{_parameter(serial, 'class').loc[i]}" for i in serial.index}
    for ax in drawn.fig.axes:  # the panels of every platform (log) and, under them, those near 1 (linear)
        near_one = "near 1" in ax.get_title()
        assert ax.get_yscale() == ("linear" if near_one else "log") and (near_one or ax.containers)  # bars, error bars
        assert {t.get_text() for t in ax.get_xticklabels()} == classes
    shown = next(v for k, v in drawn.numbers.items() if k.startswith("(a)"))
    bare = shown[shown["ratio"].notna() & shown["ratio_ci_low"].isna()]
    marks = [t for t in drawn.fig.axes[0].texts if t.get_text() == common.NO_INTERVAL_MARK]
    assert len(marks) == len(bare)
    if len(bare):
        assert any(t.startswith(f"{common.NO_INTERVAL_MARK} no interval: ") for t in texts(drawn.fig))
    plt.close(drawn.fig)

    # Kudryavtsev Fig. 1: how many times worse on a log scale named in factors (common.times_axis); each bar
    # without its interval marked, the reason below
    drawn = figures.get("kudryavtsev2012", "fig1-npb-cg-ft-mg-is").draw(table, SETTING)
    drawn.fig.canvas.draw()
    ticks = [t.get_text() for t in drawn.fig.axes[0].get_yticklabels() if t.get_text()]  # the panels share it
    assert ticks and all(re.fullmatch(r"same|[\d.]+x (worse|better)", t) for t in ticks), ticks
    top, near = drawn.fig.axes[:4], drawn.fig.axes[4:8]  # every platform's row (log), the untranslated near 1
    assert all(ax.get_shared_y_axes().joined(ax, top[0]) for ax in top)
    assert all(ax.get_yscale() == "linear" for ax in near) and "linear, no translation" in near[0].get_ylabel()
    assert {line.get_label() for ax in near for line in ax.containers} >= {"lxc", "podman"}
    compared = next(iter(drawn.numbers.values()))
    compared = compared[compared["param_kernel"].isin(["cg", "ft", "mg", "is"]) & (compared["param_nodes"] == 1)]
    bare = compared[compared["overhead_percent"].notna() & compared["overhead_ci_low"].isna()]
    assert sum(t == common.NO_INTERVAL_MARK for t in texts(drawn.fig)) == len(bare)  # 0 at the reference n
    assert any(t.startswith(f"{common.NO_INTERVAL_MARK} no interval: ") for t in texts(drawn.fig)) == (len(bare) > 0)
    legend = top[-1].get_legend()
    assert legend.get_bbox_to_anchor().x0 >= top[-1].get_window_extent().x1  # right of the panels
    plt.close(drawn.fig)

    # Walters Fig. 4: BT and SP say which process counts they cannot run; the reading names the squares
    drawn = figures.get("walters2008", "fig4-npb-mpi-scaling").draw(table, SETTING)
    mpi = table[(table["benchmark"] == "npb_mpi") & (table["metric"] == "time")]
    run = set(_parameter(mpi, "procs"))
    kernels = len(walters2008.FIG4_KERNELS)  # a row of run times, under it a row of their intervals
    for ax, below, kernel in zip(drawn.fig.axes, drawn.fig.axes[kernels:], walters2008.FIG4_KERNELS):
        assert ax.get_yscale() == "log"
        own = set(_parameter(mpi[_parameter(mpi, "kernel") == kernel], "procs"))
        why = [process_count_problem(kernel, p) for p in sorted(run - own)]
        note = " ".join(" ".join(t.get_text().split()) for t in below.texts)  # under the column
        assert all(w in note for w in why if w), (kernel, note)
    assert "square number" in " ".join(t.get_text() for t in drawn.fig.axes[kernels + 1].texts).replace("\n", " ")  # BT
    assert "over 2 instances" in drawn.summary and "CG at 2 processes" in drawn.summary
    plt.close(drawn.fig)


def test_whiskers_are_drawn_over_the_run_dots():
    """A whisker under a column of run dots reads as "no interval": grouped_bars draws it above them."""
    from matplotlib.collections import LineCollection, PathCollection

    from virtrepro.report import plotting

    fig, ax = plt.subplots()
    frame = pd.DataFrame({"x": ["a"], "platform": ["lxc"], "v": [1.0], "lo": [0.9], "hi": [1.1]})
    runs = pd.DataFrame({"x": ["a"] * 3, "platform": ["lxc"] * 3, "v": [0.95, 1.0, 1.05]})
    plotting.grouped_bars(ax, frame, "x", "v", "lo", "hi", points=runs)
    dots = [c.get_zorder() for c in ax.collections if isinstance(c, PathCollection)]
    whiskers = [c.get_zorder() for c in ax.collections if isinstance(c, LineCollection)]
    plt.close(fig)
    assert dots and whiskers and max(dots) < min(whiskers)


def test_the_lifecycle_figure_says_how_finely_each_step_was_timed(table):
    """The note's resolution per step and platform, from the logs' own lines: boot's median
    ``boot_resolution_s`` per platform, and destroy's 0.1 s (logs written before destroy_resolution_s)."""
    import re
    import statistics

    from virtrepro.figures import kumar2013

    boot = {}
    for log in (ROOT / "data" / "raw" / "reference-vm").glob("*/lifecycle/*/rep-*.log"):
        found = re.search(r"^boot_resolution_s=([0-9.]+)$", log.read_text(), re.M)
        assert "destroy_resolution_s" not in log.read_text()
        boot.setdefault(log.parts[-4], []).append(float(found.group(1)))
    said = kumar2013.step_resolutions(results.view(table, "lifecycle"))
    assert "destroy 0.1 s" in said
    for platform, values in boot.items():
        shown = f"{statistics.median(values):.2g} s"
        assert shown in said.split("; ")[0], (platform, shown, said)
    assert len({f"{statistics.median(v):.2g}" for v in boot.values()}) > 1 and "QEMU TCG 2 s" in said  # per platform


# --- issue 38: the summary and figures say what the data can carry ---------------------------------


def _counted_by_hand(path: Path) -> dict:
    """Claims per paper and kind of verdict, read from the verdicts' table with csv (not pandas)."""
    import csv
    from collections import Counter

    def kind(verdict: str) -> str:
        if verdict.startswith("holds"):
            return "holds"
        if verdict.startswith("does not hold"):
            return "does not hold"
        if verdict.startswith("inconclusive"):
            return "inconclusive"
        return {"not comparable here": "not comparable", "not informative (analogue's bias)": "not informative",
                "not measured": "not measured", "not testable here": "not testable"}[verdict]

    with open(path, newline="") as f:
        return Counter((row["paper"], kind(row["verdict"])) for row in csv.DictReader(f))


def test_the_summary_opens_with_the_claims_per_paper_and_verdict_of_the_verdicts_table(tmp_path):
    expected = _counted_by_hand(ROOT / "data" / "tables" / "reference-vm.claims.csv")
    text = summary.opening(SETTING)
    rows = {line.split("|")[1].strip(): [int(n) for n in line.split("|")[2:-1]]
            for line in text.splitlines() if line.startswith("| ") and not line.startswith("| paper")}
    papers = sorted({paper for paper, _ in expected})
    assert list(rows) == papers + ["all papers"]
    for paper in papers:
        assert rows[paper] == [expected[(paper, k)] for k in summary.OPENING] + [
            sum(n for (p, _), n in expected.items() if p == paper)], paper
    decided = sum(n for (_, k), n in expected.items() if k in ("holds", "does not hold"))
    assert f"of the papers' {sum(expected.values())} claims, **{decided} are decided**" in text
    # every claim counted once under a reason of its kind (the reasons' counts add up)
    for kind in summary.OPENING[2:]:
        line = next((l for l in text.splitlines() if l.startswith(f"- **{kind}**")), None)
        total = sum(n for (_, k), n in expected.items() if k == kind)
        if total:
            assert line.startswith(f"- **{kind}** ({total}):")
            assert sum(int(n) for n in re.findall(r"\((\d+)\)[;.]", line)) == total, kind
    # the opening follows the table: change a verdict there and the counts change with it
    changed = pd.read_csv(ROOT / "data" / "tables" / "reference-vm.claims.csv", keep_default_na=False, dtype=str)
    first = changed.index[changed["verdict"] == "not testable here"][0]
    changed.loc[first, "verdict"] = "holds"
    (tmp_path / "tables").mkdir()
    changed.to_csv(tmp_path / "tables" / "reference-vm.claims.csv", index=False)
    moved = summary.opening(Setting(testbed="reference-vm", data_dir=str(tmp_path), reference_dir=SETTING.reference_dir))
    assert f"**{decided + 1} are decided**" in moved


def test_twice_the_time_and_half_the_throughput_are_the_same_bar():
    from virtrepro.figures import common

    # hand arithmetic: a time of 200 against 100 is +100 %; a throughput of 50 against 100 is +50 %
    assert common.times_worse(100.0, False) == pytest.approx(2.0)
    assert common.times_worse(50.0, True) == pytest.approx(2.0)
    assert common.log_worse(100.0, False) == pytest.approx(common.log_worse(50.0, True)) == pytest.approx(1.0)
    # twice as fast (half the time, twice the throughput) is the same bar downwards
    assert common.log_worse(-50.0, False) == pytest.approx(common.log_worse(-100.0, True)) == pytest.approx(-1.0)
    assert common.times_text(2.0) == "2x worse" and common.times_text(0.5) == "2x better"
    assert common.times_text(1.0) == "same"


def _bars(ax, label: str) -> dict:
    """The heights of the bars labelled ``label`` in ``ax`` by their x tick's first line."""
    ticks = [t.get_text().split("\n")[0] for t in ax.get_xticklabels()]
    (bars,) = [c for c in ax.containers if c.get_label() == label]
    return {ticks[round(b.get_x() + b.get_width() / 2)]: b.get_height() for b in bars}


def test_the_overview_never_sets_binary_translation_beside_the_papers_hypervisors(table, tmp_path):
    import math

    import numpy as np

    drawn = figures.draw("summary", "overview-overhead-then-now", table, SETTING, tmp_path)
    ours = summary.today(table, "native", summary.machines_of(SETTING.testbed, SETTING.data_dir, summary.OVERVIEW_BENCHMARKS))
    # each comparison as how many times worse, from the ratio of means by hand: a time's ratio, a rate's inverted
    ours["factor"] = np.where(ours["higher_is_better"].astype(bool), 1 / ours["ratio"], ours["ratio"])
    translated = ours[ours["platform"] == "qemu-tcg"]
    assert len(translated)
    paired = [ax for ax in drawn.fig.axes if any(c.get_label() == summary.THEN for c in ax.containers)]
    assert paired
    for ax in paired:  # beside the papers' numbers: no bar of a translating platform
        today = [h for era in {c.get_label() for c in ax.containers} - {summary.THEN}
                 for h in _bars(ax, era).values() if not math.isnan(h)]
        if "full VM" in ax.get_title():
            assert today == []  # no hardware-assisted VM on this testbed: the slot is empty
    (alone,) = [ax for ax in drawn.fig.axes if ax.containers and ax not in paired]
    assert "binary translation" in alone.get_title()
    for era, mine in translated.groupby("era"):  # a bar a machine (summary.today_era), never pooled
        drawn_bars = _bars(alone, era)
        for subsystem, rows in mine.groupby("subsystem"):
            assert drawn_bars[subsystem] == pytest.approx(np.median(np.log2(rows["factor"])), rel=1e-6), subsystem
    # the containers' bars are the same measure: a time's ratio and a throughput's inverted on one log scale
    (containers,) = [ax for ax in paired if ax.get_title().startswith("container")]
    lxc_podman = ours[ours["platform"].isin(["lxc", "podman"])]
    for era in set(lxc_podman["era"]):
        for subsystem, height in _bars(containers, era).items():
            rows = lxc_podman[(lxc_podman["subsystem"] == subsystem) & (lxc_podman["era"] == era)]
            if len(rows):
                assert height == pytest.approx(np.median(np.log2(rows["factor"])), rel=1e-6, abs=1e-12), subsystem
    plt.close(drawn.fig)


def test_regola_figs_4_5_name_each_platform_in_a_legend(table, tmp_path):
    drawn = figures.draw("regola2010", "fig4-5-npb-relative-time", table, SETTING, tmp_path)
    legends = [ax.get_legend() for ax in drawn.fig.axes if ax.get_legend() is not None] + list(drawn.fig.legends)
    named = {t.get_text() for legend in legends for t in legend.get_texts()}
    measured = set(results.view(table, ["npb_omp", "npb_mpi"], metric="time")["platform"]) - {"native"}
    assert measured and {figures.common.plotting.platform_label(p) for p in measured} <= named
    plt.close(drawn.fig)


def test_walters_fig1a_draws_the_papers_published_latencies(table, tmp_path):
    import csv

    with open(ROOT / "data" / "reference" / "walters2008.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["metric"] == "half_round_trip_latency" and r["unit"] == "us" and r["value"]]
    published = {r["platform_in_paper"]: float(r["value"]) for r in rows}
    assert published["native"] == 80.0 and published["OpenVZ"] == 84.62  # Section 3.1's words
    drawn = figures.draw("walters2008", "fig1-netperf-latency-bandwidth", table, SETTING, tmp_path)
    latency = drawn.fig.axes[0]
    drawn_y = {round(float(y), 2) for line in latency.get_lines() if line.get_marker() == "*" for y in line.get_ydata()}
    assert {80.0, 84.62} <= drawn_y
    texts = " ".join(t.get_text() for t in latency.texts)
    assert "native 80 us" in texts and "OpenVZ 84.62 us" in texts
    plt.close(drawn.fig)


def test_walters_fig4_says_it_shows_too_few_process_counts_for_scaling(table, tmp_path):
    drawn = figures.draw("walters2008", "fig4-npb-mpi-scaling", table, SETTING, tmp_path)
    title = drawn.fig._suptitle.get_text()
    counts = sorted(set(_parameter(table[table["benchmark"] == "npb_mpi"], "procs")))
    assert "MPI scaling" not in title
    assert f"at {' and '.join(str(c) for c in counts)} processes" in title and "not a scaling test" in title
    plt.close(drawn.fig)


def _threshold_lines(ax) -> set:
    from virtrepro.figures import common

    return {round(float(line.get_ydata()[0]), 6) for line in ax.get_lines()
            if line.get_color() == common.THRESHOLD_COLOUR and line.get_linestyle() == "--"}


def test_the_panels_near_one_draw_the_claims_thresholds(table, tmp_path):
    """Walters Fig. 3's panels near 1 draw each container claim's bound, read from claims.yaml here with yaml."""
    raw = yaml.safe_load((ROOT / "data" / "reference" / "claims.yaml").read_text())
    raw = raw["claims"] if isinstance(raw, dict) else raw
    drawn = figures.draw("walters2008", "fig3-npb-relative-time", table, SETTING, tmp_path)
    zooms = [ax for ax in drawn.fig.axes if "near 1" in ax.get_title()]
    assert len(zooms) == 2
    for zoom, benchmark in zip(zooms, ["npb_serial", "npb_omp"]):
        expected = set()
        for claim in raw:
            check = claim.get("check") or {}
            if (claim.get("testable") and claim["id"].startswith("walters2008-") and check.get("benchmark") == benchmark
                    and check.get("platform") in ("lxc", "podman")
                    and check.get("kind") in ("overhead_at_most", "equivalent")):
                expected.add(round(1 + check["threshold"], 6))
                if check["kind"] == "equivalent":
                    expected.add(round(1 - check["threshold"], 6))
        assert expected and _threshold_lines(zoom) == expected, benchmark
        low, high = zoom.get_ylim()
        assert low < min(expected) and max(expected) < high and high - low < 0.5  # 1-10 % can be read
    plt.close(drawn.fig)


def test_a_throughputs_bound_is_drawn_below_one(table, tmp_path):
    """Regola Fig. 2 (d): a rate's claim "at most 1 % worse" bounds the ratio from below (0.99), a latency's from above."""
    raw = yaml.safe_load((ROOT / "data" / "reference" / "claims.yaml").read_text())
    (claim,) = [c for c in raw if c["id"] == "regola2010-netperf-throughput-openvz-native"]
    assert claim["check"]["kind"] == "overhead_at_most" and claim["check"]["where"]["test"] == "TCP_STREAM"
    drawn = figures.draw("regola2010", "fig2-netperf-latency-throughput", table, SETTING, tmp_path)
    (latency,) = [ax for ax in drawn.fig.axes if ax.get_title().startswith("(c)")]
    (rate,) = [ax for ax in drawn.fig.axes if ax.get_title().startswith("(d)")]
    assert round(1 - claim["check"]["threshold"], 6) in _threshold_lines(rate)
    assert all(y < 1 for y in _threshold_lines(rate)) and all(y > 1 for y in _threshold_lines(latency))
    plt.close(drawn.fig)


# --- a missing interval, a missing platform and a new platform are never silent ----------------------


def test_kumar_fig4_8_marks_a_bar_without_its_interval_and_says_why_under_it(table):
    from virtrepro.figures.common import NO_INTERVAL_MARK

    iperf = table[table["benchmark"] == "iperf3"]
    few = iperf[(iperf["platform"] != "podman") | (iperf["repetition"] < 3)]  # podman: too few runs for an interval
    drawn = figures.get("kumar2013", "fig4-8-network-bandwidth").draw(few, SETTING)
    ax = drawn.fig.axes[0]
    marks = [t for t in ax.texts if t.get_text() == NO_INTERVAL_MARK]
    assert len(marks) == 1  # podman's bar, and only it
    podman = [c for c in ax.containers if c.get_label() == "podman"][0].patches[0]
    assert abs(marks[0].xy[0] - (podman.get_x() + podman.get_width() / 2)) < 1e-9
    assert any(t.get_text().startswith(f"{NO_INTERVAL_MARK} no interval") for t in drawn.fig.texts)
    plt.close(drawn.fig)


def _subsystems(key) -> set:
    from virtrepro.benchmarks import BENCHMARKS

    return {BENCHMARKS[b].subsystem for b in figures.get(*key).benchmarks if b in BENCHMARKS}


def test_every_cpu_or_hpc_figure_says_why_binary_translation_has_no_runs(table, tmp_path):
    from virtrepro.figures.common import without_runs_note

    cpu_hpc = [key for key in figures.FIGURES if _subsystems(key) & {"cpu", "hpc"}]
    assert ("youseff2006", "fig3a-npb-relative") in cpu_hpc and ("kumar2013", "fig4-cpu-overhead") in cpu_hpc
    without_tcg = table[table["platform"] != "qemu-tcg"]  # a testbed that never measured it, too
    for key in cpu_hpc:
        note = without_runs_note(without_tcg, figures.get(*key).benchmarks, SETTING.baseline)
        assert "QEMU TCG: no " in note and "would inform no claim" in note and "informative_only" in note, key
    # where TCG has runs of them, or the figure shows no CPU or HPC benchmark, nothing is said of it
    assert "QEMU TCG" not in without_runs_note(table, figures.get("kumar2013", "fig4-cpu-overhead").benchmarks, "native")
    assert without_runs_note(without_tcg, figures.get("kumar2013", "fig4-8-network-bandwidth").benchmarks, "native") == ""
    # drawn: under the figure, and in its reading's words
    words = _drawn_words(("kumar2013", "fig4-cpu-overhead"), without_tcg, tmp_path)
    assert any(w.startswith("QEMU TCG: no sysbench_cpu runs; it would inform no claim") for w in words)


def test_a_platform_measured_here_without_a_benchmark_its_scale_plans_is_named(table, tmp_path):
    from virtrepro.figures.common import without_runs_note

    # mbw is planned on QEMU TCG at the reference scale: without its runs, the note says so
    without = table[~((table["platform"] == "qemu-tcg") & (table["benchmark"] == "mbw"))]
    note = without_runs_note(without, ["mbw"], "native")
    assert note == "QEMU TCG: no mbw runs in this data, though the reference scale plans them"
    # MIT GCM is not planned there (an HPC benchmark: informative_only), and the figure says why
    assert not len(table[(table["platform"] == "qemu-tcg") & (table["benchmark"] == "mit_gcm")])
    note = without_runs_note(table, ["mit_gcm"], "native")
    assert note.startswith("QEMU TCG: no mit_gcm runs; it would inform no claim on them (hpc: ")
    assert note.endswith("so the quick, reference and paper scales do not plan it there (informative_only)")
    drawn = " ".join(_drawn_words(("youseff2006", "fig3b-mitgcm-time"), table, tmp_path))
    assert " ".join(note.split()) in " ".join(drawn.split())  # wrapped under the panel
    # a step a platform cannot run (native has no guest to provision) is no missing run
    assert "native" not in without_runs_note(table, ["lifecycle"], None).lower()


def test_walters_fig4_reads_each_points_interval_on_a_linear_row_under_the_log_one(table, tmp_path):
    from virtrepro.analysis import stats
    from virtrepro.figures.common import NO_INTERVAL_MARK

    drawn = figures.get("walters2008", "fig4-npb-mpi-scaling").draw(table, SETTING)
    top, below = drawn.fig.axes[:4], drawn.fig.axes[4:]
    assert len(below) == 4 and all(ax.get_yscale() == "log" for ax in top) and below[0].get_yscale() == "linear"
    assert "% of the median" in below[0].get_ylabel()
    mpi = results.view(table, "npb_mpi", metric="time")
    ep = stats.summarize(mpi[mpi["param_kernel"] == "ep"].assign(procs=lambda f: f["param_procs"], nodes=lambda f: f["param_nodes"]),
                         by=["platform", "nodes", "procs"], level=SETTING.confidence)
    widest = ((ep["ci_high"] - ep["ci_low"]) / ep["median"]).max() * 100
    low, high = below[0].get_ylim()
    assert widest / (high - low) > 0.3  # readable: a third of the row's height at least
    bare = int((ep["median"].notna() & (ep["ci_low"].isna() | ep["ci_high"].isna())).sum())
    assert len([t for t in below[0].texts if t.get_text() == NO_INTERVAL_MARK]) == bare
    if bare:
        assert any(t.get_text().startswith(f"{NO_INTERVAL_MARK} no interval") for t in drawn.fig.texts)
    plt.close(drawn.fig)


def test_a_new_platform_of_the_catalogue_is_drawn_in_its_colour_and_order(table):
    from virtrepro.figures.common import platform_order
    from virtrepro.platforms import catalog

    assert platform_order(["qemu-tcg", "charliecloud", "lxc", "native"], "native") == ["native", "lxc", "qemu-tcg", "charliecloud"]
    cpu = table[table["benchmark"] == "sysbench_cpu"]
    with_it = pd.concat([cpu, cpu[cpu["platform"] == "lxc"].assign(platform="charliecloud")])
    drawn = figures.get("kumar2013", "fig4-cpu-overhead").draw(with_it, SETTING)
    ax = drawn.fig.axes[0]
    names = [t.get_text() for t in ax.get_legend().get_texts()]
    shown = [n for n in names if n in catalog.NAMES]
    assert shown == platform_order(set(with_it["platform"]), SETTING.baseline) and shown[-1] == "charliecloud"
    colours = {c.get_label(): c.patches[0].get_facecolor() for c in ax.containers if c.get_label() in catalog.NAMES}
    from matplotlib.colors import to_rgba

    assert colours["charliecloud"] == to_rgba(catalog.get("charliecloud").colour)
    plt.close(drawn.fig)
    io = table[table["benchmark"] == "iozone"]
    drawn = figures.get("walters2008", "fig2-iozone-reader-writer").draw(
        pd.concat([io, io[io["platform"] == "podman"].assign(platform="charliecloud")]), SETTING)
    legend = [t.get_text() for t in drawn.fig.axes[0].get_legend().get_texts()]
    assert legend[-1] == "charliecloud" and legend[0] == SETTING.baseline
    plt.close(drawn.fig)
