"""The platform interface."""

from __future__ import annotations

from contextlib import contextmanager
from importlib import import_module
from typing import Iterator

from .catalog import PlatformSpec, get as declared
from ..errors import VirtreproError
from ..testbed.hosts import Host


class PlatformError(VirtreproError, RuntimeError):
    """A platform cannot be set up or reached on a host."""


class Platform:
    """Where a benchmark runs on a testbed host.

    Subclasses set ``name`` (declared in :mod:`virtrepro.platforms.catalog`, which gives
    ``declaration`` and ``family``) and implement :meth:`instance`, a
    context manager that brings up one instance of the platform on ``host`` and
    yields the SSH endpoint of that instance. It must tear the instance down on
    exit, also when the body raises.
    """

    name: str = ""
    family: str = ""  # catalog.NATIVE, CONTAINER or FULL_VM: from the declaration
    declaration: PlatformSpec | None = None
    failure_dir = None  # where a failed start keeps its console log (set by measure)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            cls.declaration = declared(cls.name)
            cls.family = cls.declaration.family

    def __init__(self, host: Host, spec: dict | None = None):
        self.host = host
        self.spec = dict(spec or {})

    @classmethod
    def agent_class(cls) -> type:
        """What the host agent starts for this platform on a remote host (a GuestPlatform)."""
        return cls

    @property
    def testbed(self) -> str:
        """The testbed whose host this platform runs on (its instances' private addresses depend on it)."""
        if self.host is None:
            raise PlatformError(f"platform {self.name} needs a testbed host")
        return self.host.testbed or self.host.name

    @contextmanager
    def instance(self, index: int = 0) -> Iterator[Host]:
        raise NotImplementedError
        yield  # pragma: no cover

    @contextmanager
    def network_instance(self, index: int = 0) -> Iterator[Host]:
        """Instance ``index`` for network benchmarks: reachable from the others at private_address(index)."""
        with self.instance(index) as endpoint:
            yield endpoint

    def freeze(self, index: int = 0) -> None:
        """Freeze instance ``index`` (started by :meth:`instance`) while another platform measures;
        native has nothing to freeze. PlatformError on failure."""

    def thaw(self, index: int = 0) -> None:
        """Thaw instance ``index`` frozen by :meth:`freeze`."""

    def private_address(self, index: int) -> str:
        raise PlatformError(f"platform {self.name} has no private network")

    def authorized_keys_file(self, index: int) -> str:
        """Path (in instance ``index``, for its shell) of the authorized_keys file its sshd reads."""
        return "$HOME/.ssh/authorized_keys"

    def describe(self) -> dict:
        """What the sidecar records about the platform actually used."""
        return {"name": self.name, "family": self.family, "spec": self.spec}


def get_platform(name: str) -> type[Platform]:
    """The class that implements platform ``name`` (declared in the catalog)."""
    from . import catalog

    try:
        spec = catalog.get(name)
    except catalog.UnknownPlatform as error:
        raise PlatformError(str(error)) from None
    module, _, class_name = spec.implementation.partition(":")
    cls = getattr(import_module(f"{__package__}.{module}"), class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Platform) and cls.name == name):
        raise PlatformError(f"platform {name!r}: its declared implementation {spec.implementation!r} is not a "
                            f"Platform class named {name!r}")
    return cls
