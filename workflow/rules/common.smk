# Configuration, the run plan, and helpers shared by the rules.

import functools
import json
import os
from pathlib import Path

from virtrepro import datalayout
from virtrepro.testbed import placement
from virtrepro.platforms import catalog as platform_catalog
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.errors import ProbeRecordError, read_probe_record
from virtrepro.planning.config import ConfigError, QEMU_AUTO, check_output_directory, plan_rounds, resolve_platforms, validate_config, write_schema
from virtrepro.guests import image_dir
from virtrepro.guests.image import IMAGE_FILES
from virtrepro.testbed.kinds import RemoteTestbed, testbed_from_config
from virtrepro.testbed.hosts import default_state_dir

try:
    validate_config(config)
except ConfigError as error:
    stop(error)  # Snakefile
# fills in defaults of optional keys (the schema as the declarations complete it: virtrepro.planning.config.schema)
validate(config, str(write_schema(Path(".snakemake") / "virtrepro").resolve()))

# before Snakemake looks inside them (a file there would end in its traceback)
for _key in ("data_dir", "figures_dir"):
    check_output_directory(_key, config[_key])

TESTBED = config["testbed"]
DATA = config["data_dir"].rstrip("/")
FIGURES_DIR = config["figures_dir"].rstrip("/")
IMAGE_DIR = str(image_dir())
# a remote (kind: ssh) testbed's guests run on its hosts: the image is built there (images.smk)
REMOTE_TESTBED = isinstance(testbed_from_config(TESTBED, config), RemoteTestbed)
# what guest platforms need before their first start: the local image, or the remote hosts
# prepared (tools installed, the image of the same recipe built there; a record kept here)
GUEST_IMAGE = (
    str(default_state_dir() / "testbeds" / TESTBED / f"hosts-prepared-{os.path.basename(IMAGE_DIR)}.json")
    if REMOTE_TESTBED
    else os.path.join(IMAGE_DIR, "image.json")
)
GUEST_PLATFORMS = {name for name in platform_catalog.config_names() if platform_catalog.runs_in_guest(name)}

# One measurement job at a time on each of the testbed's hosts (virtrepro.testbed.placement): a job claims
# its host's resource; measurements on different hosts run at the same time.
TESTBED_HOSTS = testbed_from_config(TESTBED, config).host_names()
for _index in range(len(TESTBED_HOSTS)):
    if placement.resource_name(_index) not in workflow.global_resources:
        workflow.register_resource(placement.resource_name(_index), 1)
if "measurement_slots" not in workflow.global_resources:  # at most one measurement a host
    workflow.register_resource("measurement_slots", len(TESTBED_HOSTS))

# One measurement job per benchmark variant, on all its platforms in rounds; its output is the
# variant's rounds marker (raw/<testbed>/rounds/<benchmark>/<variant>.reps-<label>.json), written
# once the rounds have stopped (reps: the platforms' counts N, or repetition rules' labels,
# 5to30-w0.02-c0.95, or 6to30-w0.03-c0.95-sr-m0.05 for one that serves the verdict, each once,
# joined by +: VariantRounds.reps_label, virtrepro.planning.adaptive).
# (every data path from virtrepro.datalayout, the one module that spells the layout)
VARIANT_DIR = datalayout.variant_dir_pattern(DATA)
MARKER_PATTERN = datalayout.marker_pattern(DATA)
QEMU_PROBE = datalayout.probe_pattern(DATA, datalayout.QEMU_PROBE)
# which configured platforms the testbed's hosts can run (virtrepro.testbed.availability; a checkpoint)
PLATFORM_PROBE = datalayout.probe_pattern(DATA, datalayout.PLATFORM_PROBE)


wildcard_constraints:
    testbed=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    platform=r"[a-z0-9-]+",
    benchmark=r"[a-z0-9_]+",
    variant=r"[^/]+",
    # counts or rules, joined by + (VariantRounds.reps_label)
    reps=r"(\d+|\d+to\d+-w[0-9.e-]+-c[0-9.]+(-sr(-m[0-9.e-]+)?)?)(\+(\d+|\d+to\d+-w[0-9.e-]+-c[0-9.]+(-sr(-m[0-9.e-]+)?)?))*",
    paper=r"[a-z]+[0-9]{4}",


@one_line_errors
def probe_record(path, key):
    """A probe's record, or the run stops with one line naming the file (errors.read_probe_record)."""
    try:
        return read_probe_record(path, key)
    except ProbeRecordError as error:
        stop(error)  # Snakefile


_UNAVAILABLE_SAID = []


@one_line_errors
def available_platforms():
    """The configured platforms that every host of the testbed can run, as the platform probe (a
    checkpoint) found; the others are said once, with the reason, and left out of the plan."""
    from virtrepro.testbed.availability import unavailable

    if workflow.dryrun and not os.path.exists(PLATFORM_PROBE.format(testbed=TESTBED)):
        return list(config["platforms"])  # a dry run before the probe: planned as if all were available
    path = checkpoints.platform_probe.get(testbed=TESTBED).output[0]
    record = probe_record(path, "platforms")
    unprobed = [name for name in config["platforms"] if name not in record["platforms"]]
    if unprobed:
        stop(f"{path}: the platform probe did not ask about {', '.join(unprobed)} (a platform added since it ran); "
             "delete it to probe again")
    left_out = unavailable(record)
    if left_out and not _UNAVAILABLE_SAID:
        _UNAVAILABLE_SAID.append(True)
        for name, reason in left_out.items():
            print(f"not measured on testbed {TESTBED}: {name} is unavailable ({reason})", file=sys.stderr)
    return [name for name in config["platforms"] if name not in left_out]


@one_line_errors
def concrete_platforms():
    """The configured platforms the testbed can run (the platform probe), with `qemu` resolved by
    the KVM boot probe (checkpoints)."""
    available = available_platforms()
    qemu = None
    if QEMU_AUTO in available:
        qemu = probe_record(checkpoints.qemu_accel.get(testbed=TESTBED).output[0], "platform")["platform"]
    return resolve_platforms(available, qemu)


@one_line_errors
@functools.lru_cache(maxsize=None)
def rounds_plan(platforms):
    """The measurement jobs (config.plan_rounds) on these concrete platforms, planned once."""
    return plan_rounds(config, list(platforms))


@one_line_errors
def planned_variants(built=None):
    """The measurement jobs (each a variant on its platforms, in rounds). built=False: those of
    benchmarks that need no source build, known without a probe; built=True: those that need one,
    once its probe (a checkpoint, builds.smk) has said the source is available; None: all that will
    run. Kept apart so that a dry run lists every other measurement before a build's probe has run."""
    variants = rounds_plan(tuple(concrete_platforms()))
    if built is False:
        return [v for v in variants if needs_build(v.benchmark) is None]  # builds.smk
    if built is True:
        variants = [v for v in variants if needs_build(v.benchmark) is not None]
        return without_unavailable_builds(variants) if variants else []
    return without_unavailable_builds(variants)


@one_line_errors
def markers(wildcards=None):
    print_estimate()
    return [str(v.marker_path(DATA)) for v in planned_variants(built=False)]


_ESTIMATE_PRINTED = []


@one_line_errors
def print_estimate():
    """A dry run (-n) says once what the planned measurements will cost, from earlier runs' sidecars,
    and which machine the data's runs name (virtrepro.planning.plan; `python -m virtrepro.measurement.estimate --estimate`
    prints the same). Known only once the
    DAG is built: at parse time Snakemake does not yet say whether it is a dry run."""
    if workflow.dryrun and not _ESTIMATE_PRINTED:
        from virtrepro.measurement.provenance import current_image
        from virtrepro.planning.plan import summary

        _ESTIMATE_PRINTED.append(True)
        print(summary(config, DATA, current_image()), file=sys.stderr)


@one_line_errors
def built_markers(wildcards=None):
    """The markers of the compiled benchmarks' variants (after their builds' probes)."""
    return [str(v.marker_path(DATA)) for v in planned_variants(built=True)]


@one_line_errors
def variant_directory(platform):
    """The variant's directory of raw logs, as an input of its measurement job: deleting a log
    changes the directory's modification time, which makes it newer than the marker, so
    Snakemake re-runs the job (which measures only the missing repetitions). A real run creates
    the directory first, so that the job's set of inputs stays the same from run to run; a dry
    run changes nothing (a variant without a directory has no marker either, so it is planned), nor
    does anything else that builds the plan without executing it (`--report`, `--summary`: no
    executor), which would leave empty directories of another scale's variants in the data."""

    @one_line_errors
    def directory(wildcards):
        path = VARIANT_DIR.format(platform=platform, **wildcards)
        if not os.path.isdir(path):
            if workflow.dryrun or workflow.executor_plugin is None:
                return []
            os.makedirs(path, exist_ok=True)
        return [path]

    return directory


@one_line_errors
def stop_testbed():
    """Tear down the testbed's guests (on a remote testbed: on its hosts, and their keepers) and its sshd."""
    testbed = testbed_from_config(TESTBED, config)
    testbed.stop_guests()
    testbed.down()
