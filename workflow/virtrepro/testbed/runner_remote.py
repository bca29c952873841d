"""The command runner that lives on the other end of an SSH connection (standard library only).

:mod:`virtrepro.testbed.sshrun` starts this file once per connection (``python3 -S -c <this source>``,
so the user's login shell and its dotfiles run once, not once a command; it imports only
built-in modules, so it starts in a few milliseconds) and then sends it one request frame per
command over the channel's stdin. Every frame, both ways, is one kind byte, a 4-byte
big-endian length and the payload:

- to the runner, ``c``: ``>dd?`` (timeout in seconds or -1, kill-after seconds, fold stderr
  into stdout) followed by the command (UTF-8);
- from the runner, after ``MAGIC``: ``R`` ready (once: protocol version and pid, ``>ii``), ``o``/``e`` output
  bytes as they arrive, ``x`` the end (``>i?``: exit status, timed out).

It runs each command with ``/bin/sh -c`` in a new session (its own process group), stdin
from /dev/null. A timeout sends SIGTERM to the command's whole process group, SIGKILL
kill-after seconds later, and ends with status 124 (137 when SIGKILL was needed), as
coreutils' ``timeout -k`` does. When the connection goes away (stdin ends) the running
command's process group is killed and the runner exits.
"""

import os
import select
# _signal, not signal: the signal module imports enum (a few milliseconds of every runner's start)
import _signal as signal
import struct
import time

PROTOCOL = 1
# written before the first frame: what a user's shell start-up files print before the runner
# starts is skipped up to it
MAGIC = b"\n\x00virtrepro-runner\x00"
REQUEST = struct.Struct(">dd?")


def send(kind, payload):
    view = memoryview(kind + struct.pack(">I", len(payload)) + payload)
    while view:
        view = view[os.write(1, view):]


def killpg(pid, sig):
    try:
        os.killpg(pid, sig)
    except OSError:
        pass


class Input:
    """The channel's stdin: frames, and whether the client is still there."""

    def __init__(self):
        self.buffer = b""
        self.open = True

    def fill(self):
        data = os.read(0, 65536)
        self.buffer += data
        self.open = bool(data)
        return self.open

    def frame(self):
        while len(self.buffer) < 5 or len(self.buffer) < 5 + struct.unpack(">I", self.buffer[1:5])[0]:
            if not self.fill():
                return None, None
        length = struct.unpack(">I", self.buffer[1:5])[0]
        kind, payload, self.buffer = self.buffer[:1], self.buffer[5:5 + length], self.buffer[5 + length:]
        return kind, payload


def spawn(command, merge):
    """Start ``/bin/sh -c command`` in a session of its own; return (pid, {fd: kind})."""
    out_r, out_w = os.pipe()
    err_r, err_w = (None, out_w) if merge else os.pipe()
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        actions = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)]
        pid = os.posix_spawn("/bin/sh", ["sh", "-c", command], os.environ, file_actions=actions, setsid=True)
    finally:
        for fd in {null, out_w, err_w}:
            os.close(fd)
    streams = {out_r: b"o"}
    if err_r is not None:
        streams[err_r] = b"e"
    return pid, streams


def run(payload, stdin):
    """Run one request; False when the client went away meanwhile."""
    timeout, kill_after, merge = REQUEST.unpack(payload[:REQUEST.size])
    timeout = None if timeout < 0 else timeout
    try:
        pid, streams = spawn(payload[REQUEST.size:].decode("utf-8", "surrogateescape"), merge)
    except OSError as error:
        send(b"e", ("virtrepro runner: cannot start /bin/sh: %s\n" % error).encode())
        send(b"x", struct.pack(">i?", 127, False))
        return True
    start = time.monotonic()
    signalled = None
    status = None
    while status is None or streams:
        elapsed = time.monotonic() - start
        if timeout is not None:
            if signalled is None and elapsed >= timeout:
                killpg(pid, signal.SIGTERM)
                signalled = signal.SIGTERM
            elif signalled == signal.SIGTERM and elapsed >= timeout + kill_after:
                killpg(pid, signal.SIGKILL)
                signalled = signal.SIGKILL
            elif signalled == signal.SIGKILL and status is not None and elapsed >= timeout + kill_after + 5:
                break  # something that left the group holds the pipes: stop reading them
            wait = timeout - elapsed if signalled is None else 0.2
        else:
            wait = None
        if not streams:  # output closed: wait for the exit, looking at the client now and then
            deadline = time.monotonic() + (0.05 if wait is None else max(0.0, min(wait, 0.05)))
            delay = 0.0002
            while status is None:
                done, code = os.waitpid(pid, os.WNOHANG)
                if done:
                    status = code
                elif time.monotonic() >= deadline:
                    break
                else:
                    time.sleep(delay)
                    delay = min(delay * 2, 0.01)
            if status is not None:
                continue
            wait = 0
        readable, _, _ = select.select(list(streams) + ([0] if stdin.open else []), [], [], wait)
        for fd in readable:
            if fd == 0:
                stdin.fill()
                continue
            data = os.read(fd, 65536)
            if not data:
                os.close(fd)
                del streams[fd]
                continue
            try:
                send(streams[fd], data)
            except OSError:  # the channel is closed
                stdin.open = False
        if not stdin.open:  # the connection is gone: nobody waits for this command any more
            killpg(pid, signal.SIGKILL)
            break
    for fd in streams:
        os.close(fd)
    if status is None:
        status = os.waitpid(pid, 0)[1]
    status = os.waitstatus_to_exitcode(status)
    if status < 0:
        status = 128 - status
    if signalled is not None:
        status = 137 if signalled == signal.SIGKILL else 124
    if not stdin.open:
        return False
    send(b"x", struct.pack(">i?", status, signalled is not None))
    return True


def main():
    os.write(1, MAGIC)
    send(b"R", struct.pack(">ii", PROTOCOL, os.getpid()))
    stdin = Input()
    while True:
        kind, payload = stdin.frame()
        if kind is None or (kind == b"c" and not run(payload, stdin)):
            return


if __name__ == "__main__":
    main()
