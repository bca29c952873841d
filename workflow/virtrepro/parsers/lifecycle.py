"""The lifecycle log virtrepro itself writes (thesis Tables 5.1-5.3: provision, boot, reboot, clone, destroy).

Format, one ``key=value`` per line after a header, ending with ``lifecycle complete``::

    virtrepro lifecycle platform=lxc guest=lxc-0de3126d-19
    provision_s=0.512
    boot_s=0.981
    reboot_s=2.310          (or: reboot=not-applicable (reason))
    clone_s=1.204
    destroy_s=0.402
    lifecycle complete
"""

from __future__ import annotations

import re

from .errors import ParseError, TruncatedLogError, finite_records

STEPS = ("provision", "boot", "reboot", "clone", "destroy")


@finite_records
def parse_lifecycle(text: str, source: str = "<lifecycle log>") -> list[dict]:
    header = re.search(r"^virtrepro lifecycle platform=(\S+) guest=(\S+)$", text, re.M)
    if header is None:
        raise ParseError(source, "not a virtrepro lifecycle log (no header line)")
    if not re.search(r"^lifecycle complete$", text, re.M):
        raise TruncatedLogError(source, "lifecycle log ends before 'lifecycle complete'")
    records = []
    for step in STEPS:
        timed = re.search(rf"^{step}_s=([0-9]+(?:\.[0-9]+)?)$", text, re.M)
        if timed:
            records.append({"metric": step, "unit": "s", "value": float(timed.group(1)), "guest": header.group(2)})
        elif not re.search(rf"^{step}=not-applicable\b", text, re.M):
            raise ParseError(source, f"lifecycle log has no '{step}_s=' line")
    return records
