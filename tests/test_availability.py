"""Which platforms a testbed's hosts can run (virtrepro.testbed.availability): the probe's shell script run
for real as root and as an unprivileged user, the decision for each platform from the facts, and
the refusal of a garbled answer. The workflow's use of the record: test_across_hosts.py."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import require_tools
from virtrepro.testbed import availability
from virtrepro.testbed.kinds import LocalTestbed
from virtrepro.testbed.availability import FACTS_COMMAND, decide, parse_facts, unavailable

ROOT = {"root": "yes", "kvm": "yes", "user": "root", "userns": "yes", "userns_user": "nobody"}
NO_ROOT_NO_KVM = {"root": "no", "kvm": "missing", "user": "alice", "userns": "yes", "userns_user": "alice"}


def test_the_facts_script_answers_for_root_and_for_an_unprivileged_user():
    as_root = parse_facts(subprocess.run(["sh", "-c", FACTS_COMMAND], capture_output=True, text=True, check=True).stdout)
    assert as_root["root"] == "yes" and as_root["user"] == "root" and as_root["userns_user"] == "nobody"
    # whether nobody may make a user namespace, asked here independently of the script
    nobody_userns = subprocess.run(["setpriv", "--reuid=nobody", "--regid=65534", "--clear-groups", "unshare", "--user",
                                    "--map-root-user", "true"], capture_output=True, cwd="/").returncode == 0
    assert as_root["userns"] == ("yes" if nobody_userns else "no")
    if not shutil.which("runuser"):
        pytest.skip("runuser (util-linux) is missing")
    # nobody: no root, no sudo; /dev/kvm (if there) is root's and the kvm group's
    out = subprocess.run(["runuser", "-u", "nobody", "--", "sh", "-c", FACTS_COMMAND], capture_output=True, text=True,
                         check=True, cwd="/").stdout
    as_nobody = parse_facts(out)
    assert as_nobody["root"] == "no" and as_nobody["user"] == "nobody" and as_nobody["userns_user"] == "nobody"
    assert as_nobody["userns"] == as_root["userns"]
    assert as_nobody["kvm"] == ("missing" if subprocess.run(["test", "-e", "/dev/kvm"]).returncode else "denied")


@pytest.mark.parametrize("answer", ["", "root=yes\nkvm=yes\n", "root=maybe\nkvm=yes\nuser=x\nuserns=yes\n",
                                    "root=yes\nkvm=sometimes\nuser=x\nuserns=yes\n", "root=yes\nkvm=yes\nuser=x\n",
                                    "root=yes\nkvm=yes\nuser=x\nuserns=perhaps\n", "bash: sudo: command not found\n"])
def test_a_cut_or_garbled_answer_is_an_error_not_a_guess(answer):
    with pytest.raises(ValueError, match="answer lacks"):
        parse_facts(answer)


def test_without_root_only_native_and_the_unprivileged_container_run_and_the_reason_names_host_and_user():
    decided = decide(["native", "lxc", "podman", "qemu", "qemu-kvm", "charliecloud"], {"c/n1": ROOT, "c/n2": NO_ROOT_NO_KVM})
    assert decided["native"] == decided["charliecloud"] == {"status": "available"}
    assert set(unavailable({"platforms": decided})) == {"lxc", "podman", "qemu", "qemu-kvm"}
    assert decided["lxc"]["reason"] == ("c/n2: lxc needs root (or passwordless sudo) on the host, and alice has "
                                        "neither (containers, VMs and their networks are made by root)")
    assert "c/n1" not in decided["podman"]["reason"]  # the host that can is not named


def test_without_kvm_qemu_falls_back_to_tcg_but_qemu_kvm_is_unavailable():
    sudo_no_kvm = {**NO_ROOT_NO_KVM, "root": "sudo"}
    decided = decide(["qemu", "qemu-kvm", "qemu-tcg", "lxc"], {"c/n1": sudo_no_kvm})
    assert decided["qemu"] == decided["qemu-tcg"] == decided["lxc"] == {"status": "available"}
    assert decided["qemu-kvm"]["reason"] == ("c/n1: qemu-kvm needs a usable /dev/kvm, and it is missing "
                                             "(no KVM on the host: a compute node without virtualization)")
    denied = decide(["qemu-kvm"], {"c/n1": {**ROOT, "kvm": "denied"}})
    assert denied["qemu-kvm"]["reason"].endswith("and it is not usable by root")


def test_without_user_namespaces_the_unprivileged_container_is_unavailable_and_the_rest_runs():
    decided = decide(["native", "lxc", "charliecloud"], {"c/n1": {**ROOT, "userns": "no"}})
    assert decided["native"] == decided["lxc"] == {"status": "available"}
    assert decided["charliecloud"]["reason"] == (
        "c/n1: charliecloud needs unprivileged user namespaces, and the host refuses them to nobody "
        "(user.max_user_namespaces, kernel.unprivileged_userns_clone or a security module)")


@pytest.mark.integration
def test_the_probe_asks_the_testbed_host_over_ssh(tmp_path):
    """The real path: the local testbed's sshd, the script over SSH, the record the workflow reads."""
    require_tools("/usr/sbin/sshd")
    testbed = LocalTestbed("avail-probe", tmp_path)
    try:
        record = availability.probe(testbed, ["native", "lxc", "qemu"])
    finally:
        testbed.down()
    facts = record["hosts"]["avail-probe"]
    assert facts["root"] == "yes" and facts["user"] == "root"
    assert facts["kvm"] == ("missing" if subprocess.run(["test", "-e", "/dev/kvm"]).returncode else "yes")
    assert unavailable(record) == {}
