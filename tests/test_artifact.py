"""What a reader needs to reuse and cite the artifact: licences, the citation record, and
docs/artifact.md, generated and current, naming every figure its notebook draws and every claim."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from virtrepro.figures import artifact

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "artifact.md"


def test_the_artifact_description_is_current():
    assert DOC.read_text() == artifact.render(), "regenerate: python -m virtrepro.figures.artifact"


def _notebook_draws(paper: str) -> set[str]:
    cells = json.loads((ROOT / "notebooks" / f"{paper}.ipynb").read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return set(re.findall(r'nb\.draw\("([a-z0-9-]+)"\)', code))


def test_every_figure_the_description_names_is_drawn_by_its_notebook():
    named = set(re.findall(r"`figures/([a-z0-9]+)/([a-z0-9-]+)\.png`", DOC.read_text()))
    assert len(named) >= 20
    for paper, name in named:
        assert name in _notebook_draws(paper), f"{paper}/{name}"
    # and every figure a notebook draws is named there
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        assert {(nb.stem, n) for n in _notebook_draws(nb.stem)} <= named, nb.stem


def test_every_claim_is_listed_with_its_verdict():
    listed = yaml.safe_load((ROOT / "data" / "reference" / "claims.yaml").read_text())
    text = DOC.read_text()
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([a-z0-9-]+)` \(.*$", text, re.M)}
    assert set(rows) == {c["id"] for c in listed}
    import pandas as pd

    verdicts = pd.read_csv(ROOT / "data" / "tables" / "reference-vm.claims.csv").set_index("claim_id")["verdict"]
    for claim in listed:
        last_cell = rows[claim["id"]].rstrip().rstrip("|").rsplit(" | ", 1)[1].strip()
        assert last_cell == verdicts[claim["id"]], claim["id"]


def test_licences_and_citation_record():
    assert "Apache License" in (ROOT / "LICENSE").read_text()[:200] and "Version 2.0" in (ROOT / "LICENSE").read_text()[:200]
    assert (ROOT / "data" / "LICENSE").read_text().startswith("Creative Commons Legal Code\n\nCC0 1.0 Universal")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "Apache-2.0" and cff["type"] == "software"
    # the five papers, by the key each notebook carries: first author's family name and year
    keys = {f"{r['authors'][0]['family-names'].lower()}{r['year']}" for r in cff["references"]}
    assert keys == {"walters2008", "youseff2006", "regola2010", "kudryavtsev2012", "kumar2013"}
    assert keys == {c["paper"] for c in yaml.safe_load((ROOT / "data" / "reference" / "claims.yaml").read_text())}
    readme = (ROOT / "README.md").read_text()
    assert "Apache License 2.0" in readme and "CC0 1.0" in readme and "CITATION.cff" in readme


def test_the_reference_rules_are_read_from_the_configuration(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"scales": {"reference": {
        "a": {"repetitions": {"min": 5, "max": 30, "rel_half_width": 0.02}},
        "b": {"repetitions": {"min": 4, "max": 30, "max_translated": 10, "rel_half_width": 0.03}},
        "c": {"repetitions": {"min": 5, "max": 30, "max_translated": 15, "rel_half_width": 0.05}},
        "d": {"repetitions": 5}}}}))
    assert artifact.reference_rules(config) == (
        "at least 4, until each 95 % interval is narrow enough, at most 30; where guest code is binary-translated "
        "(QEMU TCG, 10-50 times slower) at most 10 for `b` and 15 for `c`")
    # the committed configuration: NPB and HPCC at their minimum, 6, in the TCG guest, pyperformance and
    # RabbitMQ at 10; lifecycle and lmbench allow 15 there, the cap itself, so they are not named
    committed = artifact.reference_rules()
    assert committed.startswith("at least 6, until each 95 % interval is as narrow as the claims that use the variant need")
    assert ("at most 6 (the minimum) for `hpcc`, `mit_gcm`, `npb_mpi`, `npb_omp`, `npb_serial` and 10 for `pyperformance`, "
            "`rabbitmq`") in committed
    assert "lifecycle" not in committed and "at most 15;" in committed


def test_the_hardware_section_names_every_host_and_never_a_guests_own_facts(tmp_path):
    """A run measured in parts on two hosts names both; a VM's sidecar gives its testbed host's facts,
    a container's none (its own facts are its limits): through the run facts beside the table."""
    from virtrepro.results import facts

    intel = {"cpu_model": "Intel Xeon", "cores": 2, "mem_total_kb": 24 * 2**20, "machine": "x86_64",
             "virtualization": "lxc", "os": "Debian 12", "kernel": "6.18.44-a"}
    amd = {**intel, "cpu_model": "AMD EPYC", "kernel": "6.18.44-b"}
    guest = {**intel, "cpu_model": "QEMU Virtual CPU", "cores": 1, "kernel": "6.1.0-guest"}
    container = {**intel, "cores": 1, "virtualization": "podman"}  # a container's own: its limits
    sidecars = [{"benchmark": "npb", "platform": {"name": "native", "family": "native"}, "host": intel},
                {"benchmark": "npb", "platform": {"name": "podman", "family": "container"}, "host": container},
                {"benchmark": "fio", "platform": {"name": "qemu-tcg", "family": "full-vm"}, "host": guest,
                 "testbed_host": amd}]
    variants = {f"{s['platform']['name']}/{s['benchmark']}/v": facts.of_variant([facts.of_run(s)]) for s in sidecars}
    text = "\n".join(artifact.machine_section({"variants": variants, "probes": {}}, {}, tmp_path, "t"))
    assert "- host: AMD EPYC or Intel Xeon, 2 cores, 24 GiB, x86_64, virtualised (lxc);" in text
    assert "kernel 6.18.44-a or 6.18.44-b;" in text
    assert "QEMU Virtual CPU" not in text and "6.1.0-guest" not in text and "podman" not in text
