"""Raw logs and their provenance sidecars.

Layout: ``<data>/raw/<testbed>/<platform>/<benchmark>/<variant>/rep-<k>.log``
with ``rep-<k>.json`` beside it. A log is written under a temporary name while
the tool runs and gets its final name only when the run succeeded and parsed;
the final name is taken with a hard link, which fails rather than replace an
existing file, so a complete log is never overwritten. A failed run is kept as
``rep-<k>.failed-<UTC time>.log`` (with its sidecar) for inspection; it never
becomes a number.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

LOG_NAME = re.compile(r"^rep-(\d+)\.log$")


class RawLogExists(FileExistsError):
    """A complete raw log is already there; it is never replaced."""


def sidecar_path(log: Path) -> Path:
    return Path(log).with_suffix(".json")


def read_sidecar(log: Path) -> dict:
    return json.loads(sidecar_path(log).read_text())


def is_complete(log: Path) -> bool:
    """A log counts as complete when it and its sidecar exist and the sidecar says so."""
    log = Path(log)
    if not log.exists() or not sidecar_path(log).exists():
        return False
    try:
        return read_sidecar(log).get("status") == "complete"
    except (OSError, ValueError):
        return False


def temporary_path(log: Path) -> Path:
    return Path(log).with_name(f".{Path(log).name}.{os.getpid()}.partial")


def write_json(path: Path, data: dict) -> None:
    """Write JSON atomically (a temporary file, then a rename)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def _link_no_clobber(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except FileExistsError:
        raise RawLogExists(f"{dst} already exists; a complete raw log is never replaced") from None
    src.unlink()


def commit(partial: Path, log: Path, sidecar: dict) -> Path:
    """Give a successful run its final name: sidecar first, then the log itself."""
    log = Path(log)
    if log.exists():
        raise RawLogExists(f"{log} already exists; a complete raw log is never replaced")
    write_json(sidecar_path(log), {**sidecar, "status": "complete", "log": log.name})
    _link_no_clobber(Path(partial), log)
    return log


def keep_failed(partial: Path, log: Path, sidecar: dict, stamp: str) -> Path:
    """Keep a failed run's output beside where the log would have gone."""
    log = Path(log)
    failed = log.with_name(f"{log.stem}.failed-{stamp}.log")
    if Path(partial).exists():
        os.replace(partial, failed)
    else:
        failed.write_text("")
    write_json(failed.with_suffix(".json"), {**sidecar, "status": "failed", "log": failed.name})
    return failed
