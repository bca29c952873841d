# Notebooks: each paper's notebook executed with papermill into an executed
# copy; the notebook writes its figures into figures/<paper>/.

# The figures each notebook writes (as .png and .pdf).
FIGURES = {
    "walters2008": ["fig1-netperf-latency-bandwidth", "fig2-iozone-reader-writer", "fig3-npb-relative-time", "fig4-npb-mpi-scaling"],
    "kumar2013": ["fig4-cpu-overhead", "fig4-8-network-bandwidth", "tables5-operational-flexibility",
                  "fig4-1-4-4-cpu-vcpus", "fig4-5-4-7-memory", "fig4-9-to-4-11-disk", "fig6-2-6-5-isolation",
                  "apps-relative-performance"],
    "regola2010": ["fig2-netperf-latency-throughput", "table2-iozone-disk-formats", "fig4-5-npb-relative-time"],
    "kudryavtsev2012": ["fig1-npb-cg-ft-mg-is", "fig2-npb-ep-lu", "fig3-hpcc"],
    "youseff2006": ["fig1-stream", "fig2-bonnie-relative", "fig3a-npb-relative"],
    "summary": ["overview-overhead-then-now"],
    "microbenchmarks": ["lmbench-relative"],
}


def report_figure(paper, name):
    """A figure's PNG as a `snakemake --report` item: caption workflow/report/<paper>-<name>.rst, category the paper."""
    return report(f"{FIGURES_DIR}/{paper}/{name}.png", caption=f"../report/{paper}-{name}.rst", category=paper)


def notebook_outputs():
    return [f"{DATA}/executed/{TESTBED}/{paper}.ipynb" for paper in config["notebooks"]]


for _paper in config["notebooks"]:

    rule:
        name:
            f"notebook_{_paper}"
        input:
            table=f"{DATA}/tables/{TESTBED}.parquet",
            notebook=str(Path(workflow.basedir) / "notebooks" / f"{_paper}.ipynb"),
        output:
            executed=f"{DATA}/executed/{TESTBED}/{_paper}.ipynb",
            figures=[report_figure(_paper, name) for name in FIGURES[_paper]]
            + [f"{FIGURES_DIR}/{_paper}/{name}.pdf" for name in FIGURES[_paper]],
        log:
            f"logs/notebooks/{TESTBED}/{_paper}.log",
        params:
            testbed=TESTBED,
            cwd=str(Path(workflow.basedir) / "notebooks"),
            data=os.path.abspath(DATA),
            figures=os.path.abspath(FIGURES_DIR),
        shell:
            f"{sys.executable} -m papermill {{input.notebook}} {{output.executed}} --cwd {{params.cwd}}"
            " -k python3 --no-progress-bar --log-output -p testbed {params.testbed} -p data_dir {params.data}"
            " -p figures_dir {params.figures} > {log} 2>&1"
            # on failure the log's last line is the notebook's error (one line for a bad parameter or table)
            " || {{ echo \"error: notebook failed: $(grep -v '^$' {log} | tail -n 1) (log: {log})\" >&2; exit 1; }}"
