"""Configuration validation names the bad key; the plan follows the configuration."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import REPO
from virtrepro.planning.config import ConfigError, plan, resolve_platforms, validate_config


@pytest.fixture
def config():
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def test_default_config_is_valid(config):
    assert validate_config(config) is config
    assert config["testbed"] == "local" and config["scale"] == "quick"


@pytest.mark.parametrize(
    "change, key",
    [
        (lambda c: c.update(scael="quick"), "<top level>"),
        (lambda c: c.update(scale="huge"), "scale"),
        (lambda c: c["scales"]["quick"]["iozone"].update(repetitions="five"), "scales.quick.iozone.repetitions"),
        (lambda c: c["scales"]["quick"]["iozone"].update(max_file_size="64MB"), "scales.quick.iozone.max_file_size"),
        (lambda c: c["scales"]["quick"]["sysbench_cpu"].update(threads=[0]), "scales.quick.sysbench_cpu.threads.0"),
        (lambda c: c.update(platforms=["vmware"]), "platforms.0"),
        (lambda c: c.update(testbed="nowhere"), "testbed"),
        (lambda c: c["testbeds"].update(far={"kind": "ssh", "hosts": [{"hostname": "h", "port": "22"}], "known_hosts": "k"}), "testbeds.far"),
    ],
)
def test_bad_config_names_the_key(config, change, key):
    bad = copy.deepcopy(config)
    change(bad)
    with pytest.raises(ConfigError) as error:
        validate_config(bad)
    assert f"config key '{key}" in str(error.value)


def test_unknown_key_is_named(config):
    bad = copy.deepcopy(config)
    bad["scales"]["quick"]["iozone"]["recordsize"] = "1m"
    with pytest.raises(ConfigError, match="'recordsize' was unexpected"):
        validate_config(bad)


def test_plan_counts_runs_and_repetitions(config):
    config["platforms"] = ["native"]
    config["benchmarks"] = ["sysbench_cpu", "iozone", "iozone_disk", "lifecycle"]  # lifecycle: none on native
    runs = plan(config)
    quick = config["scales"]["quick"]
    expected = (
        len(quick["sysbench_cpu"]["threads"]) * quick["sysbench_cpu"]["repetitions"]
        + quick["iozone"]["repetitions"]
        + quick["iozone_disk"]["repetitions"]  # one variant on native: its own file system
    )
    assert len(runs) == expected
    assert len({r.log_path("data") for r in runs}) == len(runs)
    config["repetitions"] = 2
    assert len(plan(config)) == (len(quick["sysbench_cpu"]["threads"]) + 1 + 1) * 2


def test_vm_disk_variants_cover_every_format_and_cache_mode(config):
    runs = [r for r in plan(config, ["qemu-tcg"]) if r.benchmark == "iozone_disk"]
    quick = config["scales"]["quick"]["iozone_disk"]
    combos = {(r.variant.param_dict["disk"], r.variant.param_dict["cache"]) for r in runs}
    assert combos == {(d, c) for d in quick["disk_formats"] for c in quick["cache_modes"]}
    assert len(runs) == len(combos) * quick["repetitions"]


def test_scales_never_share_a_log_directory(config):
    config["platforms"] = ["native"]
    quick = {r.log_path("data").parent for r in plan(config)}
    config["scale"] = "paper"
    paper = {r.log_path("data").parent for r in plan(config)}
    assert quick.isdisjoint(paper)


def test_log_paths_follow_the_documented_layout(config):
    run = plan(config, ["native"])[0]
    path = run.log_path("data")
    assert path.parts[:4] == ("data", "raw", "local", "native")
    assert path.parts[4] == run.benchmark and path.name == "rep-0.log"


def test_qemu_auto_is_resolved_by_the_probe_result(config):
    assert config["platforms"] == ["native", "lxc", "podman", "qemu"]
    with pytest.raises(ConfigError, match="probe"):
        plan(config)
    assert resolve_platforms(config["platforms"], "qemu-tcg") == ["native", "lxc", "podman", "qemu-tcg"]
    assert resolve_platforms(["qemu", "qemu-kvm"], "qemu-kvm") == ["qemu-kvm"]
    platforms = {r.platform for r in plan(config, resolve_platforms(config["platforms"], "qemu-kvm"))}
    assert platforms == {"native", "lxc", "podman", "qemu-kvm"}


def test_guest_spec_is_validated(config):
    bad = copy.deepcopy(config)
    bad["guest"]["cache"] = "unsafe"
    with pytest.raises(ConfigError, match="config key 'guest.cache'"):
        validate_config(bad)


@pytest.mark.parametrize("scale", ["quick", "reference", "paper"])
def test_a_run_larger_than_its_guest_is_refused_before_anything_runs(config, scale):
    """mbw holds two arrays of array_mib: at 1024 MiB in a 2 GiB container the OOM killer stopped it
    part way. 1536 MiB (two arrays of 768) is the most 75 % of 2048 MiB leaves to one run."""
    config["scale"], config["benchmarks"] = scale, ["mbw"]
    config["scales"][scale]["mbw"]["array_mib"] = 768
    validate_config(config)
    config["scales"][scale]["mbw"]["array_mib"] = 769
    with pytest.raises(ConfigError, match=rf"'scales.{scale}.mbw': variant \S+_mib-769 holds 1538 MiB .* 2048 MiB"):
        validate_config(config)
    config["guest"]["memory_mb"] = 4096  # a larger guest takes it
    validate_config(config)
    config["platforms"], config["guest"]["memory_mb"] = ["native"], 1024  # the host has no guest size
    validate_config(config)


def test_every_guest_instance_used_by_the_harness_has_a_private_address():
    from virtrepro.guests.network import address
    from virtrepro.platforms.guest import LIFECYCLE_INDEX

    for platform in ("lxc", "podman", "qemu-kvm", "qemu-tcg", "native"):
        addresses = {address(platform, index, "local") for index in (0, 1, LIFECYCLE_INDEX)}
        assert len(addresses) == 3
    assert address("lxc", LIFECYCLE_INDEX, "local") != address("podman", 0, "local")


def test_private_addresses_depend_on_the_testbed_and_stay_the_same():
    """Two testbeds running one platform on one machine at once never share an address, MAC or device name."""
    from virtrepro.guests.network import address, bridge, bridge_address, device_name, mac, testbed_octet

    # stable: the same testbed always gets the same addresses (a hash of its name, not of the process)
    assert address("lxc", 0, "local") == "10.251.121.10"
    assert address("qemu-tcg", 1, "reference-vm") == "10.251.178.51"
    assert mac(address("qemu-tcg", 1, "reference-vm")) == "52:54:00:fb:b2:33"
    names = ["local", "reference-vm", "pytest-remote", "mycluster", "a", "b"]
    assert len({testbed_octet(name) for name in names}) == len(names)
    assert all(1 <= testbed_octet(name) <= 254 for name in names)  # 10.251.0.1 is the bridge's own
    assert address("lxc", 0, "local") != address("lxc", 0, "mycluster")
    # a bridge each: one testbed removing its idle bridge never disturbs another's instances
    assert bridge("local") == "vrbr-79" and bridge_address("local") == "10.251.121.1/24"
    assert bridge("local") != bridge("mycluster")
    assert device_name("vrn-", "local", "podman-0123abcd-0") != device_name("vrn-", "mycluster", "podman-0123abcd-0")
    assert all(len(device_name(p, "local", "qemu-tcg-0123abcd-19")) <= 15 for p in ("vr-", "vp-", "vrt-", "vh-", "vrn-"))


def test_vms_larger_than_the_host_are_refused_where_the_kernel_forbids_overcommit(monkeypatch):
    from virtrepro.benchmarks import thesis

    memory = thesis.MemoryScaling()
    params = {**yaml.safe_load((REPO / "config" / "config.yaml").read_text())["scales"]["quick"]["memory_scaling"],
              "fractions": [0.5, 1.25], "reserve_mb": 0}
    assert [v.param_dict["fraction"] for v in memory.variants(params, "qemu-tcg")] == [0.5, 1.25]
    monkeypatch.setattr(thesis, "overcommit_policy", lambda: 2)
    assert [v.param_dict["fraction"] for v in memory.variants(params, "qemu-tcg")] == [0.5]
    (key, reason), = memory.skipped(params, "qemu-tcg")
    assert key.startswith("fraction-1.25") and "vm.overcommit_memory=2" in reason
    # a container's memory limit above the host's is only a limit: still planned
    assert [v.param_dict["fraction"] for v in memory.variants(params, "lxc")] == [0.5, 1.25]


def test_repetitions_split_into_two_parts_measured_abba():
    from virtrepro.planning.config import VariantPlan, parts_for, run_sequence
    from virtrepro.benchmarks import Variant

    variant = Variant("sysbench_cpu", "threads-1", (("threads", 1),))
    halves = [list(VariantPlan("tb", "native", variant, 5, part, parts_for(5)).repetition_numbers()) for part in (1, 2)]
    assert halves == [[0, 1, 2], [3, 4]]
    assert parts_for(1) == 1 and list(VariantPlan("tb", "native", variant, 1).repetition_numbers()) == [0]
    # a part needs two repetitions for the drift between parts to have an interval
    assert [parts_for(n) for n in (2, 3, 4, 30)] == [1, 1, 2, 2]
    assert run_sequence(["a", "b", "c"]) == [("a", 1), ("b", 1), ("c", 1), ("c", 2), ("b", 2), ("a", 2)]
    plan = VariantPlan("tb", "native", variant, 5, 2, 2)
    assert plan.marker_path("d").name == f"{variant.key}.reps-5.part-2of2.json"


def test_jobs_run_one_benchmark_at_a_time_abba_within_it():
    """The measurement jobs' priorities (the highest runs first) give every benchmark's platforms
    A B C C B A before the next benchmark begins, a resolved qemu-* in the place of ``qemu``."""
    from virtrepro.planning.config import BENCHMARK_BLOCK, run_priority

    config = {"benchmarks": ["sysbench_cpu", "mbw"], "platforms": ["native", "lxc", "qemu"]}
    jobs = [(b, p, part) for b in ("mbw", "sysbench_cpu") for p in ("qemu-tcg", "native", "lxc") for part in (2, 1)]
    ordered = sorted(jobs, key=lambda job: -run_priority(config, *job))
    assert ordered == [("sysbench_cpu", "native", 1), ("sysbench_cpu", "lxc", 1), ("sysbench_cpu", "qemu-tcg", 1),
                       ("sysbench_cpu", "qemu-tcg", 2), ("sysbench_cpu", "lxc", 2), ("sysbench_cpu", "native", 2),
                       ("mbw", "native", 1), ("mbw", "lxc", 1), ("mbw", "qemu-tcg", 1),
                       ("mbw", "qemu-tcg", 2), ("mbw", "lxc", 2), ("mbw", "native", 2)]
    # the workflow adds under 1000 within a (platform, part): never past the next slot or benchmark
    priorities = sorted(run_priority(config, *job) for job in jobs)
    assert all(b - a >= 1000 for a, b in zip(priorities, priorities[1:]))
    assert run_priority(config, "mbw", "native", 1) + 999 < BENCHMARK_BLOCK * 2 <= run_priority(config, "sysbench_cpu", "native", 2)
