"""Errors raised when a raw log cannot become numbers."""

import re


class ParseError(ValueError):
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
