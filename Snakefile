# virtrepro: re-run classic virtualization-for-HPC studies and redraw their figures.
#
#   snakemake --cores all                      # the default (quick) run on the local testbed
#   snakemake --cores all --config scale=paper # the papers' own sizes and repetition counts
#   snakemake -n                               # list what would run
#
# The rules live in workflow/rules/, the shared code in workflow/virtrepro/,
# the configuration in config/config.yaml (schema: workflow/schemas/).

import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))

from snakemake.utils import min_version, validate

from virtrepro.cli import end_if_interrupted, interrupts_exit_130, one_line_errors, stop
from virtrepro.planning.config import ConfigError, read_config_file

min_version("9.0")

# Ctrl-C: the line "interrupted" and exit status 130, not a traceback (virtrepro.cli)
interrupts_exit_130()

# Errors in the configuration stop the run with one line naming the file and line, or the key
# (VIRTREPRO_DEBUG=1: a traceback). Snakemake reads --configfile itself, before this file:
# `python -m virtrepro` checks those first (scripts/reproduce.sh runs the workflow so). Snakemake
# keeps the last of a key given twice in a file without a word: each file is read again here, where
# that is an error (virtrepro.yamlfile).
DEFAULT_CONFIG = str(Path(workflow.basedir) / "config" / "config.yaml")
try:
    for _path in [DEFAULT_CONFIG, *workflow.overwrite_configfiles]:  # the --configfile files
        read_config_file(_path)
except ConfigError as error:
    stop(error)


configfile: DEFAULT_CONFIG



# An error a user can cause in the rules' Python code is one line `error: ...` (virtrepro.cli.one_line_errors):
# here for the files' top-level code; each function, lambda, run: block and hook is wrapped where it is
# written (tests/test_error_path.py finds any that is not).
with one_line_errors():
    include: "workflow/rules/common.smk"
    include: "workflow/rules/images.smk"
    include: "workflow/rules/builds.smk"
    include: "workflow/rules/measure.smk"
    include: "workflow/rules/tables.smk"
    include: "workflow/rules/notebooks.smk"


rule all:
    default_target: True
    input:
        markers,
        built_markers,
        table_outputs(),
        notebook_outputs(),


# Every measurement of the plan, without the tables and notebooks (measure on the testbed, analyse
# later or elsewhere). A target rather than `--omit-from table`: Snakemake applies --omit-from and
# --until to the plan known before its checkpoints (the probes) ran, not to the whole plan.
rule measurements:
    input:
        markers,
        built_markers,


# What must exist before the measurement plan is known in full: the probe of which platforms the
# testbed can run, the guest image and the probes (checkpoints) that decide whether `qemu` is
# qemu-kvm or qemu-tcg and whether a compiled benchmark (NPB) runs.
# scripts/reproduce.sh makes these first, so that the main run's progress counts every job from
# its first line instead of jumping when a checkpoint finishes.
@one_line_errors
def prepare_inputs(wildcards=None):
    """The probe of which platforms the testbed can run, then what those platforms need."""
    available = available_platforms()  # common.smk
    return ([ancient(GUEST_IMAGE)] if GUEST_PLATFORMS & set(available) else []) + (
        [QEMU_PROBE.format(testbed=TESTBED)] if QEMU_AUTO in available else []
    )


rule prepare:
    input:
        PLATFORM_PROBE.format(testbed=TESTBED),
        prepare_inputs,
        build_probes(),


# The orchestrator must be quiet while a benchmark runs. Snakemake's job rate limiter (default
# 100 jobs a second) arms a re-evaluation timer after every scheduling pass, and each timer arms
# the next, so the passes multiply with every finished job (measured: about 84 threads started a
# second and 20 % of a core after 70 minutes). A longer timespan is no way out: the timers are
# threads that Python waits for at exit. This workflow starts a few jobs a minute: without the
# limiter a scheduling pass happens when a job finishes, and at no other time. (onstart runs once
# the scheduler exists, before its first pass; `--max-jobs-per-timespan` cannot turn it off.)
onstart:
    with one_line_errors():
        if getattr(workflow, "scheduler", None) is not None and hasattr(workflow.scheduler, "job_rate_limiter"):
            workflow.scheduler.job_rate_limiter = None


onsuccess:
    with one_line_errors():
        stop_testbed()


onerror:
    with one_line_errors():
        stop_testbed()
        end_if_interrupted()  # a run Ctrl-C ended: status 130
