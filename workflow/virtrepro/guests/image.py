"""Guest images built offline from Debian's archive: one root filesystem for every platform.

``build(out)`` runs mmdebstrap (sources taken from this host's apt configuration, so
no mirror is named here) into ``out/rootfs``, then makes from it, without loop
mounts: ``root.raw`` (``mkfs.ext4 -d``), ``root.qcow2`` and ``root.vmdk`` (qemu-img),
``rootfs.tar`` (for ``podman import``), and ``vmlinuz``/``initrd`` for QEMU's direct
kernel boot. No SSH host key is baked in: every guest gets its own at start from a
seed (see :mod:`virtrepro.guests.seed`), read by ``guest-seed.service`` before sshd.

The output directory is named by :func:`recipe_hash`, a hash of everything below
that shapes the image, so the image is rebuilt exactly when the recipe changes.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ..benchmark_packages import declared
from ..errors import VirtreproError


class ImageError(VirtreproError):
    """The guest image cannot be built here (not root, no Debian archive)."""


def log(*parts) -> None:
    print(f"[{time.strftime('%H:%M:%S')}]", *parts, flush=True)


def run(cmd, check=True, capture=False, **kw):
    if capture:
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        kw.setdefault("text", True)
    return subprocess.run(cmd, check=check, **kw)


SUITE = "bookworm"
# what the image itself needs (its init, kernel, sshd and the guest seed's tools, the network)
SYSTEM_PACKAGES = [
    "systemd-sysv", "udev", "openssh-server", "openssh-client", "iproute2",
    "linux-image-cloud-amd64", "procps",
    "iputils-ping",  # handy for the VM<->VM network check; tiny
]
# and what the benchmarks run in it: each benchmark class's ``packages`` (NPB's binaries are built
# on the host; the application servers' own system services are masked below, the benchmarks
# start them); some of them (iozone3, netperf, lmbench) are in Debian's non-free component
PACKAGES = SYSTEM_PACKAGES + [name for name in declared() if name not in SYSTEM_PACKAGES]
# what the build runs on the host: program -> Debian package (see virtrepro.packages)
HOST_PATHS = {"mmdebstrap": "mmdebstrap", "mkfs.ext4": "e2fsprogs", "e2fsck": "e2fsprogs", "qemu-img": "qemu-utils",
              "systemctl": "systemd", "tar": "tar", "du": "coreutils"}
# what the image relies on inside itself (beside the benchmarks' programs): path or program ->
# Debian package; checked against PACKAGES in a built image (tests/test_packages.py)
GUEST_PATHS = {
    # QEMU boots the image's kernel and initrd directly (build_images copies them out of /boot);
    # the initrd is made by initramfs-tools, configured by build_rootfs's essential hook
    "/boot/vmlinuz-*": "linux-image-cloud-amd64", "mkinitramfs": "initramfs-tools",
    "/lib/systemd/systemd": "systemd", "/lib/systemd/systemd-networkd": "systemd",
    "sshd": "openssh-server",
    # guest-seed (GUEST_SEED_SH)
    "mount": "mount", "umount": "mount", "install": "coreutils", "hostname": "hostname", "ssh-keygen": "openssh-client",
    "sed": "sed",
}

# system services of the packages above that must not run in the background of every benchmark
MASKED_SERVICES = ["nginx.service", "postgresql.service", "postgresql@15-main.service",
                   "rabbitmq-server.service", "epmd.service", "epmd.socket"]

GUEST_SEED_SH = r"""#!/bin/sh
# Install per-guest identity before sshd / networkd start.
mnt=/run/guest-seed
src=""
if [ -d /seed ]; then
    src=/seed
else
    dev=$(sed -n 's/.*guestseed=\([^ ]*\).*/\1/p' /proc/cmdline)
    [ -n "$dev" ] || dev=/dev/disk/by-label/GUESTSEED
    i=0
    while [ ! -b "$dev" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
    if [ -b "$dev" ]; then
        mkdir -p $mnt && mount -t ext4 -o ro "$dev" $mnt && src=$mnt
    fi
fi
if [ -n "$src" ]; then
    for k in "$src"/ssh_host_*_key; do
        [ -e "$k" ] || continue
        install -m 600 "$k" /etc/ssh/
        install -m 644 "$k.pub" /etc/ssh/
    done
    if [ -f "$src/authorized_keys" ]; then
        install -d -m 700 /root/.ssh
        install -m 600 "$src/authorized_keys" /root/.ssh/authorized_keys
    fi
    [ -f "$src/hostname" ] && hostname "$(cat "$src/hostname")" 2>/dev/null
    if [ -d "$src/network" ]; then
        mkdir -p /run/systemd/network
        cp "$src"/network/* /run/systemd/network/
    fi
    [ "$src" = $mnt ] && umount $mnt
fi
ls /etc/ssh/ssh_host_*_key >/dev/null 2>&1 || ssh-keygen -A
exit 0
"""

GUEST_SEED_UNIT = """[Unit]
Description=Install per-guest seed (ssh host key, authorized_keys, network)
DefaultDependencies=no
After=local-fs.target
Before=ssh.service systemd-networkd.service network-pre.target sysinit.target
Wants=network-pre.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/guest-seed

[Install]
WantedBy=sysinit.target
"""

SSHD_CONF = """# harness guest policy: root by public key only
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
HostKey /etc/ssh/ssh_host_ed25519_key
"""

# First NIC of a VM (slirp) gets DHCP.  Virtualization=vm keeps networkd
# away from the LXC veth (LXC configures it itself).  VMs boot with
# net.ifnames=0 so names are eth0, eth1, ...
VM_NET = """[Match]
Name=eth0
Virtualization=vm

[Network]
DHCP=ipv4
LinkLocalAddressing=no
IPv6AcceptRA=no
"""


def host_mirrors():
    """Derive sources lines from the host's apt config (no host names in code)."""
    lines = []
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        with open(path) as f:
            text = f.read()
        for stanza in re.split(r"\n\s*\n", text):
            fields = {}
            for ln in stanza.splitlines():
                if ln.startswith("#") or ":" not in ln or ln[0].isspace():
                    continue
                k, v = ln.split(":", 1)
                fields[k.strip().lower()] = v.strip()
            if "deb" not in fields.get("types", "").split():
                continue
            if fields.get("enabled", "yes").lower() == "no":
                continue
            for uri in fields.get("uris", "").split():
                for suite in fields.get("suites", "").split():
                    if suite.split("-")[0] != SUITE and suite.split("/")[0] != SUITE:
                        continue
                    lines.append(f"deb {uri} {suite} {fields.get('components', 'main')}")
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for ln in f:
                ln = ln.split("#", 1)[0].strip()
                m = re.match(r"deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+(.*)", ln)
                if m and m.group(3).split("-")[0].split("/")[0] == SUITE:
                    lines.append(f"deb {m.group(2)} {m.group(3)} {m.group(4)}")
    if not lines:
        raise ImageError(f"no {SUITE} deb sources in this host's apt configuration: guest images need Debian {SUITE}'s archive")
    return lines


def build_rootfs(rootfs: str) -> float:
    mirrors = host_mirrors()
    log("apt sources (from the host): " + "; ".join(mirrors))
    comps = sorted({c for ln in mirrors for c in ln.split()[3:]})
    tmp = rootfs + ".tmp"
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    # initramfs: only the modules needed for virtio root on ext4 (smaller
    # initrd => faster TCG boot).  Must exist before the kernel is unpacked.
    ess_hook = (
        'mkdir -p "$1/etc/initramfs-tools/conf.d" && '
        'echo MODULES=list > "$1/etc/initramfs-tools/conf.d/harness.conf" && '
        'mkdir -p "$1/etc/initramfs-tools" && '
        'printf "virtio_pci\\nvirtio_blk\\next4\\n" > "$1/etc/initramfs-tools/modules"'
    )
    cmd = [
        "mmdebstrap", "--variant=apt", "--mode=root", "--format=directory",
        f"--components={','.join(comps)}",
        "--include=" + ",".join(PACKAGES),
        # host has an archive snapshot whose Release files are "expired"
        '--aptopt=Acquire::Check-Valid-Until "false"',
        '--aptopt=Acquire::Check-Date "false"',
        '--aptopt=APT::Install-Recommends "false"',
        "--dpkgopt=path-exclude=/usr/share/man/*",
        "--dpkgopt=path-exclude=/usr/share/locale/*",
        "--dpkgopt=path-exclude=/usr/share/doc/*",
        "--dpkgopt=path-include=/usr/share/doc/*/copyright",
        "--dpkgopt=path-exclude=/usr/share/info/*",
        "--essential-hook=" + ess_hook,
        SUITE, tmp,
    ] + mirrors
    log("running:", " ".join(repr(c) if " " in c else c for c in cmd))
    t0 = time.monotonic()
    run(cmd)
    dt = time.monotonic() - t0
    log(f"mmdebstrap took {dt:.1f}s")
    customize(tmp)
    if os.path.exists(rootfs):
        shutil.rmtree(rootfs)
    os.rename(tmp, rootfs)
    return dt


def w(root, rel, content, mode=0o644):
    p = os.path.join(root, rel.lstrip("/"))
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(content)
    os.chmod(p, mode)


def customize(root):
    # no host keys baked in
    for k in glob.glob(os.path.join(root, "etc/ssh/ssh_host_*")):
        os.unlink(k)
    w(root, "/usr/local/sbin/guest-seed", GUEST_SEED_SH, 0o755)
    w(root, "/etc/systemd/system/guest-seed.service", GUEST_SEED_UNIT)
    w(root, "/etc/ssh/sshd_config.d/harness.conf", SSHD_CONF)
    w(root, "/etc/systemd/network/10-vm-eth0.network", VM_NET)
    w(root, "/etc/hostname", "guest\n")
    w(root, "/etc/hosts", "127.0.0.1 localhost\n")
    w(root, "/etc/fstab", "# root is mounted rw by the kernel (rw on cmdline) or the container runtime\n")
    # empty machine-id => a fresh transient one per boot
    w(root, "/etc/machine-id", "")
    run(["systemctl", f"--root={root}", "enable", "guest-seed.service",
         "systemd-networkd.service", "ssh.service"])
    run(["systemctl", f"--root={root}", "set-default", "multi-user.target"])
    # units that are pointless / slow in guests
    run(["systemctl", f"--root={root}", "mask", "apt-daily.timer",
         "apt-daily-upgrade.timer", "e2scrub_all.timer", "fstrim.timer",
         "systemd-networkd-wait-online.service", *MASKED_SERVICES], check=False)
    # root account: locked password (key login still works with '*')
    sh = os.path.join(root, "etc/shadow")
    with open(sh) as f:
        lines = f.read().splitlines()
    lines = [re.sub(r"^root:[^:]*:", "root:*:", ln) for ln in lines]
    with open(sh, "w") as f:
        f.write("\n".join(lines) + "\n")
    # resolv.conf may be a copy of the host's; guests don't need DNS
    rc = os.path.join(root, "etc/resolv.conf")
    if os.path.lexists(rc):
        os.unlink(rc)
    w(root, "/etc/resolv.conf", "")




def recipe_hash() -> str:
    """Hash of everything that shapes the image (packages, scripts, units, this file's build code)."""
    digest = hashlib.sha256()
    for part in (SUITE, *PACKAGES, *MASKED_SERVICES, GUEST_SEED_SH, GUEST_SEED_UNIT, SSHD_CONF, VM_NET):
        digest.update(part.encode() + b"\0")
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:12]


def _du_bytes(path: str) -> int:
    return int(run(["du", "-sb", path], capture=True).stdout.split()[0])


def build_images(out: str) -> dict:
    rootfs = os.path.join(out, "rootfs")
    kernel = sorted(glob.glob(os.path.join(rootfs, "boot/vmlinuz-*")))[-1]
    initrd = sorted(glob.glob(os.path.join(rootfs, "boot/initrd.img-*")))[-1]
    shutil.copy(kernel, os.path.join(out, "vmlinuz"))
    shutil.copy(initrd, os.path.join(out, "initrd"))
    raw = os.path.join(out, "root.raw")
    size_mb = int(_du_bytes(rootfs) * 1.4 / 2**20) + 2048  # room for benchmark files (IOZone up to 1 GB)
    if os.path.exists(raw):
        os.unlink(raw)
    timings = {}
    start = time.monotonic()
    run(["mkfs.ext4", "-q", "-F", "-L", "guestroot", "-E", "root_owner=0:0", "-d", rootfs, raw, f"{size_mb}M"])
    timings["mkfs_s"] = round(time.monotonic() - start, 2)
    run(["e2fsck", "-fn", raw], capture=True)
    for fmt, extra in (("qcow2", []), ("vmdk", ["-o", "subformat=monolithicSparse"])):
        start = time.monotonic()
        run(["qemu-img", "convert", "-O", fmt, *extra, raw, os.path.join(out, f"root.{fmt}")])
        timings[f"{fmt}_s"] = round(time.monotonic() - start, 2)
    start = time.monotonic()
    run(["tar", "--numeric-owner", "--xattrs", "-C", rootfs, "-cf", os.path.join(out, "rootfs.tar"), "."])
    timings["tar_s"] = round(time.monotonic() - start, 2)
    return {"kernel": os.path.basename(kernel), "raw_size_mb": size_mb, **timings}


def installed_packages(rootfs: str) -> dict[str, str]:
    """Every package installed in the built root file system with its version (its own dpkg
    database): a later build from the archive may install other versions, and the record says which ran."""
    listing = run(["dpkg-query", f"--admindir={rootfs}/var/lib/dpkg", "-W", "-f", "${Package}=${Version}\\n"],
                  capture=True).stdout
    return dict(line.split("=", 1) for line in listing.splitlines() if "=" in line)


IMAGE_FILES = ("rootfs.tar", "root.raw", "root.qcow2", "root.vmdk", "vmlinuz", "initrd", "image.json")


def build(out: str | Path) -> dict:
    """Build the guest image into ``out`` (a directory named by the recipe hash)."""
    if os.geteuid() != 0:
        raise ImageError("building guest images needs root (mmdebstrap --mode=root, file ownership)")
    out = str(out)
    os.makedirs(out, exist_ok=True)
    rootfs = os.path.join(out, "rootfs")
    seconds = None
    if not os.path.isdir(os.path.join(rootfs, "usr")):
        seconds = build_rootfs(rootfs)
    info = build_images(out)
    manifest = {
        "recipe": recipe_hash(),
        "suite": SUITE,
        "packages": PACKAGES,
        "installed": installed_packages(rootfs),  # name -> version, as installed
        "mmdebstrap_s": seconds,
        "rootfs_mb": round(_du_bytes(rootfs) / 2**20),
        "built_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **info,
    }
    Path(out, "image.json").write_text(json.dumps(manifest, indent=2) + "\n")
    log("image ready:", json.dumps(manifest))
    return manifest


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtrepro.guests.image", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("hash", help="print the recipe hash (the image directory name)")
    b = sub.add_parser("build", help="build the image into a directory")
    b.add_argument("out")
    args = parser.parse_args(argv)
    if args.command == "hash":
        print(recipe_hash())
    else:
        build(args.out)
    return 0


if __name__ == "__main__":
    from ..cli import run as run_cli  # not "run": a module may have a function of that name

    run_cli(main)
