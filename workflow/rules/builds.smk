# Source builds (virtrepro.builds.registry): a benchmark that no package archive carries (NPB) is obtained
# (a local copy, else a download, else skipped with the reason recorded) and built on the testbed
# host before its first run. One checkpoint for every build in use, one build rule each.
# NPB: docs/npb.md.

from virtrepro.builds import registry as BUILDS_MODULE

USED_BUILDS = BUILDS_MODULE.used(config)  # name -> the module that obtains and builds it
BUILD_PROBE = datalayout.probe_pattern(DATA, "{build}")  # a build's probe is named by the build
BUILD_MANIFEST = {name: str(module.manifest_path(config).resolve()) for name, module in USED_BUILDS.items()}


# Where the source comes from, or why it is skipped: kept with the raw data, like the QEMU probe.
# Re-run when what decides it changes (the build's settings); delete the file to try again.
checkpoint build_source:
    output:
        BUILD_PROBE,
    log:
        "logs/probes/{testbed}/{build}.log",
    wildcard_constraints:
        build="|".join(USED_BUILDS) or "no-build-in-use",
    params:
        module=one_line_errors(lambda wildcards: USED_BUILDS[wildcards.build].__name__),
        settings=one_line_errors(lambda wildcards: json.dumps(USED_BUILDS[wildcards.build].settings(config), sort_keys=True)),
    shell:
        f"{sys.executable} -m {{params.module}} obtain --output {{output}} > {{log}} 2>&1"


for _name, _module in USED_BUILDS.items():

    rule:
        name:
            f"build_{_name}"
        input:
            ancient(BUILD_PROBE.format(testbed=TESTBED, build=_name)),
        output:
            BUILD_MANIFEST[_name],
        log:
            f"logs/builds/{_name}-{Path(BUILD_MANIFEST[_name]).parent.name}.log",
        # before any measurement: a build never falls between the platforms of a benchmark's
        # comparison (measure.smk orders those one benchmark at a time), nor runs beside one
        priority: 10**9
        params:
            module=_module.__name__,
            wanted=json.dumps(_module.wanted(config), sort_keys=True),  # what is built: a change builds again
        shell:
            f"{sys.executable} -m {{params.module}} build --source {{input}} > {{log}} 2>&1"


@one_line_errors
def build_probes():
    """The probe record of every build in use (rule prepare)."""
    return [BUILD_PROBE.format(testbed=TESTBED, build=name) for name in USED_BUILDS]


@one_line_errors
def build_available(name):
    """True if build ``name``'s source was obtained (a checkpoint: decided once its probe ran)."""
    probe = checkpoints.build_source.get(testbed=TESTBED, build=name).output[0]
    return probe_record(probe, "status")["status"] == "available"


@one_line_errors
def needs_build(benchmark):
    """The name of ``benchmark``'s source build, or None (it comes from a package)."""
    return BENCHMARKS[benchmark].build


@one_line_errors
def without_unavailable_builds(runs):
    """The planned runs, less those whose source build was skipped (its probe file says why)."""
    skipped = {name for name in {needs_build(run.benchmark) for run in runs} - {None} if not build_available(name)}
    return [run for run in runs if needs_build(run.benchmark) not in skipped]


@one_line_errors
def build_input(wildcards):
    """A measurement of a compiled benchmark needs its build."""
    name = needs_build(wildcards.benchmark)
    return [BUILD_MANIFEST[name]] if name in BUILD_MANIFEST else []
