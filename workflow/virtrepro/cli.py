"""The one error path of every command line (``python -m virtrepro.<module>``).

:func:`run` calls a module's ``main(argv)`` and turns the package's named errors
(:class:`~virtrepro.errors.VirtreproError`), a file the system refuses (``OSError``) and a
program that failed (``subprocess.CalledProcessError``) into one line on standard error
and a non-zero exit status. ``--debug`` (or ``VIRTREPRO_DEBUG=1``) shows the traceback
instead. Wrong options are argparse's to report (usage and one line, exit status 2).
Standard library only, like :mod:`virtrepro.errors`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import Callable, NoReturn

from .errors import DEBUG_ENV, VirtreproError, debug_enabled

DEBUG_FLAG = "--debug"


def one_line(error: BaseException) -> str:
    """What the user reads: the error's own message, with the file or command it concerns."""
    if isinstance(error, subprocess.CalledProcessError):
        command = error.cmd if isinstance(error.cmd, str) else " ".join(map(str, error.cmd))
        said = error.stderr or error.output or ""
        said = said.decode(errors="replace") if isinstance(said, bytes) else said
        last = [line.strip() for line in said.splitlines() if line.strip()][-1:]
        return f"{command}: exit status {error.returncode}" + (f": {last[0]}" if last else "")
    if isinstance(error, OSError) and not isinstance(error, VirtreproError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    return str(error) or type(error).__name__


def count(minimum: int = 1) -> Callable[[str], int]:
    """An argparse ``type`` for a count option: a whole number of at least ``minimum`` (1 for a
    number of rounds, 0 where 0 means something, a repetition's number). Anything else is argparse's
    usage and one line naming the option (``argument --rounds: at least 1, not 0``), exit status 2."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"a whole number, not {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"at least {minimum}, not {value}")
        return value

    parse.__name__ = f"count of at least {minimum}"  # what argparse names in other complaints
    return parse


def strip_debug(argv: list[str]) -> list[str]:
    """``argv`` without ``--debug`` (which sets VIRTREPRO_DEBUG=1), up to a ``--`` separator."""
    end = argv.index("--") if "--" in argv else len(argv)
    if DEBUG_FLAG in argv[:end]:
        os.environ[DEBUG_ENV] = "1"
        argv = [arg for arg in argv[:end] if arg != DEBUG_FLAG] + argv[end:]
    return argv


def run(main: Callable[[list[str]], int | None], argv: list[str] | None = None, debug_flag: bool = True) -> NoReturn:
    """Exit with ``main(argv)``'s status; a named error is one line ``error: ...`` and status 1.
    ``debug_flag=False``: ``--debug`` is left to ``main`` (Snakemake has its own)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if debug_flag:
        argv = strip_debug(argv)
    try:
        status = main(argv)
    except (VirtreproError, OSError, subprocess.CalledProcessError) as error:
        if debug_enabled():
            raise
        print(f"error: {one_line(error)}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        if debug_enabled():
            raise
        print("interrupted", file=sys.stderr)
        status = 130
    sys.exit(status or 0)


def stop(error: BaseException) -> NoReturn:
    """Inside an ``except`` block where no :func:`run` is around (the Snakefile while Snakemake
    reads it): end the process with the error as one line, or re-raise it with debug on."""
    if debug_enabled():
        raise error
    raise SystemExit(f"error: {one_line(error)}") from None
