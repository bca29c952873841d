"""Pack a release for deposit in an archive: one tarball with a checksum list.

    python -m virtrepro.report.release [--out dist] [--allow-modified]

What it holds, under ``virtrepro-<commit>/``:

- the repository at the commit (``git archive``): code, configuration, raw logs and sidecars
  and tables (the data directory, virtrepro.datalayout), the papers' numbers and claims
  (``data/reference/``), the executed notebooks (``notebooks/``) and figures (``figures/``); not
  ``data/staging/`` (a reference run in progress);
- ``environment/``: what ran, as installed here: the Python packages of ``.venv`` (``pip
  freeze``), the host's Debian packages (``envs/debian-packages.txt`` and the benchmarks'
  declared ones) with their versions, the guest
  image's manifest (every package installed in it, with its version) where an image was built,
  the kernel and the machine (``uname``), and the release's own record (``release.json``: commit,
  date, whether tracked files differed from it);
- ``SHA256SUMS``: the SHA-256 of every other file in the release (``sha256sum -c`` checks it).

Beside the tarball, ``<name>.tar.gz.sha256`` holds the tarball's own checksum. Refused while
tracked files differ from the commit (a release is a commit), unless ``--allow-modified``, which
the record then says.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import platform
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from ..errors import VirtreproError

ROOT = Path(__file__).resolve().parents[3]
# what a release leaves out of the commit: a reference run in progress
EXCLUDED = ("data/staging",)


class ReleaseError(VirtreproError, RuntimeError):
    """The release cannot be packed (not a git checkout, modified files, a tool missing)."""


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", "") or error
        raise ReleaseError(f"git {' '.join(args)}: {str(detail).strip()}") from None


def _command_output(command: list[str]) -> str:
    """A command's output, or a line saying why there is none (the release records what it can)."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"not recorded: {' '.join(command)}: {error}\n"
    if done.returncode != 0:
        return f"not recorded: {' '.join(command)} exited with status {done.returncode}: {done.stderr.strip()}\n"
    return done.stdout


def debian_versions(names: list[str]) -> str:
    """``package version`` lines for the listed Debian packages (``not installed`` where absent)."""
    lines = []
    for name in names:
        done = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", name], capture_output=True, text=True)
        lines.append(f"{name} {done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else 'not installed'}")
    return "\n".join(lines) + "\n"


def environment_files(modified: bool, commit: str) -> dict[str, bytes]:
    """The files of ``environment/``: name -> content."""
    from ..testbed.packages import host_packages

    python = ROOT / ".venv" / "bin" / "python"
    images = sorted((ROOT / ".state" / "images").glob("*/image.json"))
    files = {
        "python-packages.txt": _command_output([str(python if python.exists() else sys.executable), "-m", "pip", "freeze"]),
        "debian-packages.txt": debian_versions(host_packages(ROOT / "envs" / "debian-packages.txt",
                                                             ROOT / "workflow" / "virtrepro" / "benchmarks")),
        "machine.txt": f"{' '.join(platform.uname())}\npython {platform.python_version()}\n",
        "release.json": json.dumps({"commit": commit, "packed_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                    "tracked_files_modified": modified, "excluded": list(EXCLUDED)}, indent=2) + "\n",
    }
    for manifest in images:
        files[f"guest-image-{manifest.parent.name}.json"] = manifest.read_text()
    return {name: text.encode() for name, text in files.items()}


def _members(commit: str) -> list[tuple[tarfile.TarInfo, bytes]]:
    """The commit's files (``git archive``), less :data:`EXCLUDED`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit], capture_output=True, check=True).stdout
    out = []
    with tarfile.open(fileobj=io.BytesIO(archive)) as source:
        for member in source.getmembers():
            if not member.isfile() or any(member.name == e or member.name.startswith(e + "/") for e in EXCLUDED):
                continue
            out.append((member, source.extractfile(member).read()))
    return out


def pack(out_dir: str | Path, allow_modified: bool = False) -> Path:
    """Write ``virtrepro-<commit>.tar.gz`` and its ``.sha256`` into ``out_dir``; the tarball's path."""
    commit = _git("rev-parse", "HEAD").strip()
    modified = bool(_git("status", "--porcelain", "--untracked-files=no").strip())
    if modified and not allow_modified:
        raise ReleaseError("tracked files differ from the commit: commit them first (or --allow-modified, which the "
                           "release records)")
    name = f"virtrepro-{commit[:12]}"
    files = [(f"{name}/{m.name}", m.mode, data) for m, data in _members(commit)]
    files += [(f"{name}/environment/{n}", 0o644, data) for n, data in environment_files(modified, commit).items()]
    sums = "".join(f"{hashlib.sha256(data).hexdigest()}  {path.split('/', 1)[1]}\n" for path, _, data in sorted(files))
    files.append((f"{name}/SHA256SUMS", 0o644, sums.encode()))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{name}.tar.gz"
    partial = target.with_name(f".{target.name}.partial")
    stamp = int(_git("show", "-s", "--format=%ct", commit).strip())
    # the files carry the commit's time, not the packing's (release.json says when it was packed)
    with open(partial, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=stamp) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, mode, data in sorted(files):
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), mode, stamp
            info.uname = info.gname = "root"
            tar.addfile(info, io.BytesIO(data))
    os.replace(partial, target)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    Path(f"{target}.sha256").write_text(f"{digest}  {target.name}\n")
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtrepro.report.release", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="dist", help="directory for the tarball and its checksum (default: dist)")
    parser.add_argument("--allow-modified", action="store_true", help="pack although tracked files differ from the commit")
    args = parser.parse_args(argv)
    target = pack(args.out, args.allow_modified)
    print(f"{target} ({target.stat().st_size / 2**20:.1f} MiB); checksum in {target.name}.sha256; "
          "inside: SHA256SUMS (sha256sum -c SHA256SUMS in the unpacked directory)")
    return 0


if __name__ == "__main__":
    from ..cli import run as run_cli

    run_cli(main)
