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


def _job(caps, counts=None, rules=None):
    """A VariantRounds of the platforms of ``caps`` with fixed counts (or rules of those caps)."""
    from virtrepro.planning.adaptive import RepetitionRule
    from virtrepro.benchmarks import Variant
    from virtrepro.planning.config import VariantPlan, VariantRounds

    variant = Variant("sysbench_cpu", "threads-1", (("threads", 1),))
    plans = []
    for name, cap in caps.items():
        rule = RepetitionRule(2, cap, 0.02, 0.95) if rules else None
        plans.append(VariantPlan("tb", name, variant, (counts or {}).get(name, 2 if rules else cap), rule))
    return VariantRounds(tuple(plans))


def _walk(job, complete=frozenset(), stop_at=None):
    """The runs rounds() yields, as (round, position, order, platform), each complete once yielded;
    ``stop_at``: platform -> the n at which its rule stops."""
    from virtrepro.planning.config import rounds

    done = set(complete)
    asked = []

    def stops(plan, n):
        asked.append((plan.platform, n))
        if plan.rule is None:
            return n >= plan.repetitions
        return n >= plan.repetitions and n >= (stop_at or {}).get(plan.platform, plan.cap)

    out = []
    for slot in rounds(job, lambda plan, rep: (plan.platform, rep) in done, stops):
        out.append((slot.round, slot.position, "".join(slot.order), slot.plan.platform))
        done.add((slot.plan.platform, slot.round))
    return out, asked


def test_rounds_alternate_the_order_and_give_every_platform_a_turn():
    """Round r: repetition r of each platform back to back, as given in even rounds, reversed in odd ones."""
    from virtrepro.planning.config import round_order

    assert [round_order(["a", "b", "c"], r) for r in range(3)] == [["a", "b", "c"], ["c", "b", "a"], ["a", "b", "c"]]
    runs, _ = _walk(_job({"a": 3, "b": 3, "c": 3}))
    assert runs == [(0, 0, "abc", "a"), (0, 1, "abc", "b"), (0, 2, "abc", "c"),
                    (1, 0, "cba", "c"), (1, 1, "cba", "b"), (1, 2, "cba", "a"),
                    (2, 0, "abc", "a"), (2, 1, "abc", "b"), (2, 2, "abc", "c")]


def test_a_resumed_job_measures_only_the_missing_repetitions_in_round_order():
    """Complete logs are never measured again; the positions stay those of the whole round."""
    runs, _ = _walk(_job({"a": 3, "b": 3}), complete={("a", 0), ("b", 0), ("b", 1), ("a", 2)})
    assert runs == [(1, 1, "ba", "a"), (2, 1, "ab", "b")]
    assert _walk(_job({"a": 2, "b": 2}), complete={(p, r) for p in "ab" for r in range(2)})[0] == []


def test_rounds_go_on_until_the_rule_stops_for_every_platform_or_the_cap():
    """With a rule, each platform is measured in every round (until its own cap) while any platform's
    rule goes on; the rounds end after the first round at which every platform stops."""
    # a stops at 3 repetitions, b at 5: five rounds of both (a's rounds 3 and 4 pair b's)
    runs, asked = _walk(_job({"a": 30, "b": 30}, rules=True), stop_at={"a": 3, "b": 5})
    assert [(r, p) for r, _, _, p in runs] == [(r, p) for r in range(5) for p in ("ab" if r % 2 == 0 else "ba")]
    assert ("a", 5) in asked and ("b", 5) in asked and not any(n > 5 for _, n in asked)  # each asked every round
    # a translated platform's lower cap: it drops out of the rounds at its cap, the other goes on
    runs, _ = _walk(_job({"a": 30, "t": 3}, rules=True), stop_at={"a": 4})
    assert [(r, o, p) for r, _, o, p in runs][-3:] == [(2, "at", "a"), (2, "at", "t"), (3, "a", "a")]
    # the cap ends the rounds whatever the rule says
    runs, _ = _walk(_job({"a": 4, "b": 4}, rules=True), stop_at={"a": 99, "b": 99})
    assert max(r for r, *_ in runs) == 3
    # fixed counts: the planned number of rounds
    assert len(_walk(_job({"a": 2, "b": 2}))[0]) == 4


def test_jobs_run_one_benchmark_at_a_time():
    """The measurement jobs' priorities (the highest runs first) finish a benchmark (all its variants on
    all platforms, in rounds) before the next begins; the workflow adds under 1000 within one."""
    from virtrepro.planning.config import run_priority

    config = {"benchmarks": ["sysbench_cpu", "mbw"], "platforms": ["native", "lxc", "qemu"]}
    assert run_priority(config, "sysbench_cpu") - 1000 >= run_priority(config, "mbw") > 0
    assert run_priority(config, "mbw") % 1000 == 0


def test_one_job_per_variant_on_all_its_platforms():
    """plan_rounds: each variant once, with every platform that plans it, in the given order; the
    marker is one per variant, platform-neutral; the plan entry round-trips."""
    from pathlib import Path

    from virtrepro.planning.config import VariantRounds, load_config, plan_rounds, plan_variants

    config = load_config(REPO / "config" / "config.yaml")
    platforms = ["native", "lxc", "qemu-tcg"]
    jobs = plan_rounds(config, platforms)
    assert len({(j.benchmark, j.variant.key) for j in jobs}) == len(jobs)
    assert sum(len(j.plans) for j in jobs) == len(plan_variants(config, platforms))
    assert list(dict.fromkeys(j.benchmark for j in jobs)) == [b for b in config["benchmarks"]
                                                              if any(j.benchmark == b for j in jobs)]
    job = next(j for j in jobs if len(j.plans) == 3)
    assert job.platforms == platforms
    assert job.marker_path("d") == (Path("d/raw") / config["testbed"] / "rounds" / job.benchmark
                                    / f"{job.variant.key}.reps-{job.reps_label}.json")
    assert VariantRounds.from_json(job.to_json()) == job
