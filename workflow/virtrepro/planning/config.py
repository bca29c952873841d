"""Workflow configuration: validation with messages that name the bad key, and the run plan."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..platforms import catalog as platform_catalog
from .adaptive import RepetitionRule, Target
from ..benchmarks import BENCHMARKS, Variant
from ..benchmarks.base import runnable_variants
from ..errors import ConfigError, VirtreproError
from .memory import check_memory
from .targets import claim_targets
from .. import datalayout, yamlfile

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"
def schema(path: Path = SCHEMA_PATH) -> dict:
    """The configuration's JSON schema: ``workflow/schemas/config.schema.yaml`` with what the
    declarations say filled in: the names of the benchmarks (:mod:`virtrepro.benchmarks`) and
    platforms (:mod:`virtrepro.platforms.catalog`), and each benchmark's parameters in a scale
    (``Benchmark.parameters``)."""
    composed = yamlfile.load(path)
    composed["properties"]["benchmarks"]["items"]["enum"] = list(BENCHMARKS)
    composed["properties"]["platforms"]["items"]["enum"] = list(platform_catalog.config_names())
    composed["$defs"]["scale"]["properties"] = {name: b.parameter_schema() for name, b in BENCHMARKS.items()}
    return composed


def write_schema(directory: str | Path) -> Path:
    """Write :func:`schema` as JSON into ``directory`` (for Snakemake's ``validate``, which reads a
    file, JSON first: read as YAML it took a quarter of a second at every start); the path of the file."""
    target = Path(directory) / "config.schema.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(schema(), indent=1) + "\n"
    if not target.exists() or target.read_text() != text:
        partial = target.with_name(f".{target.name}.{os.getpid()}")
        partial.write_text(text)
        os.replace(partial, target)  # whole, for a workflow that reads it meanwhile
    return target


def _key_path(error) -> str:
    path = ".".join(str(part) for part in error.absolute_path)
    return path or "<top level>"


def _describe(error):
    """The schema error to report and what is wrong, in words: for a failed ``oneOf``, the
    alternative that got furthest, else every alternative's complaint (or, where the
    alternatives are "one of these keys", which keys)."""
    if error.validator not in ("oneOf", "anyOf"):
        return error, error.message
    alternatives = error.validator_value
    keys = [key for branch in alternatives for key in branch.get("required", [])]
    if all(set(branch) == {"required"} for branch in alternatives):
        return error, f"give exactly one of {', '.join(map(repr, keys))}"
    if not error.context:
        return error, f"{error.instance!r} matches more than one of the allowed forms"
    deepest = max(error.context, key=lambda e: len(e.absolute_path))
    if len(deepest.absolute_path) > len(error.absolute_path):  # one alternative matched as far as its parts
        return _describe(deepest)
    complaints = dict.fromkeys(e.message for e in error.context)
    return error, f"{error.instance!r} is none of the allowed forms ({'; '.join(complaints)})"


def check_semantics(config: dict) -> None:
    """What the schema cannot say: each chosen benchmark's parameters make sense together
    (for example IOZone's min_file_size not above its max_file_size), checked by planning
    its variants on every configured platform now rather than when a job asks for them."""
    scale_name = config["scale"]
    scale = config["scales"][scale_name]
    platforms = resolve_platforms(config["platforms"], AUTO.candidates[0])  # its variants are the same either way
    for name in config["benchmarks"]:
        try:
            for translated in (False, True):
                RepetitionRule.from_config(scale[name]["repetitions"], translated)
        except ValueError as error:
            raise ConfigError(f"config key 'scales.{scale_name}.{name}.repetitions': {error}") from None
        for platform in platforms:
            try:
                variants = runnable_variants(BENCHMARKS[name], scale[name], platform)
            except ValueError as error:
                message = str(error).removeprefix(f"{name}: ")
                raise ConfigError(f"config key 'scales.{scale_name}.{name}': {message}") from None
            if platform_catalog.BY_NAME[platform].sized_guest:
                _check_fits(config, scale_name, name, variants)


# the share of a guest's memory one benchmark run may hold: the rest is its operating system's
GUEST_MEMORY_SHARE = 0.75


def _check_fits(config: dict, scale_name: str, name: str, variants: list) -> None:
    """A run that needs more memory than its guest has is killed by the kernel's OOM killer part way
    (mbw at 1024 MiB arrays in a 2 GiB container printed "Killed"): refuse it before anything runs."""
    for variant in variants:
        need = BENCHMARKS[name].memory_mib(variant)
        guest_mb = BENCHMARKS[name].guest_overrides(variant).get("memory_mb", config.get("guest", {}).get("memory_mb"))
        if need is not None and guest_mb is not None and need > GUEST_MEMORY_SHARE * guest_mb:
            raise ConfigError(
                f"config key 'scales.{scale_name}.{name}': variant {variant.key} holds {need} MiB at once, more than "
                f"{GUEST_MEMORY_SHARE:.0%} of the guest's {guest_mb} MiB (guest.memory_mb): lower its size or raise "
                "the guest's memory"
            )


def validate_config(config: dict, schema_path: Path = SCHEMA_PATH) -> dict:
    """Raise ConfigError naming the first bad key; return the config otherwise.

    Besides the schema, checks the cross references the schema cannot express
    (the chosen testbed is defined, each chosen benchmark has parameters in the
    chosen scale) and the benchmarks' own parameter checks (:func:`check_semantics`).
    """
    # the "iri" format's checker (rfc3987_syntax) builds a grammar on import, seconds on a busy machine (most
    # of a dry run's time); no key of the schema has a format, so jsonschema is imported without it
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
    import jsonschema  # slow to import: only where validation happens

    if not isinstance(config, dict):
        raise ConfigError(f"the configuration is {type(config).__name__}, not a mapping of keys to values")
    validator = jsonschema.Draft202012Validator(schema(schema_path))
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    if errors:
        detail, message = _describe(jsonschema.exceptions.best_match(errors))
        raise ConfigError(f"config key '{_key_path(detail)}': {message}")
    if config["testbed"] not in config["testbeds"]:
        known = ", ".join(sorted(config["testbeds"]))
        raise ConfigError(f"config key 'testbed': '{config['testbed']}' is not defined under 'testbeds' ({known})")
    scale = config["scales"][config["scale"]]
    for name in config["benchmarks"]:
        if name not in scale:
            raise ConfigError(f"config key 'scales.{config['scale']}.{name}': benchmark '{name}' has no parameters")
    check_semantics(config)
    return config


def read_config_file(path: str | Path) -> dict:
    """A configuration file's keys (not validated); ConfigError names the file, and the line
    (and column) where its YAML is broken or gives a key twice (:mod:`virtrepro.yamlfile`)."""
    try:
        config = yamlfile.load(path)
    except yamlfile.YamlFileError as error:
        raise ConfigError(f"config file {error}") from None
    if not isinstance(config, dict):
        raise ConfigError(f"config file {path}: holds {type(config).__name__}, not keys with values")
    return config


def load_config(path: str | Path) -> dict:
    return validate_config(read_config_file(path))


# set by the workflow to the digest of the configuration it validated (the one it hands its jobs)
VALIDATED_ENV = "VIRTREPRO_CONFIG_VALIDATED"


def digest(config: dict) -> str:
    """A fingerprint of a configuration: the workflow passes it beside the configuration it
    validated, so that a measurement job knows it need not validate again."""
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()


def config_from_json(text: str, source: str) -> dict:
    """A configuration handed to a command line as JSON (``source`` names where it came from:
    an option or a variable), validated unless it is exactly the one the workflow validated."""
    try:
        config = json.loads(text)
    except ValueError as error:
        raise ConfigError(f"{source}: not a JSON configuration ({error})") from None
    if not isinstance(config, dict) or os.environ.get(VALIDATED_ENV) != digest(config):
        validate_config(config)
    return config


def given_config(option: str | None) -> dict | None:
    """The configuration a command line was given: its ``--config`` (JSON), else the workflow's
    ``$VIRTREPRO_CONFIG``; None if neither."""
    if option is not None:
        return config_from_json(option, "--config")
    if os.environ.get("VIRTREPRO_CONFIG"):
        return config_from_json(os.environ["VIRTREPRO_CONFIG"], "$VIRTREPRO_CONFIG")
    return None


# the Snakefile's `configfile:`, which every --configfile is merged over
DEFAULT_CONFIG = Path(__file__).resolve().parents[3] / "config" / "config.yaml"


def merged_config(paths: list[str | Path]) -> dict:
    """The configuration Snakemake builds from the Snakefile's configfile (:data:`DEFAULT_CONFIG`)
    and ``--configfile`` files, not validated: each file merged over the ones before it, key by
    key into nested mappings, with Snakemake's own function (``snakemake.utils.update_config``).
    A file that cannot be read is a ConfigError naming it (:func:`read_config_file`)."""
    from snakemake.utils import update_config

    config = read_config_file(DEFAULT_CONFIG)
    for path in paths:
        update_config(config, read_config_file(path))
    return config


def config_with_files(paths: list[str | Path], overrides: dict | None = None) -> dict:
    """:func:`merged_config`, with ``overrides`` merged over it as Snakemake merges its ``--config``
    (key by key, the same function), validated; a ConfigError from the merged keys names the files."""
    from snakemake.utils import update_config

    config = merged_config(paths)
    update_config(config, overrides or {})
    try:
        return validate_config(config)
    except ConfigError as error:
        if not paths:
            raise
        given = ", ".join(map(str, paths))
        raise ConfigError(f"config file {given} (over {DEFAULT_CONFIG.parent.name}/{DEFAULT_CONFIG.name}): {error}") from None


def check_output_directory(key: str, path: str | Path) -> None:
    """ConfigError naming ``key`` and ``path`` unless ``path`` is a directory or can be made one
    (its nearest existing ancestor is a directory this process may write into): checked before
    Snakemake looks inside it, which would end in its traceback. Creates nothing."""
    wanted = Path(os.path.abspath(path))
    existing = wanted
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if existing == wanted:
        if not wanted.is_dir():
            what = "a broken symbolic link" if not wanted.exists() else "a file"
            raise ConfigError(f"config key '{key}': {path} is {what}, not a directory")
        return
    if not existing.is_dir():
        raise ConfigError(f"config key '{key}': {path} cannot be created: {existing} is a file, not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"config key '{key}': {path} cannot be created: {existing} is not writable")


@dataclass(frozen=True)
class Run:
    """One repetition of one benchmark variant on one platform of one testbed."""

    testbed: str
    platform: str
    variant: Variant
    repetition: int

    @property
    def benchmark(self) -> str:
        return self.variant.benchmark

    def log_path(self, data_dir: str | Path) -> Path:
        return datalayout.log_path(data_dir, self.testbed, self.platform, self.benchmark, self.variant.key, self.repetition)


AUTO = platform_catalog.AUTO
QEMU_AUTO = AUTO.name  # resolved to one of AUTO.candidates (qemu-kvm or qemu-tcg) by a boot probe on the testbed


def resolve_platforms(platforms: list[str], qemu: str | None) -> list[str]:
    """Replace ``qemu`` (auto) by the accelerator the probe found; keep the order, drop duplicates."""
    resolved = []
    for platform in platforms:
        if platform == QEMU_AUTO:
            if qemu is None:
                raise ConfigError(f"platform {QEMU_AUTO!r} needs the KVM probe's result ({' or '.join(AUTO.candidates)})")
            platform = qemu
        if platform not in resolved:
            resolved.append(platform)
    return resolved


@dataclass(frozen=True)
class VariantPlan:
    """The repetitions of one benchmark variant on one platform: that platform's share of a
    measurement job, which measures the variant on all its platforms in rounds (:class:`VariantRounds`).

    Without a ``rule`` the variant has ``repetitions`` repetitions; with one (repetitions chosen by
    the data, :mod:`virtrepro.planning.adaptive`) ``repetitions`` is the rule's minimum, and the rounds go on
    until the rule stops for every platform of the variant, or its cap."""

    testbed: str
    platform: str
    variant: Variant
    repetitions: int
    rule: RepetitionRule | None = None

    @property
    def benchmark(self) -> str:
        return self.variant.benchmark

    def repetition_numbers(self) -> range:
        """The repetitions measured in any case: the count, or the rule's minimum."""
        return range(self.repetitions)

    @property
    def cap(self) -> int:
        """The most repetitions this platform may get: the rule's cap, or the count."""
        return self.rule.max if self.rule is not None else self.repetitions

    def possible_numbers(self) -> range:
        """Every repetition it may measure: up to the rule's cap."""
        return range(self.cap)

    def run(self, repetition: int) -> Run:
        return Run(self.testbed, self.platform, self.variant, repetition)

    def runs(self) -> list[Run]:
        return [self.run(rep) for rep in self.repetition_numbers()]

    def directory(self, data_dir: str | Path) -> Path:
        return datalayout.variant_dir(data_dir, self.testbed, self.platform, self.benchmark, self.variant.key)

    @property
    def reps_label(self) -> str:
        """The repetition count, or the rule (:meth:`RepetitionRule.label`), as the marker names it."""
        return self.rule.label() if self.rule is not None else str(self.repetitions)

    def to_json(self) -> dict:
        """The plan entry of a measurement job (:meth:`from_json` gives back an equal plan)."""
        rule = self.rule
        return {"testbed": self.testbed, "platform": self.platform, "benchmark": self.benchmark,
                "variant": self.variant.key, "parameters": [list(pair) for pair in self.variant.params],
                "repetitions": self.repetitions,
                "rule": None if rule is None else {
                    "min": rule.min, "max": rule.max, "rel_half_width": rule.rel_half_width,
                    "confidence": rule.confidence, "metrics": list(rule.metrics), "interval": rule.interval,
                    "targets": [[t.metric, t.margin, list(t.claims)] for t in rule.targets]}}

    @classmethod
    def from_json(cls, entry: dict) -> VariantPlan:
        """The plan of :meth:`to_json`; ConfigError for an entry that is not one."""
        try:
            rule = entry["rule"]
            if rule is not None:
                rule = RepetitionRule(int(rule["min"]), int(rule["max"]), float(rule["rel_half_width"]),
                                      float(rule["confidence"]), tuple(rule["metrics"]), rule["interval"],
                                      tuple(Target(m, float(margin), tuple(c)) for m, margin, c in rule["targets"]))
            params = tuple((name, tuple(value) if isinstance(value, list) else value)
                           for name, value in entry["parameters"])
            return cls(entry["testbed"], entry["platform"], Variant(entry["benchmark"], entry["variant"], params),
                       int(entry["repetitions"]), rule)
        except (KeyError, TypeError, ValueError) as error:
            raise ConfigError(f"plan entry: not a measurement job's entry ({type(error).__name__}: {error})") from None


def write_config_file(config: dict, directory: str | Path) -> Path:
    """The configuration as ``config.json`` under ``directory`` (replaced whole when it differs): what a
    measurement job reads, beside its plan entry, instead of an environment variable. One name
    whatever the configuration, so that the jobs' shell command does not change with it (Snakemake's
    lock on the working directory keeps a second workflow from replacing it meanwhile)."""
    path = Path(directory) / "config.json"
    text = json.dumps(config, sort_keys=True)
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        partial.write_text(text)
        os.replace(partial, path)
    return path


def round_order(platforms: list[str], round_number: int) -> list[str]:
    """The platforms in the order they run in a round: as given in even rounds, reversed in odd ones."""
    return list(platforms) if round_number % 2 == 0 else list(reversed(platforms))


@dataclass(frozen=True)
class RoundSlot:
    """One run of a job's rounds: round ``round`` (0-based, also the repetition's number), its place
    ``position`` in the round (0-based), the round's platforms in their order, and the platform's plan."""

    round: int
    position: int
    order: tuple[str, ...]
    plan: VariantPlan


@dataclass(frozen=True)
class VariantRounds:
    """One measurement job: one benchmark variant on every planned platform of a testbed, in rounds.

    In round *r* repetition *r* of each platform runs, back to back, in the order of
    :func:`round_order` (the platforms as configured in even rounds, reversed in odd ones): a drift
    of the host falls on every platform alike, and each round is a comparison made minutes apart
    (docs/methodology.md, "Run order"). Every platform is measured in every round until its cap, so
    the platforms have the same repetitions (a translated platform's lower cap aside); the rounds
    go on until each platform has its count, or, with a repetition rule, until the rule stops for
    every platform (:func:`rounds`). Its marker (:meth:`marker_path`, one per variant, platform-neutral)
    is written when they have stopped."""

    plans: tuple[VariantPlan, ...]

    def __post_init__(self):
        if not self.plans or len({(p.testbed, p.benchmark, p.variant.key) for p in self.plans}) != 1:
            raise ConfigError("a variant's rounds need plans of one testbed, benchmark and variant")
        if len({p.platform for p in self.plans}) != len(self.plans):
            raise ConfigError("a variant's rounds name each platform once")

    @property
    def testbed(self) -> str:
        return self.plans[0].testbed

    @property
    def benchmark(self) -> str:
        return self.plans[0].benchmark

    @property
    def variant(self) -> Variant:
        return self.plans[0].variant

    @property
    def platforms(self) -> list[str]:
        return [p.platform for p in self.plans]

    def plan_of(self, platform: str) -> VariantPlan:
        return next(p for p in self.plans if p.platform == platform)

    @property
    def reps_label(self) -> str:
        """The platforms' repetition counts or rules, each once, joined by ``+`` (the marker's name)."""
        return "+".join(dict.fromkeys(p.reps_label for p in self.plans))

    def marker_path(self, data_dir: str | Path) -> Path:
        return datalayout.rounds_marker_path(data_dir, self.testbed, self.benchmark, self.variant.key, self.reps_label)

    def to_json(self) -> dict:
        return {"plans": [p.to_json() for p in self.plans]}

    @classmethod
    def from_json(cls, entry: dict) -> VariantRounds:
        try:
            return cls(tuple(VariantPlan.from_json(p) for p in entry["plans"]))
        except (KeyError, TypeError) as error:
            raise ConfigError(f"plan entry: not a measurement job's entry ({type(error).__name__}: {error})") from None


def rounds(job: VariantRounds, complete, stops):
    """The runs of a job's rounds still to measure, in order (a generator: the caller measures each run
    before asking for the next, and the rule is asked after each round, on the logs measured so far).

    ``complete(plan, repetition)``: whether that log is complete (a complete log is never measured again:
    a resumed job measures only the missing repetitions, in round order); ``stops(plan, n)``: whether the
    platform needs no repetition beyond its first ``n`` (its count reached, or its rule stopped or
    capped). Round *r* measures repetition *r* of every platform whose cap is above *r*; the rounds
    end after the first round at which ``stops`` holds for every platform."""
    platforms = job.platforms
    number = 0
    while True:
        due = [name for name in round_order(platforms, number) if number < job.plan_of(name).cap]
        if not due:
            return
        for position, name in enumerate(due):
            plan = job.plan_of(name)
            if not complete(plan, number):
                yield RoundSlot(number, position, tuple(due), plan)
        number += 1
        stopped = [stops(plan, number) for plan in job.plans]  # each asked: its decision is the latest
        if all(done or number >= plan.cap for done, plan in zip(stopped, job.plans)):
            return


def plan_rounds(config: dict, platforms: list[str] | None = None, host_mib: int | None = None) -> list[VariantRounds]:
    """The measurement jobs: each planned variant on all the platforms that plan it (in the order of
    ``platforms``), in the order of :func:`plan_variants`' first platform's variants (benchmark by
    benchmark, as configured). ConfigError when a job's guests, kept up together, would not fit in
    the host's memory (:func:`check_memory`; ``host_mib``: its MemTotal, found when not given)."""
    grouped: dict[tuple, list[VariantPlan]] = {}
    for plan in plan_variants(config, platforms):
        grouped.setdefault((plan.testbed, plan.benchmark, plan.variant.key), []).append(plan)
    order = {name: index for index, name in enumerate(config["benchmarks"])}
    keys = sorted(grouped, key=lambda key: order.get(key[1], len(order)))  # stable: the variants' own order within
    jobs = [VariantRounds(tuple(grouped[key])) for key in keys]
    check_memory(config, jobs, host_mib)
    return jobs


def run_priority(config: dict, benchmark: str) -> int:
    """The measurement job's place in the run (a Snakemake priority: the highest runs first): one
    benchmark after the other in the configured order (docs/methodology.md, "Run order"). A multiple
    of 1000: the workflow adds the guest-spec order within a benchmark (under 1000)."""
    return (len(config["benchmarks"]) - config["benchmarks"].index(benchmark)) * 1000


def repetition_rule(config: dict, benchmark: str, platform: str, variant: Variant | None = None,
                    claims_path: str | Path | None = None) -> RepetitionRule | None:
    """The benchmark's repetition rule on ``platform`` in the configured scale
    (:mod:`virtrepro.planning.adaptive`; its cap is the rule's ``max_translated`` on a platform that
    translates guest code, when given); None for a fixed count, and when the top-level
    ``repetitions`` gives one. With ``target: claims`` the rule of ``variant`` has the targets of
    the claims that select it (:func:`claim_targets`)."""
    if config.get("repetitions") is not None:
        return None
    value = config["scales"][config["scale"]][benchmark]["repetitions"]
    targets = ()
    if isinstance(value, dict) and value.get("target") == "claims" and variant is not None:
        targets = claim_targets(benchmark, variant, claims_path)
    return RepetitionRule.from_config(value, platform_catalog.BY_NAME[platform].translated, targets)


def left_out(config: dict, platform: str, benchmark: str) -> str | None:
    """Why ``platform`` is not planned for ``benchmark`` at the configured scale: the scale is one of
    the configuration's ``informative_only`` and the platform's declaration says it informs no claim
    on the benchmark's subsystem (:func:`virtrepro.platforms.catalog.informs_nothing`); None: planned."""
    if config["scale"] not in (config.get("informative_only") or ()):
        return None
    subsystem = BENCHMARKS[benchmark].subsystem
    why = platform_catalog.informs_nothing(platform, subsystem)
    return None if why is None else f"{subsystem}: {why}"


def left_out_lines(config: dict, platforms: list[str]) -> list[str]:
    """One line per platform that :func:`left_out` leaves out of some configured benchmarks, naming
    them and why (what the estimate and the dry run print)."""
    lines = []
    for platform in platforms:
        found: dict[str, list[str]] = {}
        for name in config["benchmarks"]:
            why = left_out(config, platform, name)
            if why is not None:
                found.setdefault(why, []).append(name)
        for why, names in found.items():
            lines.append(f"not planned at scale {config['scale']} (informative_only): {platform} for {', '.join(names)} ({why})")
    return lines


def plan_variants(config: dict, platforms: list[str] | None = None) -> list[VariantPlan]:
    """Every benchmark variant on every platform the configuration asks for, with its repetition
    count (or rule: an integer ``repetitions`` at the top level overrides a rule too), in a stable order;
    not a platform's variants of a benchmark it informs no claim on at this scale (:func:`left_out`).

    ``platforms`` are the concrete platforms (``qemu`` resolved); by default the
    configured ones, which then must not contain ``qemu``.
    """
    scale = config["scales"][config["scale"]]
    variants = []
    for platform in platforms if platforms is not None else resolve_platforms(config["platforms"], None):
        for name in config["benchmarks"]:
            if left_out(config, platform, name) is not None:
                continue  # its numbers would inform no claim at this scale (left_out_lines says so)
            params = scale[name]
            rule = repetition_rule(config, name, platform)
            count = config.get("repetitions")  # null: the benchmark's own count, or its rule's minimum
            if count is None:
                count = rule.min if rule is not None else params["repetitions"]
            for variant in runnable_variants(BENCHMARKS[name], params, platform):
                own = repetition_rule(config, name, platform, variant) if rule is not None else None  # its targets
                variants.append(VariantPlan(config["testbed"], platform, variant, count, own))
    return variants


def plan(config: dict, platforms: list[str] | None = None) -> list[Run]:
    """Every run (repetition) the configuration asks for, in a stable order."""
    return [run for variant in plan_variants(config, platforms) for run in variant.runs()]
