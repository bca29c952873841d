"""A guest that fails to start says why: the last meaningful lines of the platform tool's own output.

The outputs are real, captured from lxc-start, podman and QEMU failing (tests/data/guests/);
the end-to-end case (a container whose configuration includes a missing file) is in
test_guests.py.
"""

from __future__ import annotations

from pathlib import Path

from conftest import DATA
from virtrepro.guests import GuestState, last_lines
from virtrepro.platforms.lxc import Lxc
from virtrepro.platforms.podman import Podman
from virtrepro.platforms.qemu import QemuTcg

GUESTS = DATA / "guests"


def text(name: str) -> str:
    return (GUESTS / name).read_text()


def state_in(directory: Path) -> GuestState:
    state = GuestState.__new__(GuestState)
    state.dir, state.name = directory, "lxc-0123abcd-8"
    return state


def test_last_lines_drop_blank_lines_and_escapes_and_cut_long_lines():
    output = "first\n\n\x1b[0;32m  OK  \x1b[0m] Started ssh.service\r\n   \n" + "x" * 400 + "\n"
    assert last_lines(output) == ["first", "  OK  ] Started ssh.service", "x" * 300 + "..."]
    assert last_lines("a\nb\nc\n", count=2) == ["b", "c"]
    assert last_lines("") == []


def test_lxc_start_missing_include_keeps_the_line_that_names_the_file():
    lines = last_lines(text("lxc-start-missing-include.log"))
    assert len(lines) == 4
    assert lines[0].endswith('Failed to open file "/usr/share/lxc/config/nonexistent-virtrepro.common.conf"')
    assert lines[-1].endswith("Failed to create lxc_container")


def test_lxc_log_keeps_its_errors_not_its_warnings():
    only = Lxc.tool_logs(Lxc(None), state_in(Path("unused")))[-1][2]
    lines = last_lines(text("lxc-missing-rootfs.lxc.log"), only=only)
    assert [line.split()[3] for line in lines] == ["ERROR", "ERROR"]
    assert lines[0].endswith('Failed to open "lxc/lxc-0123abcd-9/rootfs"')
    # a log without errors still shows its last lines
    assert last_lines("lxc-start x 1 WARN a\nlxc-start x 2 WARN b\n", only=only) == ["lxc-start x 1 WARN a",
                                                                                 "lxc-start x 2 WARN b"]


def test_podman_and_qemu_errors_are_kept_whole():
    for name in ("podman-missing-netns.log", "podman-missing-command.log", "qemu-missing-disk.log"):
        assert last_lines(text(name)) == [text(name).strip()]


def test_failure_report_names_each_log_of_the_platform(tmp_path):
    state = state_in(tmp_path)
    (tmp_path / "supervisor.log").write_text(text("lxc-start-missing-rootfs.log"))
    (tmp_path / "lxc.log").write_text(text("lxc-missing-rootfs.lxc.log"))
    report = Lxc(None).failure_report(state)
    assert "last lines of lxc-start's output (supervisor.log):" in report
    assert "last lines of LXC's log (lxc.log):" in report
    assert "console" not in report  # the container wrote no console log
    assert "Failed to handle rootfs pinning" in report and "Inherited fd" not in report

    (tmp_path / "supervisor.log").write_text(text("qemu-missing-disk.log"))
    (tmp_path / "console.log").write_text("SeaBIOS (version 1.16.2-debian-1.16.2-1)\n\nBooting from ROM..\n")
    report = QemuTcg.failure_report(QemuTcg.__new__(QemuTcg), state)
    assert "last lines of qemu-system-x86_64's output (supervisor.log):\n    qemu-system-x86_64: -drive" in report
    assert "last lines of the guest's console (console.log):\n    SeaBIOS" in report

    (tmp_path / "supervisor.log").write_text("")
    assert Podman(None).failure_report(state_in(tmp_path / "none")) == "\n  (the platform's tool printed nothing)"
