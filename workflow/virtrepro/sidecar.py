"""The sidecar: a run's provenance record beside its raw log (a leaf module: imports nothing of the
package). Written by the measurement (:func:`virtrepro.rawdata.rawlog.commit`, :func:`~virtrepro.rawdata.rawlog.keep_failed`)
and read by the table (:mod:`virtrepro.results`), the digests, the machine and image guards.

:class:`Sidecar` names the fields the harness itself reads (the run's place, its status, its order
and repetition rule, its timing, its log's digest); every other field (host facts, tool versions,
the source build a run used) is kept as it is in :attr:`Sidecar.extra`. A
sidecar read and written again is the same JSON object (:meth:`Sidecar.to_json` gives back exactly
the fields :meth:`Sidecar.from_json` read, absent ones absent), so every committed sidecar stays
readable and unchanged.

Versions (:data:`SIDECAR_VERSION`, the field ``sidecar_version``): 1, every sidecar written before
the record had a version (no such field); 2, the same fields, with the version; 3, a run measured in
rounds (docs/methodology.md, "Run order"): ``round``, ``position``, ``round_order`` and ``frozen``
instead of the ``order`` of two parts (which versions 1 and 2 record and stay readable with).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Mapping

SIDECAR_VERSION = 3
VERSION_KEY = "sidecar_version"
COMPLETE = "complete"
FAILED = "failed"


class _Absent:
    """A field the sidecar does not have (unlike one it has with the value null)."""

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT: Any = _Absent()


@dataclass(frozen=True)
class Sidecar:
    """One run's record (see the module's doc); a field the JSON object lacks is :data:`ABSENT`."""

    testbed: str = ABSENT
    platform: Any = ABSENT  # the platform's describe(): a dict with its name (a name alone in old tests)
    benchmark: str = ABSENT
    variant: str = ABSENT  # the variant's key
    parameters: dict = ABSENT
    repetition: int = ABSENT
    status: str = ABSENT  # complete, failed
    log: str = ABSENT  # the log's file name
    exit_status: Any = ABSENT
    error: str = ABSENT  # a failed run's reason
    order: dict = ABSENT  # versions 1-2: where the run stood in the order of parts (part, parts, sequence, slot)
    round: int = ABSENT  # version 3: the round (0-based; repetition r is measured in round r)
    position: int = ABSENT  # its place in the round (0-based)
    round_order: list = ABSENT  # the round's platforms in the order they ran
    frozen: list = ABSENT  # the platforms whose instances were up and frozen during this run
    scale: str = ABSENT
    repetition_rule: Any = ABSENT  # the rule's dict, or None for a fixed count
    host_name: str = ABSENT  # which of the testbed's hosts measured
    host: dict = ABSENT  # the measured instance's facts
    started_utc: str = ABSENT
    ended_utc: str = ABSENT
    duration_s: float = ABSENT
    records: int = ABSENT
    log_sha256: str = ABSENT
    log_bytes: int = ABSENT
    digest: dict = ABSENT  # when the digest was taken
    version: int = 1
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Sidecar:
        """The record of a sidecar's JSON object (any version up to :data:`SIDECAR_VERSION`)."""
        named = {f.name for f in fields(cls)} - {"version", "extra"}
        version = data.get(VERSION_KEY, 1)
        if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= SIDECAR_VERSION:
            raise ValueError(f"{VERSION_KEY} {version!r} is no version this code reads (1 to {SIDECAR_VERSION})")
        extra = {key: value for key, value in data.items() if key not in named and key != VERSION_KEY}
        return cls(**{key: data[key] for key in named if key in data}, version=version,
                   extra=MappingProxyType(extra))

    @classmethod
    def new(cls, **values) -> Sidecar:
        """A record the measurement writes now (:data:`SIDECAR_VERSION`): named fields and extra ones."""
        return cls.from_json({**values, VERSION_KEY: SIDECAR_VERSION})

    def to_json(self) -> dict:
        """The JSON object: exactly the fields read or given, the version when it is 2 or later."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("version", "extra")}
        out = {key: value for key, value in out.items() if value is not ABSENT}
        if self.version >= 2:
            out[VERSION_KEY] = self.version
        return {**out, **self.extra}

    def with_fields(self, **values) -> Sidecar:
        """The record with some fields set (named or extra)."""
        return Sidecar.from_json({**self.to_json(), **values})

    def get(self, key: str, default=None):
        """Any field by its JSON name (a named one, or one of :attr:`extra`), as ``dict.get``."""
        value = self.to_json().get(key, default) if key not in _NAMED else getattr(self, key)
        return default if value is ABSENT else value

    # what the harness asks of a record

    @property
    def complete(self) -> bool:
        return self.status == COMPLETE

    @property
    def exited_zero(self) -> bool:
        """Whether ``exit_status`` agrees with a complete run: 0, or not recorded."""
        status = 0 if self.exit_status is ABSENT else self.exit_status
        return status == 0 and not isinstance(status, bool)

    @property
    def part(self) -> int | None:
        """Which part of the run order of parts the run was measured in (None in rounds and older logs)."""
        return (self.order or {}).get("part")

    @property
    def platform_name(self):
        return self.platform.get("name") if isinstance(self.platform, dict) else self.platform or None

    @property
    def has_digest(self) -> bool:
        return self.log_sha256 is not ABSENT or self.log_bytes is not ABSENT


_NAMED = {f.name for f in fields(Sidecar)} - {"version", "extra"}
__all__ = ["ABSENT", "SIDECAR_VERSION", "Sidecar", "replace"]
