"""From raw logs to one tidy table per testbed, and the one way to read it.

The table rule (``python -m virtrepro.results``, :func:`write_table`) is the table's one writer: it
parses every complete raw log of a testbed with the one parser of its tool and keeps the result as
``<data>/tables/<testbed>.parquet`` (a ``.csv`` copy for people), with a manifest of the logs it was
built from and the run facts beside it (machines, probes, what each platform applied). Notebooks,
figures and the claims read it with :func:`load`, which writes nothing and refuses a missing or stale
table with the command that builds it.

The table is narrow: one row per measured value, in the :data:`COLUMNS` every row has. What
differs between benchmarks is kept as typed JSON objects: ``parameters`` (the variant's
parameters as the sidecar records them: 64, "64m", true), ``labels`` (the record's own fields:
threads, file_size_kb, ...) and ``stopping`` (its variant's repetition facts, the same on every
row of the variant and platform). :func:`view` widens one benchmark's rows into typed columns
for the notebooks and the claims.

Its modules, one job each: :mod:`.records` (raw logs into rows, and the checks every log passes),
:mod:`.cache` (the logs' checksums and fingerprint), :mod:`.reading` (:func:`load`, :func:`view`,
:func:`run_facts`, :func:`measured_on`), :mod:`.manifest`, :mod:`.facts` (the run facts) and
:mod:`.build` (:func:`write_table`). This package re-exports what callers use.
"""

from __future__ import annotations

from ..datalayout import table_paths
from .build import MixedMachinesError, build_table, require_one_machine, write_table
from .cache import Checksums, fingerprint, log_checksums
from .facts import FACTS_FORMAT, FactsError
from .reading import (build_command, declared_measures, load, measured_on, read_table, recorded_machines, run_facts,
                      view)
from .records import (COLUMNS, DTYPES, JSON_COLUMNS, PARAMETER_PREFIX, STOPPING, TABLE_FORMAT, CopiedLogError,
                      IncompleteLogError, MisplacedLogError, NoRawLogsError, TableError, check_place, has_raw_logs,
                      parse_log, raw_logs, recorded_rule, refuse_copies, require_raw_logs, stopping,
                      testbeds_with_raw_logs)

__all__ = [
    "COLUMNS", "DTYPES", "FACTS_FORMAT", "JSON_COLUMNS", "PARAMETER_PREFIX", "STOPPING", "TABLE_FORMAT", "Checksums",
    "CopiedLogError", "FactsError", "IncompleteLogError", "MisplacedLogError", "MixedMachinesError", "NoRawLogsError",
    "TableError", "build_command", "build_table", "check_place", "declared_measures", "fingerprint", "has_raw_logs",
    "load", "log_checksums", "measured_on", "parse_log", "raw_logs", "read_table", "recorded_machines", "recorded_rule", "refuse_copies",
    "require_one_machine", "require_raw_logs", "run_facts", "stopping", "table_paths", "testbeds_with_raw_logs",
    "view", "write_table",
]
