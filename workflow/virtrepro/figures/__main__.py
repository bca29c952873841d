"""Redraw registered figures from a testbed's committed data, without Jupyter:

    python -m virtrepro.figures walters2008/fig1-netperf-latency-bandwidth [more ...] [--testbed reference-vm]
    python -m virtrepro.figures walters2008            # every figure of a paper
    python -m virtrepro.figures --list                 # every registered figure

Each is drawn as its notebook draws it (``figures.reading.Notebook``: the paper's default
parameters) and written to ``<figures-dir>/<paper>/<id>.png|pdf`` for the reference testbed, to
``<figures-dir>/<testbed>/<paper>/`` for another (``--main-figures``: into ``<figures-dir>/<paper>/``
anyway; ``figures.registry.figures_home``); its numbers and its reading (what it shows, the verdicts
of the claims it tests) are printed. A testbed without raw logs stops before anything is drawn or
written, naming the testbeds that have data; a figure without runs of its benchmarks is not written
over a figure drawn from runs.
"""

from __future__ import annotations

import argparse

from . import FIGURES, by_paper
from .reading import DEFAULTS, Notebook


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtrepro.figures", description=__doc__.splitlines()[0])
    parser.add_argument("figures", nargs="*", help="PAPER/ID, or PAPER for all of its figures")
    parser.add_argument("--list", action="store_true", help="list the registered figures and stop")
    parser.add_argument("--testbed", default=DEFAULTS["testbed"])
    parser.add_argument("--data-dir", default="data")
    parser.add_argument("--reference-dir", default="data/reference")
    parser.add_argument("--figures-dir", default="figures",
                        help="the figures directory: the reference testbed's go to <figures-dir>/<paper>/, "
                             "another testbed's to <figures-dir>/<testbed>/<paper>/")
    parser.add_argument("--main-figures", action="store_true",
                        help="write into <figures-dir>/<paper>/ (the committed figures' place) whatever the testbed")
    args = parser.parse_args(argv)
    if args.list or not args.figures:
        for paper, name in FIGURES:
            print(f"{paper}/{name}")
        return 0
    wanted: list[tuple[str, str]] = []
    for item in args.figures:
        paper, _, name = item.partition("/")
        if paper not in by_paper():
            parser.error(f"no paper {paper!r} (known: {', '.join(by_paper())})")
        if name and name not in by_paper()[paper]:
            parser.error(f"no figure {name!r} of {paper} (registered: {', '.join(by_paper()[paper])})")
        wanted += [(paper, n) for n in ([name] if name else by_paper()[paper])]
    notebooks: dict[str, Notebook] = {}
    for paper, name in wanted:
        if paper not in notebooks:
            notebooks[paper] = Notebook(paper, testbed=args.testbed, data_dir=args.data_dir,
                                        reference_dir=args.reference_dir, figures_dir=args.figures_dir,
                                        main_figures=args.main_figures)
        nb = notebooks[paper]
        drawn = nb.draw(name)
        print(f"== {paper}/{name}: {', '.join(str(p) for p in drawn.paths) or repr(drawn)}")
        if drawn.numbers:
            print(drawn.text())
        print(nb.reading(drawn))
        print()
    return 0


if __name__ == "__main__":
    from ..cli import run as run_cli

    run_cli(main)
