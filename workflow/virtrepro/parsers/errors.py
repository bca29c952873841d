"""Errors raised when a raw log cannot become numbers."""

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
