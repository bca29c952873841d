"""Reading never writes where a typo can reach: a figure, notebook or table command given a testbed
without raw logs stops with one line naming it and the testbeds that have data, and writes nothing;
a testbed other than the committed reference run draws into its own figures directory; a figure
without runs never replaces one drawn from runs.

Each command runs as a user types it, in a copy of the repository's data and figures (the committed
raw logs linked read-only, the tables, figures and published numbers copied or linked), and the copy's
figures/ and data/tables/ are compared byte for byte before and after."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

PYTHON = sys.executable
FIG2 = "walters2008/fig2-iozone-reader-writer"  # IOZone: measured on reference-vm and on fair-quick
FIG3 = "walters2008/fig3-npb-relative-time"  # NPB: measured on reference-vm, not on fair-quick
# the testbeds with data in the committed tree: the directories under data/raw holding a complete log
# (rep-<k>.log; a failed run's rep-<k>.failed-<time>.log is none), found here with a pattern of their own
WITH_DATA = sorted(d.name for d in (REPO / "data" / "raw").iterdir()
                   if any(re.fullmatch(r"rep-\d+\.log", p.name) for p in d.rglob("rep-*")))


def no_logs_line(testbed: str, raw: str = "data/raw") -> str:
    return (f"testbed {testbed!r} has no raw logs under {raw}/ (testbeds with data there: {', '.join(WITH_DATA)}): "
            "a misspelt name, or none of its measurements completed")


def snapshot(*roots: Path) -> dict[str, str]:
    """Every file under ``roots`` (the table builder's git-ignored checksum cache aside) -> its sha256."""
    found = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and ".cache" not in path.relative_to(root).parts:
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.fixture
def work(tmp_path) -> Path:
    """A working directory laid out as the repository: data/raw/<testbed> linked to the committed logs
    (read, never written), data/reference linked, data/tables and figures/ copied."""
    data = tmp_path / "data"
    (data / "raw").mkdir(parents=True)
    for testbed in (REPO / "data" / "raw").iterdir():
        (data / "raw" / testbed.name).symlink_to(testbed)
    (data / "reference").symlink_to(REPO / "data" / "reference")
    shutil.copytree(REPO / "data" / "tables", data / "tables", ignore=shutil.ignore_patterns(".cache"))
    shutil.copytree(REPO / "figures", tmp_path / "figures")
    return tmp_path


@pytest.fixture(autouse=True)
def committed_tree_untouched():
    """Whatever a test does, the repository's own figures and tables stay as they are."""
    before = snapshot(REPO / "figures", REPO / "data" / "tables")
    yield
    assert snapshot(REPO / "figures", REPO / "data" / "tables") == before


def command(work: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    env.pop("VIRTREPRO_DEBUG", None)
    return subprocess.run([PYTHON, *args], capture_output=True, text=True, cwd=work, env=env, timeout=300)


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and result.stdout == "", result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# -- a testbed without raw logs stops every entry point, and nothing is written ------------------------


def test_a_misspelt_testbed_stops_the_figure_command_and_writes_nothing(work):
    before = snapshot(work / "figures", work / "data" / "tables")
    result = command(work, "-m", "virtrepro.figures", FIG2, "--testbed", "refrence-vm")
    assert one_error_line(result) == "error: " + no_logs_line("refrence-vm")
    assert snapshot(work / "figures", work / "data" / "tables") == before  # nothing replaced, nothing new
    assert not list((work / "data" / "tables").glob("refrence-vm*")) and not (work / "figures" / "refrence-vm").exists()


def test_a_whole_paper_for_a_testbed_without_data_draws_nothing(work):
    before = snapshot(work / "figures", work / "data" / "tables")
    result = command(work, "-m", "virtrepro.figures", "kumar2013", "--testbed", "local")
    assert one_error_line(result) == "error: " + no_logs_line("local")
    assert snapshot(work / "figures", work / "data" / "tables") == before


def test_the_table_command_stops_for_a_testbed_without_raw_logs(work):
    before = snapshot(work / "data" / "tables")
    result = command(work, "-m", "virtrepro.results", "refrence-vm")
    assert one_error_line(result) == "error: " + no_logs_line("refrence-vm")
    assert snapshot(work / "data" / "tables") == before


def test_load_and_write_table_refuse_a_testbed_whose_measurements_all_failed(work):
    """A configured testbed whose runs all failed (only a failed log and its probe): an error, not an
    empty table; its raw directory is not listed among the testbeds with data."""
    from virtrepro import results

    data = work / "data"
    variant = data / "raw" / "mine" / "native" / "mbw" / "size-128_runs-5"
    variant.mkdir(parents=True)
    (variant / "rep-0.failed-20261128T000000.log").write_text("mbw: out of memory\n")
    (data / "raw" / "mine" / "probes").mkdir()
    (data / "raw" / "mine" / "probes" / "platforms.json").write_text('{"hosts": {}, "platforms": {}}')
    before = snapshot(data / "tables")
    for build in (lambda: results.load("mine", data), lambda: results.write_table(data, "mine", reparse=True),
                  lambda: results.write_table(data, "mine")):
        with pytest.raises(results.NoRawLogsError) as error:
            build()
        assert str(error.value) == no_logs_line("mine", f"{data}/raw")
    assert snapshot(data / "tables") == before and not (data / "tables" / ".cache" / "mine.lock").exists()


def test_a_notebook_for_a_misspelt_testbed_stops_in_its_first_cell_and_writes_nothing(work):
    """papermill, as the workflow's notebook rule runs it: the first code cell fails with the one line."""
    import papermill

    before = snapshot(work / "figures", work / "data" / "tables")
    with pytest.raises(papermill.PapermillExecutionError) as error:
        papermill.execute_notebook(str(REPO / "notebooks" / "walters2008.ipynb"), str(work / "out.ipynb"),
                                   parameters={"testbed": "refrence-vm", "data_dir": str(work / "data"),
                                               "figures_dir": str(work / "figures")},
                                   cwd=str(REPO / "notebooks"), kernel_name="python3", progress_bar=False)
    assert error.value.exec_count == 3  # the first code cell after the parameters and papermill's injected cell
    assert error.value.traceback == ["NoRawLogsError: " + no_logs_line("refrence-vm", f"{work / 'data'}/raw")]
    assert snapshot(work / "figures", work / "data" / "tables") == before


def test_the_notebook_checks_its_own_testbed_as_it_checks_the_compared_ones(work):
    from virtrepro import results
    from virtrepro.figures.reading import Notebook
    from virtrepro.report.notebook import ParameterError

    data = str(work / "data")
    dirs = {"data_dir": data, "reference_dir": f"{data}/reference", "figures_dir": str(work / "figures")}
    before = snapshot(work / "figures", work / "data" / "tables")
    with pytest.raises(results.NoRawLogsError, match="^" + re.escape(no_logs_line("local", f"{data}/raw")) + "$"):
        Notebook("kumar2013", testbed="local", **dirs)
    with pytest.raises(ParameterError) as error:
        Notebook("summary", testbed="reference-vm", compare_testbeds=["fair-quik"], **dirs)
    assert str(error.value) == "notebook parameter 'compare_testbeds': " + no_logs_line("fair-quik", f"{data}/raw")
    assert snapshot(work / "figures", work / "data" / "tables") == before


# -- a testbed's figures go to its own directory ---------------------------------------------------------


def test_a_second_testbeds_figures_land_in_its_own_directory(work):
    before = snapshot(work / "figures", work / "data" / "tables")
    result = command(work, "-m", "virtrepro.figures", FIG2, "--testbed", "fair-quick")
    assert result.returncode == 0, result.stderr
    own = work / "figures" / "fair-quick" / "walters2008"
    assert sorted(p.name for p in own.iterdir()) == ["fig2-iozone-reader-writer.pdf", "fig2-iozone-reader-writer.png",
                                                     "fig2-iozone-reader-writer.reading.md"]
    assert "Data: testbed 'fair-quick'" in (own / "fig2-iozone-reader-writer.reading.md").read_text()
    assert f"== {FIG2}: figures/fair-quick/{FIG2}.png, figures/fair-quick/{FIG2}.pdf" in result.stdout
    # the committed figures and tables as they were (the fair-quick table was up to date: not rewritten)
    assert snapshot(work / "figures", work / "data" / "tables") == {
        **before, **{k: v for k, v in snapshot(work / "figures" / "fair-quick").items()}}


def test_main_figures_writes_into_the_main_directory_but_no_placeholder_over_a_figure_with_runs(work):
    """Asked for (--main-figures), fair-quick's IOZone figure replaces the committed one; its NPB figure has
    no runs there, and the committed figure drawn from reference-vm's runs is kept byte for byte."""
    from virtrepro.report import plotting

    main = work / "figures" / "walters2008"
    fig3 = {p: p.read_bytes() for p in main.glob("fig3-npb-relative-time.*")}
    assert len(fig3) == 3 and not plotting.is_placeholder(main / "fig3-npb-relative-time.png")
    fig2 = (main / "fig2-iozone-reader-writer.png").read_bytes()
    result = command(work, "-m", "virtrepro.figures", FIG2, FIG3, "--testbed", "fair-quick", "--main-figures")
    assert result.returncode == 0, result.stderr
    assert {p: p.read_bytes() for p in main.glob("fig3-npb-relative-time.*")} == fig3
    assert (f"== {FIG3}: figure without runs: not written over figures/{FIG3}.png, figures/{FIG3}.pdf, "
            "which are drawn from runs") in result.stdout
    assert (main / "fig2-iozone-reader-writer.png").read_bytes() != fig2
    assert "Data: testbed 'fair-quick'" in (main / "fig2-iozone-reader-writer.reading.md").read_text()
    assert not (work / "figures" / "fair-quick").exists()


def test_a_placeholder_replaces_only_a_placeholder(tmp_path):
    """plotting.save: a figure without runs is written where there is none, marked in its PNG; it replaces
    an earlier placeholder, never a figure that is not one."""
    import matplotlib.pyplot as plt

    from virtrepro.report import plotting

    def figure(text):
        fig, ax = plt.subplots()
        ax.text(0.5, 0.5, text)
        return fig

    paths = plotting.save(figure("no runs"), tmp_path, "p", "f", placeholder=True)
    assert [p.name for p in paths] == ["f.png", "f.pdf"] and plotting.is_placeholder(paths[0])
    first = paths[0].read_bytes()
    assert plotting.save(figure("no runs, another reason"), tmp_path, "p", "f", placeholder=True) == paths
    assert paths[0].read_bytes() != first  # a placeholder over a placeholder: replaced
    plotting.save(figure("runs"), tmp_path, "p", "f")
    drawn = {p: p.read_bytes() for p in paths}
    assert not plotting.is_placeholder(paths[0])
    assert plotting.save(figure("no runs"), tmp_path, "p", "f", placeholder=True) == []
    assert {p: p.read_bytes() for p in paths} == drawn
    (tmp_path / "p" / "g.pdf").write_bytes(b"%PDF drawn from runs")  # a figure's PDF alone counts too
    assert plotting.save(figure("no runs"), tmp_path, "p", "g", placeholder=True) == []
    plt.close("all")


def test_the_workflow_declares_each_testbeds_figures_where_its_notebook_writes_them():
    """The notebook rules' outputs (a dry run's plan) are figures_home's: figures/<paper>/ for the reference
    testbed, figures/<testbed>/<paper>/ for another."""
    from virtrepro.figures import FIGURES

    for testbed, home in (("fair-quick", "figures/fair-quick"), ("reference-vm", "figures")):
        result = subprocess.run([PYTHON, "-m", "snakemake", "-n", "--nolock", "--cores", "1", "--config",
                                 f"testbed={testbed}", "notebooks=[walters2008]"],
                                cwd=REPO, capture_output=True, text=True, timeout=300,
                                env={**os.environ, "PATH": f"{Path(PYTHON).parent}:{os.environ['PATH']}"})
        assert result.returncode == 0, result.stderr[-3000:]
        (line,) = [line for line in (result.stdout + result.stderr).splitlines()
                   if line.strip().startswith(f"output: data/executed/{testbed}/walters2008.ipynb")]
        outputs = set(line.split("output: ", 1)[1].split(", ")[1:])
        assert outputs == {f"{home}/walters2008/{name}.{ext}" for paper, name in FIGURES if paper == "walters2008"
                           for ext in ("png", "pdf")}


def test_a_notebooks_placeholder_kept_back_is_shown_but_not_written(work):
    """In a notebook (figures.reading.Notebook, main_figures=True): a figure without runs over the committed
    one drawn from runs is shown inline as drawn, no file is written and no reading replaces the committed one."""
    from virtrepro import results
    from virtrepro.figures.reading import Notebook

    data = str(work / "data")
    nb = Notebook("walters2008", testbed="fair-quick", data_dir=data, reference_dir=f"{data}/reference",
                  figures_dir=str(work / "figures"), main_figures=True)
    assert nb.figures_home == work / "figures" and results.has_raw_logs(data, "fair-quick")
    before = snapshot(work / "figures", work / "data" / "tables")
    drawn = nb.draw("fig3-npb-relative-time")
    text = str(nb.reading(drawn))
    main = work / "figures" / "walters2008"
    assert drawn.paths == [] and drawn.kept == [main / "fig3-npb-relative-time.png", main / "fig3-npb-relative-time.pdf"]
    assert drawn._repr_png_().startswith(b"\x89PNG\r\n\x1a\n") and repr(drawn).startswith("figure without runs: not written")
    assert "No runs of npb_serial, npb_omp on testbed 'fair-quick'" in text
    assert snapshot(work / "figures", work / "data" / "tables") == before
