"""A measurement job: one benchmark variant on all its platforms, in rounds (docs/methodology.md,
"Run order"); the comparison's guards (same image, same machine) before the first run, each
platform's instances started once and frozen while another platform measures, and repetitions
chosen by a rule (virtrepro.planning.adaptive) decided over every platform after each round."""

from __future__ import annotations

import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path

from ..planning import adaptive
from .. import datalayout
from ..rawdata import machines, rawlog
from ..benchmarks import BENCHMARKS
from ..benchmarks.base import across_hosts
from ..planning.config import VariantPlan, VariantRounds, rounds
from ..planning.plan import job_decisions
from ..testbed.hosts import TestbedError
from ..platforms import catalog as platform_catalog
from ..testbed.kinds import testbed_from_config
from .connections import open_connection, reused_connections
from .instance import host_facts
from .markers import write_rounds_marker
from .provenance import MeasurementError, image_record
from .repetition import Kept, is_complete, measure


def measure_rounds(job: VariantRounds, config: dict, data_dir: str | Path, owner_pid: int | None = None,
                   reps: list[int] | None = None, host: str | None = None) -> Path | None:
    """Measure ``job`` in rounds (:func:`config.rounds`): in round r repetition r of every platform
    whose complete raw log is missing, back to back, in the round's order; after each round the
    stop rule is asked for every platform (a fixed count: reached; a rule:
    :func:`adaptive.decide_rounds` on every platform's first r + 1 logs and their rounds, through
    :func:`plan.job_decisions`: a platform paired by round with native on its claims' paired
    interval, native until its pairs stop, the rest alone), and the rounds end when it stops for
    all, or at the cap.

    A failed repetition does not stop its round (its output is kept, it never becomes a number);
    the job then stops after that round and raises MeasurementError naming every failed repetition
    (a resumed job measures only what is missing, in round order). Otherwise writes the job's marker
    (every platform's logs with their sha256 and the rule's decision) and returns its path. With
    ``reps`` only those rounds are measured, without the rule, and no marker is written."""
    where = f"{job.testbed}/{job.benchmark}/{job.variant.key} on {', '.join(job.platforms)}"
    _require_complete_sidecars(job, data_dir, where)
    decisions: dict[str, adaptive.Decision] = {}
    failed: list[int] = []  # the round in which a run failed: the rounds stop after it

    def complete(plan: VariantPlan, repetition: int) -> bool:
        if reps is not None and repetition not in reps:
            return True  # not asked for: nothing to measure in this round
        return is_complete(plan.run(repetition).log_path(data_dir))

    def decided(n: int) -> dict[str, adaptive.Decision]:
        """Every ruled platform's decision on the first ``n`` rounds, made once a round (paired by
        round with the baseline where the rule allows: :func:`adaptive.decide_rounds`)."""
        if n not in by_round:
            try:
                by_round[n] = job_decisions(job.plans, data_dir, n)
            except ValueError as error:
                raise MeasurementError(f"{where}: {error}") from None
            _print_decisions(job, by_round[n])
        return by_round[n]

    by_round: dict[int, dict[str, adaptive.Decision]] = {}

    def stops(plan: VariantPlan, n: int) -> bool:
        if failed:
            return True
        if reps is not None:
            return n > max(reps)
        if n < plan.repetitions:
            return False
        if plan.rule is None:
            return True
        decisions[plan.platform] = decision = decided(n)[plan.platform]
        return decision.stop

    with reused_connections(), ExitStack() as stack:
        session = _Session(job, config, data_dir, owner_pid, host, stack)
        failures = []
        for slot in rounds(job, complete, stops):
            session.begin()
            run = slot.plan.run(slot.round)
            print(f"round {slot.round} [{slot.position + 1}/{len(slot.order)}] {slot.plan.platform} "
                  f"({' '.join(slot.order)}): {where}", file=sys.stderr, flush=True)
            try:
                with session.turn(slot.plan.platform) as kept:
                    frozen = session.frozen_beside(slot.plan.platform)
                    measure(run, config, data_dir, owner_pid=owner_pid, host_name=host, kept=kept,
                            rounds={"round": slot.round, "position": slot.position,
                                    "round_order": list(slot.order), "frozen": frozen})
            except (MeasurementError, rawlog.RawLogExists) as error:
                failures.append(f"{slot.plan.platform} rep {run.repetition}: {error}")
                failed[:] = [slot.round]
            except TestbedError as error:  # the host cannot be reached: the other runs cannot either
                raise MeasurementError(f"{where}: {slot.plan.platform} rep {run.repetition}: {error}") from None
    if failures:
        raise MeasurementError(f"{where}: {len(failures)} repetitions failed (the rounds stop after round "
                               f"{failed[0]}):\n  " + "\n  ".join(failures))
    if reps is not None:
        return None
    return write_rounds_marker(job, data_dir, decisions)


def _require_complete_sidecars(job: VariantRounds, data_dir: str | Path, where: str) -> None:
    """Refuse, before anything runs, a job whose raw logs lack a complete sidecar (naming each)."""
    broken = []
    for plan in job.plans:
        for run in plan.runs():
            try:
                is_complete(run.log_path(data_dir))
            except MeasurementError as error:
                broken.append(f"{plan.platform} rep {run.repetition}: {error}")
    if broken:
        raise MeasurementError(f"{where}: nothing measured, {len(broken)} raw logs lack a complete sidecar:\n  "
                               + "\n  ".join(broken))


def _print_decisions(job: VariantRounds, decisions: dict[str, adaptive.Decision]) -> None:
    """The stop rule's decision of each platform after a round, one progress line each."""
    for platform, decision in decisions.items():
        plan = job.plan_of(platform)
        print(f"{job.testbed}/{platform}/{job.benchmark}/{job.variant.key}: {decision.n} repetitions, "
              f"{decision.how()}, widest half-width {decision.rel_half_width:.4g} "
              f"(target {_targets_text(plan.rule, bool(decision.paired) and not decision.baseline)}): "
              f"{decision.reason}", file=sys.stderr, flush=True)


def measure_variant(variant: VariantPlan, config: dict, data_dir: str | Path, owner_pid: int | None = None,
                    reps: list[int] | None = None, host: str | None = None) -> Path | None:
    """:func:`measure_rounds` of a job of one platform (its rounds are its repetitions, in order)."""
    return measure_rounds(VariantRounds((variant,)), config, data_dir, owner_pid, reps, host)


class _Session:
    """A job's platforms on the testbed's host: the comparison's guards once, before the first run
    measured (a job whose logs are complete and whose rule has stopped measures nothing, so refuses
    nothing: Snakemake runs such jobs again when an input's path changes, e.g. a new guest image);
    then every platform's instances started once (guests not of this job stopped), and each frozen
    (:meth:`Platform.freeze`) except during its own turn. A benchmark that starts its own guests
    (``host_side``) or whose instances are on several hosts keeps nothing: its runs simply run."""

    def __init__(self, job: VariantRounds, config: dict, data_dir, owner_pid, host, stack: ExitStack):
        self.job, self.config, self.data_dir, self.owner_pid, self.host, self.stack = job, config, data_dir, owner_pid, host, stack
        self.kept: dict[str, Kept] = {}
        self.begun = False

    def begin(self) -> None:
        if self.begun:
            return
        self.begun = True
        for plan in self.job.plans:
            require_same_image(plan, self.data_dir)
        require_same_machine(self.job.plans[0], self.config, self.data_dir, self.owner_pid, self.host)
        benchmark = BENCHMARKS[self.job.benchmark]
        if benchmark.host_side or across_hosts(self.job.variant):
            return
        testbed = testbed_from_config(self.job.testbed, self.config)
        host = testbed.up(owner_pid=self.owner_pid, host=self.host)
        platforms = {}
        for plan in self.job.plans:
            in_guest = platform_catalog.runs_in_guest(plan.platform)
            spec = {**self.config.get("guest", {}), **benchmark.guest_overrides(plan.variant)} if in_guest else None
            platform = testbed.platform(host, plan.platform, spec)
            platform.failure_dir = plan.directory(self.data_dir)
            platforms[plan.platform] = platform
        # the names of the job's instances that the testbed keeps as guests (a guest platform's, and
        # native's network namespaces)
        keep = tuple(platform.guest_name(0).rsplit("-", 1)[0] + "-" if hasattr(platform, "guest_name")
                     else f"{platform.name}-" for platform in platforms.values())
        testbed.stop_guests(keep_prefix=keep or None, host=host.name)  # no guest of another job idles beside it
        count = benchmark.instances(self.job.variant)
        for platform in platforms.values():  # a VM's instances boot side by side, and while the others start
            if platform.family == platform_catalog.FULL_VM:
                self.stack.callback(platform.abandon_ahead)
                platform.boot_ahead(range(count))
        for name, platform in platforms.items():
            if count == 1:
                endpoints = [self.stack.enter_context(platform.instance(0))]
            else:
                endpoints = [self.stack.enter_context(platform.network_instance(i)) for i in range(count)]
            kept = Kept(platform, endpoints, keep, job_stack=self.stack)
            self.stack.callback(kept.thaw)  # before the instances stop (the stack unwinds in reverse)
            kept.freeze()
            self.kept[name] = kept

    def turn(self, name: str):
        """The platform's instances thawed for its run, frozen again after it (a context)."""

        @contextmanager
        def thawed():
            kept = self.kept.get(name)
            if kept is None:
                yield None
                return
            kept.thaw()
            try:
                yield kept
            finally:
                kept.freeze()

        return thawed()

    def frozen_beside(self, name: str) -> list[str]:
        """The other platforms whose instances are up and frozen (native has nothing to freeze)."""
        return [other for other, kept in self.kept.items() if other != name and kept.frozen
                and kept.platform.freezable]


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



def _targets_text(rule, paired: bool = False) -> str:
    """The rule's targets in the progress line: ``0.03``, ``latency 0.0177, else 0.03 (log)``, or
    paired by round ``latency 0.025 paired, else 0.03 (log)``."""
    if rule.interval == adaptive.T_INTERVAL:
        return f"{rule.rel_half_width:g}"
    claims = (f"{t.metric} {t.paired_half_width:.3g} paired" if paired else f"{t.metric} {t.half_width:.3g}"
              for t in rule.targets)
    return ", ".join([*claims, f"else {rule.rel_half_width:g}"]) + " (log)"
