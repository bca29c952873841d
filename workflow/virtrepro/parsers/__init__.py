"""Parsers: pure functions from a tool's text output to a list of records.

A record is a dict with at least ``metric``, ``unit`` and ``value``; any other
keys are labels of that value (file size, thread count, ...). Every parser
raises a :class:`ParseError` subclass naming the source when the text is not a
complete, successful run.
"""

from .errors import ParseError, ToolReportedError, TruncatedLogError
from .iozone import parse_iozone
from .sysbench import parse_sysbench

__all__ = [
    "ParseError",
    "ToolReportedError",
    "TruncatedLogError",
    "parse_iozone",
    "parse_sysbench",
]
