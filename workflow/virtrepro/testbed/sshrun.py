"""One long-lived command runner per SSH connection (the controller's side).

sshd runs every command through the user's login shell, and bash reads ``~/.bashrc`` for
it (on some machines hundreds of milliseconds: ``pyenv init``, ...). A harness cannot rely on
users' dotfiles, so :class:`Runner` starts :mod:`virtrepro.testbed.runner_remote` once per connection
(``python3 -S``, standard library only, so hosts and guests need no virtualenv) and sends it
each command as a message over that one channel, as Ansible's pipelining and mitogen do. The
protocol is described in :mod:`virtrepro.testbed.runner_remote`.
"""

from __future__ import annotations

import codecs
import shlex
import socket
import struct
import time
from pathlib import Path

from .runner_remote import MAGIC, REQUEST

SOURCE = (Path(__file__).with_name("runner_remote.py")).read_text()
START_COMMAND = f"exec python3 -S -c {shlex.quote(SOURCE)}"


class RunnerUnavailable(RuntimeError):
    """The other side cannot run the runner (no python3): fall back to one channel a command."""


class RunnerLost(RuntimeError):
    """The runner's channel closed in the middle of a command."""


class Runner:
    """The runner process on the other end of ``transport`` (a paramiko Transport)."""

    def __init__(self, transport, timeout: float = 30):
        self.channel = transport.open_session(timeout=timeout)
        self.channel.exec_command(START_COMMAND)
        self._buffer = b""
        try:
            deadline = time.monotonic() + timeout
            while MAGIC not in self._buffer:  # a login shell's own output may come first
                if len(self._buffer) > 1 << 20:
                    raise RunnerLost("no runner start marker in the first MiB")
                self._read(len(self._buffer) + 1, deadline, keep=True)
            self._buffer = self._buffer.split(MAGIC, 1)[1]
            kind, payload = self._frame(deadline)
        except (RunnerLost, socket.timeout) as error:
            self.close()
            raise RunnerUnavailable(str(error)) from None
        if kind != b"R":
            self.close()
            raise RunnerUnavailable(f"unexpected first frame {kind!r}")
        protocol, pid = struct.unpack(">ii", payload)
        self.info = {"protocol": protocol, "pid": pid}

    def close(self) -> None:
        self.channel.close()

    def _read(self, count: int, deadline: float | None, keep: bool = False) -> bytes:
        while len(self._buffer) < count:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise socket.timeout("no answer from the runner")
                self.channel.settimeout(remaining)
            else:
                self.channel.settimeout(None)
            data = self.channel.recv(max(65536, count - len(self._buffer)))
            if not data:
                detail = ""
                if self.channel.exit_status_ready():
                    detail = f" (exit status {self.channel.recv_exit_status()})"
                    if self.channel.recv_stderr_ready():
                        detail += ": " + self.channel.recv_stderr(4096).decode(errors="replace").strip()[-300:]
                raise RunnerLost(f"the runner's channel closed{detail}")
            self._buffer += data
        if keep:
            return self._buffer
        data, self._buffer = self._buffer[:count], self._buffer[count:]
        return data

    def _frame(self, deadline: float | None) -> tuple[bytes, bytes]:
        header = self._read(5, deadline)
        (length,) = struct.unpack(">I", header[1:])
        return header[:1], self._read(length, deadline)

    def execute(self, command: str, on_stdout, on_stderr, timeout: float | None = None, kill_after: float = 10,
                merge: bool = False) -> tuple[int, bool]:
        """Run ``command``; feed its output (bytes) to the callbacks as it arrives.

        Returns (exit status, timed out). The runner enforces ``timeout`` on the command's
        whole process group; this side gives up (and closes the channel, which makes the
        runner kill the group) only if no answer comes 30 s after the runner's own deadline."""
        payload = REQUEST.pack(-1 if timeout is None else timeout, kill_after, merge) + command.encode()
        self.channel.sendall(b"c" + struct.pack(">I", len(payload)) + payload)
        deadline = None if timeout is None else time.monotonic() + timeout + kill_after + 35
        try:
            while True:
                kind, payload = self._frame(deadline)
                if kind == b"o":
                    on_stdout(payload)
                elif kind == b"e":
                    on_stderr(payload)
                elif kind == b"x":
                    status, timed_out = struct.unpack(">i?", payload)
                    return status, timed_out
                else:
                    raise RunnerLost(f"unexpected frame {kind!r}")
        except BaseException:
            self.close()  # a half-read answer leaves the channel useless
            raise


class TextSink:
    """Incremental UTF-8 decoding of one output stream into a buffer and, optionally, a stream."""

    def __init__(self, stream=None):
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.parts: list[str] = []
        self.stream = stream

    def __call__(self, data: bytes, final: bool = False) -> None:
        text = self.decoder.decode(data, final)
        if text:
            self.parts.append(text)
            if self.stream is not None:
                self.stream.write(text)
                getattr(self.stream, "flush", lambda: None)()

    def text(self) -> str:
        self(b"", final=True)
        return "".join(self.parts)
