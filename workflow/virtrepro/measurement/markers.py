"""A part's marker (its repetitions complete, with their sha256) and the variant's rule record,
beside the variant's directory (virtrepro.datalayout names both)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from .. import datalayout
from ..rawdata import rawlog
from ..planning.config import VariantPlan
from .provenance import MeasurementError, sha256, utc_now
from .repetition import is_complete


def write_marker(variant: VariantPlan, data_dir: str | Path, decision=None) -> Path:
    """Record that all repetitions of one part of ``variant`` are complete (written after the
    part's last log, so that it is newer than the variant's directory; a log deleted later makes
    the directory newer and Snakemake re-runs the variant's jobs, which measure just that log).

    The parts of a variant share its directory: a part's logs make the directory newer than the
    other part's marker, so that marker is checked again here (its logs still complete, with the
    checksums it lists) and its time renewed; without that a second run would re-run the other
    part's job for nothing.

    A continuing part (a repetition rule) lists its repetitions beyond the minimum too, and the
    rule's ``decision``: n, the widest relative half-width and why it stopped."""
    marker = variant.marker_path(data_dir)
    logs = _complete_logs(variant, data_dir, marker)
    for stale in datalayout.markers_of(variant.directory(data_dir)):
        if not datalayout.is_marker_of(stale, variant.directory(data_dir), variant.reps_label):
            stale.unlink()  # the marker of another repetition count or rule (or of the layout before parts)
    if variant.continues or variant.rule is None:
        write_rule_record(variant, data_dir, decision)
    rawlog.write_json(marker, {
        "testbed": variant.testbed,
        "platform": variant.platform,
        "benchmark": variant.benchmark,
        "variant": variant.variant.key,
        "repetitions": variant.repetitions,
        "part": variant.part,
        "parts": variant.parts,
        "logs_sha256": logs,
        **({"repetition_rule": decision.as_dict(variant.rule)} if decision is not None else {}),
        "written_utc": utc_now(),
    })
    for part in range(1, variant.parts + 1):
        sibling = dataclasses.replace(variant, part=part)
        path = sibling.marker_path(data_dir)
        if part == variant.part or not path.exists():
            continue
        try:
            recorded = json.loads(path.read_text()).get("logs_sha256")
            if recorded == _complete_logs(sibling, data_dir, path):
                os.utime(path)
        except (OSError, ValueError, MeasurementError):
            pass  # left older than the directory: its job runs again and checks it
    return marker



def write_rule_record(variant: VariantPlan, data_dir: str | Path, decision=None) -> Path | None:
    """Keep the rule that decided a variant beside its logs when their sidecars do not say it: a rule
    given to a variant measured at a fixed count whose logs already meet it measures nothing, and
    the table's stopping facts (:func:`results.recorded_rule`) come from the raw data alone. Removed
    again when the variant has no rule (a fixed count), or its latest log's sidecar names the rule."""
    path = datalayout.rule_record_path(variant.directory(data_dir))
    latest = variant.run(decision.n - 1).log_path(data_dir) if decision is not None and decision.n else None
    said = latest is not None and (rawlog.complete_sidecar(latest) or {}).get("repetition_rule") is not None
    if decision is None or said:
        path.unlink(missing_ok=True)
        return None
    rawlog.write_json(path, {"testbed": variant.testbed, "platform": variant.platform,
                             "benchmark": variant.benchmark, "variant": variant.variant.key,
                             "repetition_rule": variant.rule.as_dict()})
    return path



def _complete_logs(variant: VariantPlan, data_dir: str | Path, marker: Path) -> dict[str, str]:
    """The part's logs and their sha256: its own repetitions, and for a continuing part every
    complete one beyond the minimum that follows them without a gap."""
    logs = {}
    for run in variant.runs():
        log = run.log_path(data_dir)
        if not is_complete(log):
            raise MeasurementError(f"{log}: not complete; the marker {marker.name} is not written")
        logs[log.name] = sha256(str(log))
    for repetition in range(variant.repetitions, variant.rule.max) if variant.continues else ():
        log = variant.run(repetition).log_path(data_dir)
        if not is_complete(log):
            break
        logs[log.name] = sha256(str(log))
    return logs
