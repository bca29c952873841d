"""Platforms: where on a testbed host a benchmark runs.

A platform turns a testbed host into the SSH endpoint that a benchmark uses:
``native`` is the host itself; ``lxc`` and ``podman`` start a container,
``qemu-kvm`` and ``qemu-tcg`` a full VM, and yield the guest's endpoint.
Adding a platform is adding one module with a :class:`Platform` subclass, its
line in ``PLATFORMS`` and its declaration in :mod:`virtrepro.platform_catalog`
(family, label, colour, address block, capabilities).
"""

from .. import platform_catalog

from .base import Platform, PlatformError
from .lxc import Lxc
from .native import Native
from .podman import Podman
from .qemu import QemuKvm, QemuTcg

PLATFORMS: dict[str, type[Platform]] = {cls.name: cls for cls in (Native, Lxc, Podman, QemuKvm, QemuTcg)}
if tuple(PLATFORMS) != platform_catalog.NAMES:
    raise ImportError(f"platform classes {tuple(PLATFORMS)} differ from platform_catalog.PLATFORMS {platform_catalog.NAMES}")


def get_platform(name: str) -> type[Platform]:
    try:
        return PLATFORMS[name]
    except KeyError:
        raise PlatformError(f"unknown platform {name!r}; known: {', '.join(sorted(PLATFORMS))}") from None


__all__ = ["PLATFORMS", "Platform", "PlatformError", "get_platform"]
