"""The one error path of every command line (``python -m virtrepro.<module>``).

:func:`run` calls a module's ``main(argv)`` and turns the package's named errors
(:class:`~virtrepro.errors.VirtreproError`), a file the system refuses (``OSError``) and a
program that failed (``subprocess.CalledProcessError``) into one line on standard error
and a non-zero exit status. ``--debug`` (or ``VIRTREPRO_DEBUG=1``) shows the traceback
instead. Wrong options are argparse's to report (usage and one line, exit status 2).
Ctrl-C is the line ``interrupted`` and exit status 130.

Inside Snakemake, where no :func:`run` is around, the same errors end the process with the
same one line through :func:`stop`: every piece of the rules' Python code (the Snakefile's
includes, every function of ``workflow/rules/*.smk``, every ``run:`` block and hook) is
wrapped in :func:`one_line_errors` (``tests/test_error_path.py`` checks that none is missed),
and :func:`interrupts_exit_130` makes Ctrl-C one line and status 130 there too.
Standard library only, like :mod:`virtrepro.errors`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import threading
from typing import Callable, NoReturn

from .errors import DEBUG_ENV, VirtreproError, debug_enabled

DEBUG_FLAG = "--debug"
# what a user can cause and read as one line: the package's named errors, a file the system
# refuses, a program that failed
NAMED_ERRORS = (VirtreproError, OSError, subprocess.CalledProcessError)
INTERRUPTED_STATUS = 130  # 128 + SIGINT, as a shell reports a program that Ctrl-C ended


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
    if (signal.getsignal(signal.SIGINT) in (_interrupted, _interrupted_while_importing)
            and threading.current_thread() is threading.main_thread()):
        signal.signal(signal.SIGINT, signal.default_int_handler)  # the package's import-time handler (__init__)
    try:
        status = main(argv)
    except NAMED_ERRORS as error:
        if debug_enabled():
            raise
        print(f"error: {one_line(error)}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        if debug_enabled():
            raise
        print("interrupted", file=sys.stderr)
        status = INTERRUPTED_STATUS
    sys.exit(status or 0)


class JobStopped(Exception):
    """A rule's ``run:`` block stopped by a named error: the failed job's one line (see :func:`stop`)."""


def stop(error: BaseException | str) -> NoReturn:
    """Where no :func:`run` is around (inside Snakemake): end the process with the error as one
    line ``error: ...`` and status 1, or re-raise it with debug on. The line is printed before
    the SystemExit is raised: Snakemake's scheduler catches a SystemExit raised while it updates
    the plan (after a checkpoint) and would drop its message.

    Outside the main thread (a ``run:`` block: Snakemake runs a job's code in a worker thread) a
    SystemExit would leave Snakemake waiting for the job forever (its job callback handles only
    ``Exception``): the job fails with :class:`JobStopped` instead, whose message is the line
    (Snakemake reports it with the rule's file and line, then the failed job)."""
    if debug_enabled() and isinstance(error, BaseException):
        raise error
    line = f"error: {error if isinstance(error, str) else one_line(error)}"
    if threading.current_thread() is not threading.main_thread():
        raise JobStopped(line) from None
    print(line, file=sys.stderr, flush=True)
    raise SystemExit(1) from None


class _OneLineErrors(contextlib.ContextDecorator):
    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if isinstance(error, NAMED_ERRORS) and not debug_enabled():
            stop(error)
        return False


def one_line_errors(function: Callable | None = None):
    """The rules' one error path: a named error (:data:`NAMED_ERRORS`) raised inside ends
    Snakemake with one line through :func:`stop`. Three spellings, one behaviour:
    ``@one_line_errors`` on a function (an input, params or priority function, a helper),
    ``one_line_errors(lambda wildcards: ...)`` on a lambda, ``with one_line_errors():`` around a
    ``run:`` block, a hook's body or the Snakefile's includes (the files' top-level code)."""
    if function is None:
        return _OneLineErrors()
    return _OneLineErrors()(function)  # functools.wraps: Snakemake reads the function's parameters


def interrupts_exit_130() -> None:
    """Ctrl-C in this process (Snakemake while it reads the Snakefile and plans): the line
    ``interrupted`` and exit status 130, instead of a KeyboardInterrupt's traceback (Snakemake
    catches only ``Exception`` around its parsing and planning). Once jobs run, Snakemake's
    scheduler catches the SystemExit as it catches a KeyboardInterrupt (it cancels the jobs and
    releases its lock), and :func:`end_if_interrupted` in the ``onerror`` hook gives the status.
    Nothing changes with debug on (Python's KeyboardInterrupt and its traceback)."""
    if not debug_enabled():
        signal.signal(signal.SIGINT, _interrupted)


_INTERRUPTED: list[int] = []


def _interrupted(signum, frame) -> NoReturn:
    _INTERRUPTED.append(signum)
    os.write(2, b"interrupted\n")  # not print(): the signal may arrive inside a print to stderr
    raise SystemExit(INTERRUPTED_STATUS)


def exits_130_while_importing() -> None:
    """Ctrl-C while ``python -m virtrepro.<module>`` imports its dependencies: the line ``interrupted``
    and status 130 at once (``os._exit``), before any of its work began. Not an exception: one raised
    inside an extension module's initialisation (numpy's) comes out as that module's ImportError.
    The module's :func:`run` puts Python's own handler back. Nothing changes with debug on."""
    if not debug_enabled():
        signal.signal(signal.SIGINT, _interrupted_while_importing)


def _interrupted_while_importing(signum, frame) -> NoReturn:
    os.write(2, b"interrupted\n")
    os._exit(INTERRUPTED_STATUS)


def end_if_interrupted() -> None:
    """In Snakemake's ``onerror`` hook: a run that Ctrl-C ended exits with status 130 (Snakemake's
    own status would be 1)."""
    if _INTERRUPTED:
        raise SystemExit(INTERRUPTED_STATUS)
