"""A VM's facts, tool check and package versions are asked once per boot of it, not once per job:
each job is a process with new connections, and in a TCG guest the questions take about a second.
The boot id names the boot: another boot (a reboot, a guest of another spec) is asked anew.

The connections here are stand-ins that record the commands they are given; what they answer for
the facts is this machine's own (the real facts command, run here)."""

from __future__ import annotations

import subprocess
from types import SimpleNamespace

import pytest

from virtrepro.benchmarks import BENCHMARKS
from virtrepro.measurement import instance
from virtrepro.rawdata import machines
from virtrepro.testbed.hosts import Host


class Recording:
    """A connection to a VM of boot ``boot``: it records each command and answers as such a VM would."""

    def __init__(self, boot: str):
        self.boot, self.commands, self.facts = boot, [], None

    def run(self, command, **_):
        self.commands.append(command)
        if command == "cat /proc/sys/kernel/random/boot_id":
            out = f"{self.boot}\n"
        elif command == "cat /proc/loadavg":
            out = "0.25 0.50 0.75 1/99 7\n"
        elif command == machines.HOST_FACTS_COMMAND:
            out = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=True).stdout
        elif command.startswith("dpkg-query"):
            out = "sysbench=1.0.20+ds-3\n"
        elif instance.TOOL_PRESENT in command:
            out = f"{instance.TOOL_PRESENT}\nsysbench 1.0.20\n"
        else:
            raise AssertionError(f"unexpected command: {command}")
        return SimpleNamespace(stdout=out, stderr="", exited=0)


def _host(port: int) -> Host:
    return Host(name=f"vm-{port}", hostname="127.0.0.1", port=port, user="root", identity=None, known_hosts="kh")


def _ask(connection, host):
    """What the measurement asks of instance 0 before a run (repetition._instance_facts, for a VM)."""
    boot = instance.boot_facts(connection)
    bench = BENCHMARKS["sysbench_cpu"]
    return (instance.host_facts(connection, boot), instance.ensure_tools(connection, bench, host, boot),
            instance.package_versions(connection, bench.packages, boot))


def test_a_second_job_in_the_same_boot_reads_only_the_boot_id_and_the_load(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTREPRO_STATE", str(tmp_path))
    first = Recording("6f1d0c9e-0000-4000-8000-000000000001")
    facts, tool, packages = _ask(first, _host(40001))
    assert machines.HOST_FACTS_COMMAND in first.commands and any(c.startswith("dpkg-query") for c in first.commands)
    assert tool == "sysbench 1.0.20" and packages == {"sysbench": "1.0.20+ds-3"}
    assert facts["kernel"] == subprocess.run(["uname", "-r"], capture_output=True, text=True).stdout.strip()

    instance._TOOLS_PRESENT.clear()  # the next job is another process
    second = Recording(first.boot)
    again, tool2, packages2 = _ask(second, _host(40001))
    assert second.commands == ["cat /proc/sys/kernel/random/boot_id", "cat /proc/loadavg"]
    assert (tool2, packages2) == (tool, packages)
    assert again["loadavg"] == "0.25 0.50 0.75"  # read anew
    assert {k: v for k, v in again.items() if k != "loadavg"} == {k: v for k, v in facts.items() if k != "loadavg"}
    assert (tmp_path / "facts" / f"{first.boot}.json").is_file()


def test_another_boot_is_asked_everything_again(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTREPRO_STATE", str(tmp_path))
    _ask(Recording("6f1d0c9e-0000-4000-8000-000000000002"), _host(40002))
    instance._TOOLS_PRESENT.clear()
    rebooted = Recording("6f1d0c9e-0000-4000-8000-000000000003")
    _ask(rebooted, _host(40002))
    assert machines.HOST_FACTS_COMMAND in rebooted.commands
    assert any(instance.TOOL_PRESENT in c for c in rebooted.commands)
    assert any(c.startswith("dpkg-query") for c in rebooted.commands)


def test_an_instance_without_a_boot_id_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTREPRO_STATE", str(tmp_path))
    with pytest.raises(instance.MeasurementError, match="no boot id"):
        instance.boot_facts(Recording(""))
