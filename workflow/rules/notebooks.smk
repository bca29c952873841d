import shlex

# Notebooks: each paper's notebook executed with papermill into an executed
# copy; the notebook writes its figures into figures/<paper>/ for the reference testbed,
# figures/<testbed>/<paper>/ for another (virtrepro.figures.figures_home: the notebook asks there too).

import hashlib

from virtrepro.report import figure_files


@one_line_errors
def registered_figures():
    """Each paper's figure ids and each figure's report caption, as the registry (virtrepro.figures) declares
    them. Reading the registry imports every figure's code (matplotlib, seaborn, scipy: about a second), so
    what it said is kept in .snakemake/virtrepro/figures-<digest>.json, named by the digest of the package's
    files: a changed file reads the registry again."""
    package = Path(workflow.basedir) / "workflow" / "virtrepro"
    digest = hashlib.sha256()
    for path in sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(f"{path.relative_to(package).as_posix()}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    kept = Path(".snakemake") / "virtrepro" / f"figures-{digest.hexdigest()[:16]}.json"
    try:
        known = json.loads(kept.read_text())
        return known["by_paper"], {tuple(key.split("/", 1)): text for key, text in known["captions"].items()}
    except (OSError, ValueError, KeyError):
        pass
    from virtrepro import figures as figure_registry

    by_paper = figure_registry.by_paper()
    captions = {key: fig.report_caption() for key, fig in figure_registry.FIGURES.items()}
    kept.parent.mkdir(parents=True, exist_ok=True)
    for old in kept.parent.glob("figures-*.json"):  # what an earlier version of the code said
        old.unlink(missing_ok=True)
    partial = kept.with_name(f".{kept.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps({"by_paper": by_paper, "captions": {"/".join(key): text for key, text in captions.items()}}))
    os.replace(partial, kept)
    return by_paper, captions


# The figures each notebook writes (.png and .pdf) and their report captions: one declaration per
# figure in virtrepro.figures (a paper's notebook draws them, by_paper()); the captions are written from it.
FIGURES, _CAPTION_TEXTS = registered_figures()
# with each figure's reading where its notebook wrote one (a report is made after the run)
CAPTIONS = figure_files.write_captions(Path(".snakemake") / "report-captions", _CAPTION_TEXTS,
                                       figure_files.figures_home(FIGURES_DIR, TESTBED))


@one_line_errors
def figure_file(paper, name, suffix):
    """Where the testbed's notebook writes a figure's file (virtrepro.figures.figure_file)."""
    return str(figure_files.testbed_figure_file(FIGURES_DIR, TESTBED, paper, name, suffix))


@one_line_errors
def report_figure(paper, name):
    """A figure's PNG as a `snakemake --report` item: its registered caption, category the paper."""
    caption = os.path.relpath(CAPTIONS[(paper, name)].resolve(), Path(workflow.basedir) / "workflow" / "rules")
    return report(figure_file(paper, name, ".png"), caption=caption, category=paper)


@one_line_errors
def notebook_outputs():
    return [str(datalayout.executed_notebook(DATA, TESTBED, paper)) for paper in config["notebooks"]]


for _paper in config["notebooks"]:

    rule:
        name:
            f"notebook_{_paper}"
        input:
            table=str(datalayout.table_paths(DATA, TESTBED)["parquet"]),
            facts=str(datalayout.table_paths(DATA, TESTBED)["facts"]),  # the run facts the figures read
            # the verdicts (the summary opens with them; the papers' notebooks list their claims)
            claims=str(datalayout.claims_table_path(DATA, TESTBED)),
            notebook=str(Path(workflow.basedir) / "notebooks" / f"{_paper}.ipynb"),
        output:
            executed=str(datalayout.executed_notebook(DATA, TESTBED, _paper)),
            figures=[report_figure(_paper, name) for name in FIGURES[_paper]]
            + [figure_file(_paper, name, ".pdf") for name in FIGURES[_paper]],
        log:
            f"logs/notebooks/{TESTBED}/{_paper}.log",
        params:
            testbed=TESTBED,
            cwd=str(Path(workflow.basedir) / "notebooks"),
            data=os.path.abspath(DATA),
            figures=os.path.abspath(FIGURES_DIR),
            # the testbeds the summary sets beside this one (config compare_testbeds; none: its default)
            compare=(f" -y {shlex.quote(json.dumps({'compare_testbeds': config['compare_testbeds']}))}"
                     if config.get("compare_testbeds") and _paper == "summary" else ""),
        shell:
            f"{sys.executable} -m papermill {{input.notebook}} {{output.executed}} --cwd {{params.cwd}}"
            " -k python3 --no-progress-bar --log-output -p testbed {params.testbed} -p data_dir {params.data}"
            " -p figures_dir {params.figures}{params.compare} > {log} 2>&1"
            # on failure the log's last line is the notebook's error (one line for a bad parameter or table)
            " || {{ echo \"error: notebook failed: $(grep -v '^$' {log} | tail -n 1) (log: {log})\" >&2; exit 1; }}"
