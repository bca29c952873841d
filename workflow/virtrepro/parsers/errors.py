"""Errors raised when a raw log cannot become numbers, and the checks of the numbers it holds."""

from __future__ import annotations

import functools
import inspect
import math
import re
from typing import Callable

from ..errors import VirtreproError


class ParseError(VirtreproError, ValueError):
    """A log is not a complete, successful run of the tool it claims to be.

    The message always names the log (``source``) and the reason, so a failed or
    truncated run stops the workflow with something a person can act on.
    """

    def __init__(self, source: str, reason: str):
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}")


class ToolReportedError(ParseError):
    """The tool itself printed an error (FATAL, invalid option, cannot open ...)."""


class TruncatedLogError(ParseError):
    """The log ends before the tool printed its final summary (killed, timed out, cut)."""


def require_one_run(text: str, source: str, marker: str, tool: str) -> None:
    """A log holds exactly one run: ``marker`` (a regex a run prints once, in multi-line mode) may not
    occur twice (its absence is for each parser to judge), else the first run's numbers would be taken."""
    runs = len(re.findall(marker, text, re.M))
    if runs > 1:
        raise ParseError(source, f"{tool} log holds {runs} runs; a log must hold exactly one run")


_NOT_FINITE = re.compile(r"(?<![A-Za-z])[-+]?(?:nan|inf(?:inity)?)(?![A-Za-z])", re.I)


def number(text: str, source: str, what: str, *, negative: bool = False) -> float:
    """A value as the tool printed it: a finite number, not negative unless ``negative``.

    ``float()`` alone accepts ``nan``, ``inf`` and ``-3``; a log holding them is corrupt
    (or the tool failed), so they are refused here with ``what`` named.
    """
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ParseError(source, f"{what} is {text!r}, not a number") from None
    if not math.isfinite(value):
        raise ParseError(source, f"{what} is {text!r}, not a finite number")
    if math.copysign(1.0, value) < 0 and not negative:  # -0.00 too: the tool never prints a sign there
        raise ParseError(source, f"{what} is negative ({text!r})")
    return value


def count(text: str, source: str, what: str) -> int:
    """A whole number the tool printed (a count, a size): digits only."""
    if not re.fullmatch(r"\s*[0-9]+\s*", str(text)):
        raise ParseError(source, f"{what} is {text!r}, not a whole number")
    return int(text)


def unreadable(line: str, source: str, what: str, error: type[ParseError] = ParseError) -> ParseError:
    """The error for a result line the parser recognises but cannot read: says when a value is nan/inf."""
    bad = _NOT_FINITE.search(line)
    reason = f"holds {bad.group(0)!r}, not a finite number" if bad else "is not understood"
    return (ParseError if bad else error)(source, f"{what} {reason}: {line.strip()!r}")


def finite_records(parse: Callable[..., list[dict]]) -> Callable[..., list[dict]]:
    """Decorate a parser: no record leaves it whose ``value`` is not a finite number.

    The parsers check every value they read; this is the guarantee that holds even
    where a check was forgotten (a JSON value, a derived value such as 1e6 / rate).
    """
    signature = inspect.signature(parse)

    @functools.wraps(parse)
    def checked(*args, **kwargs):
        records = parse(*args, **kwargs)
        for record in records:
            value = record.get("value")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                source = str(bound.arguments.get("source", "<log>"))
                raise ParseError(source, f"{record.get('metric')} = {value!r} is not a finite number")
        return records

    return checked
