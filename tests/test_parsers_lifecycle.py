"""The harness's own lifecycle logs (captured from runs of this project on the local testbed)."""

from __future__ import annotations

import pytest

from conftest import DATA, bad_fixtures, fixture_text
from virtrepro.parsers import ParseError, TruncatedLogError, parse_lifecycle


def values(name):
    return {r["metric"]: r["value"] for r in parse_lifecycle(fixture_text("lifecycle", name), name)}


def test_container_lifecycle_has_every_step():
    steps = values("lxc.log")
    assert set(steps) == {"provision", "boot", "reboot", "clone", "destroy"}
    assert all(v > 0 for v in steps.values())


def test_podman_has_no_reboot_and_says_why():
    text = fixture_text("lifecycle", "podman.log")
    assert "reboot=not-applicable" in text
    steps = values("podman.log")
    assert set(steps) == {"provision", "boot", "clone", "destroy"}
    assert steps["provision"] == 0.150 and steps["boot"] == 0.925


@pytest.mark.parametrize("path", bad_fixtures("lifecycle"), ids=lambda p: p.name)
def test_bad_lifecycle_logs_are_rejected(path):
    with pytest.raises(TruncatedLogError) as error:
        parse_lifecycle(path.read_text(), str(path))
    assert str(path) in str(error.value)


def test_a_missing_step_is_an_error():
    text = fixture_text("lifecycle", "podman.log").replace("clone_s=0.208\n", "")
    with pytest.raises(ParseError, match="no 'clone_s='"):
        parse_lifecycle(text, "edited")


def test_other_text_is_not_a_lifecycle_log():
    with pytest.raises(ParseError, match="not a virtrepro lifecycle log"):
        parse_lifecycle((DATA / "sysbench" / "cpu-1thread-10s.log").read_text(), "sysbench")


def test_the_resolution_of_boot_and_reboot_is_kept_with_their_records():
    text = (fixture_text("lifecycle", "lxc.log")
            .replace("\nboot_s=", "\nready_probe=ssh-banner poll_interval_s=0.01\nboot_resolution_s=0.0103\nboot_s=")
            .replace("\nreboot_s=", "\nreboot_resolution_s=0.0098\nreboot_s="))
    records = {r["metric"]: r for r in parse_lifecycle(text, "edited")}
    assert records["boot"]["resolution_s"] == 0.0103 and records["reboot"]["resolution_s"] == 0.0098
    assert "resolution_s" not in records["clone"]
    # the older logs (readiness from a login every 0.5 s) have no resolution line
    older = {r["metric"]: r for r in parse_lifecycle(fixture_text("lifecycle", "lxc.log"), "lxc.log")}
    assert all("resolution_s" not in r for step, r in older.items() if step != "destroy")


def test_destroy_carries_the_poll_that_timed_it():
    """Destroy ends at the first look that finds the guest gone: its log line says how often the
    harness looked; logs without it were timed by a look every 0.1 s."""
    text = fixture_text("lifecycle", "lxc.log")
    assert "destroy_resolution_s" not in text
    older = {r["metric"]: r for r in parse_lifecycle(text, "lxc.log")}
    assert older["destroy"]["resolution_s"] == 0.1
    newer = text.replace("\nlifecycle complete", "\ndestroy_resolution_s=0.0100\nlifecycle complete")
    assert {r["metric"]: r for r in parse_lifecycle(newer, "edited")}["destroy"]["resolution_s"] == 0.01
