"""The table builder's cache: each raw log's and sidecar's sha256, hashed once and remembered with the
file's stamp (:class:`Checksums`, in ``<data>/tables/.cache/``, written by the builder only), and the
checksums made of them: a log's (:func:`log_checksums`) and the whole testbed's (:func:`fingerprint`),
which a table's manifest and its run facts name."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .. import datalayout
from .records import TABLE_FORMAT, _is_log, _repetition_files, raw_logs


class Checksums:
    """The sha256 of a testbed's raw logs and sidecars, each hashed once: remembered with the file's
    size, times and inode in ``<data>/tables/.cache/<testbed>.files.tsv`` (not committed: the
    times are this machine's), and hashed again only when one of those changed. Complete raw logs
    are never rewritten and sidecars are replaced whole (a new inode), so an unchanged stamp is an
    unchanged file; a file rewritten in place by hand changes its times and is hashed again.

    :meth:`logs` lists the testbed's logs with ``os.scandir`` and takes every file's stamp as it
    goes (one ``stat`` each, no path objects per file), so that at 50,000 logs the check of what
    changed costs little more than the system calls themselves."""

    def __init__(self, data_dir: str | Path, testbed: str):
        self.data_dir = Path(data_dir)
        self.testbed = testbed
        self.path = datalayout.table_cache_path(self.data_dir, testbed, "files.tsv")
        self.known = self._read()
        self.seen: dict[str, tuple[str, str]] = {}  # relative path -> (stamp, sha256)
        self.stamps: dict[str, str] = {}  # taken by logs(): relative path -> "size<tab>mtime<tab>ctime<tab>inode"
        self._listed: list[str] | None = None  # what logs() returned, and its names relative to data_dir
        self._names: list[str] = []

    def logs(self) -> list[str]:
        """Every final raw log of the testbed, as :func:`raw_logs` lists them (the same order, as
        text rather than path objects: 50,000 of those cost a second), with the stamps of the logs and
        their sidecars taken on the way."""
        root = f"{datalayout.testbed_dir(self.data_dir, self.testbed)}"
        found, names = [], []
        for where, entry in _repetition_files(root):
            try:
                stat = entry.stat()
            except FileNotFoundError:
                continue
            name = datalayout.relative_log(self.testbed, where, entry.name)
            self.stamps[name] = f"{stat.st_size}\t{stat.st_mtime_ns}\t{stat.st_ctime_ns}\t{stat.st_ino}"
            if _is_log(entry.name):
                found.append(f"{root}/{where}/{entry.name}")
                names.append(name)
        self._listed, self._names = found, names
        return found

    def names(self, logs: list[Path]) -> list[str]:
        """Each log's path relative to the data directory (without path arithmetic for what
        :meth:`logs` listed)."""
        if logs is self._listed:
            return self._names
        return [str(Path(log).relative_to(self.data_dir)) for log in logs]

    def of(self, path: Path) -> str | None:
        """The file's sha256 (hex), or None when it is not there."""
        text, base = str(path), f"{self.data_dir}{os.sep}"
        return self.of_name(text[len(base):] if text.startswith(base) else str(path.relative_to(self.data_dir)))

    def of_name(self, relative: str) -> str | None:
        """:meth:`of` the file at ``relative`` (to the data directory)."""
        if relative in self.seen:  # asked before in this build
            return self.seen[relative][1]
        stamp = self.stamps.pop(relative, None)
        if stamp is None:
            try:
                stat = os.stat(self.data_dir / relative)
            except FileNotFoundError:
                return None
            stamp = f"{stat.st_size}\t{stat.st_mtime_ns}\t{stat.st_ctime_ns}\t{stat.st_ino}"
        entry = self.known.get(relative)
        digest = (entry[1] if entry and entry[0] == stamp
                  else hashlib.sha256((self.data_dir / relative).read_bytes()).hexdigest())
        self.seen[relative] = (stamp, digest)
        return digest

    HEADER = "virtrepro file checksums 1: path, size, mtime_ns, ctime_ns, inode, sha256\n"

    def _read(self) -> dict[str, tuple[str, str]]:
        """The remembered stamps (a tab-separated file: JSON takes half a second at 100,000 files);
        anything unreadable is forgotten (every file is hashed again)."""
        try:
            text = self.path.read_text()
        except (OSError, UnicodeDecodeError):
            return {}
        if not text.startswith(self.HEADER):
            return {}
        known = {}
        for line in text[len(self.HEADER):].splitlines():
            name, _, rest = line.partition("\t")
            stamp, _, digest = rest.rpartition("\t")
            if len(digest) != 64 or stamp.count("\t") != 3:
                return {}
            known[name] = (stamp, digest)
        return known

    def save(self) -> None:
        if self.seen != self.known:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            text = "".join(f"{name}\t{stamp}\t{digest}\n" for name, (stamp, digest) in self.seen.items())
            _replace(self.path, (self.HEADER + text).encode())



def _replace(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all (a reader sees the old file or the new one)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)


def log_checksums(data_dir: str | Path, testbed: str, checksums: Checksums | None = None,
                  logs: list[str | Path] | None = None) -> dict[str, str]:
    """Each raw log's checksum: of its content and its sidecar's, and of the table format (the
    parsers' version: :data:`TABLE_FORMAT`); the rows of a log whose checksum is unchanged are
    taken from the earlier table."""
    checksums = checksums or Checksums(data_dir, testbed)
    found = {}
    for name in checksums.names(raw_logs(data_dir, testbed) if logs is None else logs):
        parts = [checksums.of_name(name), checksums.of_name(_sidecar_name(name))]
        found[name] = hashlib.sha256(f"format={TABLE_FORMAT} {parts[0]} {parts[1]}".encode()).hexdigest()
    return found


_sidecar_name = datalayout.sidecar_name


def fingerprint(data_dir: str | Path, testbed: str, checksums: Checksums | None = None,
                logs: list[str | Path] | None = None, checksummed: dict[str, str] | None = None) -> str:
    """One checksum of all raw logs and sidecars of ``testbed`` (paths and contents) and the table
    format: a table whose manifest holds it is the table of these logs. It is made of the logs'
    :func:`log_checksums` (``checksummed``, when the caller has them)."""
    current = log_checksums(data_dir, testbed, checksums, logs) if checksummed is None else checksummed
    digest = hashlib.sha256(f"format={TABLE_FORMAT}".encode())
    for name, checksum in current.items():
        digest.update(f"{name}\0{checksum}\n".encode())
    return digest.hexdigest()

