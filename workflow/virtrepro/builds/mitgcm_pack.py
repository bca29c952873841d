"""Pack the MITgcm tree of one commit of a local git clone as a reproducible tarball (docs/mitgcm.md).

The tar is written here, not by ``git archive``: its members are the commit's files under the paths
asked for (what building ``verification/exp2`` needs), sorted by name, each with the commit's time,
owner 0/0 and the tree's mode, under one top directory ``MITgcm-<commit>/``; gzip's header has no
name and no time. So the same commit and paths give the same bytes whatever git's version, and the
same checksum wherever zlib compresses alike (the tar inside is identical in any case).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import subprocess
import tarfile
from pathlib import Path

from ..errors import VirtreproError

# what genmake2 needs to build verification/exp2 (the model, its execution environment, the packages
# and the build tools), and the licence; the rest of the repository (documentation, other experiments,
# utilities) is left out
PACKED_PATHS = ("LICENSE.txt", "README.md", "eesupp", "model", "pkg", "tools", "verification/exp2")


class PackError(VirtreproError, RuntimeError):
    """The commit cannot be packed (no such commit or path, a file missing from the clone)."""


def _git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    try:
        return subprocess.run(["git", "--git-dir" if _bare(repo) else "-C", str(repo), *args], input=data,
                              capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", b"") or b""
        raise PackError(f"git {' '.join(args[:2])} in {repo} failed: "
                        f"{detail.decode(errors='replace').strip() or error}") from None


def _bare(repo: Path) -> bool:
    return not (repo / ".git").exists() and (repo / "HEAD").is_file() and (repo / "objects").is_dir()


def tree_entries(repo: Path, commit: str, paths=PACKED_PATHS) -> list[tuple[str, str, str]]:
    """``(mode, blob, path)`` of every file under ``paths`` in ``commit``, sorted by path."""
    listing = _git(repo, "ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths)
    entries = []
    for item in listing.split(b"\0"):
        if not item:
            continue
        meta, path = item.split(b"\t", 1)
        mode, kind, blob = meta.decode().split()
        if kind == "blob":  # a submodule (commit) has no content here
            entries.append((mode, blob, path.decode()))
    found = {path for _, _, path in entries}
    missing = [p for p in paths if p not in found and not any(f.startswith(p.rstrip("/") + "/") for f in found)]
    if missing:
        raise PackError(f"commit {commit} of {repo} has no {', '.join(missing)}")
    return sorted(entries, key=lambda entry: entry[2])


def _blobs(repo: Path, blobs: list[str]) -> dict[str, bytes]:
    """The contents of ``blobs`` (one ``git cat-file --batch``); PackError naming one the clone lacks."""
    out = _git(repo, "cat-file", "--batch", data="".join(f"{b}\n" for b in blobs).encode())
    contents, stream = {}, io.BytesIO(out)
    for blob in blobs:
        header = stream.readline().decode().split()
        if len(header) != 3:
            raise PackError(f"the clone {repo} lacks object {blob} ({' '.join(header)}): a partial copy cannot be packed")
        contents[blob] = stream.read(int(header[2]))
        stream.read(1)  # the newline after each object
    return contents


def pack(repo: Path | str, commit: str, output: Path | str, paths=PACKED_PATHS) -> dict:
    """Pack ``paths`` of ``commit`` of the clone ``repo`` (bare or not) into ``output`` (.tar.gz);
    return ``{"commit", "top", "paths", "files", "tar_sha256", "sha256"}``."""
    repo, output = Path(repo), Path(output)
    full = _git(repo, "rev-parse", "--verify", f"{commit}^{{commit}}").decode().strip()
    when = int(_git(repo, "show", "-s", "--format=%ct", full).decode().strip())
    top = f"MITgcm-{full[:12]}"
    entries = tree_entries(repo, full, paths)
    contents = _blobs(repo, sorted({blob for _, blob, _ in entries}))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for directory in sorted({str(Path(top, path).parent) for _, _, path in entries} | {top}
                                | {str(p) for _, _, path in entries for p in Path(top, path).parents if str(p) != "."}):
            tar.addfile(_info(directory, tarfile.DIRTYPE, 0o755, when))
        for mode, blob, path in entries:
            data = contents[blob]
            if mode == "120000":
                info = _info(f"{top}/{path}", tarfile.SYMTYPE, 0o777, when)
                info.linkname = data.decode()
                tar.addfile(info)
            else:
                info = _info(f"{top}/{path}", tarfile.REGTYPE, 0o755 if mode == "100755" else 0o644, when)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    raw = buffer.getvalue()
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + ".part")
    with open(partial, "wb") as handle, gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0,
                                                      compresslevel=9) as packed:
        packed.write(raw)
    partial.rename(output)
    return {"commit": full, "top": top, "paths": list(paths), "files": len(entries),
            "tar_sha256": hashlib.sha256(raw).hexdigest(), "sha256": hashlib.sha256(output.read_bytes()).hexdigest()}


def _info(name: str, kind: bytes, mode: int, when: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = kind, mode, when
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info
