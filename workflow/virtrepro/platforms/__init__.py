"""Platforms: where on a testbed host a benchmark runs.

A platform turns a testbed host into the SSH endpoint that a benchmark uses:
``native`` is the host itself; ``lxc`` and ``podman`` start a container,
``charliecloud`` an unprivileged one, ``qemu-kvm`` and ``qemu-tcg`` a full VM, and yield the
guest's endpoint.
Adding a platform is adding one module with a :class:`Platform` subclass and its
declaration in :mod:`virtrepro.platforms.catalog` (family, label, colour, address
block, capabilities, and the ``implementation`` that names the class).

This ``__init__`` stays light (standard library only): the catalog is read by the
analysis and by the host agent without loading any platform's code; a platform's
module is imported when :func:`get_platform` is first asked for it.
"""

from importlib import import_module

from . import catalog
from .base import Platform, PlatformError


def get_platform(name: str) -> type[Platform]:
    """The class that implements platform ``name`` (declared in the catalog)."""
    try:
        spec = catalog.get(name)
    except catalog.UnknownPlatform as error:
        raise PlatformError(str(error)) from None
    module, _, class_name = spec.implementation.partition(":")
    cls = getattr(import_module(f"{__name__}.{module}"), class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Platform) and cls.name == name):
        raise PlatformError(f"platform {name!r}: its declared implementation {spec.implementation!r} is not a "
                            f"Platform class named {name!r}")
    return cls


__all__ = ["Platform", "PlatformError", "catalog", "get_platform"]
