"""Which configured platforms can run on the testbed: probed on every host before the plan.

Clusters often forbid what some platforms need: compute nodes rarely give their users root (no
LXC, no rootful podman, no bridges or taps for VMs), and many have no ``/dev/kvm``. Each host is
asked once, over SSH as the testbed's user (one short shell script, :data:`FACTS_COMMAND`); a
platform any host cannot run is *unavailable on that testbed*, with the reason, and the
workflow plans the others (``concrete_platforms`` in ``workflow/rules/common.smk``). The record,
``<data>/raw/<testbed>/probes/platforms.json``, is kept with the raw data like every probe: it is
never replaced; delete it to probe again. What each platform needs is declared in
``platforms/catalog.py`` (``needs_root``, ``needs_kvm``, ``needs_userns``).

    python -m virtrepro.testbed.availability --testbed NAME --platforms native,lxc,qemu OUT.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..platforms import catalog as platform_catalog
from ..rawdata.probes import unavailable

# root: yes (uid 0), sudo (passwordless sudo works), no; kvm: yes (readable and writable), denied, missing;
# userns: whether the account an unprivileged container runs as (the user, or nobody for root:
# platforms/charliecloud.py) can make a user namespace: yes, no
FACTS_COMMAND = r"""
if [ "$(id -u)" = 0 ]; then echo root=yes; elif sudo -n true 2>/dev/null; then echo root=sudo; else echo root=no; fi
if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then echo kvm=yes; elif [ -e /dev/kvm ]; then echo kvm=denied; else echo kvm=missing; fi
echo "user=$(id -un)"
if [ "$(id -u)" = 0 ]; then as="setpriv --reuid=nobody --regid=65534 --clear-groups"; echo userns_user=nobody
else as=""; echo "userns_user=$(id -un)"; fi
if (cd / && $as unshare --user --map-root-user true) 2>/dev/null; then echo userns=yes; else echo userns=no; fi
"""


def parse_facts(text: str) -> dict:
    """The facts :data:`FACTS_COMMAND` printed; anything else (a cut or garbled answer) is a ValueError."""
    facts = dict(line.split("=", 1) for line in text.strip().splitlines() if "=" in line)
    allowed = {"root": ("yes", "sudo", "no"), "kvm": ("yes", "denied", "missing"), "userns": ("yes", "no")}
    for key, values in allowed.items():
        if facts.get(key) not in values:
            raise ValueError(f"the host's answer lacks a valid {key}= line: {text.strip()!r}")
    if not facts.get("user"):
        raise ValueError(f"the host's answer lacks user=: {text.strip()!r}")
    return facts


def decide(platforms: list[str], facts_by_host: dict[str, dict]) -> dict:
    """Each platform's status on the testbed: available, or unavailable with the reason of each host
    that cannot run it."""
    decided = {}
    for name in platforms:
        reasons = {host: reason for host, facts in facts_by_host.items()
                   if (reason := platform_catalog.unavailable_reason(name, facts))}
        decided[name] = ({"status": "unavailable", "reason": "; ".join(f"{host}: {why}" for host, why in reasons.items())}
                         if reasons else {"status": "available"})
    return decided


def probe(testbed, platforms: list[str]) -> dict:
    """Ask every host of ``testbed`` (a virtrepro.testbed.kinds kind) and decide for ``platforms``."""
    from .hosts import connect  # here: the analysis reads records through this module without the SSH layer

    facts_by_host = {}
    for name in testbed.host_names():
        host = testbed.up(owner_pid=_owner(), host=name)
        with connect(host) as connection:
            result = connection.run(FACTS_COMMAND, hide=True, warn=True, in_stream=False)
        facts_by_host[name] = parse_facts(result.stdout)
    return {"platforms": decide(platforms, facts_by_host), "hosts": facts_by_host}


def _owner() -> int | None:
    owner = os.environ.get("VIRTREPRO_TESTBED_OWNER")
    return int(owner) if owner and owner.isdigit() else None


def main(argv: list[str] | None = None) -> int:
    from ..planning.config import given_config
    from .kinds import testbed_from_config

    parser = argparse.ArgumentParser(prog="python -m virtrepro.testbed.availability", description=__doc__.splitlines()[0])
    parser.add_argument("--testbed", required=True)
    parser.add_argument("--platforms", required=True, help="comma-separated, as configured")
    parser.add_argument("out")
    args = parser.parse_args(argv)
    config = given_config(None)
    if config is None:
        raise SystemExit("error: no configuration (VIRTREPRO_CONFIG, set by the workflow)")
    record = probe(testbed_from_config(args.testbed, config), [p for p in args.platforms.split(",") if p])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_name(out.name + ".partial")
    temporary.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    temporary.replace(out)
    for name, reason in unavailable(record).items():
        print(f"platform {name} is unavailable on testbed {args.testbed}: {reason}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    from ..cli import run as run_cli  # not "run": a module may have a function of that name

    run_cli(main)
