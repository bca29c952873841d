# Configuration, the run plan, and helpers shared by the rules.

import json
import os

from virtrepro.config import ConfigError, QEMU_AUTO, plan, resolve_platforms, validate_config
from virtrepro.guests import image_dir, stop_guests
from virtrepro.guests.image import IMAGE_FILES
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
IMAGE_DIR = str(image_dir())
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


def planned_runs():
    return without_skipped_npb(plan(config, concrete_platforms()))  # npb.smk


def raw_logs(wildcards=None):
    return [str(run.log_path(DATA)) for run in planned_runs()]


def stop_testbed():
    stop_guests(TESTBED)
    testbed = testbed_from_config(TESTBED, config)
    if isinstance(testbed, LocalTestbed):
        testbed.down()
