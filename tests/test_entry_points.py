"""Every `python -m virtrepro.<module>` entry point hands its main to cli.run without shadowing a
name of its own module (image.py's own `run` was replaced by cli.run at start, and every image
build failed on a fresh machine)."""

from __future__ import annotations

import ast

from conftest import REPO


def test_the_cli_runner_does_not_shadow_a_module_level_name():
    clashes = []
    for path in sorted((REPO / "workflow" / "virtrepro").rglob("*.py")):
        tree = ast.parse(path.read_text())
        top_level = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
        top_level |= {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                      if isinstance(t, ast.Name)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("cli"):
                for alias in node.names:
                    bound = alias.asname or alias.name
                    if bound in top_level and not isinstance(node, ast.Module):
                        clashes.append(f"{path.relative_to(REPO)}: 'from {node.module} import {alias.name}' binds {bound!r}")
    assert clashes == []

