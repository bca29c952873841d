"""Workflow configuration: validation with messages that name the bad key, and the run plan."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from .benchmarks import BENCHMARKS, Variant

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """The configuration does not match the schema or refers to something undefined."""


def _key_path(error) -> str:
    path = ".".join(str(part) for part in error.absolute_path)
    return path or "<top level>"


def validate_config(config: dict, schema_path: Path = SCHEMA_PATH) -> dict:
    """Raise ConfigError naming the first bad key; return the config otherwise.

    Besides the schema, checks the cross references the schema cannot express
    (the chosen testbed is defined, each chosen benchmark has parameters in the
    chosen scale).
    """
    import jsonschema  # slow to import (about 2 s): only where validation happens

    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        # `oneOf` failures hide the useful message in their context
        detail = error
        if error.context:
            detail = jsonschema.exceptions.best_match(error.context)
        raise ConfigError(f"config key '{_key_path(detail)}': {detail.message}")
    if config["testbed"] not in config["testbeds"]:
        known = ", ".join(sorted(config["testbeds"]))
        raise ConfigError(f"config key 'testbed': '{config['testbed']}' is not defined under 'testbeds' ({known})")
    scale = config["scales"][config["scale"]]
    for name in config["benchmarks"]:
        if name not in scale:
            raise ConfigError(f"config key 'scales.{config['scale']}.{name}': benchmark '{name}' has no parameters")
    return config


def load_config(path: str | Path) -> dict:
    with open(path) as handle:
        return validate_config(yaml.safe_load(handle))


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
        return Path(data_dir) / "raw" / self.testbed / self.platform / self.benchmark / self.variant.key / f"rep-{self.repetition}.log"


QEMU_AUTO = "qemu"  # resolved to qemu-kvm or qemu-tcg by a boot probe on the testbed


def resolve_platforms(platforms: list[str], qemu: str | None) -> list[str]:
    """Replace ``qemu`` (auto) by the accelerator the probe found; keep the order, drop duplicates."""
    resolved = []
    for platform in platforms:
        if platform == QEMU_AUTO:
            if qemu is None:
                raise ConfigError("platform 'qemu' needs the KVM probe's result (qemu-kvm or qemu-tcg)")
            platform = qemu
        if platform not in resolved:
            resolved.append(platform)
    return resolved


@dataclass(frozen=True)
class VariantPlan:
    """All repetitions of one benchmark variant on one platform: what one measurement job does.

    Its marker, ``<variant>.reps-<N>.json`` beside the variant's directory, is written when
    all N repetitions have complete raw logs and lists them with their checksums.
    """

    testbed: str
    platform: str
    variant: Variant
    repetitions: int

    @property
    def benchmark(self) -> str:
        return self.variant.benchmark

    def runs(self) -> list[Run]:
        return [Run(self.testbed, self.platform, self.variant, rep) for rep in range(self.repetitions)]

    def directory(self, data_dir: str | Path) -> Path:
        return Path(data_dir) / "raw" / self.testbed / self.platform / self.benchmark / self.variant.key

    def marker_path(self, data_dir: str | Path) -> Path:
        return self.directory(data_dir).with_name(f"{self.variant.key}.reps-{self.repetitions}.json")


def plan_variants(config: dict, platforms: list[str] | None = None) -> list[VariantPlan]:
    """Every benchmark variant the configuration asks for, with its repetition count, in a stable order.

    ``platforms`` are the concrete platforms (``qemu`` resolved); by default the
    configured ones, which then must not contain ``qemu``.
    """
    scale = config["scales"][config["scale"]]
    variants = []
    for platform in platforms if platforms is not None else resolve_platforms(config["platforms"], None):
        for name in config["benchmarks"]:
            params = scale[name]
            count = config.get("repetitions") or params["repetitions"]
            variants.extend(VariantPlan(config["testbed"], platform, variant, count)
                            for variant in BENCHMARKS[name].variants(params, platform))
    return variants


def plan(config: dict, platforms: list[str] | None = None) -> list[Run]:
    """Every run (repetition) the configuration asks for, in a stable order."""
    return [run for variant in plan_variants(config, platforms) for run in variant.runs()]
