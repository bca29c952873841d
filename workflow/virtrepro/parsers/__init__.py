"""Parsers: pure functions from a tool's text output to a list of records.

A record is a dict with at least ``metric``, ``unit`` and ``value``; any other
keys are labels of that value (file size, thread count, ...). Every parser
raises a :class:`ParseError` subclass naming the source when the text is not a
complete, successful run.
"""

from .bonnie import parse_bonnie
from .dd import parse_dd
from .errors import ParseError, ToolReportedError, TruncatedLogError
from .fio import parse_fio
from .hpcc import parse_hpcc, parse_hpccinf
from .iozone import parse_iozone
from .ioping import parse_ioping
from .iperf3 import parse_iperf3
from .lifecycle import parse_lifecycle
from .mbw import parse_mbw
from .netperf import parse_netperf
from .npb import parse_npb
from .stress_ng import parse_stress_ng, parse_stress_ng_yaml
from .sysbench import parse_sysbench

__all__ = [
    "ParseError",
    "ToolReportedError",
    "TruncatedLogError",
    "parse_bonnie",
    "parse_dd",
    "parse_fio",
    "parse_hpcc",
    "parse_hpccinf",
    "parse_iozone",
    "parse_ioping",
    "parse_iperf3",
    "parse_lifecycle",
    "parse_mbw",
    "parse_netperf",
    "parse_npb",
    "parse_stress_ng",
    "parse_stress_ng_yaml",
    "parse_sysbench",
]
