"""Raw logs and their provenance sidecars.

Layout: ``<data>/raw/<testbed>/<platform>/<benchmark>/<variant>/rep-<k>.log``
with ``rep-<k>.json`` beside it. A log is written under a temporary name while
the tool runs and gets its final name only when the run succeeded and parsed.
:func:`commit` does that in one step as seen by any reader and any other commit:
under an exclusive lock on the variant's directory it checks that the log is
absent, writes the sidecar (a temporary file of its own, then a rename) and
only then gives the log its final name with a hard link, which fails rather
than replace an existing file. So a final log always has its own sidecar beside
it, a complete log is never overwritten, and of two commits of one repetition
the second is refused (:class:`RawLogExists`). A commit killed between the two
steps leaves a sidecar without a log, which counts for nothing and is replaced
by the next commit. A failed run is kept as ``rep-<k>.failed-<UTC time>.log``
(with its sidecar) for inspection; it never becomes a number.

A final log whose sidecar is missing, unreadable or not ``complete`` is neither
complete nor measurable again: :func:`is_complete` raises
:class:`IncompleteLogError` saying what to do.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .parsers.errors import ParseError

LOG_NAME = re.compile(r"^rep-(\d+)\.log$")


class RawLogExists(FileExistsError):
    """A complete raw log is already there; it is never replaced."""


class RawLogError(ParseError):
    """A raw log or its sidecar cannot be read, or they do not describe the same run; names the file."""


class IncompleteLogError(RawLogError):
    """A final raw log without a sidecar that says it is complete."""


def sidecar_path(log: Path) -> Path:
    return Path(log).with_suffix(".json")


def read_sidecar(log: Path) -> dict:
    """The sidecar of ``log`` as a dict; RawLogError naming the sidecar if it is not a readable JSON object."""
    path = sidecar_path(log)
    try:
        data = json.loads(path.read_bytes())
    except OSError as error:
        raise RawLogError(str(path), f"sidecar cannot be read: {error.strerror or error}") from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise RawLogError(str(path), f"sidecar is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise RawLogError(str(path), f"sidecar is a JSON {type(data).__name__}, not an object")
    return data


def read_log(log: Path) -> str:
    """The text of a raw log; RawLogError naming it if it cannot be read."""
    try:
        return Path(log).read_text(errors="replace")
    except OSError as error:
        raise RawLogError(str(log), f"raw log cannot be read: {error.strerror or error}") from None


def complete_sidecar(log: Path) -> dict | None:
    """The sidecar of a complete log; None when there is no log.

    A log that is there without a sidecar saying ``complete`` raises IncompleteLogError
    (RawLogError when the sidecar cannot be read): it is not a run to use, and not one to
    measure again either, since a complete log is never overwritten.
    """
    log = Path(log)
    if not os.path.lexists(log):
        return None
    sidecar = sidecar_path(log)
    what_to_do = (f"restore {sidecar.name} if you have it, or move the log aside "
                  f"(e.g. to {log.stem}.orphan.log) to measure repetition {log.stem} again")
    if not os.path.lexists(sidecar):
        raise IncompleteLogError(str(log), f"its sidecar {sidecar.name} is missing, so the run cannot be trusted "
                                           f"and the log is never overwritten: {what_to_do}")
    data = read_sidecar(log)
    if data.get("status") != "complete":
        raise IncompleteLogError(str(log), f"its sidecar {sidecar.name} says status {data.get('status')!r}, "
                                           f"not 'complete': {what_to_do}")
    return data


def is_complete(log: Path) -> bool:
    """True when the log and its sidecar say complete, False when there is no log; raises
    IncompleteLogError / RawLogError for a log without a readable, complete sidecar."""
    return complete_sidecar(log) is not None


def temporary_path(log: Path) -> Path:
    return Path(log).with_name(f".{Path(log).name}.{os.getpid()}.partial")


def write_json(path: Path, data: dict) -> None:
    """Write JSON atomically (a temporary file of its own, then a rename)."""
    path = Path(path)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(handle, "w") as out:
            out.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def _directory_locked(directory: Path):
    """Hold an exclusive lock on ``directory`` (flock on the directory itself: no lock file is left)."""
    handle = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # releases the lock


def _refuse(log: Path) -> RawLogExists:
    return RawLogExists(f"{log} already exists; a complete raw log is never replaced")


def commit(partial: Path, log: Path, sidecar: dict) -> Path:
    """Give a successful run its final name, with its sidecar, in one step (see the module's doc).

    Raises RawLogExists, leaving ``partial`` where it is, when the log is already there."""
    log = Path(log)
    with _directory_locked(log.parent):
        if os.path.lexists(log):
            raise _refuse(log)
        write_json(sidecar_path(log), {**sidecar, "status": "complete", "log": log.name})
        try:
            os.link(partial, log)
        except FileExistsError:  # only a writer that ignores the lock gets here
            raise _refuse(log) from None
    Path(partial).unlink()
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
