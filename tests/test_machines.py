"""A benchmark's platforms are compared on one machine: the measurement and the table refuse a mix.

The host facts below are copied from real sidecars: the reference run's staging logs of
2026-11-24 (an AMD EPYC host) and a run on an Intel Xeon host of the same testbed name.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from conftest import DATA, commit_capture
from virtrepro.rawdata import machines, rawlog
from virtrepro import results

EPYC = {"cpu_model": "AMD EPYC", "cache_sizes": "L1d=32K L1i=32K L2=1024K L3=32768K ", "microcode": "0x1000065",
        "kernel": "6.18.44-fc-v669", "machine": "x86_64", "hostname": "vm", "cores": 2, "loadavg": "1.35 1.55 1.74"}
XEON = {"cpu_model": "Intel(R) Xeon(R) Processor", "cache_sizes": "L1d=48K L1i=64K L2=2048K L3=491520K ",
        "microcode": "0x1", "kernel": "6.18.44-fc-v769", "machine": "x86_64", "hostname": "vm", "cores": 2,
        "loadavg": "0.10 0.20 0.30"}
TCG_GUEST = {"cpu_model": "QEMU TCG CPU version 2.5+", "cache_sizes": "L1d=64K L1i=64K L2=512K L3=16384K ",
             "kernel": "6.1.0-56-cloud-amd64", "machine": "x86_64", "hostname": "qemu-tcg-fca9eb35-0"}
SYSBENCH = "raw/tb/{platform}/sysbench_cpu/threads-1_prime-20000_seconds-10"


def test_the_machine_is_the_hosts_not_the_guests_and_not_its_name_or_load():
    native = {"platform": {"name": "native", "family": "native"}, "host": EPYC}
    guest = {"platform": {"name": "qemu-tcg", "family": "full-vm"}, "host": TCG_GUEST, "testbed_host": EPYC}
    assert machines.identity(native) == machines.identity(guest) == {
        "cpu_model": "AMD EPYC", "cache_sizes": "L1d=32K L1i=32K L2=1024K L3=32768K", "microcode": "0x1000065",
        "kernel": "6.18.44-fc-v669", "machine": "x86_64"}
    renamed = {**EPYC, "hostname": "another", "loadavg": "9 9 9", "cores": 1}
    assert machines.differ(machines.identity({"host": EPYC}), machines.identity({"host": renamed})) == []
    # a guest's sidecar from before testbed_host was recorded names no machine: it conflicts with none
    assert machines.identity({"platform": {"family": "full-vm"}, "host": TCG_GUEST}) is None
    assert machines.differ(None, machines.identity(native)) == []


def test_two_machines_differ_in_the_facts_both_record():
    epyc, xeon = machines.identity({"host": EPYC}), machines.identity({"host": XEON})
    assert machines.differ(epyc, xeon) == ["cpu_model", "cache_sizes", "microcode", "kernel"]
    older = {key: value for key, value in XEON.items() if key not in ("cache_sizes", "microcode")}  # older sidecars
    assert machines.differ(machines.identity({"host": older}), xeon) == []
    updated = {**XEON, "kernel": "6.18.44-fc-v770"}  # the same CPU after a kernel update is another machine
    assert machines.differ(xeon, machines.identity({"host": updated})) == ["kernel"]
    assert machines.describe(epyc) == "AMD EPYC (L2=1024K L3=32768K), microcode 0x1000065, kernel 6.18.44-fc-v669"
    assert machines.mixed([epyc, None, dict(epyc)]) == [] and machines.mixed([epyc, xeon, epyc]) == [epyc, xeon]


def _place(data: Path, platform: str, rep: int, host: dict, guest: bool = False) -> Path:
    directory = data / SYSBENCH.format(platform=platform)
    directory.mkdir(parents=True, exist_ok=True)
    family = "full-vm" if guest else "container"
    sidecar = {"command": "captured", "testbed": "tb",
               "platform": {"name": platform, "family": family}, "benchmark": "sysbench_cpu",
               "variant": directory.name, "parameters": {"threads": "1", "prime": "20000", "seconds": "10"},
               "repetition": rep, **({"host": TCG_GUEST, "testbed_host": host} if guest else {"host": host})}
    return commit_capture(DATA / "sysbench" / "cpu-1thread-10s.log", directory / f"rep-{rep}.log", sidecar)


def test_the_table_refuses_one_benchmark_from_two_machines_and_takes_it_from_one(tmp_path):
    _place(tmp_path, "native", 0, EPYC)
    _place(tmp_path, "native", 1, EPYC)
    results.write_table(tmp_path, "tb", csv=False)  # one machine: built
    assert results.measured_on("tb", tmp_path) == {
        "sysbench_cpu": ["AMD EPYC (L2=1024K L3=32768K), microcode 0x1000065, kernel 6.18.44-fc-v669"]}
    foreign = _place(tmp_path, "qemu-tcg", 0, XEON, guest=True)  # added to a built table: the incremental path
    with pytest.raises(results.MixedMachinesError, match="sysbench_cpu were measured on 2 machines") as error:
        results.write_table(tmp_path, "tb", csv=False)
    assert "AMD EPYC" in str(error.value) and "Intel(R) Xeon(R) Processor" in str(error.value)
    with pytest.raises(results.MixedMachinesError):
        results.write_table(tmp_path, "tb", csv=False, reparse=True)  # and when every log is parsed again
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    for path in (foreign, rawlog.sidecar_path(foreign)):
        shutil.move(path, moved / path.name)
    frame = results.write_table(tmp_path, "tb", csv=False)  # the other machine's log moved out: nothing else was lost
    assert sorted(frame[frame["metric"] == "events_per_second"]["repetition"]) == [0, 1]


def test_a_kept_log_of_a_changed_variant_still_counts_its_machine(tmp_path):
    """A variant with a new log keeps its unchanged logs' rows from the previous table; their
    machine is read from their sidecars, so a mix is seen whichever log came first."""
    _place(tmp_path, "native", 0, XEON)
    results.write_table(tmp_path, "tb", csv=False)
    _place(tmp_path, "native", 1, EPYC)
    with pytest.raises(results.MixedMachinesError):
        results.write_table(tmp_path, "tb", csv=False)


@pytest.mark.integration
def test_the_measurement_refuses_a_benchmark_begun_on_another_machine(tmp_path, monkeypatch):
    """Over the real local testbed: a sysbench_cpu log of another machine (EPYC facts: this test's
    machine is not that one unless its kernel build is v669 too) stops the job before anything
    runs; the same log with this machine's own facts (as a real run recorded them) lets it measure."""
    import yaml

    from conftest import REPO, require_tools
    from virtrepro.planning.config import plan_variants, validate_config
    from virtrepro.measurement.job import MeasurementError, host_facts, measure_variant
    from virtrepro.testbed.hosts import connect
    from virtrepro.testbed.kinds import LocalTestbed

    require_tools("/usr/sbin/sshd", "sysbench")
    monkeypatch.setenv("VIRTREPRO_STATE", str(tmp_path / "state"))
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config.update(testbed="pytest-local", repetitions=1, platforms=["native"], benchmarks=["sysbench_cpu"])
    config["testbeds"]["pytest-local"] = {"kind": "local"}
    config["scales"]["quick"]["sysbench_cpu"].update(threads=[1], seconds=1)
    validate_config(config)
    variant = next(v for v in plan_variants(config))
    data = tmp_path / "data"
    try:
        with connect(LocalTestbed("pytest-local", tmp_path / "state").up()) as connection:
            here = host_facts(connection)
        if not machines.differ(machines.identity({"host": here}), machines.identity({"host": EPYC})):
            pytest.skip("this machine has the EPYC host's facts")
        other = data / "raw" / "pytest-local" / "lxc" / "sysbench_cpu" / "some-variant" / "rep-0.json"
        other.parent.mkdir(parents=True)
        other.write_text(json.dumps({"status": "complete", "platform": {"name": "lxc", "family": "container"},
                                     "host": EPYC}))
        with pytest.raises(MeasurementError, match="measured on another machine") as error:
            measure_variant(variant, config, data)
        assert "AMD EPYC" in str(error.value) and str(other) in str(error.value)
        assert not variant.runs()[0].log_path(data).exists()
        other.write_text(json.dumps({"status": "complete", "platform": {"name": "lxc", "family": "container"},
                                     "host": here}))
        measure_variant(variant, config, data)
        assert rawlog.is_complete(variant.runs()[0].log_path(data))
    finally:
        LocalTestbed("pytest-local", tmp_path / "state").down()


def test_the_facts_script_reads_this_machine_as_its_own_files_say():
    """machines.this_machine runs the sidecars' facts script here; compared with what /proc and
    uname say, read independently."""
    import platform as python_platform

    here = machines.this_machine()
    with open("/proc/cpuinfo") as cpuinfo:
        model = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    assert here["cpu_model"] == model and here["kernel"] == python_platform.release()
    assert here["machine"] == python_platform.machine()
    level3 = Path("/sys/devices/system/cpu/cpu0/cache/index3/size")
    if level3.exists():
        assert f"L3={level3.read_text().strip()}" in here["cache_sizes"]
    assert machines.parse_facts("cores=2\nkernel=6.1\nmem_total_kb=x\n") == {"cores": 2, "kernel": "6.1", "mem_total_kb": "x"}


def test_the_dry_run_names_each_benchmarks_machine_and_what_this_one_may_not_continue(tmp_path):
    from virtrepro.planning import plan

    _place(tmp_path, "native", 0, EPYC)
    _place(tmp_path, "qemu-tcg", 0, EPYC, guest=True)
    config = {"testbed": "tb", "testbeds": {"tb": {"kind": "local"}}}
    xeon = machines.identity({"host": XEON})
    image = {"recipe": "48c4e2faa6cf", "record_sha256": "76c1b12a" + "0" * 56}
    check = plan.machine_check(config, tmp_path, ["sysbench_cpu", "mbw"], here=xeon, image=image)
    epyc = "AMD EPYC (L2=1024K L3=32768K), microcode 0x1000065, kernel 6.18.44-fc-v669"
    assert check == {"measured_on": {epyc: ["sysbench_cpu"]}, "other_machine": {"sysbench_cpu": epyc},
                     "here": machines.describe(xeon), "other_image": {}, "image": "48c4e2faa6cf"}
    text = plan.machine_report(check)
    assert text.splitlines()[0] == f"measured on {epyc}: sysbench_cpu"
    assert "begun on another machine than this one (Intel(R) Xeon(R) Processor" in text and "sysbench_cpu (AMD EPYC" in text
    # the same machine: nothing refused; a remote testbed: this machine is not the host, nothing judged
    assert plan.machine_check(config, tmp_path, ["sysbench_cpu"], here=machines.identity({"host": EPYC}),
                              image=image)["other_machine"] == {}
    remote = {"testbed": "tb", "testbeds": {"tb": {"kind": "ssh"}}}
    assert plan.machine_check(remote, tmp_path, ["sysbench_cpu"], here=xeon, image=image)["other_machine"] == {}
    # the guest's run in another image than this code's: named, as the measurement will refuse it
    guest = rawlog.sidecar_path(tmp_path / SYSBENCH.format(platform="qemu-tcg") / "rep-0.log")
    guest.write_text(json.dumps({**json.loads(guest.read_text()), "image": {"recipe": "0123456789ab", "record_sha256": None}}))
    check = plan.machine_check(config, tmp_path, ["sysbench_cpu"], here=xeon, image=image)
    assert check["other_image"] == {"sysbench_cpu": "0123456789ab"}
    # a finished benchmark's jobs do not run again: nothing of it is refused
    finished = plan.machine_check(config, tmp_path, ["sysbench_cpu"], here=xeon, image=image, pending=set())
    assert finished["other_image"] == {} and finished["other_machine"] == {}
    assert finished["measured_on"] == {epyc: ["sysbench_cpu"]}
    assert plan.machine_report(check).splitlines()[-1].startswith(
        "guests begun in another guest image than this code's (48c4e2faa6cf), refused here")


def test_the_data_s_machines_are_said_in_one_way_wherever_they_are_said():
    pairs = [("mbw", "machine B"), ("sysbench_cpu", "machine A"), ("fio", "machine B"), ("mbw", "machine B")]
    assert machines.in_words(pairs) == ["measured on machine B: fio, mbw", "measured on machine A: sysbench_cpu"]
    assert machines.in_words(pairs[1:2], mark=lambda b: f"`{b}`") == ["measured on machine A: `sysbench_cpu`"]
    assert machines.in_words([]) == []


def test_a_benchmarks_guest_runs_share_one_image_and_a_rebuild_of_the_recipe_is_another(tmp_path, monkeypatch):
    """The image a guest run would use is the current recipe's, as built under the state directory; a
    complete guest run of the same benchmark in another recipe, or in the same recipe built again (its
    image.json differs), stops the job before anything runs. Native runs name no image."""
    import hashlib
    from types import SimpleNamespace

    from virtrepro.guests import image_dir
    from virtrepro.measurement.job import MeasurementError, require_same_image

    monkeypatch.setenv("VIRTREPRO_STATE", str(tmp_path / "state"))
    record = image_dir() / "image.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"packages": {"sysbench": "1.0.20+ds-5"}}\n')
    here = {"recipe": record.parent.name, "record_sha256": hashlib.sha256(record.read_bytes()).hexdigest()}
    data = tmp_path / "data"
    _place(data, "native", 0, XEON)
    sidecar = rawlog.sidecar_path(_place(data, "podman", 0, XEON))
    lxc = SimpleNamespace(platform="lxc", testbed="tb", benchmark="sysbench_cpu")
    native = SimpleNamespace(platform="native", testbed="tb", benchmark="sysbench_cpu")

    def name_image(image):
        sidecar.write_text(json.dumps({**json.loads(sidecar.read_text()), "image": image}))

    for same in (here, {**here, "record_sha256": None}):  # a remote host's build names no record's checksum
        name_image(same)
        require_same_image(lxc, data)
    assert machines.other_images(here, data, "tb", "sysbench_cpu") == []
    for other in ({"recipe": "0123456789ab", "record_sha256": here["record_sha256"]}, {**here, "record_sha256": "f" * 64}):
        name_image(other)
        assert machines.other_images(here, data, "tb", "sysbench_cpu") == [(sidecar, other)]
        with pytest.raises(MeasurementError, match="ran in guest image") as error:
            require_same_image(lxc, data)
        assert str(sidecar) in str(error.value) and other["recipe"] in str(error.value)
        require_same_image(native, data)  # native runs in no image
    name_image("48c4e2faa6cf")  # an older sidecar's image: a name, no record
    require_same_image(lxc, data)


def test_a_finished_variant_run_again_measures_nothing_and_refuses_nothing_one_with_work_left_is_refused(
        tmp_path, monkeypatch):
    """Snakemake runs a finished job again when an input's path changes (a new guest image): its logs are
    complete and its rule has stopped, so it measures nothing, and the image guard must not stop it. The
    same variant with a log missing would measure: it is refused before anything runs."""
    import yaml

    from conftest import REPO
    from virtrepro.planning.config import plan_variants, validate_config
    from virtrepro.guests import image_dir
    from virtrepro.measurement.job import MeasurementError, measure_variant

    monkeypatch.setenv("VIRTREPRO_STATE", str(tmp_path / "state"))
    image_dir().mkdir(parents=True)
    (image_dir() / "image.json").write_text("{}\n")
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config.update(testbed="tb", platforms=["lxc"], benchmarks=["sysbench_cpu"])
    config["testbeds"]["tb"] = {"kind": "local"}
    config["scales"]["quick"]["sysbench_cpu"].update(
        threads=[1], seconds=10, repetitions={"min": 2, "max": 3, "rel_half_width": 0.5})
    validate_config(config)
    (variant,) = plan_variants(config)
    assert variant.rule is not None and variant.variant.key == "threads-1_prime-20000_seconds-10"
    data = tmp_path / "data"
    logs = [_place(data, "lxc", rep, XEON) for rep in (0, 1)]
    for log in logs:  # measured in the image of another recipe
        sidecar = rawlog.sidecar_path(log)
        sidecar.write_text(json.dumps({**json.loads(sidecar.read_text()), "image": {"recipe": "0123456789ab",
                                                                                     "record_sha256": None}}))
    marker = measure_variant(variant, config, data)  # two identical runs: width 0, the rule stops
    assert marker.exists() and json.loads(marker.read_text())["platforms"]["lxc"]["repetition_rule"]["stop_reason"]
    rawlog.sidecar_path(logs[1]).unlink()
    logs[1].unlink()
    with pytest.raises(MeasurementError, match="ran in guest image 0123456789ab"):
        measure_variant(variant, config, data)
    assert not logs[1].exists()
