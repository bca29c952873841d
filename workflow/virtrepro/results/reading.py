"""Reading the tidy table: :func:`load` is the one way notebooks, figures and the claims get numbers,
and it only reads. The table is built by the workflow's table rule (``python -m virtrepro.results``,
:func:`virtrepro.results.build.write_table`), its one writer; :func:`load` refuses a table that is
missing, or stale (its manifest's fingerprint is not that of the raw logs and sidecars there now, or
of this table format), with one line naming the command that builds it. :func:`run_facts` reads the
run facts beside it (:mod:`virtrepro.results.facts`), :func:`measured_on` the machines its manifest
records, and :func:`view` widens one benchmark's rows into typed columns for the notebooks and the
claims.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .. import datalayout
from ..rawdata import machines
from ..benchmarks import BENCHMARKS
from .facts import read as read_facts
from .cache import Checksums, fingerprint
from .records import COLUMNS, JSON_COLUMNS, PARAMETER_PREFIX, STOPPING, TABLE_FORMAT, TableError, require_raw_logs


def build_command(testbed: str, data_dir: str | Path = "data") -> str:
    """The command that builds ``testbed``'s table (as the workflow's table rule does)."""
    where = "" if Path(data_dir) == Path("data") else f" --data-dir {data_dir}"
    return f"python -m virtrepro.results {testbed}{where}"


def _remedy(testbed: str, data_dir: str | Path) -> str:
    return f"build it with `{build_command(testbed, data_dir)}` (or the workflow's table rule)"


def _manifest(testbed: str, data_dir: str | Path) -> dict:
    """The table's manifest, refused with the command that builds the table when there is none."""
    paths = datalayout.table_paths(Path(data_dir), testbed)
    try:
        return json.loads(paths["manifest"].read_text())
    except FileNotFoundError:
        raise TableError(f"{paths['parquet']}: no table of testbed {testbed!r} built yet; "
                         f"{_remedy(testbed, data_dir)}") from None
    except (OSError, ValueError) as error:
        raise TableError(f"{paths['manifest']}: the table's manifest cannot be read ({error}); "
                         f"{_remedy(testbed, data_dir)}") from None


def load(testbed: str, data_dir: str | Path = "data") -> pd.DataFrame:
    """The tidy table of ``testbed``, read; nothing is written. A testbed without raw logs is refused
    first (:func:`require_raw_logs`); a table that is missing or not of the raw logs there now (a log
    or sidecar changed, appeared or went, or the table format changed) is a :class:`TableError` naming
    the command that builds it. The builder's checksum cache is read, not written."""
    require_raw_logs(data_dir, testbed)
    manifest = _manifest(testbed, data_dir)
    parquet = datalayout.table_paths(Path(data_dir), testbed)["parquet"]
    if manifest.get("fingerprint") != fingerprint(data_dir, testbed, Checksums(data_dir, testbed)):
        raise TableError(f"{parquet}: the table is stale (a raw log or sidecar changed, appeared or went since it "
                         f"was built, or the table format is now {TABLE_FORMAT}); {_remedy(testbed, data_dir)}")
    return read_table(parquet)


def run_facts(testbed: str, data_dir: str | Path = "data") -> dict:
    """The run facts beside ``testbed``'s table (:mod:`virtrepro.results.facts`), checked to be of the
    table's logs and the testbed's probes (:func:`load` checks the table)."""
    manifest = _manifest(testbed, data_dir)
    path = datalayout.table_paths(Path(data_dir), testbed)["facts"]
    return read_facts(path, manifest.get("fingerprint"), data_dir, testbed, _remedy(testbed, data_dir))


def read_table(path, name: Path | None = None) -> pd.DataFrame:
    """A table file, refused with the file named when it is damaged or lacks a column (a table of an
    older format, such as the wide one with a column per label; the builder makes such a table anew)."""
    source, path = path, name or path  # the file, or its bytes already read (``name``: the file's name)
    remedy = "build it again from the raw logs (`python -m virtrepro.results <testbed>`, or the workflow's table rule)"
    try:
        frame = pd.read_parquet(source)
    except ValueError as error:  # pyarrow's ArrowInvalid; a missing file stays FileNotFoundError
        raise TableError(f"{path}: not a readable Parquet table ({error}); {remedy}") from None
    missing = [column for column in COLUMNS if column not in frame.columns]
    if missing:
        raise TableError(f"{path}: the table has no column {', '.join(map(repr, missing))} (damaged, or written "
                         f"by another version than this one's table format {TABLE_FORMAT}); {remedy}")
    return frame[COLUMNS]



def recorded_machines(testbed: str, data_dir: str | Path = "data") -> dict[str, list[dict]]:
    """Each benchmark's distinct machines (:func:`machines.identity`), from the table's manifest:
    benchmark -> the machines its logs name (one, or none when its sidecars do not say)."""
    try:
        manifest = json.loads(datalayout.table_paths(Path(data_dir), testbed)["manifest"].read_text())
    except FileNotFoundError:  # no table written: no runs
        return {}
    found: dict[str, list[dict]] = {}
    for variant, machines_of in (manifest.get("variant_machines") or {}).items():
        distinct = found.setdefault(variant.split("/")[1], [])
        distinct += [machine for machine in machines_of if machine not in distinct]
    return found


def measured_on(testbed: str, data_dir: str | Path = "data") -> dict[str, list[str]]:
    """Each benchmark's machine in words (:func:`machines.describe`), from the table's manifest
    (:func:`recorded_machines`): benchmark -> the machines its logs name."""
    found: dict[str, list[str]] = {}
    for benchmark, machines_of in recorded_machines(testbed, data_dir).items():
        words = found.setdefault(benchmark, [])
        words += [word for word in dict.fromkeys(map(machines.describe, machines_of)) if word not in words]
    return found


def _typed(values: pd.Series) -> pd.Series:
    """One widened field: booleans as ``boolean``, whole numbers as ``Int64``, other numbers as
    ``float64``, text as text (missing values stay missing). A field that holds a number in one
    variant and a word in another (sysbench_cpu's threads: 1, "all") keeps each value's own type."""
    present = [v for v in values if v is not None]
    if not present:
        return values.astype(object)
    if all(isinstance(v, bool) for v in present):
        return values.astype("boolean")
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return values.astype("Int64")
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return values.astype("float64")
    if all(isinstance(v, str) for v in present):
        return values.astype("str").where(values.notna())
    return values.astype(object)


def _widened(column: pd.Series, names=lambda key: key) -> pd.DataFrame:
    """A JSON column as one typed column per key (named ``names(key)``), on the column's index."""
    objects = [json.loads(text) for text in column]
    keys = sorted({key for obj in objects for key in obj})
    return pd.DataFrame({names(key): _typed(pd.Series([obj.get(key) for obj in objects], index=column.index, dtype=object))
                         for key in keys}, index=column.index)


def declared_measures(rows: pd.DataFrame) -> pd.Series:
    """Where the paper measured each row's number (its benchmark's declared ``measures``, as text),
    beside the rows that have a ``regime``; missing elsewhere and for a benchmark no declaration has."""
    declared = rows["benchmark"].map(lambda name: BENCHMARKS[name].measures if name in BENCHMARKS else None)
    return declared.astype("str").where(declared.notna() & rows["regime"].notna()).rename("measures")


def view(table: pd.DataFrame, benchmark: str | list[str], metric: str | list[str] | None = None) -> pd.DataFrame:
    """The rows of ``benchmark`` (a name, or a list of names whose parameters go together such as
    NPB's), widened: the table's columns but the JSON ones, then the variant's :data:`STOPPING`
    facts, ``measures`` (where the paper measured it: the benchmark's declaration, beside each row
    that has a ``regime``), each parameter as ``param_<name>`` and each label as ``<name>``
    (``label_<name>`` for a label named like a column before it: NPB's own ``benchmark``), each a
    typed column (:func:`_typed`). The rows keep the table's index. A benchmark with no rows gives
    no rows; a name that is neither a benchmark nor in the table is a ``ValueError`` (a misspelt
    name never shows as "not measured"). ``metric``: only the rows of that metric (or those metrics)."""
    names = [benchmark] if isinstance(benchmark, str) else list(benchmark)
    unknown = [name for name in names if name not in BENCHMARKS and name not in set(table["benchmark"])]
    if unknown:
        raise ValueError(f"no benchmark {', '.join(map(repr, unknown))} (known: {', '.join(BENCHMARKS)})")
    rows = table[table["benchmark"].isin(names)]
    if metric is not None:
        rows = rows[rows["metric"].isin([metric] if isinstance(metric, str) else list(metric))]
    fixed = rows.drop(columns=[c for c in JSON_COLUMNS if c in rows.columns])
    stopping_facts = _widened(rows["stopping"]).reindex(columns=list(STOPPING))
    measures = declared_measures(rows)
    parameters = _widened(rows["parameters"], lambda key: PARAMETER_PREFIX + key)
    taken = set(fixed.columns) | set(STOPPING) | {"measures"} | set(parameters.columns)
    labels = _widened(rows["labels"], lambda key: f"label_{key}" if key in taken else key)
    return pd.concat([fixed, stopping_facts, measures, parameters, labels], axis=1)



