"""Common part of the container and VM platforms: one long-lived guest per (spec, index)."""

from __future__ import annotations

import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .. import supervisor
from ..guests import GuestError, GuestState, make_seed, spec_hash, wait_for_ssh, write_known_hosts
from ..testbed import Host
from .base import Platform, PlatformError


class GuestPlatform(Platform):
    """A platform whose instances are guests started on the testbed host.

    Subclasses implement :meth:`launch`: prepare the guest's files in
    ``state.dir`` and return (command, stop/cleanup spec, ssh host, ssh port,
    alive-check). The guest then runs under a supervisor owned by
    ``$VIRTREPRO_TESTBED_OWNER`` (the Snakemake process) or, failing that, by
    this process, in which case it is torn down when the ``with`` block ends.
    """

    boot_timeout = 180.0
    failure_dir: Path | None = None  # where a failed boot's console log is kept (set by measure)

    def __init__(self, host: Host, spec: dict | None = None):
        super().__init__(host, spec)
        if host.hostname not in ("127.0.0.1", "localhost") or host.gateway is not None:
            raise PlatformError(
                f"platform {self.name}: guests on remote testbeds are not supported yet; use it on the local testbed"
            )
        self.applied: dict = {}

    def guest_name(self, index: int) -> str:
        return f"{self.name}-{spec_hash(self.spec)}-{index}"

    def launch(self, state: GuestState, name: str, seed: Path) -> tuple[list[str], dict, str, int]:
        """Prepare the guest's files; return (command, supervisor spec, SSH address, SSH port)."""
        raise NotImplementedError

    def console_log(self, state: GuestState) -> Path | None:
        return None

    def _start(self, state: GuestState, owner: int) -> Host:
        state.stop()
        if state.dir.exists():
            shutil.rmtree(state.dir)
        state.dir.mkdir(parents=True)
        name = state.name
        seed = state.dir / "seed"
        public_key = make_seed(seed, name, self.host.identity, self.seed_network(state))
        command, spec, ssh_host, ssh_port = self.launch(state, name, seed)
        endpoint = Host(
            name=name,
            hostname=ssh_host,
            port=ssh_port,
            user="root",
            identity=self.host.identity,
            known_hosts=str(write_known_hosts(state.dir / "known_hosts", ssh_host, ssh_port, public_key)),
        )
        started = time.monotonic()
        process = supervisor.start(command, owner, state.pid_file, state.dir / "supervisor.log", spec)
        try:
            waited = wait_for_ssh(endpoint, self.boot_timeout, alive=lambda: process.poll() is None and self.alive(state))
        except GuestError as error:
            kept = self._keep_console(state)
            state.stop()
            raise GuestError(f"{error}{f'; console log kept in {kept}' if kept else ''}") from None
        self.applied["boot_to_ssh_s"] = round(time.monotonic() - started, 2)
        self.applied["ssh_wait_s"] = round(waited, 2)
        state.save_endpoint(endpoint)
        return endpoint

    def _keep_console(self, state: GuestState) -> Path | None:
        console = self.console_log(state)
        if console is None or not console.exists() or self.failure_dir is None:
            return None
        self.failure_dir.mkdir(parents=True, exist_ok=True)
        kept = self.failure_dir / f"console-{state.name}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.log"
        shutil.copy(console, kept)
        return kept

    def seed_network(self, state: GuestState) -> dict[str, str] | None:
        return None

    def alive(self, state: GuestState) -> bool:
        return True

    @contextmanager
    def instance(self, index: int = 0) -> Iterator[Host]:
        state = GuestState(self.host.name, self.guest_name(index))
        owner = int(os.environ.get("VIRTREPRO_TESTBED_OWNER") or os.getpid())
        if not supervisor.pid_alive(owner):
            owner = os.getpid()
        own = owner == os.getpid()
        if state.running():
            endpoint = state.endpoint()
            self.applied["reused_running_guest"] = True
        else:
            endpoint = self._start(state, owner)
        try:
            yield endpoint
        finally:
            if own:
                state.stop()

    def describe(self) -> dict:
        return {**super().describe(), "applied": dict(self.applied)}
