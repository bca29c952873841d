"""One module spells the data layout (virtrepro.datalayout): no other module of the package, and no
rule, writes a path of the raw logs, sidecars, markers, probes, tables, executed notebooks or
investigations itself. Docstrings and comments may describe the layout; code may not spell it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import REPO
from virtrepro import datalayout

PACKAGE = REPO / "workflow" / "virtrepro"
OWNER = PACKAGE / "datalayout.py"
RULES = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]

# a piece of a data path inside a string of code
SPELLED = re.compile(r"rep-|\.reps-|\.part-|\.rule\.json|(^|/)raw/|/raw$|(^|/)tables/|/tables$|(^|/)probes/|/probes$"
                     r"|\.claims\.csv|\.manifest\.json|(^|/)investigations/|/investigations$|(^|/)executed/|/executed$"
                     r"|platforms\.json|qemu-accel\.json|npb\.json")
# not the data: the host agent's own state directory on a testbed host keeps its KVM probe in probes/
ALLOWED = {("workflow/virtrepro/testbed/hostagent.py", "probes")}
# a directory of the layout as a path component of its own: Path(data) / "raw"
COMPONENTS = {datalayout.RAW, datalayout.TABLES, datalayout.PROBES, datalayout.INVESTIGATIONS, datalayout.EXECUTED,
              datalayout.ROUNDS}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def spelled(source: str, name: str) -> list[str]:
    """Where code in ``source`` spells a data path: ``name:line: text``."""
    tree = ast.parse(source, name)
    skip = _docstrings(tree)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            for side in (node.left, node.right):
                if isinstance(side, ast.Constant) and side.value in COMPONENTS and (name, side.value) not in ALLOWED:
                    hits.append(f"{name}:{side.lineno}: / {side.value!r}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if SPELLED.search(node.value):
                hits.append(f"{name}:{node.lineno}: {node.value[:60]!r}")
    return hits


def _rule_code(path: Path) -> str:
    """A rule file's Python-like lines, without comments (enough to find a string of a path)."""
    return "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())


def test_no_module_but_the_layouts_owner_spells_a_data_path():
    hits = [hit for path in sorted(PACKAGE.rglob("*.py")) if path != OWNER
            for hit in spelled(path.read_text(), str(path.relative_to(REPO)))]
    assert hits == []


@pytest.mark.parametrize("rule_file", RULES, ids=lambda p: p.name)
def test_no_rule_spells_a_data_path(rule_file):
    strings = re.findall(r"""(?:f|r)?"([^"\n]*)"|(?:f|r)?'([^'\n]*)'""", _rule_code(rule_file))
    data = [text for pair in strings for text in pair if text and not text.startswith("logs/")]
    assert [text for text in data if SPELLED.search(text)] == []


def test_the_check_finds_a_spelled_path_and_leaves_docstrings_alone():
    source = '''
def f(data):
    """Reads raw/<testbed>/probes/platforms.json."""
    a = Path(data) / "raw" / "x"
    b = f"{data}/tables/{name}.claims.csv"
    return a, b, {"format": "raw"}
'''
    hits = spelled(source, "m.py")
    assert sorted({hit.split(":")[1] for hit in hits}) == ["4", "5"]  # not the docstring's line 3, nor line 6


def test_the_layout_round_trips_a_logs_place(tmp_path):
    log = datalayout.log_path(tmp_path, "tb", "native", "stream", "n-1", 3)
    assert log == tmp_path / "raw" / "tb" / "native" / "stream" / "n-1" / "rep-3.log"
    where = datalayout.place(log.relative_to(tmp_path))
    assert (where.testbed, where.platform, where.benchmark, where.variant, where.repetition) == \
        ("tb", "native", "stream", "n-1", 3)
    assert datalayout.data_dir_of(log) == (tmp_path, "tb")
    assert datalayout.is_log_name("rep-3.log") and not datalayout.is_log_name("rep-3.failed-x.log")
    marker = datalayout.rounds_marker_path(tmp_path, "tb", "stream", "n-1", "5+3")
    assert marker == tmp_path / "raw" / "tb" / "rounds" / "stream" / "n-1.reps-5+3.json"
    marker.parent.mkdir(parents=True)
    marker.write_text("{}")
    assert datalayout.rounds_markers_of(tmp_path, "tb", "stream", "n-1") == [marker]
    assert datalayout.marker_pattern("data") == "data/raw/{testbed}/rounds/{benchmark}/{variant}.reps-{reps}.json"
    assert str(datalayout.table_paths("data", "a.b")["csv"]) == "data/tables/a.b.csv"


def test_a_recorded_path_names_no_directory_of_the_machine():
    """layout.recorded_path: inside the repository relative to it; outside, what the caller gives, or the name."""
    from pathlib import Path

    from virtrepro.layout import REPOSITORY, recorded_path

    assert recorded_path(REPOSITORY / ".state" / "images" / "k" / "rootfs") == ".state/images/k/rootfs"
    assert recorded_path(Path("/opt/state/images/k/rootfs"), "k/rootfs") == "k/rootfs"
    assert recorded_path(Path("/opt/src/MITgcm.tar.gz")) == "MITgcm.tar.gz"
    assert recorded_path(Path("/opt/repo/a/b"), root=Path("/opt/repo")) == "a/b"
