"""Which host of a testbed measures a variant.

A testbed of several hosts measures on all of them at once, one measurement per host at a time
(the workflow's resources ``testbed_host_<i>``, :func:`resource_name`). A comparison must not mix
hosts: every platform of one benchmark variant is measured on the same host, so that a platform's
difference from native is never a difference between machines. So the host is chosen per
benchmark and variant key, not per platform:

- where some complete log of the variant exists already (any platform, an earlier part of the
  run), on the host its sidecar names (``host_name``): a resumed or extended run stays there;
- otherwise by a hash of ``<benchmark>/<variant key>`` over the hosts: stable across runs and
  configurations, and spread evenly over the hosts within each benchmark in expectation.

A run whose instances span hosts (MPI ``across: hosts``) holds the first ``nodes`` hosts of the
testbed, in its order (a slurm testbed: the scheduler's order of the allocation's nodes), and
none of them measures anything else meanwhile (:func:`hosts_for`).

Standard library only; the Snakemake rules and ``python -m virtrepro.measurement.job`` ask it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .. import datalayout
from ..errors import VirtreproError


class PlacementError(VirtreproError, ValueError):
    """The testbed has too few hosts for a run (names the testbed); a ValueError as before."""


def resource_name(index: int) -> str:
    """The Snakemake resource that one measurement holds on host ``index`` of the testbed."""
    return f"testbed_host_{index}"


def recorded_host(data_dir: str | Path, testbed: str, benchmark: str, key: str) -> str | None:
    """The host that measured some complete log of this variant (on any platform), if any."""
    for sidecar in datalayout.sidecars_of(data_dir, testbed, benchmark=benchmark, variant=key):
        try:
            data = json.loads(sidecar.read_text())
        except (OSError, ValueError):
            continue
        if data.get("status") == "complete" and data.get("host_name"):
            return data["host_name"]
    return None


def hashed_host(hosts: list[str], benchmark: str, key: str) -> str:
    digest = hashlib.sha256(f"{benchmark}/{key}".encode()).digest()
    return hosts[int.from_bytes(digest[:8], "big") % len(hosts)]


def host_for(hosts: list[str], data_dir: str | Path, testbed: str, benchmark: str, key: str) -> str:
    """The host of ``hosts`` (names, the testbed's order) that measures this variant."""
    if not hosts:
        raise PlacementError(f"testbed {testbed} has no hosts")
    if len(hosts) == 1:
        return hosts[0]
    recorded = recorded_host(data_dir, testbed, benchmark, key)
    return recorded if recorded in hosts else hashed_host(hosts, benchmark, key)


def spanned_hosts(hosts: list[str], count: int, testbed: str = "") -> list[str]:
    """The hosts a run whose ``count`` instances are on different hosts uses: the testbed's first ``count``."""
    if count > len(hosts):
        raise PlacementError(f"testbed {testbed} has {len(hosts)} host(s); a run across {count} hosts needs {count} "
                             "(a slurm testbed: ask the scheduler for that many nodes, e.g. sbatch -N " f"{count})")
    return hosts[:count]


def hosts_for(hosts: list[str], data_dir: str | Path, testbed: str, benchmark: str, key: str,
              spanned: int = 1) -> list[str]:
    """Every host one run of the variant holds, the one that runs its command first: the placed host,
    or (``spanned`` > 1, instances on different hosts) the testbed's first ``spanned`` hosts."""
    if spanned > 1:
        return spanned_hosts(hosts, spanned, testbed)
    return [host_for(hosts, data_dir, testbed, benchmark, key)]
