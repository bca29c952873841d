"""Shared fixtures: paths to the captured real tool output in tests/data/."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def fixture_text(tool: str, name: str) -> str:
    return (DATA / tool / name).read_text()


def bad_fixtures(tool: str) -> list[Path]:
    return sorted((DATA / tool).glob("bad-*"))


def require_tools(*tools: str) -> None:
    """Integration tests need the real programs; the set-up script installs them."""
    missing = [t for t in tools if shutil.which(t) is None and not Path(t).exists()]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run scripts/setup.sh (it installs them)")


@pytest.fixture
def repo() -> Path:
    return REPO


def git_available() -> bool:
    return subprocess.run(["git", "--version"], capture_output=True).returncode == 0


@pytest.fixture(scope="session")
def built_image() -> Path:
    """The guest image of this recipe, built first if missing (about a minute), so that tests that
    need it run in a fresh clone instead of skipping."""
    import sys

    from virtrepro.guests import image_dir

    require_tools("mmdebstrap", "qemu-img", "mkfs.ext4")
    if not (image_dir() / "image.json").exists():
        subprocess.run([sys.executable, "-m", "virtrepro.guests.image", "build", str(image_dir())], check=True)
    return image_dir()


def commit_capture(capture: Path, log: Path, sidecar: dict) -> Path:
    """Commit a captured tool output as the raw log ``log`` with ``sidecar``, as a measurement does
    (virtrepro.rawdata.rawlog.commit: the sidecar records the log's digest); a log already there is
    replaced (a test placing a repetition again). A repetition's ``started_utc`` is made up from
    its number unless given: two repetitions of the same capture are two runs."""
    from virtrepro.rawdata import rawlog

    log = Path(log)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)
    partial = rawlog.temporary_path(log)
    shutil.copy(capture, partial)
    started = f"2026-11-22T00:{sidecar.get('repetition', 0) // 60 % 60:02d}:{sidecar.get('repetition', 0) % 60:02d}.000Z"
    return rawlog.commit(partial, log, {"started_utc": started, **sidecar})


def table_row(parameters: dict | None = None, **fields) -> dict:
    """One row of the narrow table (virtrepro.results.COLUMNS) for a synthetic table: ``parameters``
    the variant's (typed), every field that is no column of the table a label of the record."""
    import json

    from virtrepro import results

    row = {column: fields.get(column) for column in results.COLUMNS}
    labels = {key: value for key, value in fields.items() if key not in results.COLUMNS}
    parameters = parameters or {}
    row.update(variant=row["variant"] or "_".join(f"{k}-{v}" for k, v in parameters.items()) or "default",
               parameters=json.dumps(parameters), labels=json.dumps(labels), stopping=row["stopping"] or "{}")
    return row
