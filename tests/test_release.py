"""The release pack: a commit's files less the run in progress, the environment, and checksums that verify."""

from __future__ import annotations

import hashlib
import json
import subprocess
import tarfile

import pytest

from virtrepro.report import release


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A small git repository shaped like this one (the release reads ROOT)."""
    root = tmp_path / "repo"
    for path, text in {
        "README.md": "readme\n",
        "envs/debian-packages.txt": "# comment\ncoreutils\nno-such-package-here\n",
        "workflow/virtrepro/benchmarks/one.py": "class One:\n    name = 'one'\n    packages = ('coreutils', 'tar')\n",
        "data/raw/tb/native/mbw/v/rep-0.log": "a raw log\n",
        "data/staging/raw/tb/native/mbw/v/rep-0.log": "a run in progress\n",
        "notebooks/summary.ipynb": "{}\n",
    }.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    monkeypatch.setattr(release, "ROOT", root)
    return root


def test_a_release_holds_the_commit_less_staging_with_checksums_that_verify(repo, tmp_path):
    target = release.pack(tmp_path / "dist")
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert target.name == f"virtrepro-{commit[:12]}.tar.gz"
    digest, name = (tmp_path / "dist" / f"{target.name}.sha256").read_text().split()
    assert name == target.name and digest == hashlib.sha256(target.read_bytes()).hexdigest()
    out = tmp_path / "unpacked"
    with tarfile.open(target) as tar:
        tar.extractall(out, filter="data")
    top = out / f"virtrepro-{commit[:12]}"
    assert (top / "data/raw/tb/native/mbw/v/rep-0.log").read_text() == "a raw log\n"
    assert not (top / "data/staging").exists()
    record = json.loads((top / "environment/release.json").read_text())
    assert record["commit"] == commit and record["tracked_files_modified"] is False
    versions = (top / "environment/debian-packages.txt").read_text().splitlines()
    assert versions[1] == "no-such-package-here not installed" and versions[0].startswith("coreutils ")
    assert versions[0] != "coreutils not installed"
    assert len(versions) == 3 and versions[2].startswith("tar ") and versions[2] != "tar not installed"  # declared
    # the checksum list covers every other file, and the system's sha256sum agrees with it
    listed = {line.split("  ", 1)[1] for line in (top / "SHA256SUMS").read_text().splitlines()}
    present = {str(p.relative_to(top)) for p in top.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    assert listed == present
    check = subprocess.run(["sha256sum", "--strict", "-c", "SHA256SUMS"], cwd=top, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_modified_tracked_file_stops_the_release_unless_allowed(repo, tmp_path):
    (repo / "README.md").write_text("changed\n")
    with pytest.raises(release.ReleaseError, match="tracked files differ from the commit"):
        release.pack(tmp_path / "dist")
    assert not (tmp_path / "dist").exists() or not list((tmp_path / "dist").iterdir())
    target = release.pack(tmp_path / "dist", allow_modified=True)
    with tarfile.open(target) as tar:
        record = json.loads(tar.extractfile(f"{target.name[:-7]}/environment/release.json").read())
    assert record["tracked_files_modified"] is True
