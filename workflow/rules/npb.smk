# NAS Parallel Benchmarks: obtained (local tarball, else NASA's download, else skipped with
# a recorded reason) and built on the testbed host before any NPB run. See docs/npb.md.

from virtrepro import npb as NPB

NPB_PROBE = DATA + "/raw/{testbed}/probes/npb.json"
NPB_MANIFEST = str(NPB.manifest_path(config).resolve()) if NPB.uses_npb(config) else None


# Where the tarball comes from, or why NPB is skipped: kept with the raw data, like the QEMU probe.
# Re-run when npb: changes; delete the file to try a download again.
checkpoint npb_source:
    output:
        NPB_PROBE,
    log:
        "logs/probes/{testbed}/npb.log",
    params:
        npb=lambda wildcards: json.dumps(NPB.settings(config), sort_keys=True),  # `{version}` is no wildcard
    shell:
        f"{sys.executable} -m virtrepro.npb obtain --output {{output}} > {{log}} 2>&1"


if NPB_MANIFEST is not None:

    rule npb_build:
        input:
            ancient(NPB_PROBE.format(testbed=TESTBED)),
        output:
            NPB_MANIFEST,
        log:
            f"logs/npb/build-{Path(NPB_MANIFEST).parent.name}.log",
        params:
            binaries=lambda wildcards: json.dumps(NPB.wanted_binaries(config), sort_keys=True),
        shell:
            f"{sys.executable} -m virtrepro.npb build --source {{input}} > {{log}} 2>&1"


def npb_available():
    """True if NPB was obtained (a checkpoint: decided once the npb_source probe ran)."""
    return probe_record(checkpoints.npb_source.get(testbed=TESTBED).output[0], "status")["status"] == "available"


def without_skipped_npb(runs):
    """The planned runs, less the NPB ones when NPB was skipped (the probe file says why)."""
    if not any(run.benchmark in NPB.BENCHMARK_FLAVOUR for run in runs) or npb_available():
        return runs
    return [run for run in runs if run.benchmark not in NPB.BENCHMARK_FLAVOUR]


def npb_build_input(wildcards):
    """A measurement of an NPB benchmark needs the built binaries."""
    return [NPB_MANIFEST] if wildcards.benchmark in NPB.BENCHMARK_FLAVOUR and NPB_MANIFEST else []
