"""The table's manifest, ``<data>/tables/<testbed>.manifest.json``: what the table was built from
(the table format, the fingerprint and each log's checksum), where each variant's rows are and which
machines its logs name. The builder reads the previous one (:func:`previous`) to keep unchanged
variants' rows, and writes it one entry a line (:func:`text`); readers read it through
:mod:`virtrepro.results.reading`."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pandas as pd

from .reading import read_table
from .records import TABLE_FORMAT, TableError


def previous(paths: dict[str, Path]) -> tuple[pd.DataFrame | None, dict]:
    """The table written before and its manifest, if it is of this format, readable and the table the
    manifest was written with (its ``parquet_sha256``): the manifest's row blocks (``variant_rows``)
    describe that file only, so a table replaced without its manifest (a run cut between the two
    writes, a file copied by hand) is built anew rather than cut at the wrong rows."""
    try:
        manifest = json.loads(paths["manifest"].read_text())
        if manifest.get("format") != TABLE_FORMAT or not isinstance(manifest.get("log_checksums"), dict):
            return None, {}
        data = paths["parquet"].read_bytes()
        if manifest.get("parquet_sha256") != hashlib.sha256(data).hexdigest():
            return None, {}
        return read_table(io.BytesIO(data), paths["parquet"]), manifest
    except (OSError, ValueError, TableError):
        return None, {}



def text(manifest: dict) -> str:
    """The manifest as JSON with one entry a line (a new log is one line in a diff), made with the
    C encoder line by line: ``json.dumps(indent=2)`` takes the pure-Python encoder, a second at 50,000 logs."""
    lines = []
    for key, value in manifest.items():
        if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
            entries = json.dumps(value, separators=(",\n    ", ": "))[1:-1]  # the C encoder, an entry a line
            lines.append(f"  {json.dumps(key)}: {{\n    {entries}\n  }}")
        elif isinstance(value, dict) and value:
            entries = ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            lines.append(f"  {json.dumps(key)}: {{\n{entries}\n  }}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"

