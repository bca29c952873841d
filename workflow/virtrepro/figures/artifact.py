"""docs/artifact.md, in the shape of an SC artifact description and evaluation appendix, generated
from what the repository declares and holds, so that it stays true:

    python -m virtrepro.figures.artifact            # rewrite docs/artifact.md
    python -m virtrepro.figures.artifact --check    # exit 1 if docs/artifact.md is not current

It reads the figure registry (each paper's figures, the benchmarks they read, the claims they
test), ``data/reference/claims.yaml`` (every claim, its published value and its check) with its
verdicts on the committed reference data (``data/tables/<testbed>.claims.csv``), the reference
run's facts beside its table (machine, tools and versions, how long the benchmarks ran:
``results.run_facts``, ``results.measured_on``) and the measured time of
the default run (``bench/results/default_run_time.json``, written by
``bench/default_run_time.py --fresh-clone``).
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

import pandas as pd

from ..analysis import claims as claim_checks
from .. import datalayout, results, yamlfile
from ..rawdata import machines
from ..declarations import platform_names
from ..platforms.catalog import CONTAINER
from . import FIGURES, by_paper
from .common import CONFIG  # the workflow's configuration
from .reading import DEFAULTS

ROOT = Path(__file__).resolve().parents[3]
TARGET = ROOT / "docs" / "artifact.md"
TIMING = ROOT / "bench" / "results" / "default_run_time.json"
PAPERS = {
    "walters2008": "Walters et al. 2008, A Comparison of Virtualization Technologies for HPC (AINA 2008)",
    "youseff2006": "Youseff et al. 2006, Paravirtualization for HPC Systems (ISPA 2006 Workshops)",
    "regola2010": "Regola and Ducom 2010, Recommendations for Virtualization Technologies in HPC (CloudCom 2010)",
    "kudryavtsev2012": "Kudryavtsev et al. 2012, Virtualizing HPC applications using modern hypervisors (FederatedClouds 2012)",
    "kumar2013": "Kumar 2013, Virtualizing Intelligent River (M.S. thesis, Clemson University)",
}


def _cell(value) -> str:
    text = "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)
    return " ".join(text.split()).replace("|", "\\|")


def _variants_by(facts: dict, part: int) -> dict[str, list[dict]]:
    """The run facts' variants by platform (``part`` 0) or benchmark (1) of their ``platform/benchmark/variant``."""
    found: dict[str, list[dict]] = defaultdict(list)
    for key, variant in facts["variants"].items():
        found[key.split("/")[part]].append(variant)
    return found


def machine_section(facts: dict, machines_of: dict[str, list[str]], data_dir: Path, testbed: str) -> list[str]:
    """The testbed host, software and machines of the runs, from the run facts beside the table
    (:func:`virtrepro.results.run_facts`) and the machines its manifest records (``machines_of``)."""
    lines = ["## C. Hardware and software", ""]
    variants = list(facts["variants"].values())
    if not variants:
        return lines + [f"No runs of testbed `{testbed}` in `{datalayout.tables_dir(data_dir.name)}/`.", ""]
    # the testbed host's facts: native's own and a VM's testbed host (a container's own facts are its
    # limits: its CPUs and its own kind of virtualization); the CPU and kernel by benchmark below
    hosts = [host for v in variants if v["family"] != CONTAINER for host in v["hosts"]]

    def fact(key, shown=str):
        return " or ".join(sorted({shown(h[key]) for h in hosts if h.get(key) not in (None, "")})) or "not recorded"

    def gib(kb) -> str:
        return f"{round(int(kb) / 2**20)} GiB"

    lines += [f"The committed reference data (testbed `{testbed}`), as its runs recorded it:", "",
              f"- host: {fact('cpu_model')}, {fact('cores')} cores, {fact('mem_total_kb', gib)}, {fact('machine')}, "
              f"virtualised ({fact('virtualization')});",
              f"- operating system: {fact('os')}, kernel {fact('kernel')};",
              f"- virtrepro {variants[0]['virtrepro_version']}, commits "
              + ", ".join(f"`{c[:10]}`" for c in sorted({c for v in variants for c in v['virtrepro_commits']})) + ";"]
    # one machine per benchmark (virtrepro.rawdata.machines); the table refuses a mix
    named = [(benchmark, name) for benchmark, names in machines_of.items() for name in names]
    lines += [f"- {line};" for line in machines.in_words(named, mark=lambda b: f"`{b}`")]
    qemu = facts["probes"].get(datalayout.QEMU_PROBE)
    if qemu is not None:
        lines.append(f"- QEMU accelerator: {qemu.get('reason')}.")
    tools = {benchmark: {t for v in found for t in v["tool_versions"]} for benchmark, found in _variants_by(facts, 1).items()}
    lines += ["", "| benchmark | tool and version, as run |", "|---|---|"]
    lines += [f"| `{b}` | {_cell('; '.join(sorted(v)))} |" for b, v in sorted(tools.items())]
    lines += ["", "Python packages: `envs/requirements.txt` (pinned); Debian packages: `envs/debian-packages.txt` "
              "and each benchmark's declared `packages` (the release pack records the installed versions); "
              "the guest image's packages with their versions: its `image.json`.", ""]
    return lines


def reference_rules(config_path: Path = CONFIG) -> str:
    """The reference scale's repetition rules in words, read from the configuration: the smallest
    minimum, the usual cap, and the lower caps a platform that translates guest code gets."""
    scale = yamlfile.load(config_path)["scales"]["reference"]
    rules = {name: params["repetitions"] for name, params in scale.items() if isinstance(params.get("repetitions"), dict)}
    lowest = min(rule["min"] for rule in rules.values())
    caps = sorted({rule["max"] for rule in rules.values()})
    translated = defaultdict(list)
    for name, rule in sorted(rules.items()):
        if rule.get("max_translated", rule["max"]) != rule["max"]:
            translated[rule["max_translated"]].append(f"`{name}`")
    lower = " and ".join(f"{cap}{' (the minimum)' if cap <= lowest else ''} for {', '.join(names)}"
                         for cap, names in sorted(translated.items()))
    narrow = ("as narrow as the claims that use the variant need" if all(r.get("target") == "claims" for r in rules.values())
              else "narrow enough")
    return (f"at least {lowest}, until each 95 % interval is {narrow}, at most {' or '.join(map(str, caps))}"
            + (f"; where guest code is binary-translated (QEMU TCG, 10-50 times slower) at most {lower}" if lower else ""))


def time_section(facts: dict, testbed: str) -> list[str]:
    lines = ["## D. Set-up, run and time", "",
             "| step | command | time here |", "|---|---|---|"]
    timing = json.loads(TIMING.read_text()) if TIMING.exists() else None
    quick = (f"{timing['wall_min']:.0f} min from a fresh clone ({timing['date']}; measurement jobs "
             + ", ".join(f"{platform_names.label(p)} {m:.1f}" for p, m in timing["per_platform_min"].items())
             + " min)") if timing else "not measured yet (bench/default_run_time.py --fresh-clone)"
    per_platform = {platform: sum(v["duration_s"] for v in found) for platform, found in _variants_by(facts, 0).items()}
    ran = ", ".join(f"{platform_names.label(p)} {v / 3600:.1f} h" for p, v in sorted(per_platform.items(), key=lambda kv: str(kv[0])))
    parts = ROOT / "bench" / "results" / f"{testbed}_run_time.json"
    wall = (f"measured in {len(record['parts'])} parts, {record['wall_h']:.1f} h from each part's first repetition to its "
            "last (`bench/reference_run_time.py`); "
            if parts.exists() and (record := json.loads(parts.read_text())) else "")
    lines += [
        "| set up (Debian packages, Python environment) | `bash scripts/setup.sh` | a few minutes on a fresh machine |",
        f"| quick scale: set up, measure every platform, tables, notebooks | `bash scripts/reproduce.sh` | {quick} |",
        "| the tests | `bash scripts/test.sh` | see docs/testing.md |",
        f"| reference scale (the committed data) | `bash scripts/reference_run.sh` (`-n`: what is left, estimated) | "
        f"{wall}its benchmarks ran {ran} (sum of the runs' recorded durations; guest boots and set-up on top) |",
        "| paper scale | `snakemake --cores all --config scale=paper` | days on one host: "
        "`python -m virtrepro.measurement.estimate --estimate --config scale=paper` |",
        "| analysis of committed data: one figure | `python -m virtrepro.figures PAPER/ID` | seconds |",
        "| analysis: every notebook | `bash scripts/refresh_notebooks.sh` | about a minute |",
        "| release pack for an archive | `python -m virtrepro.report.release` | seconds |",
        "",
        "The `quick` scale is a smoke check: every platform, benchmark and figure works, with 2-3 repetitions "
        "of short runs; no verdict rests on it (the claims table says `inconclusive (too few repetitions)`). "
        f"The `reference` scale chooses repetitions by the data ({reference_rules()}; `config/config.yaml`) and "
        "measures disks and memory where the papers did: the verdicts below rest on it.",
        "",
    ]
    return lines


def figures_section(listed: list[dict]) -> list[str]:
    lines = ["## E. Figures and tables", "",
             "Each paper's figures as this repository draws them. Redraw one from the committed data with "
             "`python -m virtrepro.figures PAPER/ID` (or its notebook, `notebooks/PAPER.ipynb`); measure anew and "
             "redraw with `snakemake --cores all figures/local/PAPER/ID.png` (your own testbed `local`, whose figures go to "
             "`figures/local/`, at the quick scale; `--config scale=reference` or `scale=paper` for more).", ""]
    for paper, ids in by_paper().items():
        lines += [f"### {PAPERS.get(paper, paper)}", "", f"Notebook: `notebooks/{paper}.ipynb`.", "",
                  "| figure | ours | reads | claims it tests |", "|---|---|---|---|"]
        for name in ids:
            fig = FIGURES[(paper, name)]
            tested = fig.claim_ids(listed)
            lines.append(f"| {_cell(fig.title)} | `figures/{paper}/{name}.png` | {', '.join(f'`{b}`' for b in fig.benchmarks)} | "
                         f"{len(tested)}: {', '.join(f'`{t}`' for t in tested) if tested else '-'} |")
        lines.append("")
    return lines


def claims_section(listed: list[dict], verdicts: pd.DataFrame | None, testbed: str) -> list[str]:
    lines = ["## F. Claims: expected and obtained", "",
             f"Every quantitative claim of the five papers (`data/reference/claims.yaml`), its check and its verdict "
             f"on the committed reference data (`{datalayout.claims_table_path('data', testbed)}`, written by the workflow's "
             "claims_table rule). Ours: the relative difference of the platform to its baseline, positive = worse, "
             "with its confidence interval; the tolerance is the check's threshold (README in `data/reference/`).", ""]
    by_id = verdicts.set_index("claim_id") if verdicts is not None else None
    counts = defaultdict(int)
    for paper in PAPERS:
        mine = [c for c in listed if c["paper"] == paper]
        if not mine:
            continue
        lines += [f"### {PAPERS[paper]}", "", "| claim | published | check, tolerance | ours | verdict |", "|---|---|---|---|---|"]
        for claim in mine:
            check = claim.get("check") or {}
            how = (f"{check.get('kind')} on `{check.get('benchmark')}` {check.get('metric')}"
                   + (f", {100 * float(check['threshold']):g} %" if check.get("threshold") is not None else "")) \
                if claim.get("testable") else f"not testable: {claim.get('reason')}"
            row = by_id.loc[claim["id"]] if by_id is not None and claim["id"] in by_id.index else None
            if row is None:
                ours, verdict = "", "not evaluated"
            else:
                ours = (f"{row['platform_measured']}: "
                        f"{claim_checks.estimate_text(check.get('kind'), row['estimate'], row['ci_low'], row['ci_high'])}, "
                        f"n = {row['n_platform']}/{row['n_baseline']}") if row["estimate"] == row["estimate"] else ""
                verdict = row["verdict"]
            counts[verdict] += 1
            lines.append(f"| `{claim['id']}` ({_cell(claim.get('source'))}) | {_cell(claim.get('published'))} | {_cell(how)} | "
                         f"{_cell(ours)} | {_cell(verdict)} |")
        lines.append("")
    lines[4:4] = ["Verdicts: " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items(), key=lambda kv: -kv[1])) + f" (of {len(listed)}).", ""]
    return lines


def render(root: Path = ROOT, testbed: str = DEFAULTS["testbed"]) -> str:
    data_dir = root / "data"
    listed = claim_checks.load_claims(data_dir / "reference" / "claims.yaml")
    claims_csv = datalayout.claims_table_path(data_dir, testbed)
    verdicts = pd.read_csv(claims_csv) if claims_csv.exists() else None
    results.load(testbed, data_dir)  # the table is current: its run facts are of the raw logs there now
    facts, machines_of = results.run_facts(testbed, data_dir), results.measured_on(testbed, data_dir)
    lines = [
        "# Artifact description and evaluation",
        "",
        "<!-- generated by `python -m virtrepro.figures.artifact` from the figure registry, the claims, their "
        "verdicts and the reference run's tables: edit those, not this file (tests/test_artifact.py checks it is current) -->",
        "",
        "## A. What the artifact is",
        "",
        "virtrepro re-runs five studies of virtualization for HPC on today's stack (native Linux, LXC and podman "
        "containers, QEMU full VMs with KVM where it works and TCG where it does not), keeps every raw log with "
        "its provenance, and redraws each paper's comparison figures with the published numbers beside ours. "
        "A claim about KVM, Xen, OpenVZ, VMware Server or Palacios is decided only where that platform, or the "
        "stand-in declared for it (`workflow/virtrepro/platforms/catalog.py`) or allowed by the analogue table "
        "(`data/reference/analogues.yaml`), really ran, and under the conditions the paper's statement was made in; "
        "QEMU TCG is binary translation and stands for KVM only one way (a verdict that holds although TCG is slower).",
        "",
        "| paper | notebook | figures | claims |",
        "|---|---|---|---|",
    ]
    for paper, title in PAPERS.items():
        lines.append(f"| {title} | `notebooks/{paper}.ipynb` | {len(by_paper().get(paper, []))} | "
                     f"{sum(c['paper'] == paper for c in listed)} |")
    lines += [
        "",
        "## B. Availability, licence and citation",
        "",
        "- The code is under the Apache License 2.0 (`LICENSE`); the measured data, tables, executed notebooks "
        "and figures under CC0 1.0 (`data/LICENSE`). The papers' quotes and numbers in `data/reference/` are "
        "cited from the publications named in `CITATION.cff`.",
        "- Cite this repository and the five papers as `CITATION.cff` says.",
        "- `python -m virtrepro.report.release` packs the code at a commit, the raw logs, tables, executed notebooks, "
        "figures and the environment's versions into one tarball with a SHA-256 list, for deposit in an archive.",
        "",
    ]
    lines += machine_section(facts, machines_of, data_dir, testbed)
    lines += time_section(facts, testbed)
    lines += figures_section(listed)
    lines += claims_section(listed, verdicts, testbed)
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtrepro.figures.artifact", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/artifact.md is not current")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = TARGET.exists() and TARGET.read_text() == text
        print(f"{TARGET}: " + ("current" if current else "not current: python -m virtrepro.figures.artifact"))
        return 0 if current else 1
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    from ..cli import run as run_cli

    run_cli(main)
