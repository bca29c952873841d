"""The host agent: what a remote testbed's host does for its guests, on the host itself.

    python3 -m virtrepro.testbed.hostagent COMMAND 'JSON ARGUMENTS'

The controller (:mod:`virtrepro.testbed.agent`) uploads this package to the host
(``<state dir>/agent/<content hash>/``) and runs this module over SSH, as root
(or through ``sudo -n``), with ``VIRTREPRO_STATE`` set to the host's state
directory. Only the standard library is needed here: the host needs Python 3.9+
and the platforms' own tools, not Fabric.

Commands (arguments are one JSON object):

``keep {testbed, heartbeat_s}``
    prints ``{"keeper_pid": N}`` and lives until its standard input closes (the
    controller's SSH channel went away) or no heartbeat byte arrived for
    ``heartbeat_s`` seconds; then it stops the guests it owns. Every guest on the host
    is owned by a keeper: when the controller ends, fails or is killed, they go.
``start {testbed, platform, spec, index, owner, authorized_keys}``
    brings instance ``index`` up under a supervisor owned by ``owner`` (a keeper) or
    reuses the running one; answers with its endpoint as seen from the host and its
    pinned host key.
``stop {testbed, names | keep_prefix}``, ``status {testbed}``
``freeze``, ``thaw``, ``frozen {testbed, platform, spec, index, authorized_keys}``
    freezes or thaws the running instance ``index`` (the platform's freeze and thaw, a thaw
    verified by a login from the host); answers ``{"frozen": bool}``.
``lifecycle {testbed, platform, spec, owner, authorized_keys}``
    the lifecycle timings (provision, boot, reboot, clone, destroy) on the host;
    the log goes to standard output.
``probe-kvm {}``
    whether a KVM guest really boots on this host.
``prepare {platforms, install, build_image}``
    installs the Debian packages the platforms need (``apt-get``, starting no
    service) and builds the guest image with the same recipe as the controller's
    (``python3 -m virtrepro.guests.image build``) if it is missing; says what is
    missing when it cannot.

The answer of every command is one line on standard error,
``@@virtrepro-agent@@ {json}``; an error is ``{"error": ..., "kind": ...}`` with exit
status 2. The guests' own SSH endpoints are checked with OpenSSH's client and a
key of the agent's (authorized in each guest beside the controller's key).
"""

from __future__ import annotations

import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..platforms import catalog as platform_catalog  # standard library only, uploaded with this module

RESULT_MARKER = "@@virtrepro-agent@@"
MIN_PYTHON = (3, 9)



class AgentError(RuntimeError):
    pass


def _result(payload: dict, status: int = 0) -> int:
    print(f"{RESULT_MARKER} {json.dumps(payload)}", file=sys.stderr, flush=True)
    return status


def _state_dir() -> Path:
    from .hosts import default_state_dir

    return default_state_dir()


def agent_host(testbed: str):
    """This host as the platforms see it, with a key of the agent's to reach its guests."""
    from .hosts import Host

    directory = _state_dir() / "testbeds" / testbed
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    key = directory / "agent_ed25519"
    if not key.exists():
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"virtrepro-agent-{testbed}", "-f", str(key)],
                       check=True, stdout=sys.stderr)
    return Host(name=testbed, hostname="127.0.0.1", port=22, user="root", identity=str(key), known_hosts=os.devnull,
                testbed=testbed)


def _platform(args: dict):
    from ..platforms.base import get_platform
    from ..platforms.guest import GuestPlatform

    name = args["platform"]
    cls = get_platform(name).agent_class()
    if not issubclass(cls, GuestPlatform):
        raise AgentError(f"platform {name} has no guests")
    missing = [f"{path} ({package})" for path, package in sorted(missing_tools([name], False).items())]
    if missing:
        raise AgentError(f"platform {name} needs on this host: {', '.join(missing)}; "
                         "the workflow's guest_image rule installs them (python -m virtrepro.testbed.remote prepare)")
    if platform_catalog.runs_in_guest(name):
        from ..guests import image_dir

        if not (image_dir() / "image.json").exists():
            raise AgentError(f"the guest image {image_dir()} is missing on this host: the workflow's guest_image rule "
                             f"builds it (by hand: python -m virtrepro.testbed.remote prepare --testbed {args['testbed']} ...)")
    platform = cls(agent_host(args["testbed"]), args.get("spec"))
    platform.ssh_client = "openssh"
    platform.extra_authorized_keys = list(args.get("authorized_keys") or [])
    platform.owner_pid = args.get("owner")
    platform.failure_dir = _state_dir() / "failures"  # a failed boot's console log stays on the host
    return platform


def _supervisor_owner(pid_file: Path) -> int | None:
    """The owner a running supervisor watches (from its command line)."""
    try:
        argv = Path(f"/proc/{int(pid_file.read_text())}/cmdline").read_bytes().decode().split("\0")
        return int(argv[argv.index("--owner") + 1])
    except (OSError, ValueError, IndexError):
        return None


def cmd_start(args: dict) -> int:
    from . import supervisor

    platform = _platform(args)
    owner = int(args["owner"])
    if not supervisor.pid_alive(owner):
        raise AgentError(f"the keeper {owner} that would own the guest is not running on this host")
    index = int(args["index"])
    state = platform.state(index)
    keys_file = state.dir / "controller_keys"
    wanted_keys = "".join(f"{k.strip()}\n" for k in platform.extra_authorized_keys)
    if state.running():
        # reuse only a guest of this keeper that lets the same controller in
        same_keys = keys_file.exists() and keys_file.read_text() == wanted_keys
        if not same_keys or _supervisor_owner(state.pid_file) != owner:
            state.stop()
    endpoint = platform.acquire(index, owner)
    keys_file.write_text(wanted_keys)
    pinned = (state.dir / "known_hosts").read_text().split()
    return _result({
        "name": endpoint.name, "hostname": endpoint.hostname, "port": endpoint.port, "user": endpoint.user,
        "host_key": " ".join(pinned[1:3]), "applied": platform.applied, "state_dir": str(state.dir),
    })


def cmd_stop(args: dict) -> int:
    from ..guests import GuestState, stop_guests

    if args.get("names") is not None:
        for name in args["names"]:
            GuestState(args["testbed"], name).stop()
    else:
        stop_guests(args["testbed"], args.get("keep_prefix"))
    return _result({"stopped": True})


def cmd_freezer(args: dict, verb: str) -> int:
    platform = _platform(args)
    index = int(args["index"])
    if verb == "freeze":
        platform.freeze(index)
    elif verb == "thaw":
        platform.thaw(index)
    return _result({"frozen": platform.frozen(index)})


def running_guests(testbed: str) -> list[str]:
    from ..guests import GuestState

    root = _state_dir() / "guests" / testbed
    return sorted(p.parent.name for p in root.glob("*/supervisor.pid") if GuestState(testbed, p.parent.name).running())


def cmd_status(args: dict) -> int:
    return _result({"guests": running_guests(args["testbed"]), "python": sys.version.split()[0],
                    "state_dir": str(_state_dir()), "hostname": os.uname().nodename})


def cmd_lifecycle(args: dict, out) -> int:
    platform = _platform(args)
    platform.lifecycle(out)
    out.flush()
    return _result({"applied": platform.applied})


def cmd_probe_kvm(args: dict) -> int:
    from ..guests import require_image
    from ..platforms.qemu import probe_kvm

    return _result(probe_kvm(require_image(), _state_dir() / "probes" / "kvm-probe"))


def cmd_keep(args: dict, out) -> int:
    """Live as long as the controller's channel; then stop the guests this keeper owns."""
    from ..guests import GuestState

    heartbeat = float(args.get("heartbeat_s") or 60)

    def leave(*_):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, leave)
    signal.signal(signal.SIGHUP, leave)
    print(json.dumps({"keeper_pid": os.getpid()}), file=out, flush=True)
    last = time.monotonic()
    try:
        while time.monotonic() - last < heartbeat:
            ready, _, _ = select.select([sys.stdin], [], [], 1.0)
            if ready:
                if not os.read(sys.stdin.fileno(), 4096):
                    break  # EOF: the controller's channel is gone
                last = time.monotonic()
    finally:
        root = _state_dir() / "guests" / args["testbed"]
        for pid_file in sorted(root.glob("*/supervisor.pid")):
            if _supervisor_owner(pid_file) == os.getpid():
                GuestState(args["testbed"], pid_file.parent.name).stop()
    return 0


def install_command(packages: list[str]) -> str:
    """Shell: apt-get install ``packages`` without starting their services (nginx, PostgreSQL,
    RabbitMQ would start theirs): a policy-rc.d that refuses, made for the install and removed
    after it (one already there is left alone), as the set-up script does."""
    return (
        "if [ \"$(id -u)\" = 0 ]; then SUDO=; else SUDO='sudo -n'; fi; p=/usr/sbin/policy-rc.d; made=; "
        "if [ ! -e $p ]; then printf '#!/bin/sh\\nexit 101\\n' | $SUDO tee $p >/dev/null && $SUDO chmod 755 $p && made=1; fi; "
        f"$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends {' '.join(map(shlex.quote, packages))}; "
        "s=$?; if [ -n \"$made\" ]; then $SUDO rm -f $p; fi; exit $s"
    )


def _apt_install(packages: list[str]) -> None:
    """apt-get install on this host without starting services (``install_command``)."""
    if not shutil.which("apt-get"):
        raise AgentError(f"this host has no apt-get: install {', '.join(packages)} yourself")
    for argv in (["apt-get", "update", "-q"], ["sh", "-c", install_command(packages)]):
        print(f"[agent] {' '.join(argv)}", file=sys.stderr, flush=True)
        result = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=sys.stderr, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            raise AgentError(f"{' '.join(argv)} failed (exit {result.returncode}): {result.stderr.strip()[-800:]}")


def missing_tools(platforms: list[str], image: bool) -> dict[str, str]:
    """What the platforms (and the image build) need on this host and it lacks: path or program -> package.
    The needs are the ``HOST_PATHS`` declared beside the code that uses them (see virtrepro.testbed.packages)."""
    from .. import guests
    from . import packages
    from ..guests import image as guest_image, network
    from ..platforms.base import get_platform

    wanted = {**guests.HOST_PATHS, **network.HOST_PATHS}
    for name in platforms:  # an alias (qemu) and its candidates share one module
        wanted.update(sys.modules[get_platform(platform_catalog.implementation(name)).__module__].HOST_PATHS)
    if image:
        wanted.update(guest_image.HOST_PATHS)
    return packages.missing(wanted)


def cmd_prepare(args: dict) -> int:
    from ..guests import image_dir
    from ..guests.image import build, recipe_hash

    platforms = list(args.get("platforms") or [])
    needs_image = any(platform_catalog.runs_in_guest(name) for name in platforms)
    image = image_dir()
    build_needed = needs_image and not (image / "image.json").exists()
    installed = []
    missing = missing_tools(platforms, build_needed)
    # a host that has every tool and the image needs nothing of root (an unprivileged cluster user with
    # an unprivileged container); installing packages and building the image (mmdebstrap) do
    if os.geteuid() != 0 and (missing or build_needed):
        needed = [f"{c} ({p})" for c, p in sorted(missing.items())] + ([f"the guest image {image}"] if build_needed else [])
        raise AgentError("preparing this host needs root (or passwordless sudo for the testbed's user) to install "
                         + ", ".join(needed))
    if missing:
        packages = sorted(set(missing.values()))
        if not args.get("install", True):
            raise AgentError("missing on this host: " + ", ".join(f"{c} ({p})" for c, p in sorted(missing.items())))
        print(f"[agent] installing {' '.join(packages)} (for {', '.join(sorted(missing))})", file=sys.stderr, flush=True)
        _apt_install(packages)
        installed = packages
        still = missing_tools(platforms, build_needed)
        if still:
            raise AgentError("still missing after apt-get install: " + ", ".join(f"{c} ({p})" for c, p in sorted(still.items())))
    manifest = None
    if build_needed:
        if not args.get("build_image", True):
            raise AgentError(f"the guest image {image} is missing on this host")
        print(f"[agent] building the guest image {recipe_hash()} into {image} (from Debian's archive, a few minutes)",
              file=sys.stderr, flush=True)
        build(image)
        manifest = json.loads((image / "image.json").read_text())
    elif needs_image:
        manifest = json.loads((image / "image.json").read_text())
    return _result({"installed": installed, "image_dir": str(image), "image_built": build_needed,
                    "image": manifest, "recipe": recipe_hash()})


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if sys.version_info < MIN_PYTHON:
        return _result({"error": f"the host agent needs Python {'.'.join(map(str, MIN_PYTHON))} or newer, "
                                 f"this host has {sys.version.split()[0]}", "kind": "AgentError"}, 2)
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    command, args = argv[0], json.loads(argv[1])
    os.environ["PATH"] = os.environ.get("PATH", "/usr/bin:/bin") + ":/usr/local/sbin:/usr/sbin:/sbin"
    # standard output is the command's stream (keeper handshake, lifecycle log); whatever the
    # tools started here print goes to standard error instead
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    commands = {
        "start": lambda: cmd_start(args), "stop": lambda: cmd_stop(args), "status": lambda: cmd_status(args),
        "lifecycle": lambda: cmd_lifecycle(args, out), "probe-kvm": lambda: cmd_probe_kvm(args),
        "keep": lambda: cmd_keep(args, out), "prepare": lambda: cmd_prepare(args),
        "freeze": lambda: cmd_freezer(args, "freeze"), "thaw": lambda: cmd_freezer(args, "thaw"),
        "frozen": lambda: cmd_freezer(args, "frozen"),
    }
    if command not in commands:
        return _result({"error": f"unknown command {command!r}", "kind": "AgentError"}, 2)
    try:
        return commands[command]()
    except Exception as error:  # reported to the controller, which raises it there
        return _result({"error": str(error) or type(error).__name__, "kind": type(error).__name__}, 2)


if __name__ == "__main__":
    sys.exit(main())
