"""Provenance that names what ran: reference data only from a committed tree, the guest image's
installed package versions, and the benchmark packages' versions where a benchmark ran."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from virtrepro.guests import image as guest_image
from virtrepro.measurement.job import MeasurementError, image_record, package_versions, require_clean_tree


def dpkg_status(path: str = "/var/lib/dpkg/status") -> dict[str, str]:
    """Installed packages and versions read straight from dpkg's status file (independent of dpkg-query)."""
    found = {}
    for stanza in Path(path).read_text().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line and not line.startswith(" "))
        if fields.get("Status") == "install ok installed":
            found[fields["Package"]] = fields["Version"]
    return found


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    git(tmp_path, "init", "-q")
    for path in ("workflow/virtrepro/x.py", "config/config.yaml", "README.md"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("one\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    return tmp_path


CONFIG = {"testbeds": {"ref": {"kind": "local", "require_clean_tree": True}, "mine": {"kind": "local"}}}


def test_a_reference_testbed_is_measured_only_from_a_committed_tree(repo):
    require_clean_tree(CONFIG, "ref", repo)  # clean
    (repo / "README.md").write_text("two\n")  # not code
    (repo / "workflow" / "virtrepro" / "new.py").write_text("untracked\n")
    require_clean_tree(CONFIG, "ref", repo)
    (repo / "config" / "config.yaml").write_text("two\n")
    with pytest.raises(MeasurementError, match=r"^testbed ref holds reference data \(require_clean_tree\): commit or "
                                               r"stash 1 modified files first \(config/config.yaml\)$"):
        require_clean_tree(CONFIG, "ref", repo)
    require_clean_tree(CONFIG, "mine", repo)  # a testbed without the option measures anyway


def test_the_image_record_lists_the_installed_packages_with_their_versions():
    installed = guest_image.installed_packages("/")  # this machine's own dpkg database as a root file system
    status = dpkg_status()
    assert status and {name: installed.get(name) for name in status} == status


class LocalShell:
    """Runs a command in this machine's shell: the one call package_versions makes of a connection."""

    def run(self, command, **_):
        return subprocess.run(["sh", "-c", command], capture_output=True, text=True)


def test_the_sidecar_names_the_benchmark_packages_versions_where_it_ran():
    status = dpkg_status()
    present = sorted(status)[:2]
    versions = package_versions(LocalShell(), [*present, "virtrepro-no-such-package"])
    assert versions == {**{name: status[name] for name in present}, "virtrepro-no-such-package": None}
    assert package_versions(LocalShell(), []) == {}


def test_the_sidecar_names_the_guest_image_record(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTREPRO_STATE", str(tmp_path))
    recipe = guest_image.recipe_hash()
    assert image_record("native") is None
    assert image_record("lxc") == {"recipe": recipe, "record_sha256": None}  # not built here
    record = tmp_path / "images" / recipe / "image.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"recipe": recipe, "installed": {"sysbench": "1.0.20+ds-3"}}))
    assert image_record("qemu-tcg") == {"recipe": recipe, "record_sha256": hashlib.sha256(record.read_bytes()).hexdigest()}


def test_the_invocation_names_no_path_outside_the_repository(tmp_path):
    """A tarball kept outside the repository is recorded by its file name; a path inside the repository
    relative to it; words that are not absolute paths stay as they are."""
    from virtrepro.measurement.provenance import without_local_paths

    repo = tmp_path / "clone"
    assert without_local_paths("mitgcm={tarball: /srv/sources/MITgcm-checkpoint69p.tar.gz}", repo) == \
        "mitgcm={tarball: MITgcm-checkpoint69p.tar.gz}"
    assert without_local_paths(f"{repo}/config/npb-from-git.yaml", repo) == "config/npb-from-git.yaml"
    assert without_local_paths("data_dir=data/staging", repo) == "data_dir=data/staging"
    assert without_local_paths("platforms=[native,lxc]", repo) == "platforms=[native,lxc]"
    assert without_local_paths("--configfile=/etc/virtrepro/site.yaml", repo) == "--configfile=site.yaml"
