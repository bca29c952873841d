#!/usr/bin/env bash
# Measure the reference data: testbed reference-vm at the `reference` scale on native, lxc, podman,
# charliecloud and qemu-tcg (QEMU TCG only for benchmarks it can inform: config.yaml's
# informative_only), NPB from the tarball
# packed from its public git repository (config/npb-from-git.yaml; docs/npb.md says how to make
# it) and MIT GCM likewise (config/mitgcm-from-git.yaml, below), from a committed tree (the testbed's require_clean_tree). The run resumes: complete raw logs
# are kept, so it can be run in parts (stop it at any time; run it again to go on). --keep-going:
# a variant whose runs fail (kept as *.failed-*) does not stop the other hours of the run.
#
# To stop it: Ctrl-C in its terminal, or SIGTERM to the workflow process (`pkill -TERM -f "m virtrepro --cores"`;
# Snakemake runs inside `python -m virtrepro`, so "snakemake --cores" matches nothing), then to the running
# measurement job (`pkill -TERM -f virtrepro.measurement.job`), which Snakemake otherwise waits for and retries:
# a SIGINT sent to Snakemake alone let it go on scheduling jobs (--keep-going and each job's retry).
# Complete logs stay; the repetition that was running is measured again next time.
#
# While it runs, the new logs go to data/staging/ (the committed reference data under data/raw/
# stays what the notebooks show until the new run is complete); commit data/staging/ as you go.
# When every job is done, the new logs replace data/raw/reference-vm/ in one commit
# (docs/reference-data.md). DATA_DIR=data tops up the committed data in place instead (after a
# rule's change adds repetitions to variants that are already there): same testbed, same host.
#
#   bash scripts/reference_run.sh            # measure (set-up first)
#   bash scripts/reference_run.sh -n         # what is left, with the estimated time (a dry run)
#   BENCHMARKS="netperf iperf3" bash scripts/reference_run.sh   # a part of these benchmarks only
# A part that ends inside a benchmark must be continued on the same machine (a benchmark's platforms
# are compared on one machine only: the job refuses another); BENCHMARKS picks parts that fit a
# session (the estimate of `-n` is per benchmark).
# Extra arguments go to Snakemake.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# MIT GCM from its tarball packed as docs/mitgcm.md says, kept at this path (machine-local, never
# committed); without it mit_gcm is skipped, and its probe file says why
mitgcm=.state/mitgcm/MITgcm-checkpoint69p.tar.gz
files=(config/npb-from-git.yaml)
settings=(testbed=reference-vm scale=reference "platforms=[native,lxc,podman,charliecloud,qemu-tcg]"
          "data_dir=${DATA_DIR:-data/staging}" "notebooks=[]")
if [ -f "$mitgcm" ]; then
    files+=(config/mitgcm-from-git.yaml)
    settings+=("mitgcm={tarball: $mitgcm}")
fi
if [ -n "${BENCHMARKS:-}" ]; then
    settings+=("benchmarks=[$(echo $BENCHMARKS | tr ' ' ',')]")
fi
if [ "${1:-}" = "-n" ]; then
    shift
    # the estimate takes one file a --configfile; Snakemake takes them all after one (a second
    # --configfile would replace the first)
    exec .venv/bin/python -m virtrepro.measurement.estimate --estimate \
        $(printf -- '--configfile %s ' "${files[@]}") --config "${settings[@]}" "$@"
fi
.venv/bin/python -m virtrepro --cores all prepare --configfile "${files[@]}" --config "${settings[@]}" "$@"
exec .venv/bin/python -m virtrepro --cores all --keep-going --configfile "${files[@]}" --config "${settings[@]}" "$@"
