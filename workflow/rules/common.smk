# Configuration, the run plan, and helpers shared by the rules.

import os

from virtrepro.config import ConfigError, plan, validate_config
from virtrepro.testbed import LocalTestbed, testbed_from_config

try:
    validate_config(config)
except ConfigError as error:
    raise WorkflowError(f"invalid configuration: {error}") from None
# fills in defaults of optional keys
validate(config, "../schemas/config.schema.yaml")

TESTBED = config["testbed"]
DATA = config["data_dir"].rstrip("/")
FIGURES_DIR = config["figures_dir"].rstrip("/")
RUNS = {(r.platform, r.benchmark, r.variant.key, r.repetition): r for r in plan(config)}

# One measurement job at a time on a testbed's hosts: jobs claim this resource.
if "measurement_slots" not in workflow.global_resources:
    workflow.register_resource("measurement_slots", 1)

RAW_PATTERN = DATA + "/raw/{testbed}/{platform}/{benchmark}/{variant}/rep-{rep}"


wildcard_constraints:
    testbed=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    platform=r"[a-z0-9-]+",
    benchmark=r"[a-z0-9_]+",
    variant=r"[^/]+",
    rep=r"\d+",
    paper=r"[a-z]+[0-9]{4}",


def raw_logs():
    return [str(run.log_path(DATA)) for run in RUNS.values()]


def run_for(wildcards):
    key = (wildcards.platform, wildcards.benchmark, wildcards.variant, int(wildcards.rep))
    if wildcards.testbed != TESTBED or key not in RUNS:
        raise WorkflowError(f"no run of the configuration produces {wildcards}")
    return RUNS[key]


def stop_testbed():
    testbed = testbed_from_config(TESTBED, config)
    if isinstance(testbed, LocalTestbed):
        testbed.down()
