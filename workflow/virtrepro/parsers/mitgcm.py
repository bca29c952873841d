"""MITgcm ``verification/exp2`` runs under ``/usr/bin/time -p`` (the ``mit_gcm`` benchmark).

A log is the model's standard output and error, then what ``time -p`` reports (``real``, ``user``,
``sys``), then, between the lines ``virtrepro: files written`` and ``virtrepro: end of files written``,
one ``<bytes> <file>`` line per file the run wrote. A run counts only if:

- the model ended normally (``PROGRAM MAIN: Execution ended Normally``) and printed no error;
- it made every time step it was asked for: the last monitor block's ``time_tsnumber`` is the run's
  ``nIter0 + nTimeSteps`` (and ``nTimeSteps`` the number the benchmark asked for, when given);
- every monitor statistic (``%MON`` lines) is a finite number: a diverged run prints NaN or
  Infinity there, or a number too large for its field (``****``);
- ``time`` reported all three times, the model its timing summary, and the list of files is whole.

The model's exit status says little: it ends with status 0 also after ``STOP ABNORMAL END`` (a
missing input file, its own stop on extreme values), so the log decides.

Records: ``time`` (real), ``user_time``, ``sys_time`` (s, time's), ``sys_share`` (sys / (user + sys)),
the model's own timers of its whole run (``model_wall_time``, ``model_user_time``,
``model_sys_time``, s: "Seconds in section ALL [THE_MODEL_MAIN]"), ``output_bytes`` and
``output_files`` (what the run wrote). Label: ``time_steps``.
"""

from __future__ import annotations

import math
import re

from .errors import ParseError, ToolReportedError, TruncatedLogError, finite_records, number, require_one_run

FILES_MARKER = "virtrepro: files written"
FILES_END = "virtrepro: end of files written"
ENDED = "PROGRAM MAIN: Execution ended Normally"

# what the model, the kernel or time print when a run failed: one pattern, found without a scan of
# every line from its start (a log is 150 kB at 4 time steps)
_ERROR = re.compile(r"\*\*\* ERROR \*\*\*|\bSTOP ABNORMAL END\b|Program received signal |Segmentation fault"
                    r"|^Command (?:exited with non-zero status|terminated by signal) ", re.M)
# the words each of _ERROR's alternatives holds: a log with none of them (every complete run) is not
# searched with it (an alternation without a common first word is tried at every one of 1.5 MB of
# characters: 50 ms a log, where these take 1 ms)
_ERROR_WORDS = ("*** ERROR ***", "STOP ABNORMAL END", "Program received signal ", "Segmentation fault",
                "Command exited with non-zero status ", "Command terminated by signal ")
# [ \t] where a value may be missing: \s would take the next line's first word for it
# _MON and _TIME are searched in "\n" + text for "\n" where a line starts (re.M's ^ matches at the
# start and after each "\n"; a pattern that starts with "\n" is found fast, one that starts with ^ is tried everywhere)
_MON = re.compile(r"\n\(PID\.TID [0-9.]+\) %MON (\w+)[ \t]*=[ \t]*(\S+)[ \t]*$", re.M)
_PARAMETER = r"^\(PID\.TID [0-9.]+\) {name}[ \t]*=.*\n\(PID\.TID [0-9.]+\)[ \t]+(\S+)[ \t]*$"
_SECTION_ALL = re.compile(
    r'Seconds in section "ALL\s+\[THE_MODEL_MAIN\]":[ \t]*\n'
    r".*User time:[ \t]*(\S+)[ \t]*\n.*System time:[ \t]*(\S+)[ \t]*\n.*Wall clock time:[ \t]*(\S+)[ \t]*$", re.M)
_TIME = re.compile(r"\n(real|user|sys) (\d+(?:\.\d+)?)[ \t]*$", re.M)
_FILE = re.compile(r"^(\d+) (\S.*)$")


def _number(text: str, source: str, what: str) -> float:
    try:
        value = float(text.replace("D", "E").replace("d", "e"))
    except ValueError:
        raise ParseError(source, f"MITgcm {what} is {text!r}, not a number") from None
    if not math.isfinite(value):
        raise ParseError(source, f"MITgcm {what} is {text}: the run diverged")
    return value


def _parameter(text: str, source: str, name: str) -> int:
    match = re.search(_PARAMETER.format(name=re.escape(name)), text, re.M)
    if match is None:
        raise ParseError(source, f"not an MITgcm log with its parameter summary (no {name})")
    return int(_number(match.group(1), source, name))


def _monitor(text: str, source: str) -> int:
    """The last monitor block's time step, after checking every statistic is finite."""
    steps = []
    for name, value in _MON.findall("\n" + text):
        try:  # a number float() reads holds no D (Fortran's exponent): _number would read it alike
            number = float(value)
        except ValueError:
            number = _number(value, source, f"monitor statistic {name}")
        else:
            if not math.isfinite(number):
                _number(value, source, f"monitor statistic {name}")  # raises its error
        if name == "time_tsnumber":
            steps.append(int(number))
    if not steps:
        raise TruncatedLogError(source, "MITgcm log has no monitor statistics (%MON time_tsnumber)")
    if steps != sorted(steps):
        raise ParseError(source, "MITgcm log's monitor time steps go backwards: two runs in one log?")
    return steps[-1]


def _time_report(text: str, source: str) -> dict[str, float]:
    found = dict((name, float(value)) for name, value in _TIME.findall("\n" + text))
    missing = [name for name in ("real", "user", "sys") if name not in found]
    if missing:
        raise TruncatedLogError(source, f"the log has no {', '.join(missing)} time from `time -p`")
    return found


def _files(text: str, source: str) -> list[tuple[int, str]]:
    """The files the run wrote, as the command listed them after the model's run."""
    if FILES_MARKER not in text:
        raise TruncatedLogError(source, f"the log has no list of the files the run wrote ({FILES_MARKER!r})")
    listing, end, _ = text.split(FILES_MARKER, 1)[1].partition(FILES_END + "\n")
    if not end:
        raise TruncatedLogError(source, f"the list of files written ends before {FILES_END!r}")
    listed = []
    for line in listing.splitlines():
        match = _FILE.match(line.strip())
        if line.strip() and match is None:
            raise ParseError(source, f"the list of files written has a line {line.strip()!r}, not '<bytes> <file>'")
        if match:
            listed.append((int(match.group(1)), match.group(2)))
    return listed


@finite_records
def parse_mitgcm(text: str, source: str = "<MITgcm log>", time_steps: int | None = None) -> list[dict]:
    """Return the records of one complete MITgcm run that made its ``time_steps`` (when given) and
    stayed finite."""
    match = _ERROR.search(text) if any(word in text for word in _ERROR_WORDS) else None
    if match:
        start, end = text.rfind("\n", 0, match.start()) + 1, text.find("\n", match.end())
        line = text[start:end if end >= 0 else len(text)]
        raise ToolReportedError(source, f"MITgcm run reported an error: {line.strip()}")
    if "MITgcm" not in text and "%MON" not in text:
        raise ParseError(source, "not an MITgcm log")
    require_one_run(text, source, re.escape(ENDED), "MITgcm")
    asked = _parameter(text, source, "nTimeSteps")
    start = _parameter(text, source, "nIter0")
    if time_steps is not None and asked != time_steps:
        raise ParseError(source, f"MITgcm run was set up for {asked} time steps, not the {time_steps} asked for")
    last = _monitor(text, source)
    if last != start + asked:
        raise TruncatedLogError(source, f"MITgcm run stopped at time step {last} of {start + asked}")
    if ENDED not in text:
        raise TruncatedLogError(source, f"MITgcm log ends before {ENDED!r}")
    timers = _SECTION_ALL.search(text)
    if timers is None:
        raise TruncatedLogError(source, "MITgcm log has no timing summary (Seconds in section ALL [THE_MODEL_MAIN])")
    model_user, model_sys, model_wall = (number(v.replace("D", "E"), source, f"MITgcm's {what} time of its run")
                                         for v, what in zip(timers.groups(), ("user", "system", "wall clock")))
    times = _time_report(text, source)
    labels = {"time_steps": asked}
    rows = [("time", "s", times["real"]), ("user_time", "s", times["user"]), ("sys_time", "s", times["sys"]),
            ("model_wall_time", "s", model_wall), ("model_user_time", "s", model_user),
            ("model_sys_time", "s", model_sys)]
    cpu = times["user"] + times["sys"]
    if cpu > 0:
        rows.append(("sys_share", "1", times["sys"] / cpu))
    files = _files(text, source)
    rows += [("output_bytes", "bytes", float(sum(size for size, _ in files))), ("output_files", "files", float(len(files)))]
    return [{"metric": metric, "unit": unit, "value": value, **labels} for metric, unit, value in rows]
