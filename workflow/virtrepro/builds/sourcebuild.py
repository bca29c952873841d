"""The command line every source build shares (:mod:`virtrepro.builds.registry`: NPB, MITgcm): ``obtain``
writes the probe record, ``build`` compiles from it. Each build module gives its own steps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

CONFIG_HELP = "configuration as JSON (default: $VIRTREPRO_CONFIG)"


def add_obtain_build(sub, obtain_help: str, build_help: str) -> None:
    """The ``obtain`` and ``build`` subcommands, with their options."""
    ob = sub.add_parser("obtain", help=obtain_help)
    ob.add_argument("--config", help=CONFIG_HELP)
    ob.add_argument("--output", required=True)
    bu = sub.add_parser("build", help=build_help)
    bu.add_argument("--config", help=CONFIG_HELP)
    bu.add_argument("--source", required=True, help="the record written by `obtain`")


def obtain_or_build(parser, args, name: Callable[[dict], str], obtain: Callable[[dict], dict], build: Callable[[dict, dict], Path],
                    write_record: Callable[[dict, Path], None], error: type) -> int:
    """Run ``obtain`` (``obtain(config)``: the probe record, written to ``--output``) or ``build``
    (``build(config, source)``, the record read from ``--source``; ``error`` names a record that is
    not JSON); ``name(record)`` is what the line printed calls the build."""
    from ..planning.config import given_config

    config = given_config(args.config)
    if config is None:
        parser.error("no configuration: pass --config or set VIRTREPRO_CONFIG")
    if args.command == "obtain":
        record = obtain(config)
        write_record(record, Path(args.output))
        print(f"{name(record)}: {record['status']}"
              + (f" ({record['reason']})" if record["status"] == "skipped" else f" ({record['tarball']})"))
        return 0
    try:
        source = json.loads(Path(args.source).read_text())
    except ValueError as failure:
        raise error(f"{args.source}: not the JSON record `obtain` writes ({failure})") from None
    print(f"built: {build(config, source)}")
    return 0


def run_step(argv: list[str], cwd: Path, log, error: type) -> None:
    """One build step, its command and output appended to ``log``; ``error`` (one line) if it fails."""
    import subprocess

    print(f"$ (cd {cwd} && {' '.join(argv)})", file=log, flush=True)
    result = subprocess.run(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        raise error(f"`{' '.join(argv)}` in {cwd} failed with exit status {result.returncode} (its output: the build log)")


def tool_versions(tools: tuple[str, ...]) -> dict:
    """The first line of each tool's ``--version`` ("missing" where it is not installed)."""
    import subprocess

    versions = {}
    for name in tools:
        try:
            out = subprocess.run([name, "--version"], capture_output=True, text=True, timeout=30).stdout
            versions[name] = out.splitlines()[0] if out else "unknown"
        except OSError:
            versions[name] = "missing"
    return versions


def why_no_runs(data_dir: str | Path, testbed: str, benchmark: str, probe: str, source: str) -> str:
    """One line for a notebook on why ``benchmark`` has no runs on ``testbed``: the reason recorded in
    the build's ``probe`` when ``source`` (NPB, MITgcm) was skipped, else that nothing was measured yet."""
    from .. import datalayout

    path = datalayout.probe_path(data_dir, testbed, probe)
    if path.exists():
        info = json.loads(path.read_text())
        if info.get("status") == "skipped":
            return f"no {benchmark} runs: {source} was skipped ({info.get('reason', 'no reason recorded')})"
    return f"no {benchmark} runs on testbed {testbed!r}"
