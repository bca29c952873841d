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

A final log whose sidecar is missing, unreadable or not ``complete`` (or ``complete`` with an
``exit_status`` other than 0: a sidecar must agree with itself) is neither complete nor
measurable again: :func:`is_complete` raises :class:`IncompleteLogError` saying what to do.

Every log is bound to its run: the commit records in the sidecar the sha256 and the size of
the log's bytes (:data:`LOG_SHA256`, :data:`LOG_BYTES`) and when they were taken
(:data:`DIGEST`: ``{"taken": "at commit"}``; logs committed before that got theirs from git's
copy later, :mod:`virtrepro.results.digests`). :func:`read_checked` reads a log through no symbolic
link and refuses it when its bytes are not the ones its sidecar recorded (an edited log, or
one copied over another repetition's) or when its sidecar records none.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import io
import json
import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .. import datalayout
from ..errors import MeasurementError
from ..sidecar import Sidecar
from ..parsers.errors import ParseError

LOG_NAME = datalayout.LOG_NAME

# The sidecar's record of its log's bytes (these names are used nowhere else as text): the sha256
# (hex) and the size, and when they were taken: {"taken": TAKEN_AT_COMMIT} when the run was
# committed, {"taken": TAKEN_FROM_GIT, "commit": <sha>, "date": <UTC>} for a log committed before
# digests were recorded, whose digest was taken later from git's copy (virtrepro.results.digests).
LOG_SHA256 = "log_sha256"
LOG_BYTES = "log_bytes"
DIGEST = "digest"
TAKEN_AT_COMMIT = "at commit"
TAKEN_FROM_GIT = "recorded later from git"
RECORD_COMMAND = "python -m virtrepro.results.digests record"


class RawLogExists(FileExistsError):
    """A complete raw log is already there; it is never replaced."""


class RawLogError(ParseError):
    """A raw log or its sidecar cannot be read, or they do not describe the same run; names the file."""


class IncompleteLogError(RawLogError):
    """A final raw log without a sidecar that says it is complete."""


class LogDigestError(RawLogError):
    """A log whose bytes are not the ones its sidecar recorded (edited, or copied from another
    run), or whose sidecar records no digest of it."""


class LinkedLogError(RawLogError):
    """A raw log that is a symbolic link: a log is the file its run wrote, not a pointer to one."""


sidecar_path = datalayout.sidecar_path


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


def read_record(log: Path) -> Sidecar:
    """The sidecar of ``log`` as the typed record; RawLogError naming it if it cannot be read."""
    try:
        return Sidecar.from_json(read_sidecar(log))
    except ValueError as error:
        raise RawLogError(str(sidecar_path(log)), str(error)) from None


def linked(log: Path) -> LinkedLogError:
    """The error for a raw log that is a symbolic link."""
    try:
        target = f" (to {os.readlink(log)})"
    except OSError:
        target = ""
    return LinkedLogError(str(log), f"is a symbolic link{target}, not a raw log: a log is the file its run wrote; "
                                    f"put the run's own log there (git checkout -- <file>) or remove the link")


def read_log_bytes(log: Path) -> bytes:
    """The bytes of a raw log, read through no symbolic link: LinkedLogError for a link,
    RawLogError naming the log if it cannot be read."""
    try:
        handle = os.open(log, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(handle, "rb") as reading:
            return reading.read()
    except OSError as error:
        if error.errno == errno.ELOOP and os.path.islink(log):
            raise linked(log) from None
        raise RawLogError(str(log), f"raw log cannot be read: {error.strerror or error}") from None


def log_text(data: bytes) -> str:
    """A raw log's bytes as text, decoded as reading the file as text does (undecodable bytes
    replaced, line ends made ``\\n``): the one place where a log becomes text for its parser. A
    leading UTF-8 byte-order mark is dropped and CRLF (or a lone CR) is read as LF, so a log saved
    by a Windows editor parses to the same records; the bytes (what the digest covers) are not
    changed."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", errors="replace").read()


def read_log(log: Path) -> str:
    """The text of a raw log; RawLogError naming it if it cannot be read (LinkedLogError for a link)."""
    return log_text(read_log_bytes(log))


def digest_record(data: bytes, taken: str, **provenance) -> dict:
    """The sidecar's fields that bind it to a log of these bytes: :data:`LOG_SHA256`,
    :data:`LOG_BYTES` and :data:`DIGEST` (``taken``, and where from: ``provenance``)."""
    return {LOG_SHA256: hashlib.sha256(data).hexdigest(), LOG_BYTES: len(data), DIGEST: {"taken": taken, **provenance}}


def has_digest(sidecar: dict) -> bool:
    """Whether a sidecar records a digest of its log (well formed or not: :func:`check_digest` judges)."""
    return LOG_SHA256 in sidecar or LOG_BYTES in sidecar


def _record_command(log: Path) -> str:
    """The command that records the digests of committed logs of ``log``'s data directory."""
    found = datalayout.data_dir_of(log)
    if found is not None:
        return f"{RECORD_COMMAND} --data {found[0]} --testbed {found[1]}"
    return f"{RECORD_COMMAND} --data <data directory>"


def check_digest(log: Path, sidecar: dict, data: bytes) -> None:
    """Refuse ``data`` (the bytes read from ``log``) unless its sidecar recorded exactly these bytes
    (sha256 and size); LogDigestError naming the log, and the repetition beside it whose sidecar
    recorded them when there is one (a log copied over another's). A sidecar without a digest is
    refused too, with the command that records one (:data:`RECORD_COMMAND`)."""
    recorded, size = sidecar.get(LOG_SHA256), sidecar.get(LOG_BYTES)
    found = hashlib.sha256(data).hexdigest()
    if recorded == found and size == len(data) and type(size) is int:  # the bytes recorded: all is well
        return
    log = Path(log)
    side = sidecar_path(log).name
    if not has_digest(sidecar):
        raise LogDigestError(str(log), f"its sidecar {side} records no digest of the log ({LOG_SHA256}, {LOG_BYTES}), "
                                       f"so an edited or copied log could not be told from its run: record the "
                                       f"digests of committed logs from git with `{_record_command(log)}`")
    if not (isinstance(recorded, str) and re.fullmatch(r"[0-9a-f]{64}", recorded)
            and isinstance(size, int) and not isinstance(size, bool)):
        raise LogDigestError(str(sidecar_path(log)), f"{LOG_SHA256} {recorded!r} and {LOG_BYTES} {size!r} are not "
                                                      f"a sha256 (64 hex digits) and a size in bytes")
    origin = _recorded_beside(log, found)
    what = (f"it is a copy of {origin.name} beside it, whose sidecar recorded these bytes" if origin
            else "the log was edited, or copied from another run")
    raise LogDigestError(str(log), f"its {len(data)} bytes (sha256 {found[:16]}) are not the {size} bytes "
                                   f"(sha256 {recorded[:16]}) its sidecar {side} recorded ({taken(sidecar)}): "
                                   f"{what}; restore it from git (git checkout -- <file>) or move it and its "
                                   f"sidecar aside")


def taken(sidecar: dict) -> str:
    """When a sidecar's digest was taken, in words (its :data:`DIGEST`)."""
    where = sidecar.get(DIGEST) if isinstance(sidecar.get(DIGEST), dict) else {}
    if where.get("taken") == TAKEN_FROM_GIT:
        return f"{TAKEN_FROM_GIT} at {str(where.get('commit'))[:12]} on {where.get('date')}"
    return f"taken {where['taken']}" if where.get("taken") else "not saying when"


def _recorded_beside(log: Path, digest: str) -> Path | None:
    """The other final log in ``log``'s directory whose sidecar recorded ``digest`` (read only to
    explain a refusal), or None."""
    for other in datalayout.sidecars_beside(log):
        log_of = datalayout.log_of_sidecar(other)
        if log_of.name == Path(log).name or not LOG_NAME.match(log_of.name):
            continue
        try:
            if read_sidecar(log_of).get(LOG_SHA256) == digest:
                return log_of
        except RawLogError:
            continue
    return None


def read_checked(log: Path, sidecar: dict) -> str:
    """The text of a complete log whose sidecar is ``sidecar``, read once (through no symbolic
    link) and refused unless its bytes are the ones the sidecar recorded (:func:`check_digest`)."""
    data = read_log_bytes(log)
    check_digest(log, sidecar, data)
    return log_text(data)


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
    if not exited_zero(data):
        raise IncompleteLogError(str(log), f"its sidecar {sidecar.name} says status 'complete' but exit_status "
                                           f"{data['exit_status']!r}: a run that did not exit 0 is not complete, "
                                           f"and a sidecar that contradicts itself is not used: {what_to_do}")
    return data


def complete_record(log: Path) -> Sidecar | None:
    """:func:`complete_sidecar` as the typed record (:class:`virtrepro.sidecar.Sidecar`)."""
    data = complete_sidecar(log)
    if data is None:
        return None
    try:
        return Sidecar.from_json(data)
    except ValueError as error:
        raise RawLogError(str(sidecar_path(log)), str(error)) from None


def exited_zero(sidecar: dict) -> bool:
    """Whether a sidecar's ``exit_status`` agrees with ``complete``: 0, or not recorded."""
    status = sidecar.get("exit_status", 0)
    return status == 0 and not isinstance(status, bool)


def is_complete(log: Path) -> bool:
    """True when the log and its sidecar say complete, False when there is no log; raises
    IncompleteLogError / RawLogError for a log without a readable, complete sidecar."""
    return complete_sidecar(log) is not None


def temporary_path(log: Path) -> Path:
    return datalayout.temporary_log_path(log, os.getpid())


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


def commit(partial: Path, log: Path, sidecar: Sidecar | dict) -> Path:
    """Give a successful run its final name, with its sidecar, in one step (see the module's doc).

    The sidecar records the sha256 and size of the log's bytes, taken here (:func:`digest_record`).
    Raises RawLogExists, leaving ``partial`` where it is, when the log is already there, and
    RawLogError for a sidecar whose ``exit_status`` is not 0."""
    log = Path(log)
    record = sidecar if isinstance(sidecar, Sidecar) else Sidecar.from_json(sidecar)
    if not record.exited_zero:
        raise RawLogError(str(log), f"not committed: exit_status {record.exit_status!r} is no complete run")
    with _directory_locked(log.parent):
        if os.path.lexists(log):
            raise _refuse(log)
        data = Path(partial).read_bytes()
        write_json(sidecar_path(log), record.with_fields(**digest_record(data, TAKEN_AT_COMMIT), status="complete",
                                                         log=log.name).to_json())
        try:
            os.link(partial, log)
        except FileExistsError:  # only a writer that ignores the lock gets here
            raise _refuse(log) from None
    Path(partial).unlink()
    return log


def keep_failed(partial: Path, log: Path, sidecar: Sidecar | dict, stamp: str) -> Path:
    """Keep a failed run's output beside where the log would have gone."""
    log = Path(log)
    failed = datalayout.failed_log_path(log, stamp)
    if Path(partial).exists():
        os.replace(partial, failed)
    else:
        failed.write_text("")
    record = sidecar if isinstance(sidecar, Sidecar) else Sidecar.from_json(sidecar)
    write_json(sidecar_path(failed), record.with_fields(status="failed", log=failed.name).to_json())
    return failed


def variant_records(variant, data_dir: str | Path) -> list[list[dict]]:
    """The parsed records of each complete log rep-0, rep-1, ... of a variant, up to the first
    missing one, by the benchmark's own parser (as the table parses them); MeasurementError if
    a repetition below the rule's minimum is missing, or where a log is there without a readable,
    complete sidecar. ``variant``: a :class:`virtrepro.planning.config.VariantPlan` (the measurement's
    repetition rule and the plan's estimate read the logs the same way)."""
    return variant_logs(variant, data_dir)[0]


def variant_logs(variant, data_dir: str | Path) -> tuple[list[list[dict]], list]:
    """:func:`variant_records` and the round each log's sidecar names (None: measured before rounds)."""
    from ..benchmarks import BENCHMARKS  # the benchmarks' parsers: imported only when logs are read

    benchmark = BENCHMARKS[variant.benchmark]
    logs, rounds = [], []
    for repetition in range(variant.cap):
        log = variant.run(repetition).log_path(data_dir)
        try:
            complete = is_complete(log)
        except RawLogError as error:
            raise MeasurementError(str(error)) from None
        if not complete:
            if repetition < variant.repetitions:
                raise MeasurementError(f"{log}: missing; repetitions beyond the minimum are decided on "
                                       f"complete logs of all {variant.repetitions} first")
            break
        sidecar = complete_sidecar(log)
        try:
            logs.append(benchmark.parse(read_log(log), str(log), sidecar["parameters"]))
        except ParseError as error:
            raise MeasurementError(str(error)) from None
        rounds.append(sidecar.get("round"))
    return logs, rounds
