"""What a measurement job holds in the host's memory with every platform's instances kept up across
its rounds, and the plan's refusal of a job that would not fit."""

from __future__ import annotations

from ..benchmarks import BENCHMARKS
from ..errors import ConfigError
from ..platforms import catalog as platform_catalog


def job_memory_mib(config: dict, job) -> tuple[int, list[str]]:
    """The host memory, MiB, a measurement job may hold at once, with every platform's instances up (kept
    up, frozen, for all its rounds), and its parts (``platform n x MiB``): a VM's instance holds its
    guest's memory (the configured ``guest.memory_mb`` with the variant's overrides; less where its
    benchmark knows its guest touches less, ``Benchmark.vm_resident_mib``); a container's or the host's
    holds what a run of the variant holds (``Benchmark.memory_mib``; a container's memory size is a
    limit, not an allocation), counted for every platform as if all ran at once."""
    benchmark = BENCHMARKS[job.benchmark]
    instances = benchmark.instances(job.variant)
    guest_mb = int(benchmark.guest_overrides(job.variant).get("memory_mb", (config.get("guest") or {}).get("memory_mb", 2048)))
    total, parts = 0, []
    for platform in job.platforms:
        if platform_catalog.has(platform, "own_memory"):
            each = benchmark.vm_resident_mib(job.variant, guest_mb)
        else:
            each = benchmark.memory_mib(job.variant) or 0
        if each:
            total += instances * each
            parts.append(f"{platform} {instances} x {each}")
    return total, parts


def check_memory(config: dict, jobs: list, host_mib: int | None = None) -> None:
    """ConfigError naming the first job whose :func:`job_memory_mib` is above ``host_mib`` (the MemTotal of
    a local testbed's host, this machine, when not given; a remote testbed's hosts are not known here, and
    not checked): its guests, kept up together, would not fit."""
    if host_mib is None:
        if (config.get("testbeds") or {}).get(config["testbed"], {}).get("kind") != "local":
            return
        from ..layout import host_memory_mb

        host_mib = host_memory_mb()
    for job in jobs:
        total, parts = job_memory_mib(config, job)
        if total > host_mib:
            raise ConfigError(
                f"job {job.benchmark}/{job.variant.key} would hold {total} MiB with every platform's instances up "
                f"({', '.join(parts)}), more than the host's {host_mib} MiB: lower guest.memory_mb or plan fewer platforms")
