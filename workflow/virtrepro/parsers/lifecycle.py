"""The lifecycle log virtrepro itself writes (thesis Tables 5.1-5.3: provision, boot, reboot, clone, destroy).

Format, one ``key=value`` per line after a header, ending with ``lifecycle complete``::

    virtrepro lifecycle platform=lxc guest=lxc-0de3126d-19
    provision_s=0.512
    ready_probe=ssh-banner poll_interval_s=0.01
    boot_s=0.981
    boot_resolution_s=0.0102
    reboot_s=2.310          (or: reboot=not-applicable (reason))
    reboot_resolution_s=0.0104
    clone_s=1.204
    destroy_s=0.402
    destroy_resolution_s=0.0100
    lifecycle complete

Boot and reboot end when the guest's sshd answers; ``<step>_resolution_s`` (logs since the
harness polls the SSH banner) is how far apart the last probe that found nothing and the one
that found it were, kept with the record as ``resolution_s``. Older logs, whose readiness
was a login tried every 0.5 s, have none. Destroy ends at the first look that finds the guest's
supervisor gone (``destroy_resolution_s``, its poll interval); logs without that line were
written while the harness looked every 0.1 s (:data:`LEGACY_DESTROY_POLL_S`), which their
destroy records carry as ``resolution_s``.
"""

from __future__ import annotations

import re

from .errors import ParseError, TruncatedLogError, finite_records

STEPS = ("provision", "boot", "reboot", "clone", "destroy")
LEGACY_DESTROY_POLL_S = 0.1


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
            record = {"metric": step, "unit": "s", "value": float(timed.group(1)), "guest": header.group(2)}
            resolution = re.search(rf"^{step}_resolution_s=([0-9]+(?:\.[0-9]+)?)$", text, re.M)
            if resolution:
                record["resolution_s"] = float(resolution.group(1))
            elif step == "destroy":
                record["resolution_s"] = LEGACY_DESTROY_POLL_S
            records.append(record)
        elif not re.search(rf"^{step}=not-applicable\b", text, re.M):
            raise ParseError(source, f"lifecycle log has no '{step}_s=' line")
    return records
