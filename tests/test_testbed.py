"""The embedded local testbed: a real sshd on 127.0.0.1, real SSH, nothing left behind."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import paramiko
import pytest

from conftest import require_tools
from virtrepro.testbed.kinds import LocalTestbed
from virtrepro.testbed.hosts import Host, HostKeyRejected, connect
from virtrepro.testbed.hosts import TestbedError as BringUpError

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


def test_unknown_host_key_is_refused_in_one_line_that_says_how_to_pin_it(testbed, tmp_path):
    host = testbed.up()
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    stranger = Host(host.name, host.hostname, host.port, host.user, host.identity, str(empty))
    with pytest.raises(HostKeyRejected) as error:
        with connect(stranger) as connection:
            connection.run("true", hide=True, in_stream=False)
    message = str(error.value)
    assert "\n" not in message and f"127.0.0.1:{host.port}" in message and "not pinned" in message
    assert f"ssh-keyscan -t ed25519 -p {host.port} 127.0.0.1 >> {empty}" in message


def test_a_wrong_host_key_is_refused_in_one_line_that_says_how_to_pin_the_new_one(testbed, tmp_path):
    host = testbed.up()
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    wrong = tmp_path / "wrong_known_hosts"
    wrong.write_text(f"[127.0.0.1]:{host.port} {' '.join(Path(f'{other}.pub').read_text().split()[:2])}\n")
    with pytest.raises(HostKeyRejected) as error:
        with connect(dataclasses.replace(host, known_hosts=str(wrong))) as connection:
            connection.run("true", hide=True, in_stream=False)
    message = str(error.value)
    assert "\n" not in message and "host key mismatch" in message and f"127.0.0.1:{host.port}" in message
    # the key the server offered is the testbed's own host key: its fingerprint is in the message
    offered = paramiko.Ed25519Key.from_private_key_file(str(testbed.host_key)).fingerprint
    assert offered in message
    assert f"ssh-keygen -f {wrong} -R '[127.0.0.1]:{host.port}'" in message


def test_a_key_the_host_does_not_accept_is_a_one_line_authentication_error(testbed, tmp_path):
    host = testbed.up()
    stranger_key = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger_key)], check=True)
    with pytest.raises(BringUpError, match=r"authentication as \S+ failed with .*stranger.*authorized_keys") as error:
        with connect(dataclasses.replace(host, identity=str(stranger_key))) as connection:
            connection.run("true", hide=True, in_stream=False)
    assert "\n" not in str(error.value)


def test_commands_do_not_read_the_users_dotfiles(testbed):
    """The local testbed's sshd keeps bash from reading ~/.bashrc (SHLVL=1): what a command
    sees does not depend on the user's shell start-up files."""
    host = testbed.up()
    with connect(host) as connection:
        out = connection.run("echo $PATH; echo ${PYENV_ROOT:-none}", hide=True, in_stream=False).stdout.split()
    assert ".pyenv" not in out[0] and out[1] == "none"


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


def test_host_facts_and_the_tool_check_over_the_runner(testbed):
    """Host facts (one round trip, cached per connection) against values read here directly."""
    from virtrepro.benchmarks import BENCHMARKS
    from virtrepro.measurement.job import ensure_tools, host_facts

    host = testbed.up()
    release = dict(line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line)
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    cpuinfo = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
               if line.startswith("model name")]
    with connect(host) as connection:
        facts = host_facts(connection)
        assert connection.facts == facts  # the second call asks nobody
        version = ensure_tools(connection, BENCHMARKS["sysbench_cpu"], host)
        assert version == subprocess.run(["sysbench", "--version"], capture_output=True, text=True).stdout.strip()
        assert ensure_tools(connection, BENCHMARKS["dd"], host).startswith("dd (coreutils)")
    assert facts["kernel"] == os.uname().release and facts["machine"] == os.uname().machine
    assert facts["hostname"] == os.uname().nodename
    assert facts["os"] == release["PRETTY_NAME"].strip('"')
    assert facts["cpu_model"] == (cpuinfo[0] if cpuinfo else "")
    assert facts["cores"] == len(os.sched_getaffinity(0))
    assert facts["mem_total_kb"] == int(meminfo["MemTotal"].split()[0])
    assert len(facts["loadavg"].split()) == 3 and all(float(x) >= 0 for x in facts["loadavg"].split())
    assert set(facts) == {"kernel", "machine", "os", "cpu_model", "cores", "mem_total_kb", "hostname", "loadavg",
                          "virtualization", "microcode", "cpu_governor", "transparent_hugepages", "cpus_allowed",
                          "cgroup_memory", "memory_limit_bytes", "cache_sizes"}
    # what changes results (issue: drift), read here directly
    microcode = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                 if line.startswith("microcode")]
    assert facts["microcode"] == (microcode[0] if microcode else "")
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    assert facts["transparent_hugepages"] == (thp.read_text().strip() if thp.exists() else "")
    governor = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    assert facts["cpu_governor"] == (governor.read_text().strip() if governor.exists() else "none (no cpufreq)")
    allowed = sorted(os.sched_getaffinity(0))
    assert facts["cpus_allowed"] in (",".join(map(str, allowed)), f"{allowed[0]}-{allowed[-1]}")
