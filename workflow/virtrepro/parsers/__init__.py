"""Parsers: pure functions from a tool's text output to a list of records.

A record is a dict with at least ``metric``, ``unit`` and ``value``; any other
keys are labels of that value (file size, thread count, ...). Every parser
raises a :class:`ParseError` subclass naming the source when the text is not a
complete, successful run.
"""

from .errors import ParseError, ToolReportedError, TruncatedLogError
from .hpcc import parse_hpcc, parse_hpccinf
from .iozone import parse_iozone
from .iperf3 import parse_iperf3
from .netperf import parse_netperf
from .npb import parse_npb
from .sysbench import parse_sysbench

__all__ = [
    "ParseError",
    "ToolReportedError",
    "TruncatedLogError",
    "parse_hpcc",
    "parse_hpccinf",
    "parse_iozone",
    "parse_iperf3",
    "parse_netperf",
    "parse_npb",
    "parse_sysbench",
]
