"""The embedded local testbed: a real sshd on 127.0.0.1, real SSH, nothing left behind."""

from __future__ import annotations

import os
import subprocess

import paramiko
import pytest

from conftest import require_tools
from virtrepro.testbed import Host, LocalTestbed, connect
from virtrepro.testbed import TestbedError as BringUpError

pytestmark = pytest.mark.integration


def sshd_processes_for(testbed: LocalTestbed) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "pid,stat,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if str(testbed.dir) in line and " Z" not in line]


@pytest.fixture
def testbed(tmp_path):
    require_tools("/usr/sbin/sshd", "ssh-keygen")
    bed = LocalTestbed("unit", tmp_path / "state")
    yield bed
    bed.down()


def test_up_run_over_ssh_and_down_leaves_nothing(testbed):
    host = testbed.up()
    assert host.hostname == "127.0.0.1" and host.port > 0
    assert testbed.up() == host  # idempotent: the running sshd is reused
    with connect(host) as connection:
        result = connection.run("echo hello-from-$(hostname); id -u", hide=True, in_stream=False)
    assert result.stdout.splitlines()[0].startswith("hello-from-")
    assert result.stdout.splitlines()[1] == str(os.getuid())
    assert sshd_processes_for(testbed)
    testbed.down()
    assert not testbed.running()
    assert sshd_processes_for(testbed) == []


def test_unknown_host_key_is_refused(testbed, tmp_path):
    host = testbed.up()
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    stranger = Host(host.name, host.hostname, host.port, host.user, host.identity, str(empty))
    with pytest.raises(paramiko.SSHException, match="not found in known_hosts"):
        with connect(stranger) as connection:
            connection.run("true", hide=True, in_stream=False)


def test_missing_known_hosts_file_is_an_error(testbed, tmp_path):
    host = testbed.up()
    nowhere = Host(host.name, host.hostname, host.port, host.user, host.identity, str(tmp_path / "nope"))
    with pytest.raises(BringUpError, match="known_hosts"):
        connect(nowhere)


def test_sshd_goes_away_when_its_owner_dies(testbed):
    owner = subprocess.Popen(["sleep", "60"])
    try:
        testbed.up(owner_pid=owner.pid)
        assert testbed.running()
    finally:
        owner.kill()
        owner.wait()
    import time

    deadline = time.monotonic() + 10
    while testbed.running() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not testbed.running()
    assert sshd_processes_for(testbed) == []


def test_private_keys_stay_in_the_state_directory(testbed):
    testbed.up()
    assert oct(testbed.dir.stat().st_mode & 0o777) == "0o700"
    assert testbed.client_key.read_text().startswith("-----BEGIN OPENSSH " + "PRIVATE KEY-----")
