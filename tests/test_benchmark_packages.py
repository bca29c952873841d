"""A benchmark's Debian packages are named once, in its class, and every package list is read from there.

``virtrepro.benchmark_packages`` reads the declarations from the source (the set-up script runs it
with the system's python3 before the project's environment exists); the expected values here come
from the imported classes themselves, the other way of knowing them.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO
from virtrepro import benchmark_packages
from virtrepro.testbed import packages
from virtrepro.benchmarks import BENCHMARKS
from virtrepro.guests.image import PACKAGES, SYSTEM_PACKAGES

LIST = REPO / "envs" / "debian-packages.txt"


def imported() -> set[str]:
    return {name for benchmark in BENCHMARKS.values() for name in benchmark.packages}


def test_the_source_declares_what_the_imported_classes_hold():
    assert set(benchmark_packages.declared()) == imported()
    assert benchmark_packages.declared() == sorted(set(benchmark_packages.declared()))
    assert {"sysbench", "iozone3", "lmbench", "hpcc", "openmpi-bin"} <= set(benchmark_packages.declared())


def test_the_script_prints_them_with_the_systems_python_alone():
    """As the set-up script runs it: a file path, no PYTHONPATH, no site packages (-S: not the venv's)."""
    done = subprocess.run([sys.executable, "-I", "-S", str(REPO / "workflow" / "virtrepro" / "benchmark_packages.py")],
                          capture_output=True, text=True, check=True, cwd="/")
    assert done.stdout.split() == sorted(imported())


def test_every_class_that_assigns_packages_is_read_also_an_abstract_base():
    text = ('class Base:\n    packages: tuple[str, ...]\n'
            'class Tool(Base):\n    name = "tool"\n    packages = ("a", "b")\n'
            'class Other(Base):\n    packages: tuple = ["c"]\n    def f(self):\n        packages = ("not", "this")\n')
    assert benchmark_packages.in_source(text) == {"Tool": ["a", "b"], "Other": ["c"]}


@pytest.mark.parametrize("value", ["PACKAGES", "(\"a\",) + MORE", "(\"a\", 1)", "\"sysbench\"", "(\"\",)"])
def test_a_packages_that_is_no_literal_tuple_of_names_is_an_error(value, tmp_path):
    (tmp_path / "mod.py").write_text(f"class B:\n    name = 'b'\n    packages = {value}\n")
    with pytest.raises(benchmark_packages.DeclarationError, match=r"mod.py:3 \(B\): packages must be"):
        benchmark_packages.declared(tmp_path)
    done = subprocess.run([sys.executable, "-I", "-S", benchmark_packages.__file__, str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 1 and "packages must be" in done.stderr and not done.stdout


def test_a_directory_without_benchmark_modules_is_an_error_not_an_empty_list(tmp_path):
    with pytest.raises(benchmark_packages.DeclarationError, match="no benchmark module"):
        benchmark_packages.declared(tmp_path)
    done = subprocess.run([sys.executable, "-I", "-S", benchmark_packages.__file__, str(tmp_path / "none")],
                          capture_output=True, text=True)
    assert done.returncode == 1 and not done.stdout


def test_the_host_list_names_no_benchmark_package_and_the_host_gets_them_all():
    listed = packages.read_list(LIST)
    # beside the ones the set-up itself and the testbed need (python3, ssh), no benchmark's package
    assert not set(listed) & (imported() - {"python3", "coreutils", "openssh-client"}), "declared in its class"
    host = packages.host_packages(LIST)
    assert host[:len(listed)] == listed and imported() <= set(host)
    assert len(host) == len(set(host))
    assert "openssh-server" in listed  # the embedded local testbed's sshd


def test_the_guest_image_is_its_own_packages_and_the_declared_ones_each_once():
    assert set(PACKAGES) == set(SYSTEM_PACKAGES) | imported()
    assert len(PACKAGES) == len(set(PACKAGES)) and PACKAGES[:len(SYSTEM_PACKAGES)] == SYSTEM_PACKAGES
    assert not {"sysbench", "fio", "hpcc", "lmbench"} & set(SYSTEM_PACKAGES)


def test_the_set_up_script_installs_the_declared_packages():
    script = (REPO / "scripts" / "setup.sh").read_text()
    assert "python3 workflow/virtrepro/benchmark_packages.py" in script
    assert 'install_debian_packages "declared by the benchmarks" $declared' in script


def test_the_set_up_script_leaves_no_service_block_behind_when_apt_fails(tmp_path):
    """setup.sh blocks services (policy-rc.d) while apt-get installs; a failed install must end
    the script with apt's status and the block removed (a RETURN trap would not run under set -e).
    The script's own functions run, with the block's path moved into a temporary directory (this
    machine may have a policy-rc.d of its own, which must stay)."""
    import shutil

    if shutil.which("apt-get") is None:
        pytest.skip("needs apt-get")
    policy = tmp_path / "policy-rc.d"
    script = (REPO / "scripts" / "setup.sh").read_text()
    functions = tmp_path / "functions.sh"
    start, end = script.index("\nlog() {"), script.index("\npython_environment() {")  # log and the two apt functions
    functions.write_text(script[start:end].replace("/usr/sbin/policy-rc.d", str(policy)))
    assert str(policy) in functions.read_text()
    # enable_extra_component would edit this machine's apt sources: not what is tested here
    ran = subprocess.run(["bash", "-c", f"set -euo pipefail; source {functions}; SUDO=''; "
                          "enable_extra_component() { return 1; }; "
                          "install_debian_packages test no-such-package-virtrepro; echo went on"],
                         capture_output=True, text=True, timeout=600)
    assert ran.returncode != 0 and "went on" not in ran.stdout
    assert "apt-get failed" in ran.stderr and "no-such-package-virtrepro" in ran.stderr
    assert not policy.exists()
