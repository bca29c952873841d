"""The conda spec and the pinned pip list agree with each other (the Debian packages: test_benchmark_packages, test_packages)."""

from __future__ import annotations

import re

import yaml

from conftest import REPO


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def conda_pins() -> dict[str, str]:
    spec = yaml.safe_load((REPO / "environment.yml").read_text())
    pins = {}
    for entry in spec["dependencies"]:
        if not isinstance(entry, str) or "==" not in entry:
            continue
        name, version = entry.split("==")
        pins[normalize(name)] = version
    return pins


def pip_pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "envs" / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"requirements.txt line {line!r} is not pinned with =="
            pins[normalize(name)] = version
    return pins


def test_conda_and_pip_pin_the_same_versions():
    conda, pip = conda_pins(), pip_pins()
    missing = sorted(set(conda) - set(pip))
    assert not missing, f"in environment.yml but not in envs/requirements.txt: {missing} (run scripts/lock.sh)"
    differ = {name: (conda[name], pip[name]) for name in conda if conda[name] != pip[name]}
    assert not differ, f"environment.yml vs envs/requirements.txt: {differ} (run scripts/lock.sh)"


def test_design_card_packages_are_pinned():
    conda = conda_pins()
    for package in ("jupyterlab", "papermill", "fabric", "pandas", "seaborn", "statsmodels", "nbval", "snakemake"):
        assert package in conda, package
    assert conda["snakemake"].startswith("9.")
