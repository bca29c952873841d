"""Boot-to-SSH time per platform on the local testbed.

Starts a fresh guest of each platform N times (from the built guest image),
waits until a command runs over SSH with the guest's pinned host key, tears it
down, and prints the median and range of the start-to-SSH times. Expect about
1-2 s for containers and 15-50 s for a TCG VM on a 2-core machine.

    .venv/bin/python bench/boot_times.py [--runs 3] [--platforms lxc podman qemu-tcg]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from virtrepro.guests import GuestError, image_dir
from virtrepro.platforms.base import get_platform
from virtrepro.testbed.kinds import LocalTestbed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--platforms", nargs="+", default=["lxc", "podman", "qemu-tcg"])
    parser.add_argument("--vcpus", type=int, default=2)
    parser.add_argument("--memory-mb", type=int, default=2048)
    args = parser.parse_args()
    if not (image_dir() / "image.json").exists():
        raise SystemExit(f"no guest image in {image_dir()}: run the workflow once, or python -m virtrepro.guests.image build {image_dir()}")
    with tempfile.TemporaryDirectory() as state:
        testbed = LocalTestbed("bench-boot", state)
        host = testbed.up()
        try:
            print(f"{'platform':<10}{'runs':>6}{'median s':>10}{'min s':>8}{'max s':>8}   (start until a command runs over SSH)")
            for name in args.platforms:
                times = []
                for index in range(args.runs):
                    platform = get_platform(name)(host, {"vcpus": args.vcpus, "memory_mb": args.memory_mb})
                    start = time.monotonic()
                    try:
                        with platform.instance(index):
                            times.append(time.monotonic() - start)
                    except GuestError as error:
                        print(f"{name}: run {index} failed: {error}")
                if times:
                    print(f"{name:<10}{len(times):>6}{statistics.median(times):>10.2f}{min(times):>8.2f}{max(times):>8.2f}")
        finally:
            testbed.down()


if __name__ == "__main__":
    main()
