"""QEMU full virtualization with direct kernel boot: ``qemu-kvm`` (hardware-assisted) and ``qemu-tcg`` (software).

They are distinct platforms because they are different technologies: TCG
translates every guest instruction (the software full virtualization of
VMware Server in Walters 2008), KVM runs guest code on the CPU (Kudryavtsev,
Regola, Kumar). :func:`probe_kvm` boots the guest kernel under KVM for real
(opening /dev/kvm is not enough: on nested or paravirtual hosts guests hang).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from ..guests import GuestState, require_image
from ..guests.network import address, device_name, mac, networkd_static, tap_on_bridge
from ..testbed.hosts import default_state_dir
from .base import PlatformError
from .guest import FREEZE_TIMEOUT_S, GuestPlatform, host_cpus, host_memory_mb, overcommit_policy, process_cpu_ns

# what this module runs or reads on the host: path or program -> Debian package (see virtrepro.testbed.packages);
# the firmware and option ROMs are what QEMU loads for the machine below (SeaBIOS, the virtio NIC's
# iPXE ROM, and the direct kernel boot's loader)
HOST_PATHS = {
    "qemu-system-x86_64": "qemu-system-x86", "qemu-img": "qemu-utils", "mkfs.ext4": "e2fsprogs", "cp": "coreutils",
    "/usr/share/seabios/bios-256k.bin": "seabios", "/usr/lib/ipxe/qemu/efi-virtio.rom": "ipxe-qemu",
    "/usr/share/qemu/kvmvapic.bin": "qemu-system-data", "/usr/share/qemu/linuxboot_dma.bin": "qemu-system-data",
}

DEFAULT_SPEC = {
    "vcpus": 2,
    "memory_mb": 2048,
    "disk_format": "qcow2",
    "cache": "none",
    "numa_nodes": None,  # Kudryavtsev 2012: NUMA topology exposed to the guest
    "hugepages": False,  # guest memory backed by the host's huge pages (hugetlbfs)
    "pin_vcpus": False,  # each vCPU thread pinned to its own host CPU
}
# knobs only some specs set (isolation with limits), absent from the default so that other
# guests keep their names: cpu_partition (vCPUs pinned to this instance's own block of host
# CPUs, instance i the i-th) and disk_bps (root disk read and write cap, QEMU block throttling)


def _hugepages() -> tuple[int, int]:
    """(free huge pages, huge page size in kB) on this host."""
    info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines() if ":" in line)
    return int(info.get("HugePages_Free", "0").strip()), int(info.get("Hugepagesize", "0 kB").split()[0])
CMDLINE = (
    "root=/dev/vda rw console=ttyS0 net.ifnames=0 guestseed=/dev/vdb panic=-1 quiet "
    "modprobe.blacklist=kvm,kvm_amd,kvm_intel,ata_piix,pata_acpi,floppy,ata_generic"
)


_GIVEN_PORTS: set[int] = set()  # handed out by this process (a guest begun ahead binds its port later)


def _free_port() -> int:
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port not in _GIVEN_PORTS:
            _GIVEN_PORTS.add(port)
            return port


def qmp_socket(state: GuestState) -> Path:
    """Where the guest's QMP monitor listens: in its state directory, or, if that path is too long for
    a Unix socket (108 bytes), in the temporary directory under a name made from it."""
    path = state.dir / "qmp.sock"
    if len(str(path)) < 100:
        return path
    return Path(tempfile.gettempdir()) / f"virtrepro-qmp-{hashlib.sha256(str(path).encode()).hexdigest()[:16]}.sock"


def qmp(path: Path, command: str, timeout: float = FREEZE_TIMEOUT_S) -> dict:
    """Run one QMP ``command`` (no arguments) on the monitor at ``path``; return its ``return`` value.
    Raises PlatformError with QMP's error, OSError if the monitor cannot be reached."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        stream = sock.makefile("rwb")
        json.loads(stream.readline() or b"{}")  # the greeting
        answer: dict = {}
        for execute in ("qmp_capabilities", command):
            stream.write(json.dumps({"execute": execute}).encode() + b"\n")
            stream.flush()
            while True:  # events (STOP, RESUME...) may come before the answer
                line = stream.readline()
                if not line:
                    raise PlatformError(f"QMP {execute}: the monitor closed the connection")
                answer = json.loads(line)
                if "return" in answer or "error" in answer:
                    break
            if "error" in answer:
                raise PlatformError(f"QMP {execute}: {answer['error'].get('desc', answer['error'])}")
        return answer["return"]


def probe_kvm(image: Path, work: Path, timeout: float = 20) -> dict:
    """Boot the guest kernel under KVM with /bin/poweroff as init; KVM works if it exits by itself.
    The result's ``platform`` is the QEMU platform the testbed runs (qemu-kvm or qemu-tcg)."""
    result = _boot_under_kvm(image, work, timeout)
    return {**result, "platform": BY_ACCEL[result["accel"]]}


def _boot_under_kvm(image: Path, work: Path, timeout: float) -> dict:
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
    accel = ""
    tool = "qemu-system-x86_64"

    def __init__(self, host, spec=None):
        super().__init__(host, {**DEFAULT_SPEC, **(spec or {})})
        if self.spec["disk_format"] not in ("raw", "qcow2", "vmdk"):
            raise PlatformError(f"{self.name}: disk_format {self.spec['disk_format']!r} is not raw, qcow2 or vmdk")
        if self.spec["cache"] not in ("none", "writeback", "writethrough"):
            raise PlatformError(f"{self.name}: cache {self.spec['cache']!r} is not none, writeback or writethrough")
        if self.remote:
            return  # the host's own checks below are made by its host agent, on the host
        if self.accel == "kvm" and not os.access("/dev/kvm", os.R_OK | os.W_OK):
            raise PlatformError("qemu-kvm: /dev/kvm is missing or not accessible on this host")
        self._check_knobs()

    def _check_knobs(self) -> None:
        """Refuse, with the reason, a knob this host cannot honour."""
        vcpus, memory = self.spec["vcpus"], self.spec["memory_mb"]
        nodes = self.spec.get("numa_nodes")
        if nodes and (vcpus % nodes or memory % nodes):
            raise PlatformError(f"{self.name}: numa_nodes={nodes} must divide vcpus={vcpus} and memory_mb={memory}")
        if self.spec.get("hugepages"):
            free, size_kb = _hugepages()
            needed = -(-memory * 1024 // size_kb) if size_kb else 0
            if not Path("/dev/hugepages").is_dir() or free < needed:
                raise PlatformError(
                    f"{self.name}: hugepages=true needs {needed} free huge pages of {size_kb} kB for {memory} MB "
                    f"mounted at /dev/hugepages; the host has {free} free (raise vm.nr_hugepages)"
                )
        if memory > host_memory_mb() and not self.spec.get("hugepages") and overcommit_policy() == 2:
            raise PlatformError(
                f"{self.name}: a guest of {memory} MB is larger than this host's memory ({host_memory_mb()} MB) "
                "and vm.overcommit_memory=2 forbids overcommitting it: refused"
            )
        if self.spec.get("cpu_partition") and vcpus > len(host_cpus()):
            raise PlatformError(f"{self.name}: cpu_partition needs a host CPU per vCPU ({vcpus} vCPUs, {len(host_cpus())} CPUs)")
        if self.spec.get("pin_vcpus") and vcpus > (os.cpu_count() or 1):
            raise PlatformError(f"{self.name}: pin_vcpus needs a host CPU per vCPU ({vcpus} vCPUs, {os.cpu_count()} CPUs)")

    def _memory_options(self) -> list[str]:
        memory, nodes = self.spec["memory_mb"], self.spec.get("numa_nodes") or 0
        hugepages = self.spec.get("hugepages")
        # A guest larger than the host's memory (thesis Figs. 4.5-4.7) is refused by the kernel's
        # overcommit heuristic ("cannot set up guest memory 'pc.ram'"): its RAM is then mapped
        # without a reservation (reserve=off, MAP_NORESERVE), and pages are backed as touched.
        overcommitted = not hugepages and memory > host_memory_mb()
        self.applied["memory_overcommitted"] = overcommitted
        if not nodes and not hugepages and not overcommitted:
            return ["-m", str(memory)]
        count = nodes or 1
        options = ["-m", str(memory)]
        for node in range(count):
            size = memory // count
            if hugepages:
                options += ["-object", f"memory-backend-file,id=mem{node},size={size}M,mem-path=/dev/hugepages,prealloc=on"]
            else:
                reserve = ",reserve=off" if overcommitted else ""
                options += ["-object", f"memory-backend-ram,id=mem{node},size={size}M{reserve}"]
            if nodes:
                per_node = self.spec["vcpus"] // nodes
                first = node * per_node
                cpus = f"{first}-{first + per_node - 1}" if per_node > 1 else str(first)
                options += ["-numa", f"node,nodeid={node},cpus={cpus},memdev=mem{node}"]
            else:
                options += ["-machine", f"memory-backend=mem{node}"]
        return options

    def _booted(self, state) -> None:
        if self.spec.get("pin_vcpus") or self.spec.get("cpu_partition"):
            self.applied["vcpu_pinning"] = self._pin_vcpus(state)
        self.applied["numa_nodes"] = self.spec.get("numa_nodes")
        self.applied["hugepages"] = bool(self.spec.get("hugepages"))

    def _pin_vcpus(self, state) -> dict:
        """Pin each vCPU thread ("CPU n/TCG" or "CPU n/KVM") of this guest's QEMU to host CPU n."""
        # this guest's QEMU (its console file is in the guest's own state directory: another
        # testbed on this machine may run a guest of the same name)
        console = f"file:{state.dir / 'console.log'}"
        pids = []
        for proc in Path("/proc").iterdir():
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if proc.name.isdigit() and argv[0] == b"qemu-system-x86_64" and console.encode() in argv:
                pids.append(proc.name)
        if not pids:
            raise PlatformError(f"{self.name}: cannot find the QEMU process of {state.name} to pin its vCPUs")
        pinned = {}
        # with cpu_partition, this instance's own block of host CPUs; else vCPU n on host CPU n
        cpus = [int(c) for c in self.cpu_assignment(int(state.name.rsplit("-", 1)[1]))["cpuset"].split(",")]
        if not self.spec.get("cpu_partition"):
            cpus = host_cpus()
        for task in Path(f"/proc/{pids[0]}/task").iterdir():
            name = (task / "comm").read_text().strip()
            if name.startswith("CPU ") and "/" in name:
                cpu = cpus[int(name.split()[1].split("/")[0]) % len(cpus)]
                os.sched_setaffinity(int(task.name), {cpu})
                pinned[name] = cpu
        if len(pinned) != self.spec["vcpus"]:
            raise PlatformError(f"{self.name}: found {len(pinned)} vCPU threads to pin, expected {self.spec['vcpus']}")
        return pinned

    def spec_applied(self, index: int) -> dict:
        applied = {"vcpus": self.spec["vcpus"], "memory_mb": self.spec["memory_mb"],
                   # more vCPUs than host CPUs: the VM runs oversubscribed (its vCPU threads share CPUs)
                   "oversubscribed": self.spec["vcpus"] > len(host_cpus())}
        if self.spec.get("cpu_partition"):
            applied["cpuset"] = self.cpu_assignment(index)["cpuset"]
        if self.spec.get("disk_bps"):
            applied["disk_bps"] = int(self.spec["disk_bps"])
        return applied

    def console_log(self, state: GuestState) -> Path:
        return state.dir / "console.log"

    def seed_network(self, state: GuestState) -> dict[str, str]:
        ip = address(self.name, int(state.name.rsplit("-", 1)[1]), self.testbed)
        self.applied["address"] = ip
        return {"20-eth1.network": networkd_static("eth1", ip)}

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
        tap = device_name("vrt-", self.testbed, name)
        subprocess.run(["ip", "link", "del", tap], capture_output=True)
        network_cleanup = tap_on_bridge(self.testbed, tap)
        cpu = "host" if self.accel == "kvm" else "max"
        throttle = ""
        if self.spec.get("disk_bps"):
            throttle = f",throttling.bps-read={int(self.spec['disk_bps'])},throttling.bps-write={int(self.spec['disk_bps'])}"

        command = [
            "qemu-system-x86_64", "-name", f"{name},debug-threads=on", "-accel", self.accel, "-cpu", cpu,
            "-smp", str(self.spec["vcpus"]), *self._memory_options(),
            "-nodefaults", "-display", "none", "-monitor", "none",
            # QMP: the monitor that stops and continues the VM (freeze, thaw)
            "-qmp", f"unix:{qmp_socket(state)},server=on,wait=off",
            "-serial", f"file:{state.dir / 'console.log'}",
            "-kernel", str(image / "vmlinuz"), "-initrd", str(image / "initrd"), "-append", CMDLINE,
            "-drive", f"file={disk},if=virtio,format={fmt},cache={self.spec['cache']}{throttle}",
            "-drive", f"file={seed_disk},if=virtio,format=raw,readonly=on",
            "-netdev", f"user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:{port}-:22",
            "-device", "virtio-net-pci,netdev=n0",
            # second NIC on the host-only bridge: the private network between instances
            "-netdev", f"tap,id=n1,ifname={tap},script=no,downscript=no",
            # a MAC of its own (QEMU's default is the same in every VM, which a bridge cannot tell apart)
            "-device", f"virtio-net-pci,netdev=n1,mac={mac(address(self.name, int(name.rsplit('-', 1)[1]), self.testbed))}",
        ]
        state_root = str(default_state_dir())
        self.applied.update(accel=self.accel, image=image.name, command=[c.replace(state_root, ".state") for c in command])
        cleanup = [["rm", "-f", str(disk), str(seed_disk), str(qmp_socket(state))], *network_cleanup]
        return command, {"cleanup": cleanup}, "127.0.0.1", port

    def clone(self, state: GuestState, target: Path) -> None:
        """A copy of the running guest's disk image in its format, as virt-clone would make."""
        fmt = self.spec["disk_format"]
        subprocess.run(["qemu-img", "convert", "-U", "-f", fmt, "-O", fmt, str(state.dir / f"root.{fmt}"), str(target)],
                       check=True, capture_output=True)


    freeze_mechanism = "QMP stop/cont (the VM's vCPUs stopped by QEMU's monitor)"

    def _set_frozen(self, state: GuestState, index: int, frozen: bool) -> None:
        try:
            qmp(qmp_socket(state), "stop" if frozen else "cont")
        except (OSError, ValueError, PlatformError) as error:
            raise self._freeze_failed(index, "QMP stop" if frozen else "QMP cont", str(error)) from None

    def _frozen_now(self, state: GuestState) -> bool:
        return not qmp(qmp_socket(state), "query-status")["running"]

    def query_status(self, index: int = 0) -> dict:
        """QMP query-status of instance ``index`` ({"status": "running" | "paused" | ..., "running": bool})."""
        return qmp(qmp_socket(self.state(index)), "query-status")

    def qemu_pid(self, index: int = 0) -> int:
        """The QEMU process of instance ``index`` (its command line names its own QMP socket)."""
        wanted = f"unix:{qmp_socket(self.state(index))},server=on,wait=off".encode()
        for proc in Path("/proc").iterdir():
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if proc.name.isdigit() and argv[0] == b"qemu-system-x86_64" and wanted in argv:
                return int(proc.name)
        raise PlatformError(f"{self.name}: cannot find the QEMU process of instance {index}")

    def cpu_time_ns(self, index: int = 0) -> int:
        return process_cpu_ns([self.qemu_pid(index)])


class QemuKvm(Qemu):
    name = "qemu-kvm"
    accel = "kvm"


class QemuTcg(Qemu):
    name = "qemu-tcg"
    accel = "tcg"


# the platform a KVM probe's accelerator selects
BY_ACCEL = {cls.accel: cls.name for cls in (QemuKvm, QemuTcg)}


def main(argv=None) -> int:
    """python -m virtrepro.platforms.qemu probe OUT.json: record which accelerator works here."""
    import argparse

    from ..guests import image_dir

    parser = argparse.ArgumentParser(prog="python -m virtrepro.platforms.qemu")
    parser.add_argument("command", choices=["probe"])
    parser.add_argument("out")
    args = parser.parse_args(argv)
    result = probe_kvm(image_dir(), Path(args.out).parent / "kvm-probe")
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    from ..cli import run as run_cli  # not "run": a module may have a function of that name

    run_cli(main)
