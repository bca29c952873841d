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

    A running instance can be frozen while another platform measures (issue 40: guests stay up
    across rounds, and idle platforms cost nothing): :meth:`freeze` stops every process of the
    instance (its CPU time stays put), :meth:`thaw` lets it run again and returns once it answers
    SSH again. ``freezable`` says whether there is anything to freeze (native: nothing, its
    instance is the host) and ``freeze_mechanism`` how it is done, for the sidecar.
    """

    name: str = ""
    family: str = ""  # catalog.NATIVE, CONTAINER or FULL_VM: from the declaration
    declaration: PlatformSpec | None = None
    failure_dir = None  # where a failed start keeps its console log (set by measure)
    freezable: bool = False  # whether freeze() stops anything (native: nothing to freeze)
    freeze_mechanism: str = "none: nothing to freeze"

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
        """Stop every process of the running instance ``index`` (started by :meth:`instance`) until
        :meth:`thaw`; the instance keeps its memory, files and connections. Raises PlatformError
        (platform, instance, the command's last line) if it cannot. Here: nothing to freeze."""

    def thaw(self, index: int = 0, login: bool = True) -> None:
        """Let the frozen instance ``index`` run again; return once it verifiably runs (its state reads
        thawed and, with ``login``, its sshd answers a new login; a caller that runs a command over its
        open connection next passes False: that command verifies it, without a second SSH handshake,
        about a second in a TCG guest). Raises PlatformError if it does not. Here: nothing to do."""

    def frozen(self, index: int = 0) -> bool:
        """Whether instance ``index`` is frozen now (read from the platform, not remembered)."""
        return False

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
