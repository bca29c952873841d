"""The run facts: a small table beside the tidy table, written by the same builder from the same logs,
so that figures, readings, the artifact description and the summary read tables only, never the raw
data. ``<data>/tables/<testbed>.facts.json`` holds

- ``variants``: per ``platform/benchmark/variant``, what its runs' sidecars record beside the numbers:
  the platform's family, the guest spec and what the platform applied (of its first run), how many
  runs and how long they ran together, the virtrepro version (of its first run) and commits, the
  tools' versions, and the testbed host's facts (CPU, cores, memory, OS, kernel) of each run;
- ``probes``: each probe record's ``status`` and ``reason`` (``platforms``, ``qemu-accel``, a build's),
  and ``unavailable_platforms``: the platforms the testbed's platform probe found unavailable, with why.

It is versioned as the table's manifest is (:data:`FACTS_FORMAT`) and names the table's
``fingerprint`` and the probes' digest (``probes_sha256``): :func:`read` refuses facts of another
format, of other logs or of other probes with one line naming the command that rebuilds them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .. import datalayout
from ..declarations import regimes
from ..errors import VirtreproError

# Bump when the facts' layout changes.
FACTS_FORMAT = 1
# the testbed host's facts kept per run (regimes.sidecar_facts: a VM's testbed host, else the instance's own)
HOST_KEYS = ("cpu_model", "cores", "mem_total_kb", "machine", "virtualization", "os", "kernel")


class FactsError(VirtreproError):
    """The run facts beside a table are missing, damaged or of other logs than the table."""


def of_run(record: dict) -> dict:
    """One run's facts, from its sidecar (a dict)."""
    platform = record.get("platform") if isinstance(record.get("platform"), dict) else {}
    host = regimes.sidecar_facts(record)[1]
    return {"family": platform.get("family"), "spec": platform.get("spec") or {},
            "applied": platform.get("applied") or {}, "duration_s": float(record.get("duration_s") or 0),
            "virtrepro_version": record.get("virtrepro_version"), "virtrepro_commit": record.get("virtrepro_commit"),
            "tool_version": record.get("tool_version"),
            "host": {key: host[key] for key in HOST_KEYS if key in host} if isinstance(host, dict) else None}


def of_variant(runs: list[dict]) -> dict:
    """A variant's facts from its runs' (:func:`of_run`, in the order of the logs)."""
    hosts: list[dict] = []
    for run in runs:
        if run["host"] is not None and run["host"] not in hosts:
            hosts.append(run["host"])
    first = runs[0]
    return {"family": first["family"], "spec": first["spec"], "applied": first["applied"], "runs": len(runs),
            "duration_s": sum(run["duration_s"] for run in runs), "virtrepro_version": first["virtrepro_version"],
            "virtrepro_commits": sorted({run["virtrepro_commit"] for run in runs if run["virtrepro_commit"]}),
            "tool_versions": sorted({run["tool_version"] or "unknown" for run in runs}), "hosts": hosts}


def probes(data_dir: str | Path, testbed: str) -> tuple[dict, str]:
    """The probes' facts (see the module) and the sha256 of their records."""
    digest = hashlib.sha256()
    found: dict[str, dict] = {}
    unavailable: dict[str, str] = {}
    for name, path in datalayout.probe_records(data_dir, testbed).items():
        data = path.read_bytes()
        digest.update(f"{name}\0".encode() + data)
        try:
            record = json.loads(data)
        except ValueError as error:
            raise FactsError(f"{path}: probe record is not JSON ({error})") from None
        found[name] = {key: record[key] for key in ("status", "reason") if record.get(key) is not None}
        if name == datalayout.PLATFORM_PROBE:  # virtrepro.testbed.availability's record
            unavailable = {platform: entry.get("reason", "") for platform, entry in (record.get("platforms") or {}).items()
                           if entry.get("status") == "unavailable"}
    return {"probes": found, "unavailable_platforms": unavailable}, digest.hexdigest()


def text(testbed: str, fingerprint: str, variants: dict[str, dict], probe_facts: dict, probes_sha256: str) -> bytes:
    """The facts as JSON text (one variant a line), for the builder to write."""
    head = {"testbed": testbed, "format": FACTS_FORMAT, "fingerprint": fingerprint, "probes_sha256": probes_sha256,
            **probe_facts}
    lines = [f"  {json.dumps(key)}: {json.dumps(value, sort_keys=True)}" for key, value in head.items()]
    entries = ",\n".join(f"    {json.dumps(key)}: {json.dumps(variants[key], sort_keys=True)}" for key in sorted(variants))
    lines.append(f'  "variants": {{\n{entries}\n  }}' if entries else '  "variants": {}')
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode()


def previous(path: Path, fingerprint: str | None) -> dict[str, dict]:
    """The variants' facts written before, if they are of this format and of the table whose
    fingerprint is ``fingerprint`` (else none: every variant's are made anew)."""
    try:
        facts = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if facts.get("format") != FACTS_FORMAT or facts.get("fingerprint") != fingerprint or fingerprint is None:
        return {}
    return facts.get("variants") or {}


def read(path: Path, fingerprint: str, data_dir: str | Path, testbed: str, remedy: str) -> dict:
    """The run facts at ``path``, refused (:class:`FactsError`, naming ``remedy``) when missing, damaged,
    of another format, of other logs than the table whose fingerprint is ``fingerprint``, or of other
    probe records than the testbed has now."""
    try:
        facts = json.loads(path.read_text())
    except FileNotFoundError:
        raise FactsError(f"{path}: no run facts beside the table; {remedy}") from None
    except (OSError, ValueError) as error:
        raise FactsError(f"{path}: run facts cannot be read ({error}); {remedy}") from None
    if not isinstance(facts, dict) or facts.get("format") != FACTS_FORMAT:
        raise FactsError(f"{path}: run facts of another format than {FACTS_FORMAT}; {remedy}")
    if facts.get("fingerprint") != fingerprint or facts.get("probes_sha256") != probes(data_dir, testbed)[1]:
        raise FactsError(f"{path}: run facts of other raw logs or probes than the table's; {remedy}")
    return facts
