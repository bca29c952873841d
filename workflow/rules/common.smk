# Configuration, the run plan, and helpers shared by the rules.

import json
import os

from virtrepro.config import ConfigError, QEMU_AUTO, plan, resolve_platforms, validate_config
from virtrepro.guests import image_dir
from virtrepro.guests.image import IMAGE_FILES
from virtrepro.testbed import RemoteTestbed, default_state_dir, testbed_from_config

try:
    validate_config(config)
except ConfigError as error:
    raise WorkflowError(f"invalid configuration: {error}") from None
# fills in defaults of optional keys
validate(config, "../schemas/config.schema.yaml")

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
GUEST_PLATFORMS = {"lxc", "podman", "qemu", "qemu-kvm", "qemu-tcg"}

# One measurement job at a time on a testbed's hosts: jobs claim this resource.
if "measurement_slots" not in workflow.global_resources:
    workflow.register_resource("measurement_slots", 1)

RAW_PATTERN = DATA + "/raw/{testbed}/{platform}/{benchmark}/{variant}/rep-{rep}"
QEMU_PROBE = DATA + "/raw/{testbed}/probes/qemu-accel.json"


wildcard_constraints:
    testbed=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    platform=r"[a-z0-9-]+",
    benchmark=r"[a-z0-9_]+",
    variant=r"[^/]+",
    rep=r"\d+",
    paper=r"[a-z]+[0-9]{4}",


def concrete_platforms():
    """The configured platforms with `qemu` resolved by the KVM boot probe (a checkpoint)."""
    qemu = None
    if QEMU_AUTO in config["platforms"]:
        with open(checkpoints.qemu_accel.get(testbed=TESTBED).output[0]) as handle:
            qemu = json.load(handle)["platform"]
    return resolve_platforms(config["platforms"], qemu)


def planned_runs(npb=None):
    """The configured runs. npb=False: all but NPB's, known without the NPB probe; npb=True: NPB's
    alone, once the probe (a checkpoint) has said NPB is available; None: all that will run.
    Kept apart so that a dry run lists every other measurement before the probe has run."""
    runs = plan(config, concrete_platforms())
    if npb is False:
        return [run for run in runs if run.benchmark not in NPB.BENCHMARK_FLAVOUR]
    if npb is True:
        runs = [run for run in runs if run.benchmark in NPB.BENCHMARK_FLAVOUR]
        return runs if runs and npb_available() else []  # npb.smk
    return without_skipped_npb(runs)  # npb.smk


def raw_logs(wildcards=None):
    return [str(run.log_path(DATA)) for run in planned_runs(npb=False)]


def npb_raw_logs(wildcards=None):
    return [str(run.log_path(DATA)) for run in planned_runs(npb=True)]


def stop_testbed():
    """Tear down the testbed's guests (on a remote testbed: on its hosts, and their keepers) and its sshd."""
    testbed = testbed_from_config(TESTBED, config)
    testbed.stop_guests()
    testbed.down()
