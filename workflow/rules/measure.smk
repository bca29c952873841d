# Measurement: one job per benchmark variant, which measures the variant on every planned platform
# in rounds (docs/methodology.md, "Run order"): in round r, repetition r of each platform back to
# back, the order alternating between rounds (config.round_order), each platform's instances started
# once for the job and frozen while another platform measures; the rounds go on until each
# platform has its count, or until the repetition rule stops for every platform (or the cap). The
# job then writes the variant's rounds marker (raw/<testbed>/rounds/<benchmark>/<variant>.reps-<label>.json,
# platform-neutral: datalayout.rounds_marker_path). The raw logs are not Snakemake outputs, so
# Snakemake never deletes one (not even after a failed job); a complete log is never re-measured.
# Every platform's variant directory is an input: deleting a log makes it newer than the marker,
# and the job runs again for just the missing repetitions, in round order. A change of the
# repetition count or rule changes the marker's name. One job per variant keeps the plan small.
#
# The job is a shell command (python -m virtrepro.measurement.job) rather than a run:
# block, which Snakemake would execute by starting a whole new Snakemake per job.
# It receives its plan entry (every platform's VariantPlan of the variant as planned here, and its
# host: --plan-entry) and the validated configuration as a file (--config-file), and plans nothing again.
#
# Priorities order the jobs one benchmark after the other (in the configured order), so a
# benchmark's comparison is complete before the next begins: a run cut between sessions, or moved
# to another machine (which the measurement refuses for a begun benchmark: virtrepro.rawdata.machines),
# leaves at most one benchmark half-measured. Within a benchmark the variants of one guest spec run
# together: their guests boot once (the guests of a job not its own are stopped by measure).

import functools
import hashlib

from virtrepro.benchmarks import BENCHMARKS
from virtrepro.benchmarks.base import hosts_used
from virtrepro.planning.config import run_priority
from virtrepro.planning.config import VALIDATED_ENV, digest, write_config_file
from virtrepro.measurement.job import plan_entry

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
@functools.lru_cache(maxsize=None)
def jobs_by_variant(platforms):
    """The plan made once: (testbed, benchmark, variant key) -> its VariantRounds (all its platforms)."""
    return {(job.testbed, job.benchmark, job.variant.key): job for job in rounds_plan(platforms)}


@one_line_errors
def planned_job(testbed, benchmark, key):
    """The VariantRounds of a measurement job's wildcards (None: not planned)."""
    return jobs_by_variant(tuple(concrete_platforms())).get((testbed, benchmark, key))


@one_line_errors
def job_priority(wildcards):
    """Jobs one benchmark after the other (config.run_priority), and within one all variants of one
    guest spec together (their guests boot once)."""
    base = run_priority(config, wildcards.benchmark)
    benchmark = BENCHMARKS[wildcards.benchmark]
    planned = planned_job(wildcards.testbed, wildcards.benchmark, wildcards.variant)
    overrides = benchmark.guest_overrides(planned.variant) if planned is not None else {}
    if not overrides:
        return base + 999  # the configured guest first: most benchmarks run in it
    return base + 998 - int(hashlib.sha256(json.dumps(overrides, sort_keys=True).encode()).hexdigest(), 16) % 900


@one_line_errors
@functools.lru_cache(maxsize=None)
def measuring_hosts(benchmark, key):
    """The testbed hosts one run of this variant holds (virtrepro.testbed.placement), the one that runs its
    command first: the same host on every platform, or the first hosts of the testbed for a run whose
    instances are on different hosts (MPI across hosts)."""
    planned = planned_job(TESTBED, benchmark, key)
    spanned = hosts_used(BENCHMARKS[benchmark], planned.variant) if planned is not None else 1
    return tuple(placement.hosts_for(TESTBED_HOSTS, DATA, TESTBED, benchmark, key, spanned))


@one_line_errors
def job_entry(wildcards):
    """A measurement job's --plan-entry: every platform's VariantPlan of the variant, and the host;
    stops with one line when the wildcards name a job the plan does not have."""
    planned = planned_job(wildcards.testbed, wildcards.benchmark, wildcards.variant)
    if planned is None or planned.reps_label != wildcards.reps:
        stop(f"the configuration plans no run {wildcards.testbed}/{wildcards.benchmark}/{wildcards.variant} "
             f"({wildcards.reps} repetitions)")
    return plan_entry(planned, measuring_hosts(wildcards.benchmark, wildcards.variant)[0])


@one_line_errors
def job_inputs(wildcards):
    """The guest image (if a platform of the job runs in a guest) and every platform's variant directory."""
    planned = planned_job(wildcards.testbed, wildcards.benchmark, wildcards.variant)
    platforms = planned.platforms if planned is not None else []
    image = [GUEST_IMAGE] if any(name in GUEST_PLATFORMS for name in platforms) else []
    return image + [path for name in platforms for path in variant_directory(name)(wildcards)]


@one_line_errors
def host_resources():
    """One measurement at a time on each host: the job holds the resource of each host it uses (and no other)."""
    return {placement.resource_name(index):
            one_line_errors(lambda wc, name=name: int(name in measuring_hosts(wc.benchmark, wc.variant)))
            for index, name in enumerate(TESTBED_HOSTS)}


rule measure:
    input:
        # the guest image is named through ancient(): a rebuilt image does not re-run finished jobs
        image=one_line_errors(lambda wc: [ancient(path) for path in job_inputs(wc) if path == GUEST_IMAGE]),
        builds=build_input,  # builds.smk: a compiled benchmark's build
        directories=one_line_errors(lambda wc: [path for path in job_inputs(wc) if path != GUEST_IMAGE]),  # common.smk
    output:
        marker=MARKER_PATTERN,
    log:
        "logs/measure/{testbed}/{benchmark}/{variant}.reps-{reps}.log",
    params:
        host=one_line_errors(lambda wc: measuring_hosts(wc.benchmark, wc.variant)[0]),
        # the job's plan entry: the variant on every platform as planned here, and its host
        entry=one_line_errors(job_entry),
    priority: job_priority
    # a measurement owns its host: on the local testbed that is this machine, so nothing else runs
    # beside it here; a remote host's measurement leaves this machine's cores to the others
    threads: 1 if REMOTE_TESTBED else workflow.cores
    resources:
        measurement_slots=1,
        **host_resources(),
    localrule: True
    # a failed repetition (kept as rep-<k>.failed-<time>.log) is measured once more; the
    # repetitions already complete are kept; the log holds both attempts
    retries: 1
    shell:
        f"{sys.executable} -m virtrepro.measurement.job --data-dir {DATA} --config-file {CONFIG_FILE}"
        " --plan-entry {params.entry:q} --expect-marker {output.marker:q} 2>&1 | tee -a {log}"
