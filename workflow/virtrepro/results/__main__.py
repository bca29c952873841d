"""``python -m virtrepro.results TESTBED``: build the tidy table of a testbed from its raw logs, as the
workflow's table rule does (:func:`virtrepro.results.build.write_table`)."""

from __future__ import annotations

from .. import datalayout
from .build import write_table


def main(argv: list[str] | None = None) -> int:
    """Build the tidy table of a testbed from its raw logs, as the workflow's table rule does."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m virtrepro.results", description=main.__doc__)
    parser.add_argument("testbed", help=f"the testbed whose raw logs "
                                        f"({datalayout.testbed_dir('<data-dir>', '<testbed>')}/) to parse")
    parser.add_argument("--data-dir", default="data")
    args = parser.parse_args(argv)
    frame = write_table(args.data_dir, args.testbed)
    print(f"{len(frame)} records from {frame['source_log'].nunique()} logs: "
          f"{datalayout.table_paths(args.data_dir, args.testbed)['parquet']}")
    return 0


if __name__ == "__main__":
    from ..cli import run as run_cli  # not "run": a module may have a function of that name

    run_cli(main)
