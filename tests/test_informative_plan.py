"""The reference run's plan: QEMU TCG only for benchmarks it can inform (`informative_only`, the
platforms' `informs_nothing_on`), a lower cap for variants no claim selects (`max_unclaimed`), the
memory a job holds with every platform's guests up (refused when it would not fit), and the
estimate's guess for a platform with no runs yet (charliecloud)."""

from __future__ import annotations

import pytest

from virtrepro.benchmarks import BENCHMARKS
from virtrepro.planning.adaptive import RepetitionRule, Target
from virtrepro.planning.config import ConfigError, config_with_files, left_out, left_out_lines, plan_rounds
from virtrepro.planning.memory import check_memory, job_memory_mib
from virtrepro.planning.plan import Durations, estimate, report

REFERENCE_PLATFORMS = ["native", "lxc", "podman", "charliecloud", "qemu-tcg"]
CPU_HPC = ["npb_serial", "npb_omp", "npb_mpi", "hpcc", "sysbench_cpu", "stress_ng", "cpu_scaling", "openssl_speed"]
INFORMED = ["netperf", "iperf3", "fio", "iozone", "iozone_disk", "bonnie", "sysbench_fileio", "dd", "ioping",
            "lifecycle", "isolation", "memory_scaling", "mbw", "sysbench_memory", "lmbench", "pgbench", "nginx_wrk",
            "rabbitmq", "pyperformance"]


def _config(scale, **more):
    return config_with_files([], {"testbed": "reference-vm", "scale": scale, "platforms": REFERENCE_PLATFORMS,
                                  "notebooks": [], **more})


def _platforms_by_benchmark(config, host_mib=10**6):
    found: dict[str, set] = {}
    for job in plan_rounds(config, REFERENCE_PLATFORMS, host_mib=host_mib):
        found.setdefault(job.benchmark, set()).update(job.platforms)
    return found


def test_the_reference_plan_has_no_tcg_for_cpu_and_hpc_benchmarks_and_has_it_for_the_rest():
    config = _config("reference")
    assert config["informative_only"] == ["quick", "reference", "paper"]
    found = _platforms_by_benchmark(config)
    for name in CPU_HPC:  # hand-listed: the benchmarks declared with subsystem cpu or hpc
        assert BENCHMARKS[name].metric_declaration[0] in ("cpu", "hpc")
        assert "qemu-tcg" not in found[name], name
        assert {"native", "lxc", "podman", "charliecloud"} <= found[name], name
    for name in INFORMED:  # network, disk, lifecycle, isolation, memory (limits), os, applications
        assert "qemu-tcg" in found[name], name
    # the NPB and HPCC jobs of the reference scale: 8 + 16 kernels x threads on one instance, and MPI
    assert all("qemu-tcg" not in job.platforms for job in plan_rounds(config, REFERENCE_PLATFORMS, host_mib=10**6)
               if job.benchmark.startswith("npb") or job.benchmark == "hpcc")


def test_the_paper_and_quick_scales_leave_tcg_out_too_and_a_scale_not_listed_keeps_every_platform():
    """The default run (quick) is the reference plan in small: TCG on every benchmark it informs, every
    other platform on every benchmark; a scale the list leaves out plans every platform everywhere."""
    paper = _platforms_by_benchmark(_config("paper"))
    assert "qemu-tcg" not in paper["npb_mpi"] and "qemu-tcg" in paper["netperf"]
    quick = _platforms_by_benchmark(_config("quick"))
    for name in CPU_HPC:
        assert "qemu-tcg" not in quick[name] and {"native", "lxc", "podman", "charliecloud"} <= quick[name], name
    for name in INFORMED:
        assert "qemu-tcg" in quick[name], name
    every = _platforms_by_benchmark(_config("quick", informative_only=["reference", "paper"]))
    for name in CPU_HPC:
        assert "qemu-tcg" in every[name], name


def test_the_plan_says_in_one_line_per_reason_what_it_leaves_out_and_why():
    config = _config("reference")
    assert left_out(config, "native", "npb_serial") is None
    assert left_out(config, "qemu-tcg", "netperf") is None
    assert left_out(config, "qemu-tcg", "npb_serial").startswith("cpu: binary translation")
    assert left_out(_config("quick", informative_only=["reference"]), "qemu-tcg", "npb_serial") is None
    lines = left_out_lines(config, REFERENCE_PLATFORMS)
    assert len(lines) == 2
    assert lines[0].startswith("not planned at scale reference (informative_only): qemu-tcg for npb_serial, npb_omp, ")
    assert "qemu-tcg for npb_mpi, mit_gcm, hpcc (hpc: " in lines[1]
    assert left_out_lines(_config("quick", informative_only=["reference"]), REFERENCE_PLATFORMS) == []


def test_informative_only_names_scales():
    with pytest.raises(ConfigError, match="informative_only"):
        _config("reference", informative_only=["fast"])


def test_a_variant_no_claim_selects_is_capped_at_max_unclaimed():
    value = {"min": 6, "max": 30, "max_unclaimed": 10, "max_translated": 6, "rel_half_width": 0.03, "target": "claims"}
    claimed = (Target("bw", 0.05, ("a-claim",)),)
    assert RepetitionRule.from_config(value).max == 10
    assert RepetitionRule.from_config(value, targets=claimed).max == 30
    assert RepetitionRule.from_config(value, translated=True).max == 6  # the lower of the two caps
    assert RepetitionRule.from_config(value, translated=True, targets=claimed).max == 6
    without = {k: v for k, v in value.items() if k != "max_unclaimed"}
    assert RepetitionRule.from_config(without).max == 30
    # at the reference scale: fio has no claim (10), netperf's variants have (15: the 8-hour budget's cap)
    caps = {(job.benchmark, plan.platform): plan.cap for job in plan_rounds(_config("reference"), REFERENCE_PLATFORMS,
                                                                               host_mib=10**6) for plan in job.plans}
    assert caps[("fio", "native")] == 10 and caps[("netperf", "native")] == 15


def test_a_job_holds_every_platform_guests_memory_at_once():
    config = _config("reference")
    jobs = {(job.benchmark, job.variant.key): job for job in plan_rounds(config, REFERENCE_PLATFORMS, host_mib=10**6)}
    netperf = next(job for (name, _), job in jobs.items() if name == "netperf")
    # two instances; containers and the host hold no guest memory, the TCG VMs 2 x 2048 MiB
    assert job_memory_mib(config, netperf) == (4096, ["qemu-tcg 2 x 2048"])
    mbw = next(job for (name, _), job in jobs.items() if name == "mbw")
    # two arrays of 512 MiB on each of native, lxc, podman, charliecloud; the VM its 2048 MiB
    assert job_memory_mib(config, mbw)[0] == 4 * 1024 + 2048
    iozone_disk = next(job for (name, key), job in jobs.items() if name == "iozone_disk" and key.startswith("disk-raw_cache-none"))
    assert job_memory_mib(config, iozone_disk) == (512, ["qemu-tcg 1 x 512"])
    scaling = [job for (name, _), job in jobs.items() if name == "memory_scaling" and "qemu-tcg" in job.platforms]
    for job in scaling:  # a guest larger than the host touches its base, its page tables and one block
        mem = int(job.variant.param_dict["mem"])
        assert job_memory_mib(config, job)[0] == 512 + mem // 64 + 2


def test_a_job_whose_guests_do_not_fit_is_refused_naming_it_and_the_sizes():
    config = _config("reference", guest={"memory_mb": 4096}, benchmarks=["netperf"])
    jobs = plan_rounds(config, REFERENCE_PLATFORMS, host_mib=8192)  # 2 TCG VMs x 4096 MiB = 8192: fits
    with pytest.raises(ConfigError) as error:
        check_memory(config, jobs, host_mib=8191)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"job netperf/{jobs[0].variant.key} would hold 8192 MiB with every platform's instances up")
    assert "(qemu-tcg 2 x 4096), more than the host's 8191 MiB" in message
    with pytest.raises(ConfigError, match="would hold 8192 MiB"):
        plan_rounds(config, REFERENCE_PLATFORMS, host_mib=8191)


def test_the_estimate_goes_by_its_family_for_a_platform_never_run(tmp_path):
    durations = Durations({("lxc", "fio", "k"): 10.0, ("podman", "fio", "k"): 20.0, ("qemu-tcg", "fio", "k"): 99.0,
                           ("native", "memory_scaling", "mem-host"): 7.0}, {})
    assert durations.kin("charliecloud", "fio", "k") == 15.0  # containers only, not the VM
    assert durations.kin("charliecloud", "memory_scaling", "mem-host") == 7.0  # only the host ran it
    assert durations.kin("qemu-kvm", "fio", "k") is None  # another VM is no container
    assert durations.kin("charliecloud", "fio", "other") is None


def test_the_estimate_reports_what_it_leaves_out_and_the_memory_peak(tmp_path):
    config = _config("reference", data_dir=str(tmp_path), benchmarks=["npb_serial", "netperf"])
    text = report(estimate(config, tmp_path, REFERENCE_PLATFORMS))
    assert "not planned at scale reference (informative_only): qemu-tcg for npb_serial (cpu: " in text
    assert "the most memory a job holds with every platform's guests up: 4096 MiB (netperf/" in text


def test_a_kvm_claim_on_a_benchmark_tcg_is_left_out_of_is_not_informative_and_says_why():
    from conftest import REPO
    from virtrepro import results, yamlfile
    from virtrepro.analysis import claims

    table = results.read_table(results.table_paths(REPO / "data", "reference-vm")["parquet"])
    by_id = {c["id"]: c for c in yamlfile.load(REPO / "data" / "reference" / "claims.yaml")}
    kvm = by_id["regola2010-npb-omp-1thread-kvm-within-5pct"]  # KVM vs native, NPB OpenMP: TCG one way (cpu)
    vmware = by_id["walters2008-npb-serial-vmware-within-10pct"]  # VMware Server: the analogue table says no (cpu)
    without = table[~((table["platform"] == "qemu-tcg") & table["benchmark"].isin(["npb_omp", "npb_serial"]))]
    row = claims.evaluate_claim(kvm, without)
    assert row["verdict"] == "not informative (analogue's bias)"
    assert row["note"].startswith("qemu-tcg has no npb_omp runs and would inform no claim on them (cpu: binary translation")
    row = claims.evaluate_claim(vmware, without)
    assert row["verdict"] == "not comparable here" and "cpu: may not stand in" in row["note"]
    # where TCG ran the benchmark, a missing variant stays "not measured" (no design says it is left out)
    eight = claims.evaluate_claim(by_id["regola2010-npb-omp-8threads-kvm-significant-decrease"], table)
    assert eight["verdict"] == "not measured"
