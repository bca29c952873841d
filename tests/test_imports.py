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


# The layers, bottom to top (docs/architecture.md, "Layers"): a module imports only modules of its own
# layer or of a layer below. Each entry names a module or a package with everything under it (the longest
# entry decides); ``pkg.__init__`` names only the package's own ``__init__``. Every module is in a layer.
LAYERS = {
    # the shared leaves at the package root (standard library only, or each other), and the statistics:
    # the planning's repetition rule uses them too, so they import nothing else of the package
    "leaves": ["virtrepro.__init__", "virtrepro.errors", "virtrepro.cli", "virtrepro.yamlfile", "virtrepro.datalayout",
               "virtrepro.sidecar", "virtrepro.layout", "virtrepro.benchmark_packages",
               "virtrepro.analysis.__init__", "virtrepro.analysis.stats"],
    # what the project declares: the benchmarks and their parsers, the platforms' catalog (plain data;
    # platforms/__init__ imports only it), metrics, platform names, regimes
    "declarations": ["virtrepro.parsers", "virtrepro.benchmarks", "virtrepro.declarations",
                     "virtrepro.platforms.__init__", "virtrepro.platforms.catalog"],
    # the raw data as it is read: logs and sidecars, the machine a run names, the probes' records
    "rawdata": ["virtrepro.rawdata"],
    # the configuration, the plan, the repetition rule, the estimate
    "planning": ["virtrepro.planning"],
    # hosts, SSH, the platforms' code, the guests, the host agent, the kinds of testbed
    "testbed": ["virtrepro.testbed", "virtrepro.platforms", "virtrepro.guests"],
    # the source builds and the measurement with its command lines
    "measurement": ["virtrepro.builds", "virtrepro.measurement"],
    "results": ["virtrepro.results"],
    "analysis": ["virtrepro.analysis"],
    # the figures' style and the notebooks' parameters, the release; the figures; the workflow's command
    "figures": ["virtrepro.report", "virtrepro.figures", "virtrepro.__main__"],
}

# finer orders inside a layer, bottom to top (the same rule: nothing imports a module above it)
WITHIN = {
    "testbed": [
        ["virtrepro.testbed.__init__", "virtrepro.testbed.runner_remote", "virtrepro.testbed.sshrun", "virtrepro.testbed.hosts",
         "virtrepro.testbed.supervisor", "virtrepro.testbed.placement", "virtrepro.platforms.base"],
        ["virtrepro.guests"],
        ["virtrepro.platforms"],  # each platform's module: what runs on "this host", not knowing who called it
        ["virtrepro.testbed.packages"],
        ["virtrepro.testbed.hostagent"],  # the host side of a remote host
        ["virtrepro.testbed.agent"],  # the controller's side of it
        ["virtrepro.testbed.kinds"],  # the kinds of testbed, behind one interface
        ["virtrepro.testbed.remote", "virtrepro.testbed.availability"],
    ],
    "measurement": [
        ["virtrepro.builds"],
        ["virtrepro.measurement.__init__", "virtrepro.measurement.provenance", "virtrepro.measurement.connections",
         "virtrepro.measurement.cpu"],
        ["virtrepro.measurement.instance", "virtrepro.measurement.peers"],
        ["virtrepro.measurement.repetition"],
        ["virtrepro.measurement.markers"],
        ["virtrepro.measurement.variant"],
        ["virtrepro.measurement.job", "virtrepro.measurement.estimate", "virtrepro.measurement.interleave"],
    ],
    "analysis": [["virtrepro.analysis.conditions"], ["virtrepro.analysis.claims"]],
    "figures": [["virtrepro.report"], ["virtrepro.figures"], ["virtrepro.__main__"]],
}


def _levels(layers) -> dict[str, int]:
    return {entry: depth for depth, layer in enumerate(layers) for entry in layer}


def level_of(name: str, levels: dict[str, int], is_package: bool) -> int | None:
    """The level of module ``name``: its ``name.__init__`` entry (a package), else the longest entry that is
    ``name`` or a package above it; None where no entry matches."""
    if is_package and f"{name}.__init__" in levels:
        return levels[f"{name}.__init__"]
    matching = [entry for entry in levels if not entry.endswith(".__init__")
                and (name == entry or name.startswith(entry + "."))]
    return levels[max(matching, key=len)] if matching else None


def upward_imports(root: Path, layers, among: set[str] | None = None) -> list[tuple[str, str]]:
    """(importer, imported) for every import of a module of a higher layer than the importer's (of the
    modules ``among``, when given)."""
    known = modules(root)
    edges = {name: imports(name, path, known) for name, path in known.items()}
    levels = _levels(layers)
    level = {name: level_of(name, levels, path.name == "__init__.py") for name, path in known.items()
             if among is None or name in among}
    return sorted((name, target) for name in level for target in edges[name]
                  if target in level and level[name] is not None and level[target] is not None
                  and level[target] > level[name])


def layer_of(name: str, known: dict[str, Path]) -> str | None:
    depth = level_of(name, _levels(LAYERS.values()), known[name].name == "__init__.py")
    return None if depth is None else list(LAYERS)[depth]


def test_every_module_is_in_a_layer():
    known = modules(PACKAGE)
    assert [name for name in known if layer_of(name, known) is None] == []
    entries = [e for layer in LAYERS.values() for e in layer] + [e for order in WITHIN.values() for s in order for e in s]
    stale = [e for e in entries if not any(n == e.removesuffix(".__init__") or n.startswith(e + ".") for n in known)]
    assert stale == [], "an entry names no module"


def test_no_module_imports_a_higher_layer():
    assert upward_imports(PACKAGE, LAYERS.values()) == []


@pytest.mark.parametrize("layer", sorted(WITHIN))
def test_each_layer_imports_downwards_inside(layer):
    known = modules(PACKAGE)
    inside = {name for name in known if layer_of(name, known) == layer}
    levels = _levels(WITHIN[layer])
    assert [n for n in sorted(inside) if level_of(n, levels, known[n].name == "__init__.py") is None] == []
    assert upward_imports(PACKAGE, WITHIN[layer], among=inside) == []


def test_the_analysis_statistics_import_nothing_else_of_the_package():
    """The planning's repetition rule (adaptive) uses the statistics: they stay a leaf."""
    edges = graph(PACKAGE)
    stats = {name for name in edges if name.startswith("virtrepro.analysis.stats")}
    assert stats and all(edges[name] <= stats | {"virtrepro.analysis"} for name in stats)
    assert edges["virtrepro.analysis"] == set()


def test_an_upward_import_is_found(tmp_path):
    # pkg/low/a imports pkg/high/mod inside a function: found; pkg/high's own __init__ (which importing
    # pkg.high.mod runs) sits at the bottom, below the package's modules, and is no upward import
    root = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": "X = 1\n",
        "pkg/low/__init__.py": "",
        "pkg/low/a.py": "from ..base import X\n\ndef later():\n    from ..high import mod\n",
        "pkg/high/__init__.py": "",
        "pkg/high/mod.py": "from ..base import X\n",
    })
    layers = [["pkg.__init__", "pkg.base", "pkg.high.__init__"], ["pkg.low"], ["pkg.high"]]
    assert upward_imports(root, layers) == [("pkg.low.a", "pkg.high.mod")]
    assert upward_imports(root, [["pkg.__init__", "pkg.base", "pkg.high.__init__"], ["pkg.high"], ["pkg.low"]]) == []


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
    assert not edges[module] & {"virtrepro.testbed.agent", "virtrepro.testbed.remote", "virtrepro.testbed.kinds",
                                "virtrepro.testbed.hostagent"}
