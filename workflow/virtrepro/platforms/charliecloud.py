"""charliecloud: an unprivileged HPC container (Charliecloud's ``ch-run``) from the same guest image.

The container runtime HPC centres let their users run: ``ch-run`` needs no root, no setuid helper
and no daemon. It makes a user namespace and a mount namespace and nothing else (Torrez et al.
2019): no cgroups (no CPU or memory limits of its own), no network namespace (its processes use
the host's network stack). Its image is the guest image's root file system, read-only.

Each instance runs an sshd of its own inside ``ch-run``, as an unprivileged user: the testbed's
user, or ``nobody`` when that is root (this machine; on a cluster the researcher is the user). It
listens on the host's loopback on a port of its own, since the instance has no address of its
own: runs over several instances (network pairs, MPI across instances) are not planned for it
(``private_network=False`` in the catalogue). Runs write to the host's scratch directory
(``-b /var/tmp``), the file system native uses; the benchmark's CPUs are those of the other
containers (``taskset``, which an unprivileged process may apply to itself).

Having no container manager, an instance is frozen through a freezer cgroup the platform starts
it in (:class:`~virtrepro.platforms.guest.CgroupFreezer`, when the host's cgroups are writable, as
for root): every process the sshd forks stays in it, also the per-login sshd children and daemons
a benchmark starts, which call setsid() and so leave the instance's process group (a SIGSTOP to
that group would miss them, and a stopped process is visible to its parent and resumed by any
SIGCONT). The freezer is not one of the instance's limits: ch-run itself still makes no cgroup.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from ..guests import GuestState, require_image
from ..layout import SCRATCH_DIR, recorded_path
from .base import PlatformError
from .guest import CgroupFreezer, GuestPlatform, process_cpu_ns

# what this module runs on the host: path or program -> Debian package (see virtrepro.testbed.packages)
HOST_PATHS = {"ch-run": "charliecloud-runtime", "setpriv": "util-linux", "taskset": "util-linux"}

# the account an instance runs as when the testbed's user is root: no privileges, nothing of its own
UNPRIVILEGED = "nobody"
# instance i's sshd listens on 127.0.0.1:(SSH_PORT_BASE + its catalogue block + i)
SSH_PORT_BASE = 22000
# where the instance's state directory (seed, sshd configuration) appears inside the container:
# the image is read-only, so a bind needs a directory the image already has
STATE_MOUNT = "/mnt"


def run_as() -> pwd.struct_passwd:
    """Who the instances run as: this process's user, or :data:`UNPRIVILEGED` when that is root."""
    return pwd.getpwnam(UNPRIVILEGED) if os.geteuid() == 0 else pwd.getpwuid(os.geteuid())


def scratch_for(user: pwd.struct_passwd) -> str:
    """The host's scratch directory, which the unprivileged user must be able to write to (a
    sticky, world-writable directory, as /var/tmp itself)."""
    Path(SCRATCH_DIR).mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0 and user.pw_uid != 0:
        os.chmod(SCRATCH_DIR, 0o1777)
    return SCRATCH_DIR


class Charliecloud(GuestPlatform):
    name = "charliecloud"
    boot_timeout = 60.0
    tool = "ch-run"

    def login_user(self) -> str:
        return run_as().pw_name

    def private_address(self, index: int) -> str:
        return "127.0.0.1"

    def authorized_keys_file(self, index: int) -> str:
        return f"{STATE_MOUNT}/seed/authorized_keys"

    def launch(self, state: GuestState, name: str, seed: Path):
        image = require_image() / "rootfs"
        index = int(name.rsplit("-", 1)[1])
        port = SSH_PORT_BASE + self.declaration.first_host + index
        user = run_as()
        scratch = scratch_for(user)
        config = state.dir / "sshd_config"
        config.write_text("\n".join([
            f"ListenAddress 127.0.0.1:{port}",
            f"HostKey {STATE_MOUNT}/seed/ssh_host_ed25519_key",
            f"AuthorizedKeysFile {STATE_MOUNT}/seed/authorized_keys",
            f"PidFile {STATE_MOUNT}/sshd.pid",
            f"AllowUsers {user.pw_name}",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "StrictModes no",
            "Subsystem sftp internal-sftp",  # benchmarks upload files (Benchmark.prepare: uploads)
            # root's search path, as in every other instance (sshd gives other users one without the
            # sbin directories, where bonnie++ is)
            "SetEnv PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "",
        ]))
        if os.geteuid() == 0 and user.pw_uid != 0:  # the seed and state were made by root: hand them over
            for path in [state.dir, *state.dir.rglob("*")]:
                os.chown(path, user.pw_uid, user.pw_gid)
        limits = self.cpu_assignment(index)
        drop = ([] if user.pw_uid == os.geteuid() else
                ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--reset-env"])
        command = [*drop, "taskset", "-c", limits["cpuset"],
                   "ch-run", "-b", f"{state.dir}:{STATE_MOUNT}", "-b", f"{Path(scratch).parent}:{Path(scratch).parent}",
                   str(image), "--", "/usr/sbin/sshd", "-D", "-e", "-f", f"{STATE_MOUNT}/sshd_config"]
        spec = {"cleanup": [["rm", "-rf", str(seed)]]}
        freezer = CgroupFreezer(self.testbed, name)
        if freezer.available:  # started inside a freezer cgroup of its own (thawed before it is stopped)
            freezer.create()
            command = freezer.enter_command(command)
            spec = {"stop": [freezer.set_command(False)], "cleanup": [*spec["cleanup"], *freezer.remove_commands()]}
            self.applied["freezer_cgroup"] = f"v{freezer.version}"
        self.applied.update(image=recorded_path(image, f"{image.parent.name}/{image.name}"), runtime="ch-run", user=user.pw_name, uid=user.pw_uid,
                            address=f"127.0.0.1:{port}", network="the host's (no network namespace)",
                            scratch=f"bind mount of the host's {Path(scratch).parent}", cpuset=limits["cpuset"])
        return command, spec, "127.0.0.1", port

    def spec_applied(self, index: int) -> dict:
        return {"limits": self.cpu_assignment(index)}

    freeze_mechanism = "a freezer cgroup of the instance's own (cgroup v1 freezer.state, or v2 cgroup.freeze)"

    def _freezer(self, state: GuestState, index: int) -> CgroupFreezer:
        freezer = CgroupFreezer(self.testbed, state.name)
        if not freezer.dir.is_dir():
            reason = ("it was started without one" if freezer.available else
                      f"this host has no writable cgroup freezer ({freezer.dir.parent.parent.parent} needs root)")
            raise self._freeze_failed(index, "freeze", f"no freezer cgroup {freezer.dir}: {reason}")
        return freezer

    def _set_frozen(self, state: GuestState, index: int, frozen: bool) -> None:
        self._run_freezer(index, "freeze" if frozen else "thaw", self._freezer(state, index).set_command(frozen))

    def _frozen_now(self, state: GuestState) -> bool:
        freezer = CgroupFreezer(self.testbed, state.name)
        return freezer.dir.is_dir() and freezer.frozen()

    def freezer_state_file(self, index: int = 0) -> Path:
        return CgroupFreezer(self.testbed, self.guest_name(index)).state_file

    def cpu_time_ns(self, index: int = 0) -> int:
        freezer = CgroupFreezer(self.testbed, self.guest_name(index))
        pids = freezer.pids()
        if not pids:
            raise PlatformError(f"charliecloud instance {index}: no processes in {freezer.dir}")
        counted = freezer.cpu_ns()
        return process_cpu_ns(pids) if counted is None else counted
