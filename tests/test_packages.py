"""Every host program and file the code relies on comes with a package the project installs.

The relied-on paths are declared next to the code that uses them (``HOST_PATHS`` in the
modules, ``Benchmark.programs``, ``GUEST_PATHS`` in the image builder); dpkg says which package
owns each, and that package must be installed by the host's set-up (``envs/debian-packages.txt`` and
the benchmarks' declared packages: ``packages.host_packages``), or be in the image's ``PACKAGES``,
or in the Depends closure of one listed there. A package that happens to be installed on this
machine does not count.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import REPO
from virtrepro.testbed import packages
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.guests.image import PACKAGES

LIST = REPO / "envs" / "debian-packages.txt"

pytestmark = pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="needs dpkg (Debian)")


@pytest.fixture(scope="module")
def db() -> packages.PackageDb:
    return packages.PackageDb()


def test_host_package_list_installs_every_relied_on_path(db):
    problems = packages.check_host(packages.host_packages(LIST), db)
    assert not problems, "\n".join(map(str, problems))


def test_check_reports_exactly_the_packages_removed_from_the_list(db):
    """The check can fail: without lxc-templates (the include of the LXC config) and qemu-utils
    (qemu-img) the host list misses exactly these two, and names the paths that need them."""
    removed = {"lxc-templates", "qemu-utils"}
    listed = [name for name in packages.host_packages(LIST) if name not in removed]
    assert len(listed) == len(packages.host_packages(LIST)) - 2
    problems = packages.check_host(listed, db)
    assert {p.owner for p in problems} == removed
    assert {p.path for p in problems} == {"/usr/share/lxc/config/debian.common.conf", "qemu-img"}


def test_check_reports_a_benchmark_package_the_host_would_not_get(db):
    """The list file alone lacks the benchmarks' packages: the check names fio's program, among others."""
    problems = packages.check_host(packages.read_list(LIST), db)
    assert "fio" in {p.owner for p in problems} and "fio" in {p.path for p in problems}


def test_guest_image_package_list_installs_what_the_benchmarks_run(db):
    problems = packages.check_guest(PACKAGES, db=db)
    assert not problems, "\n".join(map(str, problems))


def test_guest_check_reports_a_package_removed_from_the_image(db):
    problems = packages.check_guest([name for name in PACKAGES if name not in ("fio", "linux-image-cloud-amd64")], db=db)
    assert {p.owner for p in problems} == {"fio", "linux-image-cloud-amd64", "initramfs-tools"}
    assert {p.path for p in problems} == {"fio", "/boot/vmlinuz-*", "mkinitramfs"}


@pytest.mark.integration
def test_a_built_guest_image_holds_every_path_from_its_own_packages(built_image):
    """In a built image dpkg's own database says who owns the kernel, sshd and the benchmarks' programs."""
    rootfs = built_image / "rootfs"
    db = packages.PackageDb(str(rootfs / "var" / "lib" / "dpkg"))
    problems = packages.check_guest(PACKAGES, rootfs, db)
    assert not problems, "\n".join(map(str, problems))
    without = packages.check_guest([name for name in PACKAGES if name not in ("fio", "openssh-server")], rootfs, db)
    assert {p.owner for p in without} == {"fio", "openssh-server"}


def test_every_benchmark_that_runs_a_command_declares_its_programs():
    for benchmark in BENCHMARKS.values():
        assert benchmark.host_side or benchmark.programs, benchmark.name


def test_declarations_are_collected_from_the_modules_that_use_them():
    host = packages.collect("HOST_PATHS")
    assert host["/usr/share/lxc/config/debian.common.conf"] == "lxc-templates"  # platforms/lxc.py
    assert host["/usr/share/seabios/bios-256k.bin"] == "seabios"  # platforms/qemu.py
    assert host["mmdebstrap"] == "mmdebstrap"  # guests/image.py
    assert "sysbench" in packages.collect("INSTANCE_PATHS")  # Benchmark.programs
    assert packages.collect("GUEST_PATHS")["/boot/vmlinuz-*"] == "linux-image-cloud-amd64"


def test_lxc_config_includes_only_declared_files():
    """The files the container configuration includes are the ones lxc.py declares."""
    source = (REPO / "workflow" / "virtrepro" / "platforms" / "lxc.py").read_text()
    from virtrepro.platforms import lxc

    included = {line.split("=", 1)[1].strip().strip('",') for line in source.splitlines() if "lxc.include =" in line}
    assert included and included <= set(lxc.HOST_PATHS)


# --- the closure's rules, on a database written out here ---------------------------------------

def small_db(**records: str) -> packages.PackageDb:
    """A PackageDb of the given packages: name='Depends field;Provides field;Priority'."""
    db = packages.PackageDb.__new__(packages.PackageDb)
    db.admindir, db.installed, db._providers = None, {}, None
    db._available = {}
    for name, record in records.items():
        depends, provides, priority = (record.split(";") + ["", ""])[:3]
        db._available[name.replace("_", "-")] = packages.PackageInfo(
            packages._names(depends), [g[0] for g in packages._names(provides)], False, priority)
    return db


def test_dependency_fields_parse_as_or_groups_without_versions():
    # lxc's Depends in Debian 12, shortened
    field = "dnsmasq-base, nftables | iptables, debconf (>= 0.5) | debconf-2.0, perl:any, libc6 (>= 2.36)"
    assert packages._names(field) == [["dnsmasq-base"], ["nftables", "iptables"], ["debconf", "debconf-2.0"],
                                      ["perl"], ["libc6"]]


def test_closure_takes_the_first_alternative_unless_another_is_already_in():
    db = small_db(podman="conmon, crun | runc", conmon="", crun="", runc="", tool="runc, podman")
    assert packages.closure({"podman"}, db) == {"podman", "conmon", "crun"}
    assert packages.closure({"tool"}, db) == {"tool", "runc", "podman", "conmon"}


def test_closure_resolves_a_virtual_package_only_to_a_sure_provider():
    db = small_db(a="awk", mawk=";awk;required", gawk=";awk;optional",
                  b="mta", exim=";mta;optional", postfix=";mta;optional",
                  c="only-one", provider=";only-one;optional")
    assert packages.closure({"a"}, db) == {"a", "mawk"}  # apt prefers the higher Priority
    assert packages.closure({"b"}, db) == {"b"}  # two alike: neither is sure
    assert packages.closure({"c"}, db) == {"c", "provider"}


def test_owners_follow_alternatives_and_merged_usr():
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("openmpi-bin is not installed")
    # /usr/bin/mpirun -> /etc/alternatives/mpirun -> ... owned by openmpi-bin; /usr/bin/ip is /bin/ip in dpkg
    owned = packages.owners(["/usr/bin/mpirun", "/usr/bin/ip"])
    assert owned == {"/usr/bin/mpirun": {"openmpi-bin"}, "/usr/bin/ip": {"iproute2"}}
    assert Path("/usr/bin/mpirun").is_symlink()
