"""The Debian packages the benchmarks declare, read from their source without importing it.

A benchmark names the packages it needs in an instance (the host, for ``native``; the guest
image, for the others) once, in its class: ``packages = ("sysbench",)``, or only its ``tool``
where the package has the tool's name (``tool = "fio"``: the package ``fio``). The set-up script
installs them on the host and the guest image's build puts them into the image; both read them
here. The set-up script runs this file with the system's ``python3`` before the project's
environment exists, so it imports nothing but the standard library and reads the class bodies
of ``workflow/virtrepro/benchmarks/*.py`` as syntax trees: a ``packages`` that is not a literal
tuple or list of strings is an error, never a silent gap in a package list.

    python3 workflow/virtrepro/benchmark_packages.py     # one package a line, sorted
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

BENCHMARKS_DIR = Path(__file__).resolve().parent / "benchmarks"


class DeclarationError(ValueError):
    """A benchmark class's ``packages`` is not a literal tuple or list of package names."""


def _literal(node: ast.expr, where: str) -> list[str]:
    try:
        value = ast.literal_eval(node)
    except ValueError:
        value = None
    if not isinstance(value, (tuple, list)) or not all(isinstance(name, str) and name for name in value):
        raise DeclarationError(f"{where}: packages must be a literal tuple of Debian package names, "
                               f"not {ast.unparse(node)}")
    return list(value)


def in_source(text: str, filename: str = "<source>") -> dict[str, list[str]]:
    """``{class name: its packages}`` for every class of ``text`` that assigns ``packages`` in its body,
    or else a literal ``tool`` (its package is the tool's name, as ``Benchmark`` derives it)."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(text, filename)):
        if not isinstance(node, ast.ClassDef):
            continue
        tool = [statement.value.value for statement in node.body if isinstance(statement, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "tool" for t in statement.targets)
                and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)]
        if tool:
            found[node.name] = tool
        for statement in node.body:
            if isinstance(statement, ast.Assign):
                targets, value = statement.targets, statement.value
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                targets, value = [statement.target], statement.value
            else:
                continue
            if any(isinstance(t, ast.Name) and t.id == "packages" for t in targets):
                found[node.name] = _literal(value, f"{filename}:{statement.lineno} ({node.name})")
    return found


def declared(directory: Path | str = BENCHMARKS_DIR) -> list[str]:
    """Every package a benchmark class of ``directory``'s modules declares, sorted, each once."""
    names: set[str] = set()
    modules = sorted(Path(directory).glob("*.py"))
    if not modules:
        raise DeclarationError(f"{directory}: no benchmark module to read the packages from")
    for path in modules:
        for packages in in_source(path.read_text(), str(path.name)).values():
            names.update(packages)
    return sorted(names)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        names = declared(args[0] if args else BENCHMARKS_DIR)
    except (DeclarationError, SyntaxError, OSError) as error:
        print(f"benchmark_packages: {error}", file=sys.stderr)
        return 1
    print("\n".join(names))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
