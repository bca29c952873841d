"""QEMU full virtualization with direct kernel boot: ``qemu-kvm`` (hardware-assisted) and ``qemu-tcg`` (software).

They are distinct platforms because they are different technologies: TCG
translates every guest instruction (the software full virtualization of
VMware Server in Walters 2008), KVM runs guest code on the CPU (Kudryavtsev,
Regola, Kumar). :func:`probe_kvm` boots the guest kernel under KVM for real
(opening /dev/kvm is not enough: on nested or paravirtual hosts guests hang).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from ..guests import GuestState, require_image
from ..testbed import default_state_dir
from .base import PlatformError
from .guest import GuestPlatform

DEFAULT_SPEC = {"vcpus": 2, "memory_mb": 2048, "disk_format": "qcow2", "cache": "none"}
CMDLINE = (
    "root=/dev/vda rw console=ttyS0 net.ifnames=0 guestseed=/dev/vdb panic=-1 quiet "
    "modprobe.blacklist=kvm,kvm_amd,kvm_intel,ata_piix,pata_acpi,floppy,ata_generic"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def probe_kvm(image: Path, work: Path, timeout: float = 20) -> dict:
    """Boot the guest kernel under KVM with /bin/poweroff as init; KVM works if it exits by itself."""
    work.mkdir(parents=True, exist_ok=True)
    result = {"accel": "tcg", "kvm_device": os.access("/dev/kvm", os.R_OK | os.W_OK)}
    if not result["kvm_device"]:
        return {**result, "reason": "/dev/kvm is missing or not accessible"}
    console = work / "kvm-probe-console.log"
    command = [
        "qemu-system-x86_64", "-accel", "kvm", "-cpu", "host", "-m", "256", "-smp", "1", "-nodefaults",
        "-display", "none", "-no-reboot", "-serial", f"file:{console}", "-kernel", str(image / "vmlinuz"),
        "-initrd", str(image / "initrd"), "-append", "console=ttyS0 rdinit=/bin/poweroff panic=-1",
    ]
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        size = console.stat().st_size if console.exists() else 0
        return {**result, "reason": f"a KVM guest did not finish a {timeout:.0f} s boot probe ({size} bytes on its console)"}
    seconds = round(time.monotonic() - start, 2)
    text = console.read_text(errors="replace") if console.exists() else ""
    if process.returncode == 0 and "as init process" in text:
        return {**result, "accel": "kvm", "reason": f"KVM guest booted to user space in {seconds} s"}
    return {**result, "reason": f"KVM probe failed (exit {process.returncode}) in {seconds} s: {output.strip()[-300:]}"}


class Qemu(GuestPlatform):
    family = "full-vm"
    accel = ""

    def __init__(self, host, spec=None):
        super().__init__(host, {**DEFAULT_SPEC, **(spec or {})})
        if self.spec["disk_format"] not in ("raw", "qcow2", "vmdk"):
            raise PlatformError(f"{self.name}: disk_format {self.spec['disk_format']!r} is not raw, qcow2 or vmdk")
        if self.spec["cache"] not in ("none", "writeback", "writethrough"):
            raise PlatformError(f"{self.name}: cache {self.spec['cache']!r} is not none, writeback or writethrough")
        if self.accel == "kvm" and not os.access("/dev/kvm", os.R_OK | os.W_OK):
            raise PlatformError("qemu-kvm: /dev/kvm is missing or not accessible on this host")

    def console_log(self, state: GuestState) -> Path:
        return state.dir / "console.log"

    def launch(self, state: GuestState, name: str, seed: Path):
        image = require_image()
        fmt = self.spec["disk_format"]
        disk = state.dir / f"root.{fmt}"
        subprocess.run(["cp", "--sparse=always", str(image / f"root.{fmt}"), str(disk)], check=True)
        seed_disk = state.dir / "seed.img"
        subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "GUESTSEED", "-d", str(seed), str(seed_disk), "4M"],
                       check=True, capture_output=True)
        shutil.rmtree(seed)  # the private host key now lives only on the seed disk
        port = _free_port()
        cpu = "host" if self.accel == "kvm" else "max"
        command = [
            "qemu-system-x86_64", "-name", name, "-accel", self.accel, "-cpu", cpu,
            "-smp", str(self.spec["vcpus"]), "-m", str(self.spec["memory_mb"]),
            "-nodefaults", "-display", "none", "-monitor", "none",
            "-serial", f"file:{state.dir / 'console.log'}",
            "-kernel", str(image / "vmlinuz"), "-initrd", str(image / "initrd"), "-append", CMDLINE,
            "-drive", f"file={disk},if=virtio,format={fmt},cache={self.spec['cache']}",
            "-drive", f"file={seed_disk},if=virtio,format=raw,readonly=on",
            "-netdev", f"user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:{port}-:22",
            "-device", "virtio-net-pci,netdev=n0",
        ]
        state_root = str(default_state_dir())
        self.applied.update(accel=self.accel, image=image.name, command=[c.replace(state_root, ".state") for c in command])
        cleanup = [["rm", "-f", str(disk), str(seed_disk)]]
        return command, {"cleanup": cleanup}, "127.0.0.1", port

    def clone(self, state: GuestState, target: Path) -> None:
        """A copy of the running guest's disk image in its format, as virt-clone would make."""
        fmt = self.spec["disk_format"]
        subprocess.run(["qemu-img", "convert", "-U", "-f", fmt, "-O", fmt, str(state.dir / f"root.{fmt}"), str(target)],
                       check=True, capture_output=True)


class QemuKvm(Qemu):
    name = "qemu-kvm"
    accel = "kvm"


class QemuTcg(Qemu):
    name = "qemu-tcg"
    accel = "tcg"


def main(argv=None) -> int:
    """python -m virtrepro.platforms.qemu probe OUT.json: record which accelerator works here."""
    import argparse

    from ..guests import image_dir

    parser = argparse.ArgumentParser(prog="python -m virtrepro.platforms.qemu")
    parser.add_argument("command", choices=["probe"])
    parser.add_argument("out")
    args = parser.parse_args(argv)
    result = probe_kvm(image_dir(), Path(args.out).parent / "kvm-probe")
    result["platform"] = f"qemu-{result['accel']}"
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
