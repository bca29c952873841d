"""One SSH connection per instance and job: a variant's repetitions reuse each instance's connection
(its runner, cached host facts and tool check) and the job closes them all at its end."""

from __future__ import annotations

from contextlib import ExitStack, contextmanager

from ..testbed.hosts import Host, connect


# endpoint -> its open connection, while one variant's repetitions run (reused_connections)
_POOL: dict[tuple, object] | None = None



@contextmanager
def reused_connections():
    """Keep every SSH connection a variant's repetitions open (each with its runner process,
    cached host facts and tool check) for the next repetition in this process; all are closed
    when the block ends. Outside the block every repetition connects anew. In a TCG guest a
    connection costs about 1.5 s (handshake, runner start, host facts); the guest, its spec and
    the command are the same from one repetition of a variant to the next."""
    global _POOL
    if _POOL is not None:  # nested: the outer block owns the connections
        yield
        return
    _POOL = {}
    try:
        yield
    finally:
        pool, _POOL = _POOL, None
        for connection in pool.values():
            try:
                connection.close()
            except Exception:  # a connection lost with its guest: nothing left to close
                pass



def open_connection(stack: ExitStack, host: Host):
    """``host``'s connection for this repetition: the variant's open one (:func:`reused_connections`)
    while it is still connected, else a new one (closed with ``stack`` outside the block)."""
    if _POOL is None:
        return stack.enter_context(connect(host))
    key = instance_key(host)
    connection = _POOL.get(key)
    if connection is not None and not _answers(connection):  # its instance was stopped or restarted
        try:
            connection.close()
        except Exception:
            pass
        connection = None
    if connection is None:
        connection = _POOL[key] = connect(host)
    return connection



def _answers(connection) -> bool:
    """A kept connection still reaches a running shell (one round trip). An instance may be gone
    between repetitions though its TCP connection looks open: every measurement first stops the
    guests it does not use, a network namespace of `native` among them."""
    if not connection.is_connected:
        return False
    try:
        return connection.run("true", hide=True, warn=True, in_stream=False).exited == 0
    except Exception:
        return False



def forget_connection(host: Host) -> None:
    """Close ``host``'s kept connection, if any: after a timeout or a lost link its runner's state
    is unknown, so the next repetition connects anew."""
    connection = _POOL.pop(instance_key(host), None) if _POOL is not None else None
    if connection is not None:
        try:
            connection.close()
        except Exception:
            pass



def instance_key(host: Host) -> tuple:
    return (host.hostname, host.port, host.user, host.known_hosts,
            instance_key(host.gateway) if host.gateway is not None else None)
