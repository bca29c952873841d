"""Digests for raw logs committed before the commit recorded them.

Since the commit of a run records the sha256 and size of its log in the sidecar
(:func:`virtrepro.rawdata.rawlog.commit`), the table refuses a log whose bytes are not the
recorded ones, and a sidecar without a record (:func:`virtrepro.rawdata.rawlog.check_digest`).
The logs committed to git before that have no record; this command gives them one,
taken from the log as git holds it at ``HEAD`` (the blob, ``git cat-file``), never
from a file that may have been changed since:

    python -m virtrepro.results.digests record [--data DIR] [--testbed T]

A digest is only as good as the moment it was taken, so the sidecar says which:
``digest: {"taken": "recorded later from git", "commit": <HEAD>, "date": <UTC>}``
(against ``{"taken": "at commit"}`` for a run committed with its digest). The command
refuses, before it writes anything, a log without a record that git does not hold at
``HEAD`` or whose file differs from git's copy, and a record that differs from git's copy;
it never changes a log, never replaces a record, and writes each sidecar whole
(:func:`virtrepro.rawdata.rawlog.write_json`). Run again, it finds nothing to record.
"""

from __future__ import annotations

import argparse
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .. import datalayout, results
from ..rawdata import rawlog
from ..errors import VirtreproError


class DigestError(VirtreproError):
    """A digest that cannot be recorded from git: names the log and what to do."""


@dataclass
class Recorded:
    """What :func:`record` did: the logs given a digest, and those that had one already."""

    recorded: list[Path]
    had_one: list[Path]
    commit: str | None


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=True).stdout
    except FileNotFoundError:
        raise DigestError("git is not installed: digests are taken from git's copy of the committed logs") from None
    except subprocess.CalledProcessError as error:
        said = error.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit status {error.returncode}"]
        raise DigestError(f"{repo}: git {' '.join(args[:2])}: {said[0]}") from None


def _blobs(repo: Path, paths: list[str]) -> dict[str, bytes | None]:
    """The content at ``HEAD`` of each path (relative to the repository's top), None for a path
    that ``HEAD`` does not hold as a regular file. One ``ls-tree`` and one ``cat-file --batch``."""
    if not paths:
        return {}
    listed = _git(repo, "ls-tree", "-r", "-z", "--full-tree", "HEAD", "--", *sorted({str(Path(p).parent) for p in paths}))
    objects = {}
    for entry in listed.split(b"\0"):
        if entry:
            meta, _, path = entry.partition(b"\t")
            mode, kind, sha = meta.split()
            if kind == b"blob" and mode in (b"100644", b"100755"):
                objects[path.decode()] = sha.decode()
    wanted = [objects[p] for p in paths if p in objects]
    out = _git(repo, "cat-file", "--batch", stdin="".join(f"{sha}\n" for sha in wanted).encode())
    contents, at = {}, 0
    for sha in wanted:
        header_end = out.index(b"\n", at)
        size = int(out[at:header_end].split()[2])
        contents[sha] = out[header_end + 1: header_end + 1 + size]
        at = header_end + 1 + size + 1  # the content, then a newline
    return {p: contents[objects[p]] if p in objects else None for p in paths}


def _testbeds(data: Path, testbed: str | None) -> list[str]:
    raw = datalayout.raw_dir(data)
    if testbed is not None:
        if not (raw / testbed).is_dir():
            raise DigestError(f"{raw / testbed}: no such directory: testbed {testbed!r} has no raw logs under {data}")
        return [testbed]
    if not raw.is_dir():
        raise DigestError(f"{raw}: no such directory: {data} holds no raw logs")
    return sorted(entry.name for entry in raw.iterdir() if entry.is_dir())


def record(data_dir: str | Path, testbed: str | None = None, now: datetime | None = None) -> Recorded:
    """Record in the sidecar of every complete raw log of ``data_dir`` (of ``testbed``, or of every
    testbed) that has none the sha256 and size of the log as git holds it at ``HEAD`` (see the
    module's doc). Every log is checked before any sidecar is written: DigestError for the first
    problem, with how many more there are."""
    data = Path(data_dir)
    logs = [Path(log) for name in _testbeds(data, testbed) for log in results.raw_logs(data, name)]
    sidecars = {log: rawlog.complete_sidecar(log) for log in logs}  # refuses an incomplete or contradictory one
    if not logs:
        return Recorded([], [], None)
    repo = Path(_git(data, "rev-parse", "--show-toplevel").decode().strip())
    head = _git(repo, "rev-parse", "HEAD").decode().strip()
    names = {log: str(log.resolve().relative_to(repo.resolve())) for log in logs}
    in_git = _blobs(repo, list(names.values()))
    problems, to_record, had_one = [], {}, []
    for log in logs:
        sidecar, blob = sidecars[log], in_git[names[log]]
        if blob is None:
            if not rawlog.has_digest(sidecar):
                problems.append(f"{log}: not committed at HEAD, so there is no copy in git to take its digest from: "
                                f"commit it first (a run committed by this version has its digest already)")
            else:
                had_one.append(log)  # committed with its digest, not in git yet: nothing to record
            continue
        if rawlog.read_log_bytes(log) != blob:
            problems.append(f"{log}: differs from its copy in git at HEAD ({head[:12]}): a committed log is never "
                            f"changed; restore it (git checkout HEAD -- {names[log]}) or commit the change knowingly")
            continue
        digest = rawlog.digest_record(blob, rawlog.TAKEN_FROM_GIT)
        if rawlog.has_digest(sidecar):
            if (sidecar.get(rawlog.LOG_SHA256), sidecar.get(rawlog.LOG_BYTES)) != (digest[rawlog.LOG_SHA256],
                                                                                  digest[rawlog.LOG_BYTES]):
                problems.append(f"{rawlog.sidecar_path(log)}: records a digest ({rawlog.LOG_SHA256} "
                                f"{str(sidecar.get(rawlog.LOG_SHA256))[:16]}, {sidecar.get(rawlog.LOG_BYTES)} bytes) "
                                f"that is not git's copy of {log.name} (sha256 {digest[rawlog.LOG_SHA256][:16]}, "
                                f"{len(blob)} bytes); a recorded digest is never replaced: find out which is right")
            else:
                had_one.append(log)
            continue
        to_record[log] = digest
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise DigestError(f"{problems[0]}{more}; no digest recorded")
    date = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for log, digest in to_record.items():
        digest[rawlog.DIGEST].update(commit=head, date=date)
        rawlog.write_json(rawlog.sidecar_path(log), {**sidecars[log], **digest})
    return Recorded(list(to_record), had_one, head)


def main(argv: list[str] | None = None) -> int:
    """Record the digests of committed raw logs whose sidecars have none, taken from git (HEAD)."""
    parser = argparse.ArgumentParser(prog="python -m virtrepro.results.digests", description=main.__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    recording = commands.add_parser("record", help=main.__doc__, description=__doc__.split("\n\n")[1])
    recording.add_argument("--data", default="data", help="the data directory (raw/<testbed>/... under it)")
    recording.add_argument("--testbed", help="only this testbed's logs (default: every testbed under DATA/raw)")
    args = parser.parse_args(argv)
    done = record(args.data, args.testbed)
    where = f" from git at {done.commit[:12]}" if done.commit else ""
    print(f"{args.data}: recorded the digests of {len(done.recorded)} raw logs{where}; "
          f"{len(done.had_one)} had one already")
    return 0


if __name__ == "__main__":
    from ..cli import run as run_cli

    run_cli(main)
