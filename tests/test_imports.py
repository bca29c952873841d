"""The package's imports go one way: every import, the ones inside functions included, walked
from the source (docs/architecture.md, "Layers"). A cycle that closes only through a function-level
import still means two modules that cannot be understood, tested or replaced apart."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "workflow" / "virtrepro"


def modules(root: Path) -> dict[str, Path]:
    """Module name -> file, for every .py under the package ``root`` (``pkg.__init__`` is ``pkg``)."""
    found = {}
    for path in root.rglob("*.py"):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that module ``name`` imports anywhere in its file."""
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            targets.add(stem)
            targets.update(f"{stem}.{alias.name}" for alias in node.names)  # `from pkg import submodule`
    edges = set()
    for target in targets:
        while target and target not in known:  # `import a.b.C` names a class: its module is a.b
            target = target.rpartition(".")[0]
        if not target or target == name or name.startswith(target + "."):
            continue  # a module's own package is imported before the module itself
        edges.add(target)
        # importing a.b.c runs a.b's __init__ first (unless the importer is inside a.b already)
        parent = target.rpartition(".")[0]
        while parent and parent in known and not name.startswith(parent + ".") and parent != name:
            edges.add(parent)
            parent = parent.rpartition(".")[0]
    root = next(iter(known)).split(".")[0]
    edges.discard(root)  # the package's own __init__ (a version string) is imported by everything
    return edges


def graph(root: Path) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(edges.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_package_has_no_import_cycle():
    assert cycles(graph(PACKAGE)) == []


# the testbed layer, bottom to top: a module never imports one above it (docs/architecture.md)
TESTBED_LAYERS = [
    # hosts, the platform interface and the platforms' declarations (platforms/__init__ loads no platform)
    ["virtrepro.hosts", "virtrepro.platforms", "virtrepro.platforms.catalog", "virtrepro.platforms.base"],
    ["virtrepro.guests", "virtrepro.guests.network", "virtrepro.guests.image"],
    ["virtrepro.platforms.guest", "virtrepro.platforms.native", "virtrepro.platforms.lxc", "virtrepro.platforms.podman",
     "virtrepro.platforms.qemu"],
    ["virtrepro.hostagent"],
    ["virtrepro.agent"],
    ["virtrepro.testbed"],
    # the measurement (virtrepro.measurement), its modules in their order, and its command line on top
    ["virtrepro.remote", "virtrepro.measurement", "virtrepro.measurement.provenance", "virtrepro.measurement.connections",
     "virtrepro.measurement.cpu"],
    ["virtrepro.measurement.instance", "virtrepro.measurement.peers"],
    ["virtrepro.measurement.repetition"],
    ["virtrepro.measurement.markers"],
    ["virtrepro.measurement.variant"],
    ["virtrepro.measure"],
]


def test_the_testbed_layer_imports_only_downwards():
    edges = graph(PACKAGE)
    level = {name: depth for depth, layer in enumerate(TESTBED_LAYERS) for name in layer}
    assert set(level) <= set(edges), "a module named in TESTBED_LAYERS no longer exists"
    upward = [(name, target) for name in level for target in edges[name]
              if target in level and level[target] > level[name]]
    assert upward == []


# the analysis wing, bottom to top: the table, the analysis package (its statistics below its claims), the
# figures. Each entry names a module or a package with everything under it (the longest name decides);
# ``virtrepro.stats`` and ``virtrepro.claims`` are the analysis package's modules under their earlier names.
ANALYSIS_LAYERS = [
    ["virtrepro.results"],
    ["virtrepro.analysis", "virtrepro.analysis.stats", "virtrepro.stats"],
    ["virtrepro.analysis.claims", "virtrepro.claims"],
    ["virtrepro.figures"],
]


def analysis_level(name: str) -> int | None:
    """The level of ``name`` in ANALYSIS_LAYERS (by its longest listed prefix), None outside it."""
    prefixes = {prefix: depth for depth, layer in enumerate(ANALYSIS_LAYERS) for prefix in layer}
    matching = [prefix for prefix in prefixes if name == prefix or name.startswith(prefix + ".")]
    return prefixes[max(matching, key=len)] if matching else None


def test_the_analysis_layer_sits_between_the_table_and_the_figures():
    edges = graph(PACKAGE)
    for layer in ANALYSIS_LAYERS:
        assert all(any(n == p or n.startswith(p + ".") for n in edges) for p in layer), f"no module {layer}"
    upward = [(name, target) for name, targets in edges.items() for target in targets
              if analysis_level(name) is not None and analysis_level(target) is not None
              and analysis_level(target) > analysis_level(name)]
    assert upward == []


def test_the_analysis_statistics_import_nothing_else_of_the_package():
    """The measurement's repetition rule (adaptive) uses the statistics: they stay a leaf."""
    edges = graph(PACKAGE)
    stats = {name for name in edges if name.startswith("virtrepro.analysis.stats")}
    assert stats and all(edges[name] <= stats | {"virtrepro.analysis"} for name in stats)


def _write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root / "pkg"


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    root = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from .b import thing\n",
        "pkg/b.py": "def thing():\n    from . import c\n",
        "pkg/c.py": "def later():\n    from .a import x\n",
        "pkg/d.py": "from .a import thing\n",
    })
    assert graph(root)["pkg.b"] == {"pkg.c"}
    assert cycles(graph(root)) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_a_cycle_through_a_subpackages_init_is_found(tmp_path):
    # importing pkg.sub.leaf runs pkg/sub/__init__.py, which imports pkg.top: a cycle with pkg.top
    root = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/top.py": "import pkg.sub.leaf\n",
        "pkg/sub/__init__.py": "from ..top import name\n",
        "pkg/sub/leaf.py": "X = 1\n",
    })
    assert cycles(graph(root)) == [["pkg.sub", "pkg.top"]]


def test_a_package_importing_its_own_modules_is_no_cycle(tmp_path):
    root = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/sub/__init__.py": "from .leaf import X\nfrom . import other\n",
        "pkg/sub/leaf.py": "from .other import Y\nX = Y\n",
        "pkg/sub/other.py": "Y = 1\n",
    })
    assert cycles(graph(root)) == []


@pytest.mark.parametrize("module", ["virtrepro.platforms.guest", "virtrepro.guests"])
def test_no_platform_or_guest_module_reaches_the_remote_side(module):
    edges = graph(PACKAGE)
    assert not edges[module] & {"virtrepro.agent", "virtrepro.remote", "virtrepro.testbed", "virtrepro.hostagent"}
