# Measurement: one job per part of a benchmark variant's repetitions and platform (two parts when
# there are two or more repetitions), which measures the part's repetitions whose complete raw log
# is missing and then writes the part's marker (<variant>.reps-<N>.part-<p>of<P>.json, beside the
# variant's directory). The raw logs are not Snakemake outputs, so Snakemake never deletes one (not
# even after a failed job); a complete log is never re-measured. Deleting a log makes the variant's
# directory (an input) newer than the markers, and the jobs run again for just that repetition. A
# change of the repetition count changes the markers' names. One job per part rather than per
# repetition keeps the plan small: the paper profile's dry run lists a thousand jobs, not thousands.
#
# The job is a shell command (python -m virtrepro.measurement.job) rather than a run:
# block, which Snakemake would execute by starting a whole new Snakemake per job.
# It receives its plan entry (the variant part as planned here, and its host: --plan-entry) and the
# validated configuration as a file (--config-file), and plans nothing again.
#
# One rule per platform; priorities order the jobs one benchmark after the other (in the configured
# order), and within a benchmark A B C D D C B A over (platform, part): every platform's first part
# in the configured order, then the second parts in reverse, so that a drift of the host over the
# benchmark falls on every platform alike (docs/methodology.md, "Run order"). A benchmark's
# comparison is complete before the next begins: a run cut between sessions, or moved to another
# machine (which the measurement refuses for a begun benchmark: virtrepro.rawdata.machines), leaves at most
# one benchmark half-measured. Within one (platform, part) all runs of one guest spec happen
# together: its guest boots once, and no other platform's guest idles beside a measurement
# (measure stops them).

import functools
import hashlib

from virtrepro.benchmarks import BENCHMARKS
from virtrepro.benchmarks.base import hosts_used
from virtrepro.planning.config import run_priority
from virtrepro.planning.config import VALIDATED_ENV, digest, write_config_file
from virtrepro.measurement.job import plan_entry
from virtrepro.platforms.catalog import NAMES as PLATFORMS

# the configuration the measurement jobs read (--config-file); the other jobs (builds, remote
# preparation) read it from VIRTREPRO_CONFIG
CONFIG_FILE = str(write_config_file(config, Path(".snakemake") / "virtrepro"))
os.environ["VIRTREPRO_CONFIG"] = json.dumps(config)
# validated above (common.smk): the jobs need not validate it again (jsonschema alone takes seconds to import)
os.environ[VALIDATED_ENV] = digest(config)
# the command line that started the workflow, for the sidecars' provenance
os.environ.setdefault("VIRTREPRO_INVOCATION", json.dumps(sys.argv))
# the local testbed's sshd and the guests live as long as this Snakemake process
os.environ.setdefault("VIRTREPRO_TESTBED_OWNER", str(os.getpid()))


@one_line_errors
def job_priority(platform):
    """Jobs one benchmark after the other, within one in the run order A B C D D C B A of (platform,
    part) (config.run_priority), and within one (platform, part) all runs of one guest spec
    together (its guest boots once)."""

    @one_line_errors
    def priority(wildcards):
        base = run_priority(config, wildcards.benchmark, platform, int(wildcards.part))
        benchmark = BENCHMARKS[wildcards.benchmark]
        if benchmark.host_side:
            return base + 1  # after every run inside the platform's guests: it starts its own guests
        planned = planned_part(platform, wildcards.testbed, wildcards.benchmark, wildcards.variant, int(wildcards.part))
        overrides = benchmark.guest_overrides(planned.variant) if planned is not None else {}
        if not overrides:
            return base + 999  # the configured guest first: most benchmarks run in it
        return base + 998 - int(hashlib.sha256(json.dumps(overrides, sort_keys=True).encode()).hexdigest(), 16) % 900

    return priority


@one_line_errors
@functools.lru_cache(maxsize=None)
def platform_plan(platform):
    """The plan of one platform, made once: (testbed, benchmark, variant key, part) -> its VariantPlan."""
    return {(v.testbed, v.benchmark, v.variant.key, v.part): v for v in plan_variants(config, [platform])}


@one_line_errors
def planned_part(platform, testbed, benchmark, key, part):
    """The VariantPlan of a measurement job's wildcards (None: not planned)."""
    return platform_plan(platform).get((testbed, benchmark, key, part))


@one_line_errors
@functools.lru_cache(maxsize=None)
def measuring_hosts(benchmark, key, platform):
    """The testbed hosts one run of this variant holds (virtrepro.testbed.placement), the one that runs its
    command first: the same host on every platform, or the first hosts of the testbed for a run whose
    instances are on different hosts (MPI across hosts)."""
    planned = planned_part(platform, TESTBED, benchmark, key, 1)
    spanned = hosts_used(BENCHMARKS[benchmark], planned.variant) if planned is not None else 1
    return tuple(placement.hosts_for(TESTBED_HOSTS, DATA, TESTBED, benchmark, key, spanned))


@one_line_errors
def job_entry(platform, wildcards):
    """A measurement job's --plan-entry: its VariantPlan and host; stops with one line when the
    wildcards name a part the plan does not have."""
    planned = planned_part(platform, wildcards.testbed, wildcards.benchmark, wildcards.variant, int(wildcards.part))
    if planned is None or (planned.reps_label, planned.parts) != (wildcards.reps, int(wildcards.parts)):
        stop(f"the configuration plans no run {wildcards.testbed}/{platform}/{wildcards.benchmark}/"
             f"{wildcards.variant} part {wildcards.part} of {wildcards.parts} ({wildcards.reps} repetitions)")
    return plan_entry(planned, measuring_hosts(wildcards.benchmark, wildcards.variant, platform)[0])


@one_line_errors
def host_resources(platform):
    """One measurement at a time on each host: the job holds the resource of each host it uses (and no other)."""
    return {placement.resource_name(index):
            one_line_errors(lambda wc, name=name: int(name in measuring_hosts(wc.benchmark, wc.variant, platform)))
            for index, name in enumerate(TESTBED_HOSTS)}


for _platform in PLATFORMS:

    rule:
        name:
            f"measure_{_platform.replace('-', '_')}"
        input:
            ancient(GUEST_IMAGE) if _platform in GUEST_PLATFORMS else [],
            build_input,  # builds.smk: a compiled benchmark's build
            variant_directory(_platform),  # common.smk
        output:
            marker=MARKER_PATTERN.replace("{platform}", _platform),
        log:
            f"logs/measure/{{testbed}}/{_platform}/{{benchmark}}/{{variant}}.reps-{{reps}}.part-{{part}}of{{parts}}.log",
        params:
            platform=_platform,  # the shell command is formatted when the job runs, after the loop
            host=one_line_errors(lambda wc, platform=_platform: measuring_hosts(wc.benchmark, wc.variant, platform)[0]),
            # the job's plan entry: the variant part as planned here, and its host
            entry=one_line_errors(lambda wc, platform=_platform: job_entry(platform, wc)),
        priority: job_priority(_platform)
        # a measurement owns its host: on the local testbed that is this machine, so nothing else runs
        # beside it here; a remote host's measurement leaves this machine's cores to the others
        threads: 1 if REMOTE_TESTBED else workflow.cores
        resources:
            measurement_slots=1,
            **host_resources(_platform),
        localrule: True
        # a failed repetition (kept as rep-<k>.failed-<time>.log) is measured once more; the
        # repetitions already complete are kept; the log holds both attempts
        retries: 1
        shell:
            f"{sys.executable} -m virtrepro.measurement.job --data-dir {DATA} --config-file {CONFIG_FILE}"
            " --plan-entry {params.entry:q} --expect-marker {output.marker:q} 2>&1 | tee -a {log}"
