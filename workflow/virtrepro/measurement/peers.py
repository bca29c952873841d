"""Runs over several instances: the peers' addresses in a command, their servers started before and
stopped after the run, and instance 0's SSH trust in them for the run only."""

from __future__ import annotations

import shlex
from contextlib import ExitStack
from pathlib import Path

from ..benchmarks import HOSTS, SCRATCH, peer
from ..benchmarks.base import PEER_KNOWN_HOSTS, PEER_SSH_KEY
from .provenance import MeasurementError


def with_addresses(command: str, platform, count: int) -> str:
    """Replace the peer placeholders of a multi-instance command with private addresses."""
    if count <= 1:
        return command
    addresses = [platform.private_address(i) for i in range(count)]
    for index in range(count - 1, 0, -1):  # @PEER10@ before @PEER1@
        command = command.replace(peer(index), addresses[index])
    return command.replace(HOSTS, ",".join(addresses))



def trust_peers(stack: ExitStack, platform, connection, peers, endpoints, scratch: str) -> dict:
    """Let instance 0 log in to instances 1.. over SSH for this run only.

    A key is made in instance 0 (in the run's scratch directory, so the private key
    never leaves it), authorised on each peer until the run ends, and a known_hosts
    file lists the peers' own host keys (the ones the harness pinned) at their private
    addresses: instance 0 trusts no unknown key. See PEER_SSH_KEY and PEER_KNOWN_HOSTS."""
    import io

    key = PEER_SSH_KEY.replace(SCRATCH, scratch)
    known_hosts = PEER_KNOWN_HOSTS.replace(SCRATCH, scratch)
    marker = f"virtrepro-run-{Path(scratch).name}"
    connection.run(f"mkdir -p -m 700 {Path(key).parent} && ssh-keygen -q -t ed25519 -N '' -C {marker} -f {key}",
                   hide=True, in_stream=False)
    public = connection.run(f"cat {key}.pub", hide=True, in_stream=False).stdout.strip()
    lines = []
    for index, endpoint in enumerate(endpoints):
        pinned = Path(endpoint.known_hosts).read_text().split()
        lines.append(f"{platform.private_address(index)} {pinned[1]} {pinned[2]}")
    connection.put(io.StringIO("\n".join(lines) + "\n"), known_hosts)
    for index, peer_connection in enumerate(peers, start=1):
        path = platform.authorized_keys_file(index)
        # registered first: the key goes away also when appending fails half-way
        stack.callback(peer_connection.run, f"f={path}; if [ -f $f ]; then grep -vF -- {shlex.quote(marker)} $f > $f.tmp; "
                       "cat $f.tmp > $f; rm -f $f.tmp; fi", hide=True, warn=True, in_stream=False)
        peer_connection.run(f"f={path}; mkdir -p $(dirname $f) && echo {shlex.quote(public)} >> $f",
                            hide=True, in_stream=False)
    return {"key_comment": marker, "known_hosts": lines}



def start_peers(peers, command: str | None, timeout: float = 60) -> None:
    if not command:
        return
    for connection in peers:
        result = connection.run(f"sh -c {shlex.quote(command)} 2>&1", hide=True, warn=True, in_stream=False,
                                timeout=timeout)
        if result.exited != 0:
            raise MeasurementError(
                f"starting the peer side on {connection.host} failed (exit {result.exited}): {result.stdout.strip()[-500:]}"
            )



def stop_peers(peers, command: str | None) -> None:
    if not command:
        return
    for connection in peers:
        try:
            connection.run(f"sh -c {shlex.quote(command)}", hide=True, warn=True, in_stream=False, timeout=60)
        except Exception:  # a lost peer is torn down with its instance anyway
            pass
