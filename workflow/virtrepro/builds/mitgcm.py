"""MIT GCM (Youseff 2006, Section 5.2): obtaining the source tarball and building ``verification/exp2``.

MITgcm is in no package archive; its public git repository holds the model and ``verification/exp2``.
The workflow takes a local tarball packed from one commit of a clone (:mod:`virtrepro.builds.mitgcm_pack`):

1. ``mitgcm.tarball`` configured (a local path; relative: to the repository's root): used when its
   sha256 is ``mitgcm.sha256``; a difference is refused with both checksums named. Without a
   configured checksum the tarball is used and recorded as unverified, with its actual sha256.
2. else MITgcm is *skipped*: the reason is written to ``<data>/raw/<testbed>/probes/mitgcm.json``
   (``"status": "skipped"``), the ``mit_gcm`` benchmark plans no runs, and the rest goes on.

The build (:func:`build`) extracts the tarball under ``.state/mitgcm/<key>/`` (key: hash of the
tarball's checksum, the build options and :data:`BUILD_REVISION`) and builds exp2 sequentially in its
``verification/exp2/build`` with MITgcm's ``tools/genmake2`` (``-mods ../code``, the
``linux_amd64_gfortran`` options of the tree, no MPI, no OpenMP) and Debian's gfortran, then puts the
executable, exp2's input and one namelist ``data`` per number of time steps the configuration asks
for under ``bin/exp2/``.

    python -m virtrepro.builds.mitgcm obtain --config JSON --output probes/mitgcm.json
    python -m virtrepro.builds.mitgcm build  --config JSON --source probes/mitgcm.json
    python -m virtrepro.builds.mitgcm pack   --clone GIT_DIR --commit C --out TARBALL   (docs/mitgcm.md)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from .. import datalayout
from ..benchmarks.mitgcm import EXECUTABLE, INPUTS, TIME_STEP_S, namelist_name, time_steps
from ..errors import VirtreproError
from .sourcebuild import add_obtain_build, obtain_or_build, run_step, tool_versions
from .sourcebuild import why_no_runs as sourcebuild_why_no_runs  # this module's why_no_runs names its probe
from ..testbed.hosts import default_state_dir
from ..layout import recorded_path
from .npb import REPOSITORY, sha256_of, utc_now, write_record

# what the build runs on the host: program -> Debian package (see virtrepro.testbed.packages)
HOST_PATHS = {"gfortran": "gfortran", "make": "make", "cpp": "cpp"}
BENCHMARK = "mit_gcm"
DEFAULTS = {"tarball": None, "sha256": None, "source": None}
EXPERIMENT = "verification/exp2"
# genmake2's options file of the tree: gfortran on x86-64, no MPI (genmake2 without -mpi), no OpenMP
OPTFILE = "tools/build_options/linux_amd64_gfortran"
GENMAKE = ["../../../tools/genmake2", "-rootdir", "../../..", "-mods", "../code", "-optfile", f"../../../{OPTFILE}"]
# raised when a change of the build makes earlier builds stale
BUILD_REVISION = 1


class MitgcmError(VirtreproError, RuntimeError):
    """MITgcm cannot be used as configured (a checksum differs, a configured tarball is missing, a build failed)."""


def settings(config: dict) -> dict:
    """The configuration's ``mitgcm:`` with the schema's defaults filled in."""
    return {**DEFAULTS, **(config.get("mitgcm") or {})}


def tarball_path(mitgcm: dict) -> Path | None:
    if not mitgcm.get("tarball"):
        return None
    return (REPOSITORY / Path(mitgcm["tarball"]).expanduser()).resolve()


def obtain(mitgcm: dict) -> dict:
    """The probe record: ``{"status": "available", "tarball", "sha256", ...}`` or ``{"status": "skipped",
    "reason"}``. Raises MitgcmError for a configured tarball that is missing or has another checksum."""
    expected = (mitgcm.get("sha256") or "").lower() or None
    record = {"checked_utc": utc_now(), "sha256_expected": expected, "tarball_source": mitgcm.get("source")}
    path = tarball_path(mitgcm)
    if path is None:
        return {**record, "status": "skipped",
                "reason": "no MITgcm tarball is configured (mitgcm.tarball): MITgcm is in no package archive; pack "
                          "one from a clone of its public repository with `python -m virtrepro.builds.mitgcm pack` "
                          "(docs/mitgcm.md)"}
    if not path.is_file():
        raise MitgcmError(f"mitgcm.tarball {path} does not exist (configure an existing tarball, or null)")
    actual = sha256_of(path)
    if expected is not None and actual != expected:
        raise MitgcmError(f"MITgcm tarball {path} has sha256 {actual}, but mitgcm.sha256 says {expected}: refused. "
                          "If this really is the source you mean, set mitgcm.sha256 to its checksum.")
    note = {} if expected else {"note": "no mitgcm.sha256 configured: the tarball was used unverified "
                                        "(its sha256 is recorded; set mitgcm.sha256 to pin it)"}
    # inside the repository its relative path, elsewhere its name only (the build takes the path from
    # the configuration)
    return {**record, "status": "available", "source": "local", "tarball": recorded_path(path, root=REPOSITORY), "sha256": actual,
            "sha256_verified": expected is not None, **note}


# --- the source-build interface (virtrepro.builds.registry) ----------------------------------------------

def used(config: dict) -> bool:
    return BENCHMARK in config["benchmarks"]


def wanted(config: dict) -> dict[str, list[int]]:
    """What the configuration's runs need built: ``{"time_steps": [...]}`` (one namelist each)."""
    scale = config["scales"][config["scale"]]
    if not used(config) or BENCHMARK not in scale:
        return {"time_steps": []}
    return {"time_steps": [time_steps(scale[BENCHMARK]["days"])]}


def build_key(tarball_sha256: str | None) -> str:
    identity = {"sha256": tarball_sha256, "genmake": GENMAKE, "revision": BUILD_REVISION}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]


def tarball_sha256_for_key(mitgcm: dict) -> str | None:
    """The checksum the build will be made from, known before obtaining (configured, or the local file's)."""
    if mitgcm.get("sha256"):
        return mitgcm["sha256"].lower()
    path = tarball_path(mitgcm)
    return sha256_of(path) if path is not None and path.is_file() else None


def build_dir(mitgcm: dict, state_dir: Path | None = None) -> Path:
    return Path(state_dir or default_state_dir()) / "mitgcm" / build_key(tarball_sha256_for_key(mitgcm))


def manifest_path(config: dict, state_dir: Path | None = None) -> Path:
    """The build's record for what this configuration wants (named by it: other time steps build again)."""
    asked = json.dumps(wanted(config), sort_keys=True).encode()
    return build_dir(settings(config), state_dir) / f"manifest-{hashlib.sha256(asked).hexdigest()[:12]}.json"


def built_file(config: dict, relative: str, state_dir: Path | None = None) -> Path:
    """A built file, named as the benchmark's uploads name it (``exp2/mitgcmuv``, ``exp2/input/<file>``)."""
    return build_dir(settings(config), state_dir) / "bin" / relative


def record(config: dict, benchmark: str = BENCHMARK, state_dir: Path | None = None) -> dict:
    """What a run says about the MITgcm it ran (its sidecar's ``mitgcm``)."""
    path = manifest_path(config, state_dir)
    if not path.is_file():
        raise MitgcmError(f"{path} is missing: the workflow's build_mitgcm rule makes it (python -m virtrepro.builds.mitgcm build)")
    manifest = json.loads(path.read_text())
    return {key: manifest[key] for key in ("tarball_sha256", "tarball_source", "experiment", "genmake", "optfile",
                                           "tools", "executable_sha256")} | {"build": path.parent.name}


def why_no_runs(data_dir: str | Path, testbed: str, benchmark: str = BENCHMARK) -> str:
    """One line for a notebook on why ``benchmark`` has no runs on ``testbed`` (:func:`sourcebuild.why_no_runs`)."""
    return sourcebuild_why_no_runs(data_dir, testbed, benchmark, datalayout.MITGCM_PROBE, "MITgcm")


# --- the build ------------------------------------------------------------------------------------

def _run(argv: list[str], cwd: Path, log) -> None:
    run_step(argv, cwd, log, MitgcmError)


def _tool_versions() -> dict:
    return tool_versions(("gfortran", "make"))


def _extract(tarball: Path, root: Path) -> Path:
    """The tarball's one top directory, extracted as ``root/src`` (once)."""
    src = root / "src"
    if not src.is_dir():
        tmp = root / "src.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        with tarfile.open(tarball) as archive:
            archive.extractall(tmp, filter="data")
        tops = [p for p in tmp.iterdir() if p.is_dir()]
        if len(tops) != 1 or not (tops[0] / EXPERIMENT).is_dir():
            raise MitgcmError(f"{tarball} does not have one top directory holding {EXPERIMENT}/")
        tops[0].rename(src)
        shutil.rmtree(tmp)
    return src


def namelist(original: str, steps: int) -> str:
    """exp2's ``data`` with its run length set to ``steps`` time steps (``nTimeSteps``; its ``endTime`` dropped),
    checked to hold the time step :data:`TIME_STEP_S` that the steps are counted in."""
    clock = re.search(r"^\s*deltaTClock\s*=\s*([0-9.eEdD+]+)\s*,", original, re.M)
    if clock is None or float(clock.group(1).replace("d", "e").replace("D", "e")) != TIME_STEP_S:
        raise MitgcmError(f"exp2's input/data no longer sets deltaTClock = {TIME_STEP_S} s: the simulated days "
                          "of the configuration cannot be counted in its time steps")
    lines = [line for line in original.splitlines() if not re.match(r"^\s*(endTime|nTimeSteps)\s*=", line)]
    at = next((i for i, line in enumerate(lines) if re.match(r"^\s*startTime\s*=", line)), None)
    if at is None:
        raise MitgcmError("exp2's input/data has no startTime line to set the run length after")
    lines.insert(at + 1, f" nTimeSteps={steps},")
    return "\n".join(lines) + "\n"


def build(config: dict, source: dict, log=sys.stdout, state_dir: Path | None = None) -> Path:
    """Build exp2 from the obtained tarball and lay out what a run uploads; return the manifest's path."""
    mitgcm = settings(config)
    if source.get("status") != "available":
        raise MitgcmError(f"MITgcm is not available: {source.get('reason', 'no tarball')}")
    root = build_dir(mitgcm, state_dir)
    if build_key(source["sha256"]) != root.name:
        raise MitgcmError(f"the obtained tarball (sha256 {source['sha256']}) is not the one the configuration names; "
                          "re-run the workflow so that the MITgcm source is obtained again")
    tarball = tarball_path(mitgcm)
    if tarball is None or not tarball.is_file() or sha256_of(tarball) != source["sha256"]:
        raise MitgcmError(f"mitgcm.tarball ({tarball}) is not the tarball that was obtained (sha256 {source['sha256']})")
    experiment = _extract(tarball, root) / EXPERIMENT
    out = root / "bin" / "exp2"
    executable = out / EXECUTABLE
    compile_s = None
    if not executable.exists():
        work = experiment / "build"
        work.mkdir(exist_ok=True)
        start = time.monotonic()
        for argv in (GENMAKE, ["make", "depend"], ["make"]):
            _run(argv, work, log)
        compile_s = round(time.monotonic() - start, 1)
        if not (work / EXECUTABLE).exists():
            raise MitgcmError(f"genmake2 and make in {work} produced no {EXECUTABLE}")
        (out / "input").mkdir(parents=True, exist_ok=True)
        for name in INPUTS:
            shutil.copy2(experiment / "input" / name, out / "input" / name)
        shutil.copy2(work / EXECUTABLE, executable)
        write_record({"compile_s": compile_s}, out / f"{EXECUTABLE}.json")
    original = (experiment / "input" / "data").read_text()
    for steps in wanted(config)["time_steps"]:
        (out / namelist_name(steps)).write_text(namelist(original, steps))
    made = json.loads((out / f"{EXECUTABLE}.json").read_text())
    manifest = {"tarball": source["tarball"], "tarball_sha256": source["sha256"], "tarball_source": mitgcm.get("source"),
                "experiment": EXPERIMENT, "genmake": " ".join(GENMAKE), "optfile": OPTFILE, "tools": _tool_versions(),
                "compile_s": made.get("compile_s"), "executable_sha256": sha256_of(executable),
                "inputs": {name: sha256_of(out / "input" / name) for name in INPUTS},
                "namelists": {str(steps): sha256_of(out / namelist_name(steps)) for steps in wanted(config)["time_steps"]}}
    path = manifest_path(config, state_dir)
    write_record(manifest, path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtrepro.builds.mitgcm", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add_obtain_build(sub, "check the configured tarball; write the probe record", "build exp2 for what the configuration asks")
    pk = sub.add_parser("pack", help="pack what exp2's build needs of a commit of a git clone as a reproducible tarball")
    pk.add_argument("--clone", required=True, help="a clone (bare or not) of MITgcm's public repository")
    pk.add_argument("--commit", required=True, help="a commit or tag")
    pk.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.command == "pack":
        from .mitgcm_pack import pack

        packed = pack(Path(args.clone), args.commit, Path(args.out))
        print(f"{packed['sha256']}  {args.out}")
        print(f"commit {packed['commit']}, {packed['files']} files of {', '.join(packed['paths'])} under "
              f"{packed['top']}/; the tar inside: sha256 {packed['tar_sha256']}", file=sys.stderr)
        return 0
    return obtain_or_build(parser, args, lambda record: "MITgcm", lambda config: obtain(settings(config)), build,
                           write_record, MitgcmError)


if __name__ == "__main__":
    from ..cli import run as run_cli  # not "run": a module may have a function of that name

    run_cli(main)
