# Parsing: every raw log of a testbed into one tidy table (Parquet + CSV), and the papers' claims
# checked on it (<testbed>.claims.csv: one verdict per claim, readable without a notebook).

from virtrepro.results import write_table

# virtrepro.claims (scipy) is imported by the claims_table job only, not by every Snakemake start.
REFERENCE = Path(workflow.basedir) / "data" / "reference"


def table_outputs():
    return [f"{DATA}/tables/{TESTBED}.parquet", f"{DATA}/tables/{TESTBED}.csv", f"{DATA}/tables/{TESTBED}.claims.csv"]


rule table:
    input:
        # two functions: the compiled benchmarks' part waits for their builds' probes (checkpoints), the rest does not
        lambda wc: [str(v.marker_path(DATA)) for v in planned_variants(built=False) if v.testbed == wc.testbed],
        lambda wc: [str(v.marker_path(DATA)) for v in planned_variants(built=True) if v.testbed == wc.testbed],
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


# <testbed>.claims.csv also fits the table's <testbed>.csv (testbed "<testbed>.claims")
ruleorder: claims_table > table


rule claims_table:
    input:
        table=DATA + "/tables/{testbed}.parquet",
        claims=str(REFERENCE / "claims.yaml"),
        causes=str(REFERENCE / "faster_than_native.yaml"),
    output:
        DATA + "/tables/{testbed}.claims.csv",
    log:
        "logs/claims/{testbed}.log",
    run:
        import pandas as pd

        from virtrepro.claims import write_claims_table
        from virtrepro.results import require_raw_logs

        require_raw_logs(DATA, wildcards.testbed)  # no verdicts from a table of no runs (one left from before)
        with open(log[0], "w") as handle:
            # a platform the testbed could not run is "not measured" with the probe's reason
            probe = f"{DATA}/raw/{wildcards.testbed}/probes/platforms.json"
            frame = write_claims_table(input.claims, pd.read_parquet(input.table), output[0], causes_path=input.causes,
                                       probe_path=probe)
            print(frame["verdict"].value_counts().to_string(), file=handle)
