# Parsing: every raw log of a testbed into one tidy table (Parquet + CSV, with its manifest and the run
# facts beside it), and the papers' claims checked on it (<testbed>.claims.csv: one verdict per claim,
# readable without a notebook). The table rule is the table's one writer: notebooks only read it.

from virtrepro.analysis.claims import load_causes, load_claims  # the loading alone: no statistics imported
from virtrepro.errors import VirtreproError

REFERENCE = Path(workflow.basedir) / "data" / "reference"

# The claims and the causes' registry are read before anything runs: a file that cannot be (a key given
# twice, an unknown check kind, a repeated id...) stops the run with one line naming the file, the claim
# and the key.
try:
    load_claims(REFERENCE / "claims.yaml")
    load_causes(REFERENCE / "faster_than_native.yaml")
except VirtreproError as error:
    stop(error)  # Snakefile


@one_line_errors
def table_outputs():
    tables = datalayout.table_paths(DATA, TESTBED)
    return [str(tables["parquet"]), str(tables["csv"]), str(datalayout.claims_table_path(DATA, TESTBED))]


rule table:
    input:
        # two functions: the compiled benchmarks' part waits for their builds' probes (checkpoints), the rest does not
        one_line_errors(lambda wc: [str(v.marker_path(DATA)) for v in planned_variants(built=False) if v.testbed == wc.testbed]),
        one_line_errors(lambda wc: [str(v.marker_path(DATA)) for v in planned_variants(built=True) if v.testbed == wc.testbed]),
    output:
        parquet=datalayout.table_pattern(DATA, "parquet"),
        csv=datalayout.table_pattern(DATA, "csv"),
        manifest=datalayout.table_pattern(DATA, "manifest"),
        facts=datalayout.table_pattern(DATA, "facts"),
    log:
        "logs/table/{testbed}.log",
    run:
        with one_line_errors(), open(log[0], "w") as handle:
            from virtrepro.results import write_table  # pandas: imported by the job, not at every start

            frame = write_table(DATA, wildcards.testbed)
            print(f"{len(frame)} records from {frame['source_log'].nunique()} logs", file=handle)


# <testbed>.claims.csv also fits the table's <testbed>.csv (testbed "<testbed>.claims")
ruleorder: claims_table > table


rule claims_table:
    input:
        table=datalayout.table_pattern(DATA, "parquet"),
        facts=datalayout.table_pattern(DATA, "facts"),  # the run facts: the platforms the testbed could not run
        claims=str(REFERENCE / "claims.yaml"),
        causes=str(REFERENCE / "faster_than_native.yaml"),
    output:
        # update: a failing job keeps the previous verdicts (Snakemake neither deletes the file before the
        # job nor after its failure; the command replaces it whole, on success only). A shell command, not
        # a run: block: Snakemake runs a run: block in a Snakemake of its own, which restores the file
        # from its backup, after which the first one finds no backup and deletes the file.
        update(datalayout.table_pattern(DATA, "claims")),
    log:
        "logs/claims/{testbed}.log",
    shell:
        # (it checks the testbed's raw logs first: no verdicts from a table of no runs, one left from before)
        f"{sys.executable} -m virtrepro.analysis.claims --data-dir {DATA} --testbed {{wildcards.testbed}}"
        " --claims {input.claims:q} --causes {input.causes:q} > {log:q} 2>&1 || {{ tail -n 1 {log:q} >&2; exit 1; }}"
