"""Repetitions chosen by the data (virtrepro.planning.adaptive): the stopping rule on synthetic series whose
t-intervals are computed here by hand, and how the plan names and splits an adaptive variant."""

from __future__ import annotations

import math

import pytest
import yaml

from conftest import REPO
from virtrepro.planning.adaptive import CAP_REACHED, CONTINUE, WIDTH_REACHED, RepetitionRule, decide, relative_half_width, series
from virtrepro.planning.config import ConfigError, plan_rounds, plan_variants, validate_config

# Student t quantiles t(0.975, df) from a printed table
T975 = {2: 4.302653, 4: 2.776445, 5: 2.570582}


def logs_of(values, metric="m"):
    return [[{"metric": metric, "value": v}] for v in values]


def test_relative_half_width_is_the_t_interval_of_the_mean_over_the_mean():
    # [10, 11, 12]: mean 11, s = 1, half-width t(0.975, 2) * 1 / sqrt(3)
    assert relative_half_width([10, 11, 12]) == pytest.approx(T975[2] / math.sqrt(3) / 11, rel=1e-6)
    # [100, 101, 99, 100, 100]: s^2 = 2 / 4
    assert relative_half_width([100, 101, 99, 100, 100]) == pytest.approx(T975[4] * math.sqrt(0.5 / 5) / 100, rel=1e-6)
    # a negative mean: relative to its magnitude
    assert relative_half_width([-10, -11, -12]) == pytest.approx(T975[2] / math.sqrt(3) / 11, rel=1e-6)
    assert relative_half_width([7.0, 7.0, 7.0]) == 0.0  # constant at the printed resolution
    assert math.isnan(relative_half_width([7.0]))
    assert relative_half_width([-1.0, 1.0]) == math.inf  # a mean of 0 has no relative width


RULE = RepetitionRule(min=5, max=30, rel_half_width=0.02)


def test_below_the_minimum_it_continues_even_when_the_width_is_reached():
    decision = decide(RULE, logs_of([100, 100.1, 99.9]))
    assert (decision.n, decision.reason, decision.stop) == (3, CONTINUE, False)
    assert decision.rel_half_width == pytest.approx(T975[2] * 0.1 / math.sqrt(3) / 100, rel=1e-6)


def test_at_the_minimum_a_narrow_interval_stops_with_width_reached():
    decision = decide(RULE, logs_of([100, 101, 99, 100, 100]))
    assert (decision.n, decision.reason, decision.stop) == (5, WIDTH_REACHED, True)
    assert decision.rel_half_width == pytest.approx(0.00877992, rel=1e-5)


def test_a_wide_interval_continues_until_the_cap():
    wide = [100, 120, 80, 110, 90, 105]  # mean 100.833, s = 14.2887: half-width 14.99 % at n = 6
    decision = decide(RULE, logs_of(wide))
    assert decision.reason == CONTINUE
    s = math.sqrt(sum((v - sum(wide) / 6) ** 2 for v in wide) / 5)
    assert decision.rel_half_width == pytest.approx(T975[5] * s / math.sqrt(6) / (sum(wide) / 6), rel=1e-6)
    capped = decide(RULE, logs_of((wide * 5)[:30]))
    assert (capped.n, capped.reason) == (30, CAP_REACHED)
    assert capped.rel_half_width > 0.02
    # the width reached at the cap says so rather than "cap reached"
    assert decide(RULE, logs_of([100.0] * 29 + [100.5])).reason == WIDTH_REACHED


def test_every_deciding_series_must_reach_the_width_and_the_rule_names_which_metrics_decide():
    tight, wide = [100, 101, 99, 100, 100], [100, 120, 80, 110, 90]
    logs = [[{"metric": "a", "value": x}, {"metric": "b", "value": y}] for x, y in zip(tight, wide)]
    decision = decide(RULE, logs)
    assert decision.reason == CONTINUE and set(decision.widths) == {"a", "b"}
    assert decision.widths["a"] == pytest.approx(0.00877992, rel=1e-5)
    only_a = RepetitionRule(5, 30, 0.02, metrics=("a",))
    assert decide(only_a, logs).reason == WIDTH_REACHED
    assert decide(RepetitionRule(5, 30, 0.02, metrics=("a", "c")), logs).reason == WIDTH_REACHED
    with pytest.raises(ValueError, match=r"none of the repetition rule's metrics \(c\) is in the 5 logs"):
        decide(RepetitionRule(5, 30, 0.02, metrics=("c",)), logs)


def test_several_records_of_one_metric_in_a_log_are_series_by_their_position():
    # an IOZone log holds one `write` record per file size: each size is a series of its own
    logs = [[{"metric": "write", "value": 10 + k}, {"metric": "write", "value": 1000.0}] for k in range(3)]
    found = series(logs)
    assert found == {"write#0": [10.0, 11.0, 12.0], "write#1": [1000.0] * 3}
    decision = decide(RepetitionRule(3, 30, 0.02), logs)
    assert decision.widths["write#1"] == 0.0
    assert decision.rel_half_width == pytest.approx(T975[2] / math.sqrt(3) / 11, rel=1e-6)


def test_the_rule_is_named_in_the_marker_and_the_rounds_may_go_on_to_its_cap():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["platforms"] = ["native"]
    config["benchmarks"] = ["sysbench_cpu"]
    config["scales"]["quick"]["sysbench_cpu"]["repetitions"] = {"min": 5, "max": 30, "rel_half_width": 0.02}
    validate_config(config)
    (job,) = [j for j in plan_rounds(config) if j.variant.key.startswith("threads-1_")]
    (plan,) = job.plans
    assert (list(plan.repetition_numbers()), plan.cap, list(plan.possible_numbers())) == ([0, 1, 2, 3, 4], 30, list(range(30)))
    assert job.marker_path("d").name == f"{plan.variant.key}.reps-5to30-w0.02-c0.95.json"
    # a top-level count overrides the rule
    (fixed,) = [j for j in plan_rounds({**config, "repetitions": 4}) if j.variant.key == plan.variant.key]
    assert [(v.rule, v.repetitions) for v in fixed.plans] == [(None, 4)] and fixed.reps_label == "4"


def test_a_translating_platform_gets_the_rules_lower_cap_and_the_others_keep_max():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["scale"] = "reference"
    config["benchmarks"] = ["npb_serial"]
    config["scales"]["reference"]["npb_serial"]["kernels"] = ["ep"]
    config["informative_only"] = []  # the reference scale leaves TCG out of NPB (test_informative_plan.py): not here
    validate_config(config)
    (job,) = plan_rounds(config, ["native", "lxc", "qemu-tcg"])
    last = {v.platform: v for v in job.plans}
    # the committed reference scale: 15 everywhere (the 8-hour budget's cap), its minimum 6 (the verdicts'
    # fewest) in the TCG guest (the only translating platform); the claims that select NPB serial time set
    # the target (m = 5 %)
    assert {name: (v.rule.min, v.rule.max) for name, v in last.items()} == {
        "native": (6, 15), "lxc": (6, 15), "qemu-tcg": (6, 6)}
    assert list(last["qemu-tcg"].possible_numbers()) == [0, 1, 2, 3, 4, 5]
    # one job, one marker: each rule once
    assert job.marker_path("d").name == ("kernel-ep_class-W.reps-6to15-w0.03-c0.95-sr-m0.05"
                                         "+6to6-w0.03-c0.95-sr-m0.05.json")
    # without max_translated every platform has max
    assert RepetitionRule.from_config({"min": 5, "max": 30, "rel_half_width": 0.02}, translated=True).max == 30


def test_a_lower_cap_for_translating_platforms_below_the_minimum_is_refused_naming_the_key():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["scales"]["quick"]["mbw"]["repetitions"] = {"min": 5, "max": 30, "max_translated": 3,
                                                        "rel_half_width": 0.02}
    with pytest.raises(ConfigError, match=r"scales\.quick\.mbw\.repetitions': repetitions: min 5 .* max 3"):
        validate_config(config)


def test_a_rule_whose_minimum_exceeds_its_cap_is_refused_naming_the_key():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["scales"]["quick"]["mbw"]["repetitions"] = {"min": 10, "max": 5, "rel_half_width": 0.02}
    with pytest.raises(ConfigError, match=r"scales\.quick\.mbw\.repetitions': repetitions: min 10 .* max 5"):
        validate_config(config)


def test_the_table_says_per_variant_which_rule_how_many_repetitions_why_it_stopped_and_the_width(tmp_path):
    import json

    from conftest import DATA
    from test_rawlog_and_results import SYSBENCH_2_DIR, SYSBENCH_DIR, place
    from virtrepro.rawdata import rawlog
    from virtrepro import results

    rule = {"min": 2, "max": 5, "rel_half_width": 0.02, "confidence": 0.95, "metrics": ["events_per_second"]}
    for rep in (0, 1):
        sidecar = rawlog.sidecar_path(place(tmp_path, SYSBENCH_DIR, rep, DATA / "sysbench" / "cpu-1thread-10s.log"))
        sidecar.write_text(json.dumps({**json.loads(sidecar.read_text()), "repetition_rule": rule}))
    place(tmp_path, SYSBENCH_2_DIR, 0, DATA / "sysbench" / "cpu-histogram-p99-interval.log")  # no rule: a fixed count
    frame = results.view(results.build_table(tmp_path, "tb"), "sysbench_cpu")  # the facts as columns
    columns = ["repetition_rule", "n_repetitions", "stop_reason"]
    adaptive_rows = frame[frame["variant"] == SYSBENCH_DIR.rsplit("/", 1)[1]]
    # both logs are the same capture: events per second constant, half-width 0
    assert adaptive_rows[columns].drop_duplicates().values.tolist() == [["2to5-w0.02-c0.95", 2, WIDTH_REACHED]]
    assert set(adaptive_rows["rel_half_width"]) == {0.0}
    fixed_rows = frame[frame["variant"] == SYSBENCH_2_DIR.rsplit("/", 1)[1]]
    assert fixed_rows[columns].drop_duplicates().values.tolist() == [["fixed", 1, "fixed count"]]
    assert fixed_rows["rel_half_width"].isna().all()


def test_a_claim_with_too_few_repetitions_for_any_interval_is_inconclusive_too_few_repetitions():
    import pandas as pd

    from conftest import table_row
    from virtrepro.analysis import claims

    def records(platform, values):
        return [table_row(testbed="t", platform=platform, benchmark="bench", repetition=i, metric="throughput",
                          unit="MB/s", value=float(v), source_log=f"{platform}/rep-{i}.log") for i, v in enumerate(values)]

    claim = {"id": "x", "paper": "x", "source": "s", "published": "p", "testable": True,
             "check": {"kind": "overhead_at_most", "benchmark": "bench", "metric": "throughput", "platform": "lxc",
                       "baseline": "native", "threshold": 0.1}}
    base, plat = [99.0, 100.0, 101.0, 100.5, 99.5], [94.0, 95.0, 96.0, 95.5, 94.5]  # 5 % overhead, far below 10 %
    enough = claims.evaluate_claim(claim, pd.DataFrame(records("native", base) + records("lxc", plat)))
    assert enough["verdict"] == "holds"
    # 5 + 4: the exact Mann-Whitney interval exists (achieved confidence 1 - 2 * 2 / 126 = 96.8 %)
    four = claims.evaluate_claim(claim, pd.DataFrame(records("native", base) + records("lxc", plat[:4])))
    assert four["verdict"] == "holds" and "achieved confidence 96.8%" in four["note"]
    # 3 + 3: even the range of the 9 differences has confidence 1 - 2 / 20 = 90 %: no 95 % interval
    few = claims.evaluate_claim(claim, pd.DataFrame(records("native", base[:3]) + records("lxc", plat[:3])))
    assert few["verdict"] == claims.TOO_FEW == "inconclusive (too few repetitions)"
    assert few["note"].startswith("too few repetitions for a 95% interval") and "90.0%" in few["note"]
    assert claims.base_verdict(few["verdict"]) == "inconclusive" and few["verdict"] in claims.VERDICTS


def test_the_estimate_counts_missing_repetitions_times_earlier_durations_and_says_where_it_has_none(tmp_path):
    import json

    from virtrepro.planning import plan

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config.update(platforms=["native", "lxc"], benchmarks=["sysbench_cpu"], testbed="tb")
    config["testbeds"]["tb"] = {"kind": "local"}
    config["scales"]["quick"]["sysbench_cpu"].update(threads=[1], repetitions={"min": 4, "max": 10, "rel_half_width": 0.02})
    validate_config(config)
    variant = next(v for v in plan_variants(config) if v.platform == "native")
    directory = variant.directory(tmp_path)
    directory.mkdir(parents=True)
    # two earlier complete runs of this very variant on native (12 s and 14 s), one failed run (not counted)
    for name, seconds, status in (("rep-0", 12.0, "complete"), ("rep-1", 14.0, "complete"), ("rep-2.failed-x", 99.0, "failed")):
        (directory / f"{name}.log").write_text("")
        (directory / f"{name}.json").write_text(json.dumps({"status": status, "duration_s": seconds}))
    result = plan.estimate(config, tmp_path, history=())
    native = result["rows"][("native", "sysbench_cpu")]
    # reps 0, 1 done; then 2, 3 (the minimum), then up to 10 in all: 2 to 8 more at 13 s each
    assert (native["jobs"], native["reps_low"], native["reps_high"]) == (1, 2, 8)
    assert (native["low_s"], native["high_s"]) == (2 * 13.0, 8 * 13.0) and native["basis"] == {"same variant"}
    lxc = result["rows"][("lxc", "sysbench_cpu")]
    assert (lxc["jobs"], lxc["reps_low"], lxc["reps_high"], lxc["basis"]) == (1, 4, 10, {"nothing to go by"})
    assert len(result["unknown"]) == 1 and result["unknown"][0].startswith("lxc/sysbench_cpu/")
    text = plan.report(result)
    assert "estimated measurement time: 26 s to 2 min" in text and "1 jobs have no earlier run to go by" in text
    # a job whose marker is written is done, whatever its rule might have added: the rule stopped it
    (job,) = plan_rounds(config)
    job.marker_path(tmp_path).parent.mkdir(parents=True)
    job.marker_path(tmp_path).write_text("{}")
    assert plan.estimate(config, tmp_path, history=())["rows"] == {}
    # a run into another data directory goes by the earlier runs of the history's too (lxc: 20 s)
    history = tmp_path / "history"
    earlier = plan_variants(config)[-1].directory(history)
    job.marker_path(tmp_path).unlink()  # the job not done: lxc's repetitions still to measure
    assert earlier.parts[-3] == "lxc"
    earlier.mkdir(parents=True)
    (earlier / "rep-0.log").write_text("")
    (earlier / "rep-0.json").write_text(json.dumps({"status": "complete", "duration_s": 20.0}))
    lxc = plan.estimate(config, tmp_path, history=(history,))["rows"][("lxc", "sysbench_cpu")]
    assert (lxc["low_s"], lxc["high_s"], lxc["basis"]) == (4 * 20.0, 10 * 20.0, {"same variant"})


def test_a_continuing_part_whose_logs_the_rule_stops_on_has_nothing_left_without_its_marker(tmp_path):
    """Markers are not committed: in a fresh clone of a finished run the estimate decides from the
    complete logs, as the job would, instead of counting up to the cap."""
    from conftest import DATA
    from test_rawlog_and_results import place
    from virtrepro.planning import plan

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config.update(platforms=["native"], benchmarks=["sysbench_cpu"], testbed="tb")
    config["testbeds"]["tb"] = {"kind": "local"}
    config["scales"]["quick"]["sysbench_cpu"].update(
        threads=[1], cpu_max_prime=20000, seconds=10,
        repetitions={"min": 2, "max": 5, "rel_half_width": 0.02, "metrics": ["events_per_second"]})
    validate_config(config)
    (variant,) = plan_variants(config)  # min 2, up to 5
    assert variant.cap == 5 and not plan_rounds(config)[0].marker_path(tmp_path).exists()
    directory = str(variant.directory(tmp_path).relative_to(tmp_path))
    capture = DATA / "sysbench" / "cpu-1thread-10s.log"  # 1141.43 events per second
    place(tmp_path, directory, 0, capture)
    place(tmp_path, directory, 1, capture)
    # two logs of the same capture: half-width 0, within 2 %: the rule stops, nothing is left
    assert ("native", "sysbench_cpu") not in plan.estimate(config, tmp_path, history=())["rows"]
    # 1141.43 and 1041.43: mean 1091.43, s = 70.71, half-width t(0.975, 1) 12.706 * 50 = 635 (58 %):
    # it continues, up to the cap (3 more)
    slower = variant.directory(tmp_path) / "rep-1.log"
    slower.write_text(capture.read_text().replace("events per second:  1141.43", "events per second:  1041.43"))
    from virtrepro.measurement.job import variant_records

    assert [r["value"] for log in variant_records(variant, tmp_path) for r in log
            if r["metric"] == "events_per_second"] == [1141.43, 1041.43]  # it parses: the rule, not an error, decides
    row = plan.estimate(config, tmp_path, history=())["rows"][("native", "sysbench_cpu")]
    assert (row["jobs"], row["reps_low"], row["reps_high"]) == (1, 0, 3)
    # a log that does not parse decides nothing (the job will say so): the estimate keeps the range
    slower.write_text("sysbench, truncated\n")
    row = plan.estimate(config, tmp_path, history=())["rows"][("native", "sysbench_cpu")]
    assert (row["reps_low"], row["reps_high"]) == (0, 3)


@pytest.mark.integration
def test_an_adaptive_variant_is_measured_until_its_rule_stops_and_resumes_from_its_logs(tmp_path, monkeypatch):
    """Real sysbench runs on the native platform of a local testbed, in rounds: the minimum, then
    until the rule stops; a stricter rule later continues from the logs there, never measuring a
    complete one again."""
    import json

    from conftest import require_tools
    from virtrepro.measurement.job import measure_rounds
    from virtrepro.testbed.kinds import LocalTestbed

    require_tools("/usr/sbin/sshd", "sysbench")
    monkeypatch.setenv("VIRTREPRO_STATE", str(tmp_path / "state"))
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config.update(testbed="pytest-adaptive", platforms=["native"], benchmarks=["sysbench_cpu"])
    config["testbeds"]["pytest-adaptive"] = {"kind": "local"}
    loose = {"min": 4, "max": 5, "rel_half_width": 0.5, "metrics": ["events_per_second"]}
    config["scales"]["quick"]["sysbench_cpu"].update(threads=[1], cpu_max_prime=2000, seconds=1, repetitions=loose)
    validate_config(config)
    data = tmp_path / "data"
    try:
        (job,) = plan_rounds(config)
        marker = measure_rounds(job, config, data)
        assert marker.name.endswith(".reps-4to5-w0.5-c0.95.json")
        content = json.loads(marker.read_text())["platforms"]["native"]
        # sysbench cpu varies by far less than +-50 % over 4 runs: the width is reached at the minimum
        assert content["repetition_rule"]["stop_reason"] == WIDTH_REACHED and content["repetition_rule"]["n"] == 4
        assert sorted(content["logs_sha256"]) == ["rep-0.log", "rep-1.log", "rep-2.log", "rep-3.log"]
        first = job.plans[0]
        sidecar = json.loads((first.directory(data) / "rep-2.json").read_text())
        assert sidecar["repetition_rule"] == {**loose, "confidence": 0.95}
        assert (sidecar["round"], sidecar["position"], sidecar["round_order"], sidecar["frozen"]) == (2, 0, ["native"], [])
        assert sidecar["image"] is None and set(sidecar["benchmark_packages"]) == {"sysbench"}
        assert sidecar["benchmark_packages"]["sysbench"]  # the installed version
        stamps = {log: log.stat().st_mtime_ns for log in first.directory(data).glob("rep-*.log")}
        # a rule that is never satisfied continues from the four logs to the cap
        config["scales"]["quick"]["sysbench_cpu"]["repetitions"] = {**loose, "rel_half_width": 1e-9}
        (strict,) = plan_rounds(config)
        marker = measure_rounds(strict, config, data)
        content = json.loads(marker.read_text())["platforms"]["native"]
        assert marker.name.endswith(".reps-4to5-w1e-09-c0.95.json")
        assert (content["repetition_rule"]["stop_reason"], content["repetition_rule"]["n"]) == (CAP_REACHED, 5)
        assert sorted(content["logs_sha256"]) == [f"rep-{n}.log" for n in range(5)]
        assert {log: log.stat().st_mtime_ns for log in stamps} == stamps  # no complete log measured again
        # the other rule's marker is gone
        assert not job.marker_path(data).exists()
        # the table says the same
        from virtrepro import results

        frame = results.view(results.build_table(data, "pytest-adaptive"), "sysbench_cpu")
        assert frame[["n_repetitions", "stop_reason"]].drop_duplicates().values.tolist() == [[5, CAP_REACHED]]
    finally:
        LocalTestbed("pytest-adaptive", tmp_path / "state").down()


def test_a_variant_not_run_on_a_platform_is_estimated_from_another_platform_scaled():
    """NPB's kernels take from 0.2 to 2.6 s natively; a TCG guest is 10 to 40 times slower. A kernel
    not yet run in the guest is estimated from its native time times the guest's median slowdown on
    the kernels both have run (here 20 and 30: 25), not from the guest's other kernels' mean."""
    from virtrepro.planning import plan
    from virtrepro.planning.config import Variant, VariantPlan

    durations = plan.Durations(
        by_variant={("native", "npb_serial", "ep"): 2.0, ("native", "npb_serial", "is"): 0.2,
                    ("native", "npb_serial", "lu"): 2.6, ("qemu-tcg", "npb_serial", "ep"): 40.0,
                    ("qemu-tcg", "npb_serial", "lu"): 78.0},
        by_benchmark={("qemu-tcg", "npb_serial"): 59.0, ("native", "npb_serial"): 1.6})
    wanted = VariantPlan(testbed="t", platform="qemu-tcg", variant=Variant("npb_serial", "is"), repetitions=5)
    seconds, basis = durations.per_repetition(wanted)
    assert basis == "other platform, scaled" and seconds == pytest.approx(0.2 * 25)
    alone = plan.Durations(by_variant={("qemu-tcg", "npb_serial", "ep"): 40.0}, by_benchmark={("qemu-tcg", "npb_serial"): 40.0})
    assert alone.per_repetition(wanted) == (40.0, "other variants")


def test_a_rule_given_after_a_fixed_count_that_the_logs_already_met_is_the_tables_rule_from_its_record(tmp_path):
    """A variant measured at a fixed count, then given a rule its logs already meet: nothing new is
    measured, the sidecars still say no rule, and the variant's rule record (committed beside its
    logs) keeps the rule. The table takes the rule from that record, never from the git-ignored job
    marker, in a full build and in a build that reuses the earlier table."""
    import json

    from conftest import DATA
    from test_rawlog_and_results import SYSBENCH_DIR, place
    from virtrepro import datalayout, results

    for rep in (0, 1):  # the same capture twice: half-width 0, so any width is reached at n = 2
        place(tmp_path, SYSBENCH_DIR, rep, DATA / "sysbench" / "cpu-1thread-10s.log")
    first = results.write_table(tmp_path, "tb", csv=False)
    assert set(first["stopping"].map(lambda s: json.loads(s)["stop_reason"])) == {"fixed count"}
    variant = tmp_path / SYSBENCH_DIR
    rule = {"min": 2, "max": 5, "rel_half_width": 0.02, "confidence": 0.95, "metrics": ["events_per_second"]}
    marker = variant.parent / f"{variant.name}.reps-2to5-w0.02-c0.95.part-1of1.json"
    marker.write_text(json.dumps({"repetition_rule": {"n": 2, "rule": rule, "stop_reason": WIDTH_REACHED},
                                  "written_utc": "2026-11-27T22:00:00.000Z"}))
    alone = results.build_table(tmp_path, "tb")  # a marker alone (git-ignored) changes nothing
    assert set(alone["stopping"].map(lambda s: json.loads(s)["stop_reason"])) == {"fixed count"}
    datalayout.rule_record_path(variant).write_text(json.dumps({"repetition_rule": rule}))
    expected = {"repetition_rule": "2to5-w0.02-c0.95", "stop_reason": WIDTH_REACHED, "n_repetitions": 2}
    for frame in (results.write_table(tmp_path, "tb", csv=False),  # reusing the first table's rows
                  results.build_table(tmp_path, "tb")):  # made anew
        facts = {json.dumps({k: json.loads(s)[k] for k in expected}) for s in frame["stopping"]}
        assert facts == {json.dumps(expected)}


# ---------------------------------------------------------------------------
# The rule that serves the verdict (target: claims; interval signed-rank)
# ---------------------------------------------------------------------------


def walsh_bounds(values, k):
    """The k-th smallest and k-th largest Walsh average (x_i + x_j) / 2, i <= j, of ``values``:
    enumerated here, independently of virtrepro.analysis.stats."""
    from itertools import combinations_with_replacement

    averages = sorted((a + b) / 2 for a, b in combinations_with_replacement(values, 2))
    return averages[k - 1], averages[-k]


def test_the_signed_rank_width_of_log_values_and_its_minimum_n_by_hand():
    from virtrepro.analysis import stats
    from virtrepro.planning.adaptive import log_half_width, verdict_min_n

    # the widest signed-rank interval has confidence 1 - 2 * 2**-n: 0.9375 at n = 5, 0.96875 at n = 6;
    # the widest Mann-Whitney interval 1 - 2 / C(2n, n): 0.9 at 3 + 3, 1 - 2 / 70 at 4 + 4
    assert (stats.signed_rank_min_n(0.95), stats.signed_rank_min_n(0.99), stats.rank_sum_min_n(0.95)) == (6, 8, 4)
    assert verdict_min_n(0.95) == 6
    assert math.isnan(log_half_width([1.000001, 1.000002, 1.000003, 1.000004, 1.000005]))  # 5 values: no interval
    # n = 7: P(T <= 2) = 3 / 128 = 0.0234 <= 0.025 < P(T <= 3) = 5 / 128: the 3rd smallest and largest Walsh average
    values = [101.123456, 99.654321, 100.5, 98.765432, 102.345678, 100.0, 97.531246]
    low, high = walsh_bounds([math.log(v) for v in values], 3)
    assert log_half_width(values) == pytest.approx((high - low) / 2, abs=1e-7)  # rounding slack: 5e-7 / 97.5
    ci = stats.hl_location_ci(values)
    assert ci.achieved == pytest.approx(1 - 2 * 3 / 128)


def write_claims(path, claims):
    path.write_text(yaml.safe_dump(claims, sort_keys=False))
    return path


def netperf_variant(test, size):
    from virtrepro.benchmarks import Variant

    return Variant("netperf", f"test-{test}_size-{size}_seconds-5", (("seconds", 5), ("size", size), ("test", test)))


HAND_CLAIMS = [
    {"id": "loose-rr", "testable": True, "check": {"kind": "overhead_at_most", "benchmark": "netperf",
     "metric": "half_round_trip_latency", "where": {"test": "TCP_RR"}, "platform": "lxc", "baseline": "native",
     "threshold": 0.10}},
    {"id": "tight-rr-1", "testable": True, "check": {"kind": "equivalent", "benchmark": "netperf",
     "metric": "half_round_trip_latency", "where": {"test": "TCP_RR", "size": [1, 64]}, "platform": "lxc",
     "baseline": "native", "threshold": 0.02}},
    {"id": "tight-rr-1-again", "testable": True, "check": {"kind": "overhead_at_least", "benchmark": "netperf",
     "metric": "half_round_trip_latency", "where": {"test": "TCP_RR", "size": 1}, "platform": "qemu-tcg",
     "baseline": "native", "threshold": -0.02}},
    {"id": "untestable-tighter", "testable": False, "reason": "Xen", "check": {"kind": "overhead_at_most",
     "benchmark": "netperf", "metric": "half_round_trip_latency", "threshold": 0.001}},
    {"id": "order-stream", "testable": True, "check": {"kind": "order", "benchmark": "netperf", "metric": "throughput",
     "where": {"test": "TCP_STREAM"}, "platforms": ["lxc", "qemu-tcg"]}},
    {"id": "other-benchmark", "testable": True, "check": {"kind": "overhead_at_most", "benchmark": "mbw",
     "metric": "throughput", "platform": "lxc", "baseline": "native", "threshold": 0.001}},
    {"id": "versus-rr-256", "testable": True, "check": {"kind": "ratio_of_overheads", "benchmark": "npb_mpi",
     "metric": "half_round_trip_latency", "where": {"kernel": "ep"}, "versus": {"benchmark": "netperf",
     "where": {"test": "TCP_RR", "size": 256}}, "platform": "lxc", "baseline": "native", "threshold": 0.001}},
]


def test_each_variants_target_is_the_tightest_threshold_of_the_claims_that_select_it(tmp_path):
    from virtrepro.planning.adaptive import SIGNED_RANK, Target
    from virtrepro.planning.config import repetition_rule
    from virtrepro.planning.targets import DEFAULT_MARGIN, claim_targets

    claims = write_claims(tmp_path / "claims.yaml", HAND_CLAIMS)
    rr1, rr256, rr4096 = (netperf_variant("TCP_RR", s) for s in (1, 256, 4096))
    stream = netperf_variant("TCP_STREAM", 65536)
    # size 1: two claims at 2 % (a negative threshold counts by its size); 10 % is looser; the untestable one is no claim
    assert claim_targets("netperf", rr1, claims) == (
        Target("half_round_trip_latency", 0.02, ("tight-rr-1", "tight-rr-1-again")),)
    # size 256: the loose claim, and a ratio of overheads that selects it through its versus, at the default margin
    assert claim_targets("netperf", rr256, claims) == (
        Target("half_round_trip_latency", DEFAULT_MARGIN, ("versus-rr-256",)),)
    assert claim_targets("netperf", rr4096, claims) == (Target("half_round_trip_latency", 0.10, ("loose-rr",)),)
    assert claim_targets("netperf", stream, claims) == (Target("throughput", 0.05, ("order-stream",)),)
    # the rule of the configuration with target: claims, per variant: the target (m / 2) / sqrt(2) on the
    # log scale, recorded with the claims in the sidecar's rule and named in the marker
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["scales"]["quick"]["netperf"]["repetitions"] = {"min": 2, "max": 30, "rel_half_width": 0.03,
                                                           "target": "claims"}
    validate_config(config)
    rule = repetition_rule(config, "netperf", "native", rr1, claims)
    assert (rule.interval, rule.min, rule.label()) == (SIGNED_RANK, 6, "6to30-w0.03-c0.95-sr-m0.02")
    assert rule.target("half_round_trip_latency") == pytest.approx(0.01 / math.sqrt(2))
    assert rule.target("throughput") == 0.03  # no claim: rel_half_width
    recorded = rule.as_dict()
    assert recorded["targets"] == [{"metric": "half_round_trip_latency", "margin": 0.02, "half_width": 0.007071,
                                    "claims": ["tight-rr-1", "tight-rr-1-again"]}]
    # what a sidecar recorded gives the same rule back (the table recomputes its stopping column from it)
    assert RepetitionRule.from_config(recorded) == rule


def test_the_plan_gives_each_variant_its_own_claims_rule(tmp_path, monkeypatch):
    from virtrepro.planning import targets

    monkeypatch.setattr(targets, "CLAIMS_PATH", write_claims(tmp_path / "claims.yaml", HAND_CLAIMS))
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config.update(platforms=["native"], benchmarks=["netperf"])
    config["scales"]["quick"]["netperf"].update(rr_sizes=[1, 4096], stream_sizes=[65536], seconds=5)
    config["scales"]["quick"]["netperf"]["repetitions"] = {"min": 5, "max": 30, "rel_half_width": 0.03,
                                                           "target": "claims"}
    validate_config(config)
    names = {job.marker_path("d").name for job in plan_rounds(config)}
    assert names == {"test-TCP_RR_size-1_seconds-5.reps-6to30-w0.03-c0.95-sr-m0.02.json",
                     "test-TCP_RR_size-4096_seconds-5.reps-6to30-w0.03-c0.95-sr-m0.1.json",
                     "test-TCP_STREAM_size-65536_seconds-5.reps-6to30-w0.03-c0.95-sr-m0.05.json"}


def test_the_rule_never_stops_below_the_verdicts_minimum_n():
    from virtrepro.analysis import stats
    from virtrepro.planning.adaptive import SIGNED_RANK

    SR_RULE = RepetitionRule(min=2, max=30, rel_half_width=0.03, interval=SIGNED_RANK)
    narrow = [100.000001 + i * 1e-6 for i in range(6)]  # a spread of 5e-8 on the log scale
    # a rule given a minimum of 2 still continues through 5, where no signed-rank interval exists
    assert [decide(SR_RULE, logs_of(narrow[:n])).reason for n in range(1, 7)] == [CONTINUE] * 5 + [WIDTH_REACHED]
    # at 80 % the signed-rank interval exists from 4 values (2**-4 = 0.0625 <= 0.1), the bootstrap of an
    # aggregate only from 5 (stats.MIN_N_BOOTSTRAP): the rule waits for the verdict's interval, not its own
    at80 = RepetitionRule(min=2, max=30, rel_half_width=0.03, confidence=0.8, interval=SIGNED_RANK)
    assert [decide(at80, logs_of(narrow[:n])).reason for n in (3, 4, 5)] == [CONTINUE, CONTINUE, WIDTH_REACHED]
    assert not math.isnan(decide(at80, logs_of(narrow[:4])).rel_half_width)
    # and the sample it stops with has the verdict's intervals: the ratio's (4 + 4) and the bootstrap's (5)
    assert not stats.hl_ratio_ci(narrow, [v * 1.01 for v in narrow]).too_few
    assert len(narrow) >= stats.MIN_N_BOOTSTRAP
    # from the configuration the minimum is raised to 6, and a cap below it is refused naming the key
    assert RepetitionRule.from_config({"min": 2, "max": 30, "rel_half_width": 0.03, "target": "claims"}).min == 6
    assert RepetitionRule.from_config({"min": 2, "max": 30, "rel_half_width": 0.03}).min == 2  # the first rule: as given
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["scales"]["quick"]["mbw"]["repetitions"] = {"min": 2, "max": 5, "rel_half_width": 0.03, "target": "claims"}
    with pytest.raises(ConfigError, match=r"scales\.quick\.mbw\.repetitions': repetitions: max 5 is below 6"):
        validate_config(config)
    assert SR_RULE.interval == SIGNED_RANK


def test_the_decision_looks_at_the_width_never_at_the_estimates_side_of_a_threshold():
    """One spread, shifted on the log scale to below, at and above a threshold of +5 % against 100:
    the same decision at every n, with the same width."""
    import random

    from virtrepro.planning.adaptive import Target

    rule = RepetitionRule(min=6, max=30, rel_half_width=0.03, interval="signed-rank",
                          targets=(Target("m", 0.05, ("hand",)),))
    rng = random.Random(38)
    spread = [rng.gauss(0, 0.02) for _ in range(30)]
    runs = {}
    for shift in (0.0, math.log(1.05), math.log(1.10)):  # the estimate below, at, above the threshold
        values = [round(100 * math.exp(shift + e), 9) for e in spread]
        decisions = [decide(rule, logs_of(values[:n])) for n in range(1, 31)]
        runs[shift] = [(d.reason, round(d.rel_half_width, 6) if not math.isnan(d.rel_half_width) else None)
                       for d in decisions]
    first, *others = runs.values()
    assert all(other == first for other in others)
    stops = [n for n, (reason, _) in enumerate(first, start=1) if reason != CONTINUE]
    assert stops and stops[0] >= 6  # it stops (the widths fall below (0.05 / 2) / sqrt(2)) and never below 6
    assert first[stops[0] - 1][1] <= 0.025 / math.sqrt(2)


@pytest.mark.integration
def test_a_real_variant_under_the_claims_rule_stops_with_a_sample_its_verdict_accepts(tmp_path, monkeypatch):
    """Real sysbench runs on the native platform of a local testbed under target: claims (the committed
    claims: sysbench_cpu's events_per_second is selected by Kumar's CPU claims, at the default margin
    0.05): at least 6 repetitions, the targets and claims recorded, and the table's stopping facts the
    signed-rank width of the measured values, enumerated here."""
    import json

    from conftest import require_tools
    from virtrepro import results
    from virtrepro.planning.adaptive import verdict_min_n
    from virtrepro.measurement.job import measure_rounds
    from virtrepro.testbed.kinds import LocalTestbed

    require_tools("/usr/sbin/sshd", "sysbench")
    monkeypatch.setenv("VIRTREPRO_STATE", str(tmp_path / "state"))
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config.update(testbed="pytest-adaptive-claims", platforms=["native"], benchmarks=["sysbench_cpu"])
    config["testbeds"]["pytest-adaptive-claims"] = {"kind": "local"}
    rule = {"min": 2, "max": 7, "rel_half_width": 0.5, "metrics": ["events_per_second"], "target": "claims"}
    config["scales"]["quick"]["sysbench_cpu"].update(threads=[1], cpu_max_prime=2000, seconds=1, repetitions=rule)
    validate_config(config)
    data = tmp_path / "data"
    try:
        (job,) = plan_rounds(config)
        (first,) = job.plans
        assert (first.repetitions, first.rule.label()) == (6, "6to7-w0.5-c0.95-sr-m0.05")
        marker = measure_rounds(job, config, data)
        decided = json.loads(marker.read_text())["platforms"]["native"]["repetition_rule"]
        assert decided["n"] >= verdict_min_n(0.95) and decided["stop_reason"] in (WIDTH_REACHED, CAP_REACHED)
        sidecar = json.loads((first.directory(data) / "rep-0.json").read_text())
        target, = sidecar["repetition_rule"]["targets"]
        assert (target["metric"], target["margin"], target["half_width"]) == ("events_per_second", 0.05, 0.017678)
        assert "kumar2013-cpu-containers-least-overhead" in target["claims"]
        frame = results.view(results.build_table(data, "pytest-adaptive-claims"), "sysbench_cpu", "events_per_second")
        values = frame.sort_values("repetition")["value"].tolist()
        facts = frame[["n_repetitions", "stop_reason", "rel_half_width"]].drop_duplicates()
        assert facts[["n_repetitions", "stop_reason"]].values.tolist() == [[len(values), decided["stop_reason"]]]
        # n = 6: the extreme Walsh averages (P(T <= 0) = 1 / 64); n = 7: the 3rd (P(T <= 2) = 3 / 128)
        low, high = walsh_bounds([math.log(v) for v in values], {6: 1, 7: 3}[len(values)])
        assert facts["rel_half_width"].iat[0] == pytest.approx((high - low) / 2, abs=5e-6)  # + printed rounding
        assert (decided["stop_reason"] == WIDTH_REACHED) == ((high - low) / 2 <= 0.05 / 2 / math.sqrt(2))
    finally:
        LocalTestbed("pytest-adaptive-claims", tmp_path / "state").down()


# ---- the paired rule: a job's platforms decided together where rounds exist (adaptive.decide_rounds) ----

# 7 rounds: a drift common to a round (3-6 %) and each platform's own noise; lxc 5 % slower than native
DRIFT = [0.00, 0.04, -0.03, 0.06, -0.05, 0.02, 0.01]
OWN = [0.001, -0.002, 0.0005, 0.0015, -0.001, 0.0, 0.0008]  # lxc's own noise, on top of the drift
NATIVE_NOISE = [0.03, -0.04, 0.05, -0.02, 0.01, -0.03]  # independent noise: nothing common to a round
PODMAN_NOISE = [-0.03, 0.04, 0.02, -0.05, 0.03, 0.04]


def paired_rule(max_=30, metrics=()):
    from virtrepro.planning.adaptive import SIGNED_RANK, Target

    return RepetitionRule(min=6, max=max_, rel_half_width=0.03, metrics=metrics, interval=SIGNED_RANK,
                          targets=(Target("m", 0.05, ("hand",)),))  # m = 5 %: paired m/2 = 0.025, alone 0.0177


def drifting(n):
    """native and lxc drifting together: the log ratio is log 1.05 + lxc's own noise."""
    native = [round(100 * math.exp(d), 6) for d in DRIFT[:n]]
    lxc = [round(105 * math.exp(d + e), 6) for d, e in zip(DRIFT[:n], OWN[:n])]
    return native, lxc


def test_paired_by_round_a_common_drift_cancels_and_both_stop_at_6_where_alone_they_would_not():
    from virtrepro.planning.adaptive import decide_rounds

    rule = paired_rule()
    for n, want in ((5, CONTINUE), (6, WIDTH_REACHED)):
        native, lxc = drifting(n)
        decided = decide_rounds({"native": rule, "lxc": rule}, {"native": logs_of(native), "lxc": logs_of(lxc)},
                                {"native": list(range(n)), "lxc": list(range(n))})
        assert (decided["lxc"].reason, decided["native"].reason) == (want, want)
        assert decided["lxc"].paired == ("native",) and decided["native"].paired == ("lxc",)
        assert decided["native"].waiting == (() if want == WIDTH_REACHED else ("lxc",))
    # n = 6 at 95 %: P(T <= 0) = 1/64 <= 0.025 < P(T <= 1) = 2/64: the extreme Walsh averages, i.e. the
    # smallest and largest log ratio; they differ by lxc's own noise alone: (0.0015 - -0.002) / 2 = 0.00175
    assert decided["lxc"].rel_half_width == pytest.approx(0.00175, abs=1e-6)
    assert decided["lxc"].rel_half_width <= 0.05 / 2
    # the same values without rounds (or the one-sample rule): each sample's own spread, the drift included:
    # (max(d + e) - min(d + e)) / 2 = (0.0615 - -0.051) / 2 = 0.05625 > (0.05 / 2) / sqrt(2): it continues
    alone = decide_rounds({"native": rule, "lxc": rule}, {"native": logs_of(native), "lxc": logs_of(lxc)})
    assert alone["lxc"].reason == CONTINUE and not alone["lxc"].paired
    assert alone["lxc"].rel_half_width == pytest.approx(0.05625, abs=1e-6)
    assert alone["native"].rel_half_width == pytest.approx((0.06 - -0.05) / 2, abs=1e-6)
    assert alone == {"native": decide(rule, logs_of(native)), "lxc": decide(rule, logs_of(lxc))}


def test_the_paired_width_at_7_rounds_is_the_third_walsh_average_of_the_log_ratios():
    from virtrepro.planning.adaptive import decide_rounds, log_half_width, paired_half_width

    native, lxc = drifting(7)
    ratios = [math.log(x) - math.log(y) for x, y in zip(lxc, native)]
    low, high = walsh_bounds(ratios, 3)  # n = 7: P(T <= 2) = 3/128 <= 0.025 < P(T <= 3) = 5/128
    decided = decide_rounds({"native": paired_rule(), "lxc": paired_rule()},
                            {"native": logs_of(native), "lxc": logs_of(lxc)}, {"native": range(7), "lxc": range(7)})
    assert decided["lxc"].widths == {"m": pytest.approx((high - low) / 2, abs=1e-7)}
    # the verdicts' paired interval (hl_paired_ci) and the one-sample interval of the log ratios agree
    # (up to the printed resolution's widening, 1e-8 here)
    assert paired_half_width(lxc, native) == pytest.approx(log_half_width([x / y for x, y in zip(lxc, native)]), abs=1e-7)


def test_independent_noise_does_not_stop_the_pair_and_native_waits_for_every_paired_platform():
    from virtrepro.planning.adaptive import decide_rounds

    rule = paired_rule()
    native = [round(100 * math.exp(a), 6) for a in NATIVE_NOISE]
    podman = [round(103 * math.exp(b), 6) for b in PODMAN_NOISE]
    _, lxc = drifting(6)
    lxc = [round(105 * math.exp(a + e), 6) for a, e in zip(NATIVE_NOISE, OWN)]  # lxc drifts with native
    decided = decide_rounds({"native": rule, "lxc": rule, "podman": rule},
                            {"native": logs_of(native), "lxc": logs_of(lxc), "podman": logs_of(podman)},
                            {name: range(6) for name in ("native", "lxc", "podman")})
    # podman's log ratios: log 1.03 + (b - a) = log 1.03 + [-0.06, 0.08, -0.03, -0.03, 0.02, 0.07]:
    # half-width (0.08 - -0.06) / 2 = 0.07 > 0.025
    assert decided["podman"].reason == CONTINUE
    assert decided["podman"].rel_half_width == pytest.approx(0.07, abs=1e-6)
    assert decided["lxc"].reason == WIDTH_REACHED
    # native goes on while one of its pairs goes on
    assert decided["native"].reason == CONTINUE and decided["native"].waiting == ("podman",)
    assert set(decided["native"].paired) == {"lxc", "podman"}
    # at the cap podman stops (cap reached) and native with it: a pair stopped at its cap, not its width
    capped = paired_rule(max_=6)
    decided = decide_rounds({"native": capped, "podman": capped}, {"native": logs_of(native), "podman": logs_of(podman)},
                            {"native": range(6), "podman": range(6)})
    assert (decided["podman"].reason, decided["native"].reason) == (CAP_REACHED, CAP_REACHED)


def test_what_does_not_pair_keeps_the_one_sample_rule_exactly():
    from virtrepro.planning.adaptive import decide_rounds

    rule = paired_rule()
    native, lxc = drifting(6)
    # no native in the job: each alone, rounds or not
    decided = decide_rounds({"lxc": rule, "podman": rule}, {"lxc": logs_of(lxc), "podman": logs_of(native)},
                            {"lxc": range(6), "podman": range(6)})
    assert decided == {"lxc": decide(rule, logs_of(lxc)), "podman": decide(rule, logs_of(native))}
    # a round missing on one side (a log measured before rounds): alone
    decided = decide_rounds({"native": rule, "lxc": rule}, {"native": logs_of(native), "lxc": logs_of(lxc)},
                            {"native": [0, 1, 2, 3, 4, None], "lxc": range(6)})
    assert decided["lxc"] == decide(rule, logs_of(lxc)) and decided["lxc"].reason == CONTINUE
    # no claim target (the first rule, or a signed-rank rule no claim selects): alone
    for other in (RepetitionRule(min=5, max=30, rel_half_width=0.03),
                  RepetitionRule(min=6, max=30, rel_half_width=0.03, interval="signed-rank")):
        decided = decide_rounds({"native": other, "lxc": other}, {"native": logs_of(native), "lxc": logs_of(lxc)},
                                {"native": range(6), "lxc": range(6)})
        assert decided == {"native": decide(other, logs_of(native)), "lxc": decide(other, logs_of(lxc))}


def test_a_metric_no_claim_uses_keeps_its_own_sample_and_rel_half_width_beside_the_paired_one():
    from virtrepro.planning.adaptive import decide_rounds

    rule = paired_rule(metrics=("m", "other"))
    native, lxc = drifting(6)
    # "other" (printed to 1e-6, so its rounding widens by < 1e-6): log half-width log(1.1) / 2 = 0.0477 > 0.03
    spread = [1.000001, 1.100002, 1.000003, 1.000004, 1.000005, 1.000006]

    def logs(values, scale):
        return [[{"metric": "m", "value": v}, {"metric": "other", "value": round(scale * s, 6)}]
                for v, s in zip(values, spread)]

    decided = decide_rounds({"native": rule, "lxc": rule}, {"native": logs(native, 7), "lxc": logs(lxc, 9)},
                            {"native": range(6), "lxc": range(6)})
    assert decided["lxc"].widths["m"] == pytest.approx(0.00175, abs=1e-6)  # paired: reached
    assert decided["lxc"].widths["other"] == pytest.approx(math.log(1.1) / 2, abs=1e-6)  # its own sample
    assert decided["lxc"].reason == CONTINUE and decided["native"].reason == CONTINUE
    assert decided["native"].waiting == ("lxc",)
    spread[:] = [1.000001 + i * 1e-6 for i in range(6)]  # a spread of 5e-6
    decided = decide_rounds({"native": rule, "lxc": rule}, {"native": logs(native, 7), "lxc": logs(lxc, 9)},
                            {"native": range(6), "lxc": range(6)})
    assert (decided["lxc"].reason, decided["native"].reason) == (WIDTH_REACHED, WIDTH_REACHED)


def test_the_paired_decision_looks_at_widths_never_at_the_ratio():
    from virtrepro.planning.adaptive import decide_rounds

    native, lxc = drifting(6)
    seen = set()
    for factor in (0.9, 1.0, 1.05, 1.2):  # the ratio below, at and above a 5 % threshold
        shifted = [round(v * factor, 6) for v in lxc]
        decided = decide_rounds({"native": paired_rule(), "lxc": paired_rule()},
                                {"native": logs_of(native), "lxc": logs_of(shifted)}, {"native": range(6), "lxc": range(6)})
        seen.add((decided["lxc"].reason, round(decided["lxc"].rel_half_width, 5)))
    assert seen == {(WIDTH_REACHED, 0.00175)}


def test_the_paired_target_is_half_the_claims_threshold_without_the_square_root_of_two():
    from virtrepro.planning.adaptive import decide_rounds

    # lxc's own noise spans 0.04 on the log scale: at n = 6 the paired half-width is 0.02, within
    # m / 2 = 0.025 but above (m / 2) / sqrt(2) = 0.0177 (the one-sample target)
    own = [0.02, -0.02, 0.0, 0.01, -0.01, 0.005]
    native = [round(100 * math.exp(d), 6) for d in DRIFT[:6]]
    for spread, want in ((1.0, WIDTH_REACHED), (1.3, CONTINUE)):  # 0.02, then 0.026 > 0.025
        lxc = [round(105 * math.exp(d + spread * e), 6) for d, e in zip(DRIFT, own)]
        decided = decide_rounds({"native": paired_rule(), "lxc": paired_rule()},
                                {"native": logs_of(native), "lxc": logs_of(lxc)}, {"native": range(6), "lxc": range(6)})
        assert decided["lxc"].rel_half_width == pytest.approx(0.02 * spread, abs=1e-6)
        assert (decided["lxc"].reason, decided["native"].reason) == (want, want)


def _paired_job(tmp_path, monkeypatch, values_by_platform, cap):
    """A job of sysbench_cpu on native and lxc under ``target: claims`` (the committed claims select
    events_per_second at m = 0.05), measured by a stand-in that commits the capture with the given
    events per second of each round; no testbed is touched."""
    from contextlib import nullcontext

    from conftest import DATA, commit_capture
    from virtrepro.measurement import variant as variant_module

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config.update(platforms=["native", "lxc"], benchmarks=["sysbench_cpu"], testbed="tb")
    config["testbeds"]["tb"] = {"kind": "local"}
    config["scales"]["quick"]["sysbench_cpu"].update(
        threads=[1], cpu_max_prime=20000, seconds=10,
        repetitions={"min": 2, "max": cap, "rel_half_width": 0.5, "metrics": ["events_per_second"], "target": "claims"})
    validate_config(config)
    (job,) = plan_rounds(config, ["native", "lxc"], host_mib=10**6)
    capture = (DATA / "sysbench" / "cpu-1thread-10s.log").read_text()

    def measure(run, config, data_dir, owner_pid=None, host_name=None, kept=None, rounds=None):
        value = values_by_platform[run.platform][rounds["round"]]
        text = tmp_path / f"capture-{run.platform}-{run.repetition}.log"
        text.write_text(capture.replace("events per second:  1141.43", f"events per second:  {value:.2f}"))
        plan = job.plan_of(run.platform)
        return commit_capture(text, run.log_path(data_dir), {
            "command": "captured", "testbed": run.testbed, "platform": {"name": run.platform},
            "benchmark": run.benchmark, "variant": run.variant.key, "parameters": dict(run.variant.params),
            "repetition": run.repetition, "repetition_rule": plan.rule.as_dict(), **rounds})

    class Session:
        def __init__(self, *args):
            pass

        def begin(self):
            pass

        def turn(self, name):
            return nullcontext(None)

        def frozen_beside(self, name):
            return []

    monkeypatch.setattr(variant_module, "measure", measure)
    monkeypatch.setattr(variant_module, "_Session", Session)
    return job


def test_a_job_whose_platforms_drift_together_stops_paired_at_6_rounds(tmp_path, monkeypatch, capsys):
    import json

    from virtrepro import results
    from virtrepro.measurement.variant import measure_rounds

    native = [1141.43 * math.exp(d) for d in DRIFT]
    lxc = [1100.0 * math.exp(d + e) for d, e in zip(DRIFT, OWN)]
    job = _paired_job(tmp_path, monkeypatch, {"native": native, "lxc": lxc}, cap=9)
    data = tmp_path / "data"
    marker = measure_rounds(job, {}, data)
    decided = {name: facts["repetition_rule"] for name, facts in json.loads(marker.read_text())["platforms"].items()}
    # the per-round log ratios differ by lxc's own noise alone: half-width 0.00175 (+ the 2-decimal print)
    # at 6 rounds, within 0.05 / 2; each sample alone spans the drift (0.056): the one-sample rule goes on
    assert (decided["lxc"]["n"], decided["lxc"]["stop_reason"], decided["lxc"]["paired"]) == (6, WIDTH_REACHED, ["native"])
    assert decided["lxc"]["rel_half_width"] == pytest.approx(0.00175, abs=2e-5)
    assert (decided["native"]["n"], decided["native"]["stop_reason"], decided["native"]["waiting"]) == (6, WIDTH_REACHED, [])
    assert all(len(list(plan.directory(data).glob("rep-*.log"))) == 6 for plan in job.plans)  # no 7th round
    err = capsys.readouterr().err
    assert "tb/lxc/sysbench_cpu/threads-1_prime-20000_seconds-10: 6 repetitions, paired by round with native" in err
    assert "events_per_second 0.025 paired" in err
    assert "tb/native/sysbench_cpu/threads-1_prime-20000_seconds-10: 6 repetitions, other half of the pairs of lxc " \
           "(all stopped)" in err
    # the table decides the same from the logs and their rounds
    frame = results.view(results.build_table(data, "tb"), "sysbench_cpu", "events_per_second")
    facts = frame.groupby("platform")[["n_repetitions", "stop_reason"]].first()
    assert facts.loc["lxc"].tolist() == [6, WIDTH_REACHED] and facts.loc["native"].tolist() == [6, WIDTH_REACHED]
    assert frame[frame["platform"] == "lxc"]["rel_half_width"].iat[0] == pytest.approx(decided["lxc"]["rel_half_width"], abs=1e-6)
    # and so does the plan's estimate: nothing left
    from virtrepro.planning import plan as plan_module

    assert all(plan_module.rule_stops(p, data, job) for p in job.plans)
    assert not plan_module.rule_stops(job.plan_of("lxc"), data)  # alone (no native): the one-sample rule goes on


def test_a_job_with_independent_noise_goes_on_to_the_cap_native_with_it(tmp_path, monkeypatch):
    import json

    from virtrepro import results
    from virtrepro.measurement.variant import measure_rounds

    native = [1141.43 * math.exp(a) for a in NATIVE_NOISE + [0.02, -0.01]]
    lxc = [1100.0 * math.exp(b) for b in PODMAN_NOISE + [0.01, -0.04]]
    job = _paired_job(tmp_path, monkeypatch, {"native": native, "lxc": lxc}, cap=8)
    data = tmp_path / "data"
    decided = {name: facts["repetition_rule"] for name, facts in
               json.loads(measure_rounds(job, {}, data).read_text())["platforms"].items()}
    # log ratios log(1100 / 1141.43) + (b - a): at 8 rounds k = 4 (P(T <= 3) = 5/256 <= 0.025 < P(T <= 4)
    # = 7/256); the 4th smallest and largest Walsh averages, enumerated here
    ratios = [math.log(round(y, 2)) - math.log(round(x, 2)) for x, y in zip(native, lxc)]
    low, high = walsh_bounds(ratios, 4)
    assert (high - low) / 2 > 0.025
    assert (decided["lxc"]["n"], decided["lxc"]["stop_reason"]) == (8, CAP_REACHED)
    assert decided["lxc"]["rel_half_width"] == pytest.approx((high - low) / 2, abs=2e-5)
    assert (decided["native"]["n"], decided["native"]["stop_reason"]) == (8, CAP_REACHED)
    frame = results.view(results.build_table(data, "tb"), "sysbench_cpu", "events_per_second")
    assert set(map(tuple, frame[["n_repetitions", "stop_reason"]].drop_duplicates().values.tolist())) == {(8, CAP_REACHED)}


def test_the_incremental_table_decides_a_platform_anew_when_only_natives_logs_changed(tmp_path, monkeypatch):
    """A platform's stopping facts depend on native's logs where they pair: the table kept from the
    last build is not kept for a variant one of whose platforms has a new log."""
    from virtrepro import results
    from virtrepro.measurement import variant as variant_module
    from virtrepro.results.build import write_table

    native, lxc = (1141.43 * math.exp(d) for d in DRIFT), (1100.0 * math.exp(d + e) for d, e in zip(DRIFT, OWN))
    job = _paired_job(tmp_path, monkeypatch, {"native": list(native), "lxc": list(lxc)}, cap=9)
    data = tmp_path / "data"

    def measure(platform, round_):
        run = job.plan_of(platform).run(round_)
        variant_module.measure(run, {}, data, rounds={"round": round_, "position": 0, "round_order": [platform],
                                                      "frozen": []})

    for round_ in range(6):
        measure("lxc", round_)
    for round_ in range(5):
        measure("native", round_)

    def facts(table):
        frame = results.view(table, "sysbench_cpu", "events_per_second")
        return frame.groupby("platform")["stop_reason"].first().to_dict()

    assert facts(write_table(data, "tb", csv=False))["lxc"] == CONTINUE  # 5 rounds in common: no paired interval
    measure("native", 5)
    # lxc's logs are unchanged; native's sixth pairs with lxc's
    assert facts(write_table(data, "tb", csv=False)) == {"lxc": WIDTH_REACHED, "native": WIDTH_REACHED}
