"""The command runner at the far end of an SSH connection (virtrepro.testbed.runner_remote), driven
through its protocol over pipes, as sshd's channel would (python3 -S, standard library only).
Over real SSH it is exercised by every integration test that runs a command."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time

import pytest

from virtrepro.testbed import sshrun
from virtrepro.testbed.runner_remote import MAGIC, REQUEST


class Driver:
    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-S", "-c", sshrun.SOURCE], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)
        assert self.proc.stdout.read(len(MAGIC)) == MAGIC
        kind, payload = self.frame()
        assert kind == b"R" and struct.unpack(">ii", payload) == (1, self.proc.pid)

    def frame(self):
        header = self.proc.stdout.read(5)
        return header[:1], self.proc.stdout.read(struct.unpack(">I", header[1:])[0])

    def send(self, command, timeout=None, kill_after=10.0, merge=False):
        payload = REQUEST.pack(-1 if timeout is None else timeout, kill_after, merge) + command.encode()
        self.proc.stdin.write(b"c" + struct.pack(">I", len(payload)) + payload)
        self.proc.stdin.flush()

    def run(self, command, **kwargs):
        self.send(command, **kwargs)
        frames = []
        while True:
            kind, payload = self.frame()
            if kind == b"x":
                return frames, struct.unpack(">i?", payload)
            frames.append((kind, payload))

    def close(self):
        self.proc.stdin.close()
        return self.proc.wait(10)


@pytest.fixture
def runner():
    driver = Driver()
    yield driver
    driver.close()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not open(f"/proc/{pid}/stat").read().split(") ")[1].startswith("Z")


def test_output_streams_and_exit_status(runner):
    frames, end = runner.run("echo out; echo err >&2; exit 3")
    assert sorted(frames) == [(b"e", b"err\n"), (b"o", b"out\n")] and end == (3, False)
    frames, end = runner.run("echo a; echo b >&2; echo c", merge=True)
    assert b"".join(p for _, p in frames) == b"a\nb\nc\n" and {k for k, _ in frames} == {b"o"}
    assert runner.run("kill -9 $$")[1] == (137, False)  # killed by a signal: 128 + signal, as a shell says


def test_commands_get_no_stdin_and_run_in_their_own_session(runner):
    frames, end = runner.run("cat; ps -o sid= -p $$; echo $$")
    sid, pid = b"".join(p for _, p in frames).split()
    assert end == (0, False) and sid == pid  # a session (and process group) of its own


def test_a_timeout_kills_the_whole_process_group(runner, tmp_path):
    pids = tmp_path / "pids"
    start = time.monotonic()
    frames, end = runner.run(f"sleep 300 & echo $! > {pids}; sleep 300", timeout=0.5)
    assert end == (124, True) and time.monotonic() - start < 5
    background = int(pids.read_text())
    deadline = time.monotonic() + 5
    while alive(background) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(background)


def test_what_ignores_sigterm_gets_sigkill_after_the_grace(runner):
    start = time.monotonic()
    _, end = runner.run("trap '' TERM; sleep 300 & wait; sleep 300", timeout=0.3, kill_after=0.5)
    assert end == (137, True) and 0.7 < time.monotonic() - start < 5


def test_a_vanished_client_takes_the_running_command_with_it(tmp_path):
    driver = Driver()
    pids = tmp_path / "pids"
    driver.send(f"echo $$ > {pids}; sleep 300")
    deadline = time.monotonic() + 5
    while not pids.exists() or not pids.read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    command = int(pids.read_text())
    assert driver.close() == 0
    assert not alive(command)
