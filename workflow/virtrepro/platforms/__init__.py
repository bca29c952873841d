"""Platforms: where on a testbed host a benchmark runs.

A platform turns a testbed host into the SSH endpoint that a benchmark uses:
``native`` is the host itself; ``lxc`` and ``podman`` start a container,
``charliecloud`` an unprivileged one, ``qemu-kvm`` and ``qemu-tcg`` a full VM, and yield the
guest's endpoint.
Adding a platform is adding one module with a :class:`Platform` subclass and its
declaration in :mod:`virtrepro.platforms.catalog` (family, label, colour, address
block, capabilities, and the ``implementation`` that names the class).

This ``__init__`` stays light (standard library only, it imports only the catalog): the catalog
is plain data, read by the declarations, the analysis and the host agent without loading any
platform's code or the testbed's (docs/architecture.md, "Layers"). The platform interface and
:func:`~virtrepro.platforms.base.get_platform` are in :mod:`virtrepro.platforms.base`; a platform's
module is imported when ``get_platform`` is first asked for it.
"""

from . import catalog

__all__ = ["catalog"]
