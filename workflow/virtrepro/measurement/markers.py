"""A measurement job's marker (its variant's logs on every platform complete, with their sha256)
and each platform's rule record, beside the variant's directory (virtrepro.datalayout names both)."""

from __future__ import annotations

from pathlib import Path

from .. import datalayout
from ..rawdata import rawlog
from ..planning.config import VariantPlan, VariantRounds
from .provenance import MeasurementError, sha256, utc_now
from .repetition import is_complete


def write_rounds_marker(job: VariantRounds, data_dir: str | Path, decisions: dict | None = None) -> Path:
    """Record that the rounds of ``job`` are done (written after the last log, so that it is newer
    than the platforms' variant directories; a log deleted later makes a directory newer and
    Snakemake runs the job again, which measures just that log). Lists every platform's complete
    logs rep-0, rep-1, ... with their sha256, and the rule's ``decisions`` by platform (n, the
    widest relative half-width and why it stopped). Removes the variant's markers of another count
    or rule, and its per-platform markers of the layout before rounds (parts)."""
    decisions = decisions or {}
    marker = job.marker_path(data_dir)
    for stale in datalayout.rounds_markers_of(data_dir, job.testbed, job.benchmark, job.variant.key):
        if stale != marker:
            stale.unlink()
    platforms = {}
    for plan in job.plans:
        for stale in datalayout.markers_of(plan.directory(data_dir)):
            stale.unlink()
        write_rule_record(plan, data_dir, decisions.get(plan.platform))
        decision = decisions.get(plan.platform)
        platforms[plan.platform] = {
            "repetitions": plan.repetitions,
            "logs_sha256": _complete_logs(plan, data_dir, marker, decision.n if decision is not None else None),
            **({"repetition_rule": decision.as_dict(plan.rule)} if decision is not None else {}),
        }
    marker.parent.mkdir(parents=True, exist_ok=True)
    rawlog.write_json(marker, {
        "testbed": job.testbed,
        "benchmark": job.benchmark,
        "variant": job.variant.key,
        "platforms": platforms,
        "written_utc": utc_now(),
    })
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



def _complete_logs(variant: VariantPlan, data_dir: str | Path, marker: Path, n: int | None = None) -> dict[str, str]:
    """The platform's logs and their sha256: its first ``n`` (the rule's decision), or its count."""
    logs = {}
    for repetition in range(n if n is not None else variant.repetitions):
        log = variant.run(repetition).log_path(data_dir)
        if not is_complete(log):
            raise MeasurementError(f"{log}: not complete; the marker {marker.name} is not written")
        logs[log.name] = sha256(str(log))
    return logs
