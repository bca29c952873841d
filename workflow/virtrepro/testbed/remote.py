"""Remote testbeds from the command line: what the workflow's rules run for a ``kind: ssh`` testbed.

    python -m virtrepro.testbed.remote prepare --testbed NAME OUT.json     # tools and guest image on the host
    python -m virtrepro.testbed.remote probe-qemu --testbed NAME OUT.json  # does KVM work there?
    python -m virtrepro.testbed.remote down --testbed NAME                 # stop its guests and keepers

(the configuration from ``--configfile FILE`` (merged over ``config/config.yaml`` as Snakemake merges
it; several are merged in order), ``--config JSON`` or ``$VIRTREPRO_CONFIG``), and
``python -m virtrepro.testbed.remote keep`` (internal: the channel that keeps a host's guests alive,
:mod:`virtrepro.testbed.agent`). The top of the testbed layer: it uses the testbed kinds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .agent import HostAgent, keep
from ..planning.config import ConfigError, config_with_files, given_config
from .hosts import Host
from ..platforms.base import PlatformError
from .kinds import RemoteTestbed, testbed_from_config


# --- workflow steps ---------------------------------------------------------------------


def prepare(host: Host, platforms: list[str], install: bool = True, build_image: bool = True) -> dict:
    """Install what the platforms need on the host and build its guest image if missing."""
    return HostAgent(host).call("prepare", {"platforms": platforms, "install": install, "build_image": build_image},
                                echo=sys.stderr)


def probe_qemu(host: Host) -> dict:
    return HostAgent(host).call("probe-kvm", {})  # its platform: qemu-kvm or qemu-tcg (platforms.qemu.probe_kvm)


def _config(args) -> dict:
    if args.configfile:
        return config_with_files(args.configfile)
    config = given_config(args.config)
    if config is not None:
        return config
    raise ConfigError("no configuration: pass --configfile or --config, or set VIRTREPRO_CONFIG")


def _testbed(name: str, config: dict):
    if name not in config["testbeds"]:
        raise ConfigError(f"testbed {name!r} is not defined under 'testbeds' ({', '.join(sorted(config['testbeds']))})")
    testbed = testbed_from_config(name, config)
    if not isinstance(testbed, RemoteTestbed):
        raise ConfigError(f"testbed {name!r} is not a remote (kind: ssh) testbed")
    return testbed


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m virtrepro.testbed.remote", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for verb in ("prepare", "probe-qemu", "down"):
        command = sub.add_parser(verb)
        command.add_argument("--testbed", required=True)
        command.add_argument("--configfile", action="append",
                             help="a configuration file (YAML) merged over config/config.yaml as Snakemake merges "
                                  "its --configfile; several are merged in order")
        command.add_argument("--config", help="configuration as JSON (default: $VIRTREPRO_CONFIG)")
        if verb != "down":
            command.add_argument("out")
        if verb == "prepare":
            command.add_argument("--platforms", default=None, help="comma-separated (default: the configured ones)")
            command.add_argument("--no-install", action="store_true", help="only say what is missing")
    keeper = sub.add_parser("keep", help="(internal) hold a keeper's channel open")
    keeper.add_argument("host_json")
    keeper.add_argument("ready_file")
    args = parser.parse_args(argv)
    if args.command == "keep":
        return keep(Host(**json.loads(args.host_json)), Path(args.ready_file))
    config = _config(args)
    testbed = _testbed(args.testbed, config)
    try:
        if args.command == "down":
            testbed.down()
            return 0
        if args.command == "prepare":
            platforms = args.platforms.split(",") if args.platforms else config["platforms"]
            results = {host.name: prepare(host, platforms, install=not args.no_install) for host in testbed.hosts()}
        else:
            results = probe_qemu(testbed.up())
    except PlatformError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    from ..cli import run as run_cli  # not "run": a module may have a function of that name

    run_cli(main)
