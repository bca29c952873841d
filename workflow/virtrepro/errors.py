"""The package's named errors have one base, shown to a user as one line.

Every error a user can act on (a bad configuration, an unreachable host, a damaged log,
a tool that failed) is a :class:`VirtreproError` whose message names the file, key or
host and says what is wrong. Command lines print it as one line (:func:`virtrepro.cli.run`),
and so do notebooks (IPython shows :meth:`VirtreproError._render_traceback_`); the
traceback is shown only with ``VIRTREPRO_DEBUG=1`` (or a command line's ``--debug``).
Standard library only: the host agent's hosts import this package without its dependencies.
"""

from __future__ import annotations

import os

DEBUG_ENV = "VIRTREPRO_DEBUG"


def debug_enabled() -> bool:
    """Whether tracebacks are wanted: ``VIRTREPRO_DEBUG`` set to anything but empty or 0."""
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


class VirtreproError(Exception):
    """An error whose message says what is wrong and where (file, key or host)."""

    @property
    def _render_traceback_(self):
        """IPython (a notebook) shows the error as this one line instead of a traceback."""
        if debug_enabled():
            raise AttributeError("_render_traceback_")  # IPython's own traceback instead
        return lambda: [f"{type(self).__name__}: {self}"]


class ConfigError(VirtreproError, ValueError):
    """The configuration does not match the schema or refers to something undefined."""


class MeasurementError(VirtreproError, RuntimeError):
    """A run failed; the message names the kept log and the reason (raised by the measurement, and by
    :func:`virtrepro.rawdata.rawlog.variant_records` where the planning reads a variant's logs)."""


class ProbeRecordError(VirtreproError):
    """A probe's record (``probes/*.json``) that cannot be read as what its probe writes."""


def read_probe_record(path, key: str) -> dict:
    """The JSON object a probe wrote to ``path``, which must have ``key``; anything else (not
    JSON, not an object, the key missing, unreadable) is a :class:`ProbeRecordError` that names
    the file and says how to probe again (delete it)."""
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise ProbeRecordError(f"{path}: probe record unreadable ({reason}); delete it to probe again") from None
    if not isinstance(record, dict) or key not in record:
        raise ProbeRecordError(f"{path}: probe record has no {key!r} (damaged?); delete it to probe again")
    return record
