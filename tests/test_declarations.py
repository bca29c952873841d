"""Each platform is declared once (virtrepro.platforms.catalog, implemented in virtrepro.platforms):
every list of platforms elsewhere is derived from the declarations or checked against them here, and
no platform name is written in code outside the declarations."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import re
import textwrap
from pathlib import Path

import pytest
import yaml

from virtrepro.declarations import platform_names
from virtrepro.report import plotting
from virtrepro.platforms import catalog as platform_catalog
from virtrepro.guests import network
from virtrepro.platforms.base import PlatformError, get_platform

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "workflow"
# the platforms' names, written independently of the catalogue: a platform added to the catalogue
# must be added here too, which is the point (this list is what the search below looks for)
KNOWN = ("native", "lxc", "podman", "qemu", "qemu-kvm", "qemu-tcg", "charliecloud")
NAME = re.compile(r"""["'](%s)["']""" % "|".join(sorted(map(re.escape, KNOWN), key=len, reverse=True)))


def test_the_catalogue_names_the_known_platforms_and_aliases():
    assert set(platform_catalog.config_names()) == set(KNOWN)


def test_each_declared_platform_has_one_class_and_the_class_its_declaration():
    for name in platform_catalog.NAMES:
        cls = get_platform(name)
        assert cls.name == name
        assert cls.declaration is platform_catalog.get(name)
        assert cls.family == platform_catalog.get(name).family in platform_catalog.FAMILY_LABELS
    with pytest.raises(PlatformError, match="unknown platform 'xen'"):
        get_platform("xen")


def test_a_declaration_naming_a_class_of_another_platform_is_refused(monkeypatch):
    wrong = dataclasses.replace(platform_catalog.get("podman"), implementation="lxc:Lxc")
    monkeypatch.setitem(platform_catalog.BY_NAME, "podman", wrong)
    with pytest.raises(PlatformError, match="'lxc:Lxc' is not a Platform class named 'podman'"):
        get_platform("podman")


def test_reading_the_catalogue_loads_no_platform_code():
    code = ("import sys; import virtrepro.platforms.catalog; "
            "print(sorted(m for m in sys.modules if m.startswith('virtrepro.')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONPATH": str(WORKFLOW)}).stdout
    # plain data: neither the platform interface (platforms.base) nor the testbed's hosts
    assert eval(loaded) == ["virtrepro.platforms", "virtrepro.platforms.catalog"]


def test_the_schema_enum_is_the_declared_platforms():
    from virtrepro.planning.config import schema

    assert schema()["properties"]["platforms"]["items"]["enum"] == list(platform_catalog.config_names())
    written = (WORKFLOW / "schemas" / "config.schema.yaml").read_text()  # no second list there to drift
    assert not [name for name in platform_catalog.config_names() if re.search(rf"\b{name}\b", written)]


def test_figures_addresses_and_stand_ins_cover_every_platform():
    for spec in platform_catalog.PLATFORMS:
        assert re.fullmatch(r"#[0-9a-f]{6}", plotting.PLATFORM_COLORS[spec.name])
        assert platform_names.label(spec.name) == spec.label
        assert network.address(spec.name, 0, "tb").startswith("10.251.")
        for paper, relation in spec.stands_for.items():
            assert platform_names.stand_in(paper, spec.name) == relation
    # two platforms that may run side by side never share an address block
    blocks = {}
    for spec in platform_catalog.PLATFORMS:
        blocks.setdefault(spec.first_host, set()).add(spec.name)
    assert [names for names in blocks.values() if len(names) > 1] == [{"qemu-kvm", "qemu-tcg"}]  # one QEMU per testbed
    assert len(set(plotting.PLATFORM_COLORS.values())) == len(platform_catalog.PLATFORMS)


def test_an_alias_resolves_to_declared_platforms():
    for alias in platform_catalog.ALIASES.values():
        assert alias.name not in platform_catalog.NAMES
        assert all(c in platform_catalog.NAMES for c in alias.candidates) and alias.unprobed in alias.candidates
        assert alias.paper_platform in platform_names.STAND_INS
        assert {platform_catalog.alias_of(c) for c in alias.candidates} == {alias.name}


def test_capabilities_are_named_and_unknown_platforms_refused():
    import pytest

    assert platform_catalog.has("qemu", "disk_formats") and not platform_catalog.has("lxc", "disk_formats")
    assert platform_catalog.lacks("native", "lifecycle") and not platform_catalog.lacks(None, "lifecycle")
    with pytest.raises(AttributeError):
        platform_catalog.has("lxc", "no_such_capability")
    with pytest.raises(platform_catalog.UnknownPlatform, match="known: native"):
        platform_catalog.get("xen")


def _code_lines():
    """(place, line) of every line of code in workflow/ outside platforms/ and the catalogue."""
    for path in sorted([*WORKFLOW.rglob("*.py"), *WORKFLOW.rglob("*.smk"), ROOT / "Snakefile"]):
        relative = path.relative_to(ROOT).as_posix()
        if "/platforms/" in relative or path.name == "catalog.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            yield f"{relative}:{number}", line


def _without_comment(line: str) -> str:
    return line.split("#", 1)[0] if "#" in line else line


def test_no_platform_name_in_the_workflow_code_outside_the_declarations():
    found = [f"{place}: {line.strip()}" for place, line in _code_lines() if NAME.search(_without_comment(line))]
    assert found == []


def test_the_search_finds_a_platform_name():
    """The search above can fail: it finds the names as the code wrote them before the catalogue."""
    assert NAME.search('if platform == "native":') and NAME.search("VM = ('qemu-kvm', 'qemu-tcg')")
    assert not NAME.search('f"qemu-{accel}"') and not NAME.search('"native_value"')
    assert _without_comment('x = 1  # "lxc" here') == "x = 1  "


# Notebook code that still names platforms (the figures are code in virtrepro.figures now): a line
# that goes must leave this list (the test fails on a stale entry too), and no new one may come.
# `baseline = "native"` is each notebook's papermill parameter, a user's choice.
NOTEBOOK_LINES_LEFT = {
    ("kumar2013", 'skipped = BENCHMARKS[name].skipped(configured[scale][name], "qemu-tcg")'),
}


def _notebook_lines():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code" or "parameters" in cell.get("metadata", {}).get("tags", []):
                continue
            for line in "".join(cell["source"]).splitlines():
                code = _without_comment(line).strip()
                if NAME.search(code):
                    yield path.stem, code


def test_notebooks_name_no_new_platform_and_the_list_of_those_left_is_current():
    assert set(_notebook_lines()) == NOTEBOOK_LINES_LEFT


def test_summary_families_come_from_the_declarations():
    """The summary's FAMILY map is derived (a platform missing from it silently dropped out)."""
    from virtrepro.figures import summary

    guests = {s.name for s in platform_catalog.PLATFORMS if s.family != platform_catalog.NATIVE}
    assert set(summary.FAMILY) == guests
    assert set(summary.FAMILY.values()) <= set(platform_catalog.FAMILY_LABELS.values())


# --- benchmarks' metrics (virtrepro.declarations.metric_catalog) ---------------------------------------------

from virtrepro.analysis import claims
from virtrepro.declarations import metric_catalog  # noqa: E402
from virtrepro.benchmarks import BENCHMARKS  # noqa: E402


def _table_metrics():
    import pandas as pd

    seen = set()
    for path in sorted((ROOT / "data" / "tables").glob("*.csv")):
        if not path.name.endswith(".claims.csv"):
            frame = pd.read_csv(path, usecols=["benchmark", "metric", "unit"], low_memory=False)
            seen |= set(zip(frame["benchmark"], frame["metric"], frame["unit"]))
    return seen


def test_every_benchmark_declares_its_metrics_and_only_benchmarks_do():
    assert set(metric_catalog.METRICS) == set(BENCHMARKS)
    for name, benchmark in BENCHMARKS.items():
        assert benchmark.metrics and all(m.benchmark == name for m in benchmark.metrics.values())
    assert not set(metric_catalog.PUBLISHED) - set(BENCHMARKS) & set(metric_catalog.METRICS)


def test_the_committed_tables_hold_only_declared_metrics_in_their_units():
    seen = _table_metrics()
    assert len(seen) > 150
    wrong = [(b, m, u) for b, m, u in seen if u not in metric_catalog.metric(b, m).units()]
    assert wrong == []


def test_the_parsers_report_only_declared_metrics_on_the_captured_logs():
    """Every good capture under tests/data that a benchmark's parser reads gives declared metrics."""
    files = [p for p in (ROOT / "tests" / "data").rglob("*") if p.is_file() and not p.name.startswith("bad")]
    parsed = 0
    for name, benchmark in BENCHMARKS.items():
        for path in files:
            text = path.read_text(errors="replace")
            try:
                records = benchmark.parse(text, str(path))
            except Exception:  # noqa: BLE001  (not this benchmark's log)
                continue
            for record in records:
                declared = metric_catalog.metric(name, record["metric"])
                assert record["unit"] in declared.units(), (name, record["metric"], record["unit"], path.name)
                parsed += 1
    assert parsed > 1000


def test_the_papers_numbers_and_the_claims_name_declared_metrics():
    import pandas as pd

    for path in sorted((ROOT / "data" / "reference").glob("*.csv")):
        frame = pd.read_csv(path)
        metric_catalog.require_declared(zip(frame["benchmark"], frame["metric"]))
    listed = yaml.safe_load((ROOT / "data" / "reference" / "claims.yaml").read_text())
    for claim in listed["claims"] if isinstance(listed, dict) else listed:
        check = claim.get("check") or {}
        if "metric" in check:
            assert isinstance(claims.higher_is_better(check["metric"], None, check["benchmark"]), bool), claim["id"]


def test_direction_comes_from_the_declaration_and_an_unknown_metric_is_an_error():
    import pytest

    assert metric_catalog.metric("mbw", "copy_bandwidth").higher_is_better is True
    assert claims.higher_is_better("time", "s", "npb_mpi") is False
    assert claims.higher_is_better("bw", "KiB/s") is True
    for unknown in (("mbw", "bandwidth"), ("fio", "bandwidth")):
        with pytest.raises(metric_catalog.UnknownMetric):
            metric_catalog.metric(*unknown)
    with pytest.raises(metric_catalog.UnknownMetric):
        metric_catalog.require_declared([("fio", "bw"), ("fio", "bandwidth")])
    with pytest.raises(ValueError):
        claims.higher_is_better("no_such_metric")


def test_the_summary_overview_selects_metrics_the_table_has():
    """The overview's metrics come from the declarations: ("mbw", "bandwidth") and ("fio", "bandwidth"),
    which the notebook once looked up, match no metric, and memory bandwidth and fio dropped out."""
    from virtrepro.figures.summary import SUBSYSTEM as overview

    assert all(metric in metric_catalog.METRICS.get(bench, {}) for bench, metric in overview)
    measured = {(b, m) for b, m, _ in _table_metrics()}
    assert {("mbw", "copy_bandwidth_avg"), ("fio", "bw")} <= set(overview) & measured
    assert {("mbw", "bandwidth"), ("fio", "bandwidth")} & set(overview) == set()
    assert set(overview.values()) == {"CPU", "memory", "disk", "network", "MPI"}


# --- benchmarks, schema, rules and figures agree with the declarations ---------------------------

from virtrepro.benchmarks import base as benchmark_base  # noqa: E402


def _schema():
    from virtrepro.planning.config import schema

    return schema()


def _named_benchmark_classes():
    """Every Benchmark class that gives itself a name (a benchmark the configuration can choose)."""
    found, todo = set(), [benchmark_base.Benchmark]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if "name" in cls.__dict__:
            found.add(cls)
    return found


def test_the_benchmark_registry_holds_every_benchmark_class():
    classes = _named_benchmark_classes()
    assert sorted(c.name for c in classes) == sorted(BENCHMARKS)
    assert {type(b) for b in BENCHMARKS.values()} == set(classes)


def test_the_schema_lists_the_registered_benchmarks():
    schema = _schema()
    assert schema["properties"]["benchmarks"]["items"]["enum"] == list(BENCHMARKS)
    assert set(schema["$defs"]["scale"]["properties"]) == set(BENCHMARKS)
    written = yaml.safe_load((WORKFLOW / "schemas" / "config.schema.yaml").read_text())
    assert "enum" not in written["properties"]["benchmarks"]["items"] and written["$defs"]["scale"]["properties"] == {}


def test_each_benchmark_declares_its_parameters_and_the_schema_holds_them():
    """A benchmark's parameters are declared in its class and nowhere else: its entry in the schema
    is exactly its declaration and the repetitions, and every $ref in it resolves."""
    import jsonschema

    schema = _schema()
    for name, benchmark in BENCHMARKS.items():
        entry = schema["$defs"]["scale"]["properties"][name]
        declared = yaml.safe_load(textwrap.dedent(benchmark.parameters)) or {}
        assert entry["required"] == ["repetitions", *declared.get("required", [])], name
        assert set(entry["properties"]) == {"repetitions", *(declared.get("properties") or {})}, name
        assert entry["additionalProperties"] is False
        for ref in re.findall(r"'\$ref': '#/\$defs/(\w+)'", repr(entry)):
            assert ref in schema["$defs"], (name, ref)
    jsonschema.Draft202012Validator.check_schema(schema)


def test_a_parameter_the_declaration_does_not_type_is_refused():
    """Typed: a wrong type or an undeclared parameter stops the configuration, naming the key."""
    from virtrepro.planning.config import ConfigError, validate_config

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["scales"]["quick"]["mbw"]["array_mib"] = "128"
    with pytest.raises(ConfigError, match="'scales.quick.mbw.array_mib': '128' is not of type 'integer'"):
        validate_config(config)
    config["scales"]["quick"]["mbw"].update(array_mib=128, arrays=2)
    with pytest.raises(ConfigError, match="'arrays' was unexpected"):
        validate_config(config)


def test_the_paper_scale_sets_every_benchmark():
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    assert set(config["scales"]["paper"]) == set(BENCHMARKS)
    assert set(config["scales"]["paper"]) >= set(config["benchmarks"])


# the figures: tests/test_figures.py (the registry in virtrepro.figures, the notebooks and notebooks.smk agree)


def test_the_kvm_probe_selects_one_of_the_alias_candidates():
    from virtrepro.platforms.qemu import BY_ACCEL

    assert set(BY_ACCEL.values()) == set(platform_catalog.AUTO.candidates)
    assert all(get_platform(name).accel == accel for accel, name in BY_ACCEL.items())


# --- compiled benchmarks: one general source-build step (virtrepro.builds.registry) -------------------------


def test_every_source_build_a_benchmark_names_is_declared_with_its_interface():
    from virtrepro.builds import registry as builds

    named = {b.build for b in BENCHMARKS.values() if b.build}
    assert named == set(builds.BUILDS) == {"npb", "mitgcm"}
    for module in builds.BUILDS.values():
        for function in ("used", "settings", "wanted", "manifest_path", "built_file", "record", "why_no_runs", "main"):
            assert callable(getattr(module, function)), (module.__name__, function)
    assert {name for name, b in BENCHMARKS.items() if b.build} == {"npb_serial", "npb_omp", "npb_mpi", "mit_gcm"}


def test_the_workflow_names_no_compiled_benchmark():
    """The rules make every build's steps from the declarations: no rule file, nor the Snakefile, names NPB
    or MITgcm."""
    files = [ROOT / "Snakefile", *sorted((WORKFLOW / "rules").glob("*.smk"))]
    code = [line for f in files for line in f.read_text().splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in code if re.search(r"\bnpb|NPB|mitgcm|MITgcm|mit_gcm", line)]


def test_a_built_upload_resolves_through_its_build_and_says_what_builds_it(tmp_path, monkeypatch):
    from virtrepro.measurement import job as measure
    from virtrepro.builds import npb

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    monkeypatch.setattr(npb, "default_state_dir", lambda: tmp_path)
    (local, _), = BENCHMARKS["npb_serial"].prepare(BENCHMARKS["npb_serial"].variants(config["scales"]["quick"]["npb_serial"])[0]).uploads
    assert local == "@BUILT@/serial/ep.S.x"
    with pytest.raises(FileNotFoundError, match=r"build_npb rule builds it \(python -m virtrepro.builds.npb build\)"):
        measure.built_path(local, "npb_serial", config)
    built = npb.built_file(config, "serial/ep.S.x")
    built.parent.mkdir(parents=True)
    built.write_text("binary")
    assert measure.built_path(local, "npb_serial", config) == str(built)
    assert measure.built_path("/a/file", "pyperformance", config) == "/a/file"
    with pytest.raises(ValueError, match="names no source build"):
        measure.built_path("@BUILT@/x", "sysbench_cpu", config)
