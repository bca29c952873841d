# Parsing: every raw log of a testbed into one tidy table (Parquet + CSV).

from virtrepro.results import write_table


def table_outputs():
    return [f"{DATA}/tables/{TESTBED}.parquet", f"{DATA}/tables/{TESTBED}.csv"]


rule table:
    input:
        # two functions: the NPB part waits for the NPB probe (a checkpoint), the rest does not
        lambda wc: [str(v.marker_path(DATA)) for v in planned_variants(npb=False) if v.testbed == wc.testbed],
        lambda wc: [str(v.marker_path(DATA)) for v in planned_variants(npb=True) if v.testbed == wc.testbed],
    output:
        parquet=DATA + "/tables/{testbed}.parquet",
        csv=DATA + "/tables/{testbed}.csv",
        manifest=DATA + "/tables/{testbed}.manifest.json",
    log:
        "logs/table/{testbed}.log",
    run:
        with open(log[0], "w") as handle:
            frame = write_table(DATA, wildcards.testbed)
            print(f"{len(frame)} records from {frame['source_log'].nunique()} logs", file=handle)
