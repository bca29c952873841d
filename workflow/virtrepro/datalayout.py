"""Where every file of the data lives: the one module that spells the data layout (a leaf module:
imports nothing of the package). Everything else asks here; ``tests/test_datalayout.py`` refuses a
data path spelt anywhere else in the package or the rules.

Under a data directory (``data/``, or an investigation's ``data/investigations/<name>/``)::

    raw/<testbed>/<platform>/<benchmark>/<variant>/rep-<k>.log    a complete run's log
    raw/<testbed>/<platform>/<benchmark>/<variant>/rep-<k>.json   its sidecar (virtrepro.sidecar)
    raw/<testbed>/<platform>/<benchmark>/<variant>/rep-<k>.failed-<UTC>.log (and .json)  a failed run
    raw/<testbed>/<platform>/<benchmark>/<variant>/.rep-<k>.log.<pid>.partial  a run in progress
    raw/<testbed>/rounds/<benchmark>/<variant>.reps-<N>.json  a measurement job's marker: the variant
                                            measured in rounds on all its platforms (not committed)
    raw/<testbed>/<platform>/<benchmark>/<variant>.reps-<N>.part-<p>of<P>.json  a marker of the layout
                                            before rounds (parts; not committed, removed when met)
    raw/<testbed>/<platform>/<benchmark>/<variant>.rule.json  the repetition rule that decided a variant
                                                             whose logs' sidecars record none (committed)
    raw/<testbed>/probes/<probe>.json                          probes: platforms, qemu-accel, <build>
    tables/<testbed>.parquet, .csv, .manifest.json, .claims.csv  the tidy table and the verdicts
    tables/<testbed>.facts.json                                 the run facts beside it (machines, probes, platforms)
    tables/.cache/<testbed>.files.tsv, <testbed>.lock          the table builder's cache and lock (not committed)
    executed/<testbed>/<paper>.ipynb                           executed notebooks (not committed)
    investigations/<name>/                                     a data directory of its own
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass
from pathlib import Path

RAW = "raw"
TABLES = "tables"
PROBES = "probes"
ROUNDS = "rounds"  # raw/<testbed>/rounds: the measurement jobs' markers (one per variant, all platforms)
EXECUTED = "executed"
INVESTIGATIONS = "investigations"
CACHE = ".cache"

LOG_PREFIX = "rep-"
LOG_NAME = re.compile(r"^rep-(\d+)\.log$")
SIDECAR_NAME = re.compile(r"^rep-(\d+)\.json$")

# the probes' records under raw/<testbed>/probes/
PLATFORM_PROBE = "platforms"  # virtrepro.testbed.availability
QEMU_PROBE = "qemu-accel"  # the KVM boot probe
NPB_PROBE = "npb"  # the NPB source build's probe (virtrepro.builds.registry: a build's probe is named by the build)
MITGCM_PROBE = "mitgcm"  # the MITgcm source build's probe

MARKER_INFIX = ".reps-"
RULE_RECORD_SUFFIX = ".rule.json"


# ---------------------------------------------------------------------------
# raw logs and sidecars
# ---------------------------------------------------------------------------


def raw_dir(data_dir: str | Path) -> Path:
    """``<data>/raw``: every testbed's raw logs and probes."""
    return Path(data_dir) / RAW


def testbed_dir(data_dir: str | Path, testbed: str) -> Path:
    """``<data>/raw/<testbed>``."""
    return raw_dir(data_dir) / testbed


def variant_dir(data_dir: str | Path, testbed: str, platform: str, benchmark: str, variant: str) -> Path:
    """``<data>/raw/<testbed>/<platform>/<benchmark>/<variant>``: a variant's logs on one platform."""
    return testbed_dir(data_dir, testbed) / platform / benchmark / variant


def log_name(repetition: int) -> str:
    """``rep-<k>.log``."""
    return f"{LOG_PREFIX}{repetition}.log"


def log_path(data_dir: str | Path, testbed: str, platform: str, benchmark: str, variant: str,
             repetition: int) -> Path:
    """The complete log of one repetition."""
    return variant_dir(data_dir, testbed, platform, benchmark, variant) / log_name(repetition)


def sidecar_path(log: str | Path) -> Path:
    """A log's sidecar: ``rep-<k>.json`` beside ``rep-<k>.log`` (a failed log's too)."""
    return Path(log).with_suffix(".json")


def sidecar_name(log: str) -> str:
    """:func:`sidecar_path` of a log's name or relative path, as text."""
    return log[: -len(".log")] + ".json"


def log_of_sidecar(sidecar: str | Path) -> Path:
    """The log a sidecar describes."""
    return Path(sidecar).with_suffix(".log")


def is_repetition_file(name: str) -> bool:
    """Whether a file name is a repetition's (log, sidecar, failed or partial: ``rep-*``)."""
    return name.startswith(LOG_PREFIX)


def is_log_name(name: str) -> bool:
    """Whether a file name is a complete log's, ``rep-<k>.log`` (:data:`LOG_NAME`, without a
    regular expression: the table lists 50,000 names)."""
    return name.startswith(LOG_PREFIX) and name.endswith(".log") and name[len(LOG_PREFIX):-4].isdecimal()


def is_complete_sidecar_name(name: str) -> bool:
    """Whether a file name is a complete log's sidecar, ``rep-<k>.json`` (not a failed run's)."""
    return SIDECAR_NAME.match(name) is not None


def repetition_of(name: str) -> int:
    """The repetition of a complete log's name: ``rep-3.log`` -> 3."""
    return int(LOG_NAME.match(name).group(1))


def failed_log_path(log: str | Path, stamp: str) -> Path:
    """Where a failed run's output is kept beside its log: ``rep-<k>.failed-<stamp>.log``."""
    log = Path(log)
    return log.with_name(f"{log.stem}.failed-{stamp}.log")


def temporary_log_path(log: str | Path, pid: int) -> Path:
    """Where a run writes its log while it runs: ``.rep-<k>.log.<pid>.partial``."""
    return Path(log).with_name(f".{Path(log).name}.{pid}.partial")


def sidecars_of(data_dir: str | Path, testbed: str, platform: str = "*", benchmark: str = "*",
                variant: str = "*") -> list[Path]:
    """The sidecars (``rep-*.json``, failed runs' too) of a testbed, sorted; the names may be glob
    patterns (``*``: any)."""
    return sorted(testbed_dir(data_dir, testbed).glob(f"{platform}/{benchmark}/{variant}/{LOG_PREFIX}*.json"))


def sidecars_of_all(data_dir: str | Path) -> list[Path]:
    """The sidecars of every testbed of a data directory (unsorted)."""
    return list(raw_dir(data_dir).glob(f"*/*/*/*/{LOG_PREFIX}*.json"))


def sidecars_beside(log: str | Path) -> list[Path]:
    """The sidecars in a log's directory, sorted."""
    return sorted(Path(log).parent.glob(f"{LOG_PREFIX}*.json"))


@dataclass(frozen=True)
class Place:
    """Where a log is: the run its place says (:func:`place`)."""

    testbed: str
    platform: str
    benchmark: str
    variant: str
    name: str  # the log's file name

    @property
    def repetition(self) -> int:
        return repetition_of(self.name)


def place(relative: str | Path) -> Place:
    """The place of a log given relative to its data directory (``raw/<testbed>/...``)."""
    _, testbed, platform, benchmark, variant, name = Path(relative).parts
    return Place(testbed, platform, benchmark, variant, name)


def variant_of(relative: str) -> str:
    """``platform/benchmark/variant`` of a log's name relative to the data directory."""
    return relative.split("/", 2)[2].rsplit("/", 1)[0]


def relative_log(testbed: str, where: str, name: str) -> str:
    """A log's name relative to the data directory, from its ``platform/benchmark/variant`` and name."""
    return f"{RAW}/{testbed}/{where}/{name}"


def data_dir_of(log: str | Path) -> tuple[Path, str] | None:
    """(data directory, testbed) of a log at its place in the layout, or None elsewhere."""
    parts = Path(log).parts
    if len(parts) >= 6 and parts[-6] == RAW:
        return Path(log).parents[5], parts[-5]
    return None


# ---------------------------------------------------------------------------
# a variant's markers (one a job part, git-ignored) and its rule record (committed)
# ---------------------------------------------------------------------------


def rounds_marker_path(data_dir: str | Path, testbed: str, benchmark: str, variant: str, reps_label: str) -> Path:
    """A measurement job's marker, the variant measured in rounds on all its platforms (platform-neutral,
    since a variant's directories are per platform): ``raw/<testbed>/rounds/<benchmark>/<variant>.reps-<label>.json``."""
    return testbed_dir(data_dir, testbed) / ROUNDS / benchmark / f"{variant}{MARKER_INFIX}{reps_label}.json"


def rounds_markers_of(data_dir: str | Path, testbed: str, benchmark: str, variant: str) -> list[Path]:
    """Every rounds marker of a variant (any count or rule)."""
    directory = testbed_dir(data_dir, testbed) / ROUNDS / benchmark
    return list(directory.glob(f"{glob.escape(variant)}{MARKER_INFIX}*.json"))


def markers_of(directory: str | Path) -> list[Path]:
    """Every marker of the layout before rounds (parts) of the variant whose directory is ``directory``."""
    directory = Path(directory)
    return list(directory.parent.glob(f"{glob.escape(directory.name)}{MARKER_INFIX}*.json"))


def rule_record_path(directory: str | Path) -> Path:
    """The variant's rule record, beside its ``directory``: ``<variant>.rule.json``."""
    directory = Path(directory)
    return directory.with_name(directory.name + RULE_RECORD_SUFFIX)


# ---------------------------------------------------------------------------
# probes, tables, executed notebooks, investigations
# ---------------------------------------------------------------------------


def probes_dir(data_dir: str | Path, testbed: str) -> Path:
    """``<data>/raw/<testbed>/probes``."""
    return testbed_dir(data_dir, testbed) / PROBES


def probe_path(data_dir: str | Path, testbed: str, probe: str) -> Path:
    """A probe's record: ``<data>/raw/<testbed>/probes/<probe>.json``."""
    return probes_dir(data_dir, testbed) / f"{probe}.json"


def probe_records(data_dir: str | Path, testbed: str) -> dict[str, Path]:
    """Every probe record of a testbed, by probe name (``platforms``, ``qemu-accel``, a build's), sorted."""
    return {path.stem: path for path in sorted(probes_dir(data_dir, testbed).glob("*.json"))}


def probe_name(probe: str) -> str:
    """A probe record's name relative to the testbed's raw directory, for messages."""
    return f"{PROBES}/{probe}.json"


MANIFEST_SUFFIX = ".manifest.json"
FACTS_SUFFIX = ".facts.json"  # the run facts beside the tidy table (virtrepro.results.facts)


def tables_dir(data_dir: str | Path) -> Path:
    return Path(data_dir) / TABLES


def table_paths(data_dir: str | Path, testbed: str) -> dict[str, Path]:
    """The tidy table's files: ``parquet``, ``csv``, ``manifest``, and the run facts beside it (``facts``)."""
    base = tables_dir(data_dir) / testbed
    return {"parquet": Path(f"{base}.parquet"), "csv": Path(f"{base}.csv"), "manifest": Path(f"{base}{MANIFEST_SUFFIX}"),
            "facts": Path(f"{base}{FACTS_SUFFIX}")}


def claims_table_path(data_dir: str | Path, testbed: str) -> Path:
    """The verdicts: ``<data>/tables/<testbed>.claims.csv``."""
    return tables_dir(data_dir) / f"{testbed}.claims.csv"


def table_cache_path(data_dir: str | Path, testbed: str, suffix: str) -> Path:
    """The table builder's own files (``files.tsv``, ``lock``): ``<data>/tables/.cache/<testbed>.<suffix>``."""
    return tables_dir(data_dir) / CACHE / f"{testbed}.{suffix}"


def executed_notebook(data_dir: str | Path, testbed: str, paper: str) -> Path:
    """``<data>/executed/<testbed>/<paper>.ipynb``."""
    return Path(data_dir) / EXECUTED / testbed / f"{paper}.ipynb"


def investigation_dir(data_dir: str | Path, name: str) -> Path:
    """An investigation's own data directory: ``<data>/investigations/<name>``."""
    return Path(data_dir) / INVESTIGATIONS / name


# ---------------------------------------------------------------------------
# the same paths as Snakemake patterns (wildcards in braces), under the data directory ``data``
# ---------------------------------------------------------------------------


def variant_dir_pattern(data: str) -> str:
    return str(variant_dir(data, "{testbed}", "{platform}", "{benchmark}", "{variant}"))


def marker_pattern(data: str) -> str:
    """A measurement job's output: its rounds marker (:func:`rounds_marker_path`)."""
    return str(rounds_marker_path(data, "{testbed}", "{benchmark}", "{variant}", "{reps}"))


def probe_pattern(data: str, probe: str) -> str:
    return str(probe_path(data, "{testbed}", probe))


def table_pattern(data: str, kind: str) -> str:
    """``parquet``, ``csv``, ``manifest``, ``facts`` or ``claims`` of testbed ``{testbed}``."""
    return str(claims_table_path(data, "{testbed}") if kind == "claims" else table_paths(data, "{testbed}")[kind])
