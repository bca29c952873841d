# Measurement: one job per repetition. Raw logs are flagged update() so that
# Snakemake never deletes an existing log before a job; the job itself keeps
# a complete log untouched and only measures missing repetitions.
#
# The job is a shell command (python -m virtrepro.measure) rather than a run:
# block, which Snakemake would execute by starting a whole new Snakemake per job.
# It reads the validated configuration from VIRTREPRO_CONFIG (set below) and
# finds its run in the plan from the wildcards.

import json

os.environ["VIRTREPRO_CONFIG"] = json.dumps(config)
# the command line that started the workflow, for the sidecars' provenance
os.environ.setdefault("VIRTREPRO_INVOCATION", json.dumps(sys.argv))
# the local testbed's sshd lives as long as this Snakemake process
os.environ.setdefault("VIRTREPRO_TESTBED_OWNER", str(os.getpid()))


localrules:
    measure,


rule measure:
    input:
        image_input,
    output:
        log=update(RAW_PATTERN + ".log"),
        sidecar=update(RAW_PATTERN + ".json"),
    log:
        "logs/measure/{testbed}/{platform}/{benchmark}/{variant}/rep-{rep}.log",
    threads: workflow.cores  # a measurement owns the host: nothing else runs beside it
    resources:
        measurement_slots=1,
    shell:
        f"{sys.executable} -m virtrepro.measure --data-dir {DATA}"
        " --testbed {wildcards.testbed} --platform {wildcards.platform} --benchmark {wildcards.benchmark}"
        " --variant {wildcards.variant:q} --rep {wildcards.rep} 2>&1 | tee {log}"
