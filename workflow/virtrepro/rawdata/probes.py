"""The probes' records under ``raw/<testbed>/probes/``, read: what the planning and the table take from them.

The probes themselves run on the testbed (:mod:`virtrepro.testbed.availability`, the builds' ``obtain``);
their records are raw data, read here without the testbed's code.
"""

from __future__ import annotations


def unavailable(record: dict) -> dict[str, str]:
    """platform -> reason, for the platforms a probe record (``probes/platforms.json``) found unavailable."""
    return {name: entry.get("reason", "") for name, entry in record["platforms"].items()
            if entry.get("status") == "unavailable"}
