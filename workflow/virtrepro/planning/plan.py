"""What a run will cost before it runs: the planned measurement jobs' wall time, estimated from the
durations earlier runs' sidecars recorded.

    python -m virtrepro.measurement.estimate --estimate [--config scale=reference testbed=reference-vm ...]

For each planned variant on each platform (:func:`config.plan_rounds`: one job measures a variant on
all its platforms, in rounds) the repetitions still without a complete raw log are counted; under a
repetition rule (:mod:`virtrepro.planning.adaptive`) from its minimum (low) to its cap (high), or nothing where
the rule already stops on the complete logs there (:func:`rule_stops`). Each repetition costs
the mean ``duration_s`` of the complete sidecars of any testbed of ``<data_dir>`` and of ``data`` (virtrepro.datalayout) of the
same platform, benchmark and variant; where there are none, of the same variant on another platform
times this platform's median slowdown on the benchmark's variants both ran (other platform, scaled);
where there are none, of the same platform and benchmark (other variants: other run lengths, a
rougher guess); where there are none either, the job has nothing to go by and is listed. ``duration_s`` is the benchmark's own run: guest boots, tool checks
and set-up come on top. The dry run of the workflow prints the same summary.

The planning reads the raw data (:mod:`virtrepro.rawdata`) and nothing of the testbed or the measurement:
which guest image this code builds is given to :func:`summary` by its caller (the command line,
:mod:`virtrepro.measurement.estimate`, and the workflow's dry run).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from .. import datalayout
from ..rawdata import machines, rawlog
from ..rawdata.probes import unavailable
from ..platforms import catalog as platform_catalog
from .config import AUTO, QEMU_AUTO, VariantPlan, VariantRounds, left_out_lines, plan_rounds, resolve_platforms
from .memory import job_memory_mib


@dataclass(frozen=True)
class Durations:
    """Mean seconds a repetition took, by (platform, benchmark, variant) and by (platform, benchmark)."""

    by_variant: dict
    by_benchmark: dict

    @classmethod
    def from_sidecars(cls, *data_dirs: str | Path) -> Durations:
        variant, benchmark = defaultdict(list), defaultdict(list)
        paths = {path.resolve(): (path, Path(data_dir)) for data_dir in data_dirs
                 for path in datalayout.sidecars_of_all(data_dir)}
        for path, data_dir in (paths[key] for key in sorted(paths)):
            if not datalayout.is_complete_sidecar_name(path.name):
                continue  # failed runs' sidecars
            try:
                sidecar = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            seconds = sidecar.get("duration_s") if isinstance(sidecar, dict) else None
            if sidecar.get("status") != "complete" or not isinstance(seconds, (int, float)):
                continue
            _, _, platform, name, key, _ = path.relative_to(data_dir).parts
            variant[(platform, name, key)].append(float(seconds))
            benchmark[(platform, name)].append(float(seconds))
        mean = lambda values: sum(values) / len(values)  # noqa: E731
        return cls({k: mean(v) for k, v in variant.items()}, {k: mean(v) for k, v in benchmark.items()})

    def per_repetition(self, variant: VariantPlan) -> tuple[float | None, str]:
        """Seconds a repetition of ``variant`` is expected to take, and what that is based on."""
        key = (variant.platform, variant.benchmark, variant.variant.key)
        if key in self.by_variant:
            return self.by_variant[key], "same variant"
        scaled = self.scaled(*key)
        if scaled is not None:
            return scaled, "other platform, scaled"
        if key[:2] in self.by_benchmark:
            return self.by_benchmark[key[:2]], "other variants"
        kin = self.kin(*key)
        if kin is not None:
            return kin, "its family's platforms"
        return None, "nothing to go by"

    def kin(self, platform: str, benchmark: str, key: str) -> float | None:
        """For a platform that has never run the benchmark (charliecloud in the committed data): the mean
        of the same variant on the other platforms of its family (containers: lxc, podman), which run the
        same binaries on the host's kernel; for an unsized one (no memory size of its own, as the host)
        and a variant only the host runs besides it, the host's. None without either, or for a
        translated platform."""
        spec = platform_catalog.BY_NAME.get(platform)
        if spec is None or spec.translated:
            return None
        kin = [seconds for (p, b, k), seconds in self.by_variant.items() if b == benchmark and k == key and p != platform
               and p in platform_catalog.BY_NAME and platform_catalog.BY_NAME[p].family == spec.family
               and not platform_catalog.BY_NAME[p].translated]
        if not kin and not spec.sized_guest and (platform_catalog.BASELINE, benchmark, key) in self.by_variant:  # mem-host
            return self.by_variant[(platform_catalog.BASELINE, benchmark, key)]
        return sum(kin) / len(kin) if kin else None

    def scaled(self, platform: str, benchmark: str, key: str) -> float | None:
        """The variant on another platform, times how much longer ``platform`` took than that one on the
        variants of the same benchmark both have run (the median ratio): NPB kernels differ tenfold
        in run time, a platform's slowdown on them much less. None without such a pair."""
        for other in sorted({p for p, b, k in self.by_variant if b == benchmark and k == key and p != platform}):
            ratios = sorted(self.by_variant[(platform, b, k)] / seconds for (p, b, k), seconds in self.by_variant.items()
                            if p == other and b == benchmark and seconds > 0 and (platform, b, k) in self.by_variant)
            if ratios:
                middle = len(ratios) // 2
                ratio = ratios[middle] if len(ratios) % 2 else (ratios[middle - 1] + ratios[middle]) / 2
                return self.by_variant[(other, benchmark, key)] * ratio
        return None


def remaining(variant: VariantPlan, data_dir: str | Path, marker: Path | None = None,
              job: VariantRounds | None = None) -> tuple[int, int]:
    """Repetitions of this platform's variant still to measure: (at least, at most); equal without a
    rule. A variant whose job's ``marker`` is written is done (its rule stopped it; the marker names
    why), and so is one whose complete logs the rule already stops on, decided over its ``job``'s
    platforms as the measurement decides (:func:`rule_stops`; markers are not committed: in a fresh
    clone of a finished run the logs say it)."""
    if marker is not None and marker.exists():
        return 0, 0
    present = _names_in(variant.directory(data_dir))

    def complete(rep: int) -> bool:  # a log not in the directory's listing is not there (no path built for it)
        return (present is None or datalayout.log_name(rep) in present) and rawlog.is_complete(variant.run(rep).log_path(data_dir))

    own = sum(not complete(rep) for rep in variant.repetition_numbers())
    if variant.rule is None:
        return own, own
    beyond = range(variant.repetitions, variant.rule.max)
    done = sum(complete(rep) for rep in beyond)
    if own == 0 and rule_stops(variant, data_dir, job):
        return 0, 0
    return own, own + len(beyond) - done


def _names_in(directory: Path) -> set[str] | None:
    """The names in a variant's directory (none when it is not there: a plan not yet begun); None when
    it cannot be listed (each log is then looked up on its own)."""
    try:
        return set(os.listdir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return set()
    except OSError:
        return None


def rule_stops(variant: VariantPlan, data_dir: str | Path, job: VariantRounds | None = None) -> bool:
    """Whether the variant's repetition rule stops on its complete logs as they are: the decision the
    measurement job makes after the first rounds (:func:`virtrepro.measurement.variant.measure_rounds`),
    over all the platforms of its ``job`` (paired by round with native where the rule allows:
    :func:`job_decisions`; the variant alone without one), so such a job
    measures nothing. False where the logs cannot be decided on (one does not parse: the job will say so)."""
    from ..errors import MeasurementError

    try:
        return job_decisions(job.plans if job is not None else (variant,), data_dir)[variant.platform].stop
    except (MeasurementError, ValueError):
        return False


def job_decisions(plans, data_dir: str | Path, n: int | None = None) -> dict:
    """The repetition rule's decision (:func:`virtrepro.planning.adaptive.decide_rounds`) for every
    platform of one job (``plans``: its :class:`VariantPlan` s) that has a rule, on each platform's
    first ``n`` complete logs (all of them: None) and their rounds: the measurement after each round
    and the plan's estimate decide with it. The baseline's logs pair with the others' even when it
    has a fixed count (where they cannot be read yet, nothing pairs). MeasurementError, ValueError as
    :func:`rawlog.variant_records` and :func:`adaptive.decide`."""
    from . import adaptive
    from ..errors import MeasurementError
    from ..rawdata.rawlog import variant_logs

    rules, logs, rounds = {}, {}, {}
    for plan in plans:
        if plan.rule is None and plan.platform != adaptive.BASELINE:
            continue
        try:
            found, numbers = variant_logs(plan, data_dir)
        except MeasurementError:
            if plan.rule is not None:
                raise
            continue  # a fixed-count baseline not yet complete: the others decide alone
        rules[plan.platform] = plan.rule
        logs[plan.platform], rounds[plan.platform] = found[:n], numbers[:n]
    return adaptive.decide_rounds(rules, logs, rounds)


def estimate(config: dict, data_dir: str | Path, platforms: list[str] | None = None,
             history: tuple[str | Path, ...] = ("data",)) -> dict:
    """The estimate of the configured plan: per (platform, benchmark) seconds low and high, jobs
    to run, repetitions low and high, the basis, and the parts with nothing to go by. Durations
    come from the sidecars under ``data_dir`` and the ``history`` data directories (the
    repository's ``data/`` by default: a run into another directory, such as the reference run's
    ``data/staging``, goes by the committed runs too)."""
    durations = Durations.from_sidecars(data_dir, *history)
    rows, unknown = {}, []
    jobs = plan_rounds(config, platforms)
    peak = max(((job_memory_mib(config, job), job) for job in jobs), key=lambda found: found[0][0], default=None)
    for variant, marker, job in ((plan, job.marker_path(data_dir), job) for job in jobs for plan in job.plans):
        low, high = remaining(variant, data_dir, marker, job)
        if high == 0:
            continue
        seconds, basis = durations.per_repetition(variant)
        row = rows.setdefault((variant.platform, variant.benchmark),
                              {"jobs": 0, "reps_low": 0, "reps_high": 0, "low_s": 0.0, "high_s": 0.0, "basis": set()})
        row["jobs"] += 1
        row["reps_low"] += low
        row["reps_high"] += high
        row["basis"].add(basis)
        if seconds is None:
            unknown.append(f"{variant.platform}/{variant.benchmark}/{variant.variant.key}")
        else:
            row["low_s"] += low * seconds
            row["high_s"] += high * seconds
    return {"rows": rows, "unknown": unknown,
            "low_s": sum(r["low_s"] for r in rows.values()), "high_s": sum(r["high_s"] for r in rows.values()),
            "left_out": left_out_lines(config, platforms if platforms is not None else resolve_platforms(config["platforms"], None)),
            "memory_peak": None if peak is None else (peak[0][0], peak[0][1], f"{peak[1].benchmark}/{peak[1].variant.key}")}


def _hours(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"


def report(result: dict) -> str:
    """The estimate as lines of text."""
    lines = [f"{'platform':<10} {'benchmark':<16} {'jobs':>4} {'reps':>9} {'estimate':>17}  based on"]
    for (platform, benchmark), row in sorted(result["rows"].items()):
        reps = f"{row['reps_low']}" if row["reps_low"] == row["reps_high"] else f"{row['reps_low']}-{row['reps_high']}"
        cost = (_hours(row["low_s"]) if row["low_s"] == row["high_s"]
                else f"{_hours(row['low_s'])} - {_hours(row['high_s'])}")
        lines.append(f"{platform:<10} {benchmark:<16} {row['jobs']:>4} {reps:>9} {cost:>17}  {', '.join(sorted(row['basis']))}")
    total = (_hours(result["low_s"]) if result["low_s"] == result["high_s"]
             else f"{_hours(result['low_s'])} to {_hours(result['high_s'])}")
    lines.append(f"estimated measurement time: {total} (benchmark runs only: guest boots and set-up come on top)")
    if result.get("memory_peak"):
        mib, parts, job = result["memory_peak"]
        lines.append(f"the most memory a job holds with every platform's guests up: {mib} MiB ({job}: {', '.join(parts) or 'no guest memory'})")
    lines += result.get("left_out", [])
    if result["unknown"]:
        lines.append(f"{len(result['unknown'])} jobs have no earlier run to go by (not in the total): "
                     + ", ".join(result["unknown"][:5]) + (" ..." if len(result["unknown"]) > 5 else ""))
    return "\n".join(lines)


def machine_check(config: dict, data_dir: str | Path, benchmarks: list[str], here: dict | None = None,
                  image: dict | None = None, pending: set[str] | None = None) -> dict:
    """Which machine the data's complete runs of each of ``benchmarks`` name (:mod:`virtrepro.rawdata.machines`),
    and which of them their measurement jobs will refuse to go on with: begun on another machine, on
    a local testbed (``here``: this machine; found when not given), or with guests in another guest
    image than this code's (``image``: the current recipe's record, :func:`virtrepro.measurement.provenance.current_image`,
    given by the caller; None: not checked); of these only the benchmarks in ``pending`` (with jobs left; None: all), since a
    finished benchmark's jobs do not run again. Returns ``{"measured_on": {description: [benchmark, ...]}, "other_machine":
    {benchmark: description}, "here": description, "other_image": {benchmark: recipe}, "image": recipe}``."""
    local = (config.get("testbeds") or {}).get(config["testbed"], {}).get("kind") == "local"
    if local and here is None:
        here = machines.this_machine()
    measured_on: dict[str, list[str]] = defaultdict(list)
    other: dict[str, str] = {}
    other_image: dict[str, str] = {}
    for benchmark in benchmarks:
        found = machines.recorded(data_dir, config["testbed"], benchmark)
        for machine in machines.mixed([m for _, m in found]) or [m for _, m in found][:1]:
            measured_on[machines.describe(machine)].append(benchmark)
        if pending is not None and benchmark not in pending:
            continue
        conflicting = machines.conflicts(here, found) if local else []
        if conflicting:
            other[benchmark] = machines.describe(conflicting[0][1])
        images = machines.other_images(image, data_dir, config["testbed"], benchmark) if image else []
        if images:
            other_image[benchmark] = images[0][1]["recipe"]
    return {"measured_on": dict(measured_on), "other_machine": other, "here": machines.describe(here) if local else None,
            "other_image": other_image, "image": image["recipe"] if image else None}


def machine_report(check: dict) -> str:
    """:func:`machine_check` as lines of text (none when the data holds no run yet)."""
    lines = machines.in_words((b, name) for name, found in check["measured_on"].items() for b in found)
    if check["other_machine"]:
        lines.append(f"begun on another machine than this one ({check['here']}), refused here until their "
                     "logs are moved out (docs/methodology.md, \"One machine per comparison\"): "
                     + "; ".join(f"{b} ({name})" for b, name in sorted(check["other_machine"].items())))
    if check.get("other_image"):
        lines.append(f"guests begun in another guest image than this code's ({check['image']}), refused here: "
                     "measure them with the code their runs name, or move their logs out (docs/methodology.md, "
                     "\"One guest image per comparison\"): "
                     + "; ".join(f"{b} (image {recipe})" for b, recipe in sorted(check["other_image"].items())))
    return "\n".join(lines)


def summary(config: dict, data_dir: str | Path, image: dict | None) -> str:
    """What the dry run and ``--estimate`` print: the estimate of the planned jobs, then which
    machine the data's runs name and which benchmarks this machine, or this code's guest image
    (``image``: its record, :func:`virtrepro.measurement.provenance.current_image`), may not continue."""
    result = estimate(config, data_dir, probed_platforms(config, data_dir))
    pending = {benchmark for _, benchmark in result["rows"]}
    machine_text = machine_report(machine_check(config, data_dir, config["benchmarks"], image=image, pending=pending))
    return report(result) + (
        "\n" + machine_text if machine_text else "")


def probed_platforms(config: dict, data_dir: str | Path) -> list[str]:
    """The configured platforms the testbed can run (all, before its platform probe ran), with
    ``qemu`` as the testbed's KVM probe found it (qemu-tcg when it has not run yet)."""
    testbed = config["testbed"]
    try:
        left_out = set(unavailable(json.loads(datalayout.probe_path(data_dir, testbed, datalayout.PLATFORM_PROBE).read_text())))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        left_out = set()
    platforms = [name for name in config["platforms"] if name not in left_out]
    try:
        qemu = json.loads(datalayout.probe_path(data_dir, testbed, datalayout.QEMU_PROBE).read_text())["platform"]
    except (OSError, ValueError, KeyError, TypeError):
        qemu = AUTO.unprobed
    return resolve_platforms(platforms, qemu if QEMU_AUTO in platforms else None)
