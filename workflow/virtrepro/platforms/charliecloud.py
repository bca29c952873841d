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
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from ..guests import GuestState, require_image
from ..layout import SCRATCH_DIR
from .guest import GuestPlatform

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
        self.applied.update(image=str(image), runtime="ch-run", user=user.pw_name, uid=user.pw_uid,
                            address=f"127.0.0.1:{port}", network="the host's (no network namespace)",
                            scratch=f"bind mount of the host's {Path(scratch).parent}", cpuset=limits["cpuset"])
        return command, {"cleanup": [["rm", "-rf", str(seed)]]}, "127.0.0.1", port

    def spec_applied(self, index: int) -> dict:
        return {"limits": self.cpu_assignment(index)}
