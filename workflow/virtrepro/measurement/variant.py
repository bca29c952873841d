"""A job's part of a variant: every missing repetition in order, the comparison's guards (same
image, same machine) before the first, and repetitions chosen by a rule (virtrepro.planning.adaptive)."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path

from ..planning import adaptive
from .. import datalayout
from ..rawdata import machines, rawlog
from ..planning.config import Run, VariantPlan
from ..testbed.hosts import TestbedError
from ..testbed.kinds import testbed_from_config
from .connections import open_connection, reused_connections
from .instance import host_facts
from .markers import write_marker
from .provenance import MeasurementError, image_record
from .repetition import is_complete, measure


def measure_variant(variant: VariantPlan, config: dict, data_dir: str | Path, owner_pid: int | None = None,
                    reps: list[int] | None = None, host: str | None = None) -> Path | None:
    """Measure every repetition of ``variant`` whose complete raw log is missing, in order.

    A failed repetition does not stop the others (its output is kept, it never becomes a
    number). Raises MeasurementError naming every failed repetition; otherwise writes the
    variant's marker (all repetitions, each log's sha256) and returns its path. With ``reps``
    only those repetitions are measured and no marker is written.
    """
    runs = variant.runs() if reps is None else [variant.run(rep) for rep in reps]
    where = f"{variant.testbed}/{variant.platform}/{variant.benchmark}/{variant.variant.key}"
    todo, broken = [], []
    for run in runs:
        try:
            if not is_complete(run.log_path(data_dir)):
                todo.append(run)
        except MeasurementError as error:
            broken.append(f"rep {run.repetition}: {error}")
    if broken:
        raise MeasurementError(f"{where}: nothing measured, {len(broken)} raw logs lack a complete sidecar:\n  "
                               + "\n  ".join(broken))
    print(f"{where}: {len(runs) - len(todo)} of {len(runs)} repetitions complete, "
          f"{len(todo)} to measure", file=sys.stderr, flush=True)
    checked = []

    def before_measuring() -> None:
        """The comparison's guards, once, before the first repetition this job really measures (a job
        whose logs are complete and whose rule has stopped measures nothing, so refuses nothing:
        Snakemake runs such jobs again when an input's path changes, e.g. a new guest image)."""
        if not checked:
            require_same_image(variant, data_dir)
            require_same_machine(variant, config, data_dir, owner_pid, host)
            checked.append(True)

    with reused_connections():
        return _measure_runs(variant, todo, where, config, data_dir, owner_pid, reps, host, before_measuring)



def require_same_image(variant: VariantPlan, data_dir: str | Path) -> None:
    """Refuse, before anything runs, to measure ``variant`` of a guest platform in another guest image
    than the complete guest runs of its benchmark already in the data (any guest platform, any
    variant): the containers and VMs of one comparison run one image, and a rebuild of the same
    recipe (Debian's archive may have moved on) counts as another image."""
    wanted = image_record(variant.platform)
    if wanted is None:
        return
    found = machines.other_images(wanted, data_dir, variant.testbed, variant.benchmark)
    if not found:
        return
    path, other = found[0]
    directory = datalayout.testbed_dir(data_dir, variant.testbed)

    def name(record: dict) -> str:
        return record["recipe"] + (f" (image.json sha256 {record['record_sha256'][:12]})" if record.get("record_sha256") else "")

    raise MeasurementError(
        f"{variant.benchmark} on testbed {variant.testbed}: {len(found)} of its complete guest runs in {directory} "
        f"ran in guest image {name(other)} (for example {path}), this one would run in {name(wanted)}. "
        f"A benchmark's containers and VMs are compared in one image only: measure it with the image its runs "
        f"used (the commit they name), or move that benchmark's logs out of {directory} (git keeps them) and "
        f"measure it again, or measure into another data_dir.")



def require_same_machine(variant: VariantPlan, config: dict, data_dir: str | Path, owner_pid: int | None = None,
                         host: str | None = None) -> None:
    """Refuse, before anything runs, to measure ``variant`` on another machine than the complete runs
    of its benchmark already in the data (any platform, any variant: :mod:`virtrepro.rawdata.machines`): a
    platform's difference from native must not be a difference between machines."""
    runs = machines.recorded(data_dir, variant.testbed, variant.benchmark)
    if not runs:
        return
    measuring = testbed_from_config(variant.testbed, config).up(owner_pid=owner_pid, host=host)
    with ExitStack() as stack:
        here = machines.identity({"host": host_facts(open_connection(stack, measuring))})
    found = machines.conflicts(here, runs)
    if not found:
        return
    path, other, facts = found[0]
    directory = datalayout.testbed_dir(data_dir, variant.testbed)
    raise MeasurementError(
        f"{variant.benchmark} on testbed {variant.testbed}: {len(found)} of its {len(runs)} complete runs in "
        f"{directory} were measured on another machine ({', '.join(facts)} differ; for example {path}: "
        f"{machines.describe(other)}) than this one ({machines.describe(here)}). A benchmark's platforms are "
        f"compared on one machine only: move that benchmark's logs out of {directory} (git keeps them) and "
        f"measure it again here, or measure into another data_dir.")



def _measure_runs(variant: VariantPlan, todo: list[Run], where: str, config: dict, data_dir: str | Path,
                  owner_pid: int | None, reps: list[int] | None, host: str | None = None,
                  before_measuring=lambda: None) -> Path | None:
    failures = []
    if todo:
        before_measuring()
    for number, run in enumerate(todo, 1):
        print(f"[{number}/{len(todo)}] {where} rep {run.repetition}", file=sys.stderr, flush=True)
        try:
            measure(run, config, data_dir, owner_pid=owner_pid, host_name=host)
        except (MeasurementError, rawlog.RawLogExists) as error:
            failures.append(f"rep {run.repetition}: {error}")
        except TestbedError as error:  # the host cannot be reached: the other repetitions cannot either
            raise MeasurementError(f"{where}: rep {run.repetition}: {error}") from None
    if failures:
        raise MeasurementError(f"{where}: {len(failures)} of {len(todo)} repetitions failed:\n  "
                               + "\n  ".join(failures))
    if reps is not None:
        return None
    decision = continue_by_rule(variant, config, data_dir, owner_pid, host, before_measuring) if variant.continues else None
    return write_marker(variant, data_dir, decision)



def continue_by_rule(variant: VariantPlan, config: dict, data_dir: str | Path, owner_pid: int | None = None,
                     host: str | None = None, before_measuring=lambda: None):
    """The last part of a variant with a repetition rule (:mod:`virtrepro.planning.adaptive`): decide on
    every complete log of the variant (rep-0, rep-1, ... up to the first missing one) and measure
    the next repetition until the rule stops; return its decision. A resumed job continues from
    the logs that are there (a complete log is never measured again). Every repetition below the
    minimum must be complete first (the first part's too). ``before_measuring`` is called before each
    repetition it adds (the comparison's guards, which run once)."""
    where = f"{variant.testbed}/{variant.platform}/{variant.benchmark}/{variant.variant.key}"
    while True:
        logs = rawlog.variant_records(variant, data_dir)
        try:
            decision = adaptive.decide(variant.rule, logs)
        except ValueError as error:
            raise MeasurementError(f"{where}: {error}") from None
        print(f"{where}: {decision.n} repetitions, widest relative half-width "
              f"{decision.rel_half_width:.4g} (target {_targets_text(variant.rule)}): {decision.reason}",
              file=sys.stderr, flush=True)
        if decision.stop:
            return decision
        before_measuring()
        measure(variant.run(decision.n), config, data_dir, owner_pid=owner_pid, host_name=host)



def _targets_text(rule) -> str:
    """The rule's targets in the progress line: ``0.03`` or ``latency 0.0177, else 0.03 (log)``."""
    if rule.interval == adaptive.T_INTERVAL:
        return f"{rule.rel_half_width:g}"
    return ", ".join([*(f"{t.metric} {t.half_width:.3g}" for t in rule.targets), f"else {rule.rel_half_width:g}"]) + " (log)"
