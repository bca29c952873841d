"""Where a run comes from: the code's commit, the guest image, the run's place in the order, and
the one error every measurement step raises."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from ..errors import MeasurementError, VirtreproError  # MeasurementError: its name here too
from ..platforms import catalog as platform_catalog

REPO = Path(__file__).resolve().parents[3]


def provenance() -> dict:
    """Where this run was started from: the command line and the repository commit."""
    repo = REPO
    try:
        commit = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10,
        ).stdout.strip() != ""
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "", False
    workflow_argv = json.loads(os.environ.get("VIRTREPRO_INVOCATION", "null")) or sys.argv
    return {
        "invocation": [Path(workflow_argv[0]).name, *(without_local_paths(arg, repo) for arg in workflow_argv[1:])],
        "virtrepro_commit": commit or None,
        "virtrepro_tree_modified": dirty,
        "python": sys.version.split()[0],
    }


# an absolute path in a command-line argument (also inside "key={tarball: /a/b}")
_ABSOLUTE = re.compile(r"(?<![\w.~])/[^\s,:{}\[\]'\"=;]+")


def without_local_paths(arg: str, repo: Path = REPO) -> str:
    """``arg`` as the provenance records it: an absolute path inside the repository relative to it,
    one outside it by its file name only (where this machine keeps a tarball is no fact of the run;
    its checksum, in the probe record, is)."""
    def shown(match: re.Match) -> str:
        path = Path(match.group(0))
        try:
            return str(path.relative_to(repo)) or "."
        except ValueError:
            return path.name or match.group(0)

    return _ABSOLUTE.sub(shown, arg)


CODE_DIRS = ("workflow", "config", "scripts")  # what measures: a reference testbed needs them committed



def require_clean_tree(config: dict, testbed: str, repo: Path = REPO) -> None:
    """Refuse to measure a testbed whose configuration says ``require_clean_tree`` (reference
    data) while tracked files of the code (CODE_DIRS) differ from the commit: the sidecars name
    the commit, which must be the code that measured."""
    if not config["testbeds"][testbed].get("require_clean_tree"):
        return
    try:
        changed = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no", "--",
                                  *CODE_DIRS], capture_output=True, text=True, timeout=10, check=True).stdout.split("\n")
    except (OSError, subprocess.SubprocessError) as error:
        raise MeasurementError(f"testbed {testbed} requires a committed tree, and git cannot tell ({error})") from None
    changed = [line[3:] for line in changed if line.strip()]
    if changed:
        raise MeasurementError(f"testbed {testbed} holds reference data (require_clean_tree): commit or stash "
                               f"{len(changed)} modified files first ({', '.join(changed[:3])}{' ...' if len(changed) > 3 else ''})")



def image_record(platform: str) -> dict | None:
    """The guest image a guest platform ran (its record, image.json, lists the packages installed
    in it with their versions): the record's recipe and sha256. None for a platform without guests (native)."""
    return current_image() if platform_catalog.runs_in_guest(platform) else None



def current_image() -> dict:
    """The record of this code's guest image (the current recipe's; its sha256 None where not built here)."""
    from ..guests import image_dir

    record = image_dir() / "image.json"
    if not record.exists():  # a remote testbed's hosts build the same recipe
        return {"recipe": record.parent.name, "record_sha256": None}
    return {"recipe": record.parent.name, "record_sha256": sha256(str(record))}



def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")



def portable_path(path: str) -> str:
    """Where an uploaded file came from, without this machine's directories: relative to the
    repository, or to the Python environment's site-packages (pyperf, pyperformance); the
    sha256 beside it identifies the file."""
    resolved = Path(path).resolve()
    parts = resolved.parts
    if "site-packages" in parts:
        return str(Path(*parts[parts.index("site-packages"):]))
    try:
        return str(resolved.relative_to(REPO))
    except ValueError:
        return resolved.name



def sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
