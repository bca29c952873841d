"""NAS Parallel Benchmarks 3.4: obtaining the source tarball and building it on the testbed host.

NPB is in no package archive, so the workflow obtains NASA's tarball itself:

1. ``npb.tarball`` configured (a local path): use it. Its sha256 is checked
   against ``npb.sha256`` or, if that is null, against the checksum pinned for
   ``npb.version`` below; a difference is refused with both checksums named.
2. else download ``npb.url`` (NASA's official download) and check the same
   checksum. Without a known checksum nothing is downloaded: the user has to
   state one (``npb.sha256``).
3. else (no network, no checksum): NPB is *skipped*. The reason is written to
   ``<data>/raw/<testbed>/probes/npb.json`` (``"status": "skipped"``) where the
   notebooks can show it, the NPB benchmarks plan no runs, and the rest of the
   workflow goes on.

The build (:func:`build`) extracts the tarball under
``.state/npb/<key>/`` (key: hash of version, tarball checksum and compiler
flags) and compiles the serial (NPB3.4-SER; NPB 3.4 has none, so the OpenMP
code compiled without -fopenmp), OpenMP and MPI binaries of the kernels and
classes the configuration asks for into ``.state/npb/<key>/bin/<flavour>/``.

    python -m virtrepro.builds.npb obtain --config JSON --output probes/npb.json
    python -m virtrepro.builds.npb build  --config JSON --source probes/npb.json
    python -m virtrepro.builds.npb pack-git --repo CLONE --commit C --out TARBALL   (docs/npb.md)
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from .. import datalayout
from ..errors import VirtreproError
from ..layout import recorded_path
from .sourcebuild import add_obtain_build, obtain_or_build, run_step, tool_versions
from .sourcebuild import why_no_runs as sourcebuild_why_no_runs  # this module's why_no_runs names its probe
from ..testbed.hosts import default_state_dir

# Published sha256 checksums of NASA's tarballs, by version. Only checksums
# taken from a public package recipe are listed: 3.4.1 from spack's `npb`
# package (var/spack/repos/builtin/packages/npb/package.py). For any other
# version (3.4.2, 3.4.3, ...) no published checksum was found: configure
# `npb.sha256` with the checksum you trust, or supply `npb.tarball`.
# what the build runs on the host: program -> Debian package (see virtrepro.testbed.packages)
HOST_PATHS = {"gfortran": "gfortran", "mpif90": "libopenmpi-dev", "mpirun": "openmpi-bin", "make": "make"}
PINNED_SHA256 = {
    "3.3.1": "4a8ea679b1df69f583c544c47198b3c26a50ec2bb6f8f69aef66c04c9a747d2d",
    "3.4.1": "f3a43467da6e84a829ea869156d3ea86c17932136bb413a4b6dab23018a28881",
}
PINNED_FROM = "spack package recipe `npb`"

KERNELS = ("bt", "cg", "ep", "ft", "is", "lu", "mg", "sp")
FLAVOURS = ("serial", "omp", "mpi")
BENCHMARK_FLAVOUR = {"npb_serial": "serial", "npb_omp": "omp", "npb_mpi": "mpi"}

# make.def of each flavour (the build writes it; nothing of the tarball's template is used)
_SERIAL_MAKE_DEF = {
    "FC": "gfortran", "FLINK": "$(FC)", "F_LIB": "", "F_INC": "",
    "FFLAGS": "-O3", "FLINKFLAGS": "$(FFLAGS)",
    "CC": "gcc", "CLINK": "$(CC)", "C_LIB": "-lm", "C_INC": "",
    "CFLAGS": "-O3", "CLINKFLAGS": "$(CFLAGS)", "UCC": "gcc",
    "BINDIR": "../bin", "RAND": "randdp", "WTIME": "wtime.c",
}
MAKE_DEF = {
    "serial": _SERIAL_MAKE_DEF,
    "omp": {**_SERIAL_MAKE_DEF, "FFLAGS": "-O3 -fopenmp", "CFLAGS": "-O3 -fopenmp"},
    "mpi": {
        # gfortran >= 10 refuses the MPI calls' mixed argument types without -fallow-argument-mismatch
        "MPIFC": "mpif90", "FLINK": "$(MPIFC)", "FMPI_LIB": "", "FMPI_INC": "",
        "FFLAGS": "-O3 -fallow-argument-mismatch", "FLINKFLAGS": "$(FFLAGS)",
        "MPICC": "mpicc", "CLINK": "$(MPICC)", "CMPI_LIB": "", "CMPI_INC": "",
        "CFLAGS": "-O3", "CLINKFLAGS": "$(CFLAGS)", "CC": "gcc",
        "BINDIR": "../bin", "RAND": "randdp",
    },
}


DEFAULTS = {
    "version": "3.4.1",
    "tarball": None,
    "url": "https://www.nas.nasa.gov/assets/npb/NPB{version}.tar.gz",
    "sha256": None,
    "source": None,
}

# the repository's root: a relative npb.tarball is taken from here, wherever the workflow runs
REPOSITORY = Path(__file__).resolve().parents[3]
# raised when a change of the build (not of make.def) makes earlier binaries stale: 2 = serial
# from NPB3.4-OMP compiled without -fopenmp
BUILD_REVISION = 2


def settings(config: dict) -> dict:
    """The configuration's ``npb:`` with the schema's defaults filled in."""
    return {**DEFAULTS, **(config.get("npb") or {})}


class NpbError(VirtreproError, RuntimeError):
    """NPB cannot be used as configured (a checksum differs, a configured tarball is missing, a build failed)."""


def tarball_path(npb: dict) -> Path | None:
    """The configured local tarball: ``~`` expanded, a relative path taken from the repository's root."""
    if not npb.get("tarball"):
        return None
    return (REPOSITORY / Path(npb["tarball"]).expanduser()).resolve()


def _recorded(path: Path) -> str:
    """A tarball's path as the records keep it (:func:`layout.recorded_path`): relative to the
    repository when it is inside (the committed probe files name no directory of the machine that
    measured); elsewhere whole, since NPB's build reads it from the probe record."""
    return recorded_path(path, str(path), REPOSITORY)


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def expected_sha256(npb: dict) -> tuple[str | None, str | None]:
    """The checksum the tarball must have, and where it comes from (config, pinned, or none)."""
    if npb.get("sha256"):
        return npb["sha256"].lower(), "config npb.sha256"
    pinned = PINNED_SHA256.get(str(npb["version"]))
    return (pinned, f"pinned for {npb['version']} ({PINNED_FROM})") if pinned else (None, None)


def download_url(npb: dict) -> str:
    return npb["url"].replace("{version}", str(npb["version"]))


def _check(path: Path, expected: str | None, origin: str | None, what: str) -> str:
    actual = sha256_of(path)
    if expected is not None and actual != expected:
        raise NpbError(
            f"NPB tarball {what} has sha256 {actual}, but {origin} says {expected}: refused. "
            "If this really is the NPB you mean, set npb.sha256 to its checksum; otherwise get the right tarball."
        )
    return actual


def obtain(npb: dict, downloads: Path | None = None, timeout: float = 30) -> dict:
    """Find or download the NPB tarball; return the record that the probe file keeps.

    ``{"status": "available", "tarball": ..., "sha256": ...}`` or
    ``{"status": "skipped", "reason": ...}``. Raises NpbError when a tarball is
    there but must not be used (its checksum differs, a configured path is missing).
    """
    expected, origin = expected_sha256(npb)
    record = {"version": str(npb["version"]), "sha256_expected": expected, "sha256_expected_from": origin,
              "checked_utc": utc_now(), "tarball_source": npb.get("source")}
    path = tarball_path(npb)
    if path is not None:
        if not path.is_file():
            raise NpbError(f"npb.tarball {path} does not exist (configure an existing NPB {npb['version']} tarball, or null)")
        actual = _check(path, expected, origin, str(path))
        note = None if expected else (
            f"no published checksum is known for NPB {npb['version']}: the tarball was used unverified "
            "(its sha256 is recorded; set npb.sha256 to pin it)")
        return {**record, "status": "available", "source": "local", "tarball": _recorded(path), "sha256": actual,
                "sha256_verified": expected is not None, **({"note": note} if note else {})}
    url = download_url(npb)
    if expected is None:
        return {**record, "status": "skipped", "url": url,
                "reason": f"no published sha256 is known for NPB {npb['version']}, so it is not downloaded: "
                          "set npb.sha256 to the checksum you trust, or npb.tarball to a local copy"}
    downloads = Path(downloads or default_state_dir() / "npb" / "downloads")
    target = downloads / f"NPB{npb['version']}.tar.gz"
    if not target.is_file():
        downloads.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response, open(partial, "wb") as out:
                shutil.copyfileobj(response, out)
        except (urllib.error.URLError, OSError, TimeoutError) as error:
            partial.unlink(missing_ok=True)
            return {**record, "status": "skipped", "url": url,
                    "reason": f"NPB {npb['version']} could not be downloaded from {url} "
                              f"({type(error).__name__}: {getattr(error, 'reason', error)}); "
                              "set npb.tarball to a local copy of the tarball (see docs/npb.md)"}
        try:
            _check(partial, expected, origin, f"downloaded from {url}")
        except NpbError:
            partial.unlink(missing_ok=True)
            raise
        partial.rename(target)
    actual = _check(target, expected, origin, str(target))
    return {**record, "status": "available", "source": "download", "url": url, "tarball": _recorded(target.resolve()),
            "sha256": actual, "sha256_verified": True}


def write_record(record: dict, output: Path) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(output.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    tmp.rename(output)


# --- what to build ----------------------------------------------------------------------------

def wanted_binaries(config: dict) -> dict[str, list[str]]:
    """``{flavour: ["ep.S", ...]}`` for the NPB benchmarks the configuration runs."""
    from ..benchmarks.npb import kernel_class

    scale = config["scales"][config["scale"]]
    wanted: dict[str, set] = {}
    for name in config["benchmarks"]:
        if name in BENCHMARK_FLAVOUR and name in scale:
            params = scale[name]
            wanted.setdefault(BENCHMARK_FLAVOUR[name], set()).update(
                f"{k}.{kernel_class(params, k)}" for k in params["kernels"])
    return {flavour: sorted(names) for flavour, names in sorted(wanted.items())}


def not_planned(config: dict) -> list[str]:
    """The configured NPB runs that cannot run (process counts a kernel does not accept, MPI across
    hosts on a platform whose instances cannot be on different hosts), each with its reason."""
    from ..benchmarks.npb import NpbMpi

    scale = config["scales"][config["scale"]]
    if "npb_mpi" not in config["benchmarks"] or "npb_mpi" not in scale:
        return []
    reasons = []
    for platform in config.get("platforms") or [None]:
        reasons += [r for r in NpbMpi().planning(scale["npb_mpi"], platform)[1] if r not in reasons]
    return reasons


def uses_npb(config: dict) -> bool:
    return any(name in BENCHMARK_FLAVOUR for name in config["benchmarks"])


# --- the source-build interface (virtrepro.builds.registry): what the workflow and a measurement ask of a build ---

used = uses_npb
wanted = wanted_binaries


def built_file(config: dict, relative: str, state_dir: Path | None = None) -> Path:
    """A built file, named as a benchmark's uploads name it (``<flavour>/<kernel>.<class>.x``)."""
    return build_dir(settings(config), state_dir) / "bin" / relative


def record(config: dict, benchmark: str, state_dir: Path | None = None) -> dict:
    """What a run of ``benchmark`` says about the NPB it ran (its sidecar's ``npb``): :func:`run_record`."""
    return run_record(config, BENCHMARK_FLAVOUR[benchmark], state_dir)


def build_key(npb: dict, tarball_sha256: str | None) -> str:
    identity = {"version": str(npb["version"]), "sha256": tarball_sha256, "make_def": MAKE_DEF,
                "revision": BUILD_REVISION}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]


def tarball_sha256_for_key(npb: dict) -> str | None:
    """The checksum the build will be made from, known before obtaining (pinned, configured, or the local file's)."""
    expected, _ = expected_sha256(npb)
    if expected:
        return expected
    path = tarball_path(npb)
    if path is not None and path.is_file():
        return sha256_of(path)
    return None


def build_dir(npb: dict, state_dir: Path | None = None) -> Path:
    return Path(state_dir or default_state_dir()) / "npb" / build_key(npb, tarball_sha256_for_key(npb))


def manifest_path(config: dict, state_dir: Path | None = None) -> Path:
    """The build's record for the binaries this configuration wants. Named by them, so that a
    configuration wanting other kernels or classes has no manifest yet and the build runs again
    (incrementally), also where Snakemake has no record of an earlier build."""
    wanted = json.dumps(wanted_binaries(config), sort_keys=True).encode()
    return build_dir(settings(config), state_dir) / f"manifest-{hashlib.sha256(wanted).hexdigest()[:12]}.json"


def run_record(config: dict, flavour: str, state_dir: Path | None = None) -> dict:
    """What a run of ``flavour`` says about the NPB it ran (every NPB sidecar's ``npb``): the tarball's
    checksum and where it came from, the build, how the flavour was compiled, and the compilers."""
    path = manifest_path(config, state_dir)
    if not path.is_file():
        raise NpbError(f"{path} is missing: the workflow's build_npb rule makes it (python -m virtrepro.builds.npb build)")
    manifest = json.loads(path.read_text())
    return {"version": manifest["version"], "tarball_sha256": manifest["sha256"],
            "tarball_source": manifest.get("tarball_source"), "build": path.parent.name,
            "built_from": manifest["serial_from"] if flavour == "serial" else f"NPB3.4-{flavour.upper()}",
            "make_def": manifest["make_def"][flavour], "tools": manifest["tools"]}


def binary_name(kernel: str, cls: str) -> str:
    return f"{kernel}.{cls}.x"


def local_binary(npb: dict, flavour: str, kernel: str, cls: str, state_dir: Path | None = None) -> Path:
    return build_dir(npb, state_dir) / "bin" / flavour / binary_name(kernel, cls)


def _run(argv: list[str], cwd: Path, log) -> None:
    run_step(argv, cwd, log, NpbError)


def _tool_versions() -> dict:
    return tool_versions(("gfortran", "mpif90", "mpirun"))


def build(config: dict, source: dict, log=sys.stdout, state_dir: Path | None = None) -> Path:
    """Compile the wanted binaries from the obtained tarball; return the manifest's path.

    Incremental: a binary already in ``bin/<flavour>/`` is kept (the directory's
    name is a hash of everything that goes into it).
    """
    npb = settings(config)
    if source.get("status") != "available":
        raise NpbError(f"NPB is not available: {source.get('reason', 'no tarball')}")
    root = build_dir(npb, state_dir)
    if build_key(npb, source["sha256"]) != root.name:
        raise NpbError(f"the obtained tarball (sha256 {source['sha256']}) is not the one the configuration names; "
                       "re-run the workflow so that the NPB source is obtained again")
    src = root / "src"
    if not src.is_dir():
        tmp = root / "src.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        with tarfile.open(REPOSITORY / source["tarball"]) as archive:
            archive.extractall(tmp, filter="data")
        tops = [p for p in tmp.iterdir() if p.is_dir()]
        if len(tops) != 1:
            raise NpbError(f"{source['tarball']} does not have one top directory (NPB{npb['version']}/)")
        tops[0].rename(src)
        shutil.rmtree(tmp)
    directories = {flavour: src / f"NPB3.4-{'SER' if flavour == 'serial' else flavour.upper()}" for flavour in FLAVOURS}
    serial_from = "NPB3.4-SER"
    if not directories["serial"].is_dir():
        # NPB 3.4 ships no serial code ("use the OpenMP version instead"): the OpenMP code compiled
        # without -fopenmp is serial (its OpenMP calls are all under !$ or #ifdef _OPENMP)
        directories["serial"] = src / "NPB3.4-OMP"
        serial_from = "NPB3.4-OMP compiled without -fopenmp (NPB 3.4 has no NPB3.4-SER)"
    manifest = {"version": str(npb["version"]), "tarball": source["tarball"], "sha256": source["sha256"],
                "tarball_source": npb.get("source"), "make_def": MAKE_DEF, "serial_from": serial_from,
                "tools": _tool_versions(), "binaries": {}}
    for flavour, names in wanted_binaries(config).items():
        code = directories[flavour]
        if not code.is_dir():
            raise NpbError(f"{source['tarball']} has no {code.name}/ directory")
        # each flavour builds in its own copy of its directory
        work = root / "work" / flavour
        if not work.is_dir():
            shutil.copytree(code, work)
        (work / "config" / "make.def").write_text("".join(f"{k} = {v}\n" for k, v in MAKE_DEF[flavour].items()))
        (work / "bin").mkdir(exist_ok=True)
        out = root / "bin" / flavour
        out.mkdir(parents=True, exist_ok=True)
        for name in names:
            kernel, cls = name.split(".")
            target = out / binary_name(kernel, cls)
            if not target.exists():
                # setparams rewrites npbparams.h per class, and the objects depend on it
                start = time.monotonic()
                _run(["make", kernel, f"CLASS={cls}"], work, log)
                compile_s = round(time.monotonic() - start, 1)
                built = work / "bin" / binary_name(kernel, cls)
                if not built.exists():
                    raise NpbError(f"make {kernel} CLASS={cls} in {work} produced no {built.name}")
                shutil.copy2(built, target)
                write_record({"compile_s": compile_s}, target.with_name(target.name + ".json"))
            made = target.with_name(target.name + ".json")  # kept beside the binary for later manifests
            manifest["binaries"].setdefault(flavour, {})[name] = {
                "path": str(target), "sha256": sha256_of(target),
                **(json.loads(made.read_text()) if made.is_file() else {})}
    path = manifest_path(config, state_dir)
    write_record(manifest, path)
    return path


def pack_git(repo: Path, commit: str, output: Path, directory: str = "NPB3.4.1") -> str:
    """Pack ``directory`` of ``commit`` in the git repository ``repo`` as a tarball whose top directory is
    ``directory``/ (like NASA's); return its sha256.

    Reproducible: ``git archive`` of a commit gives the same tar for the same commit (file times are the
    commit's), and gzip's header here has no name and no time, so the same commit gives the same checksum.
    """
    try:
        tar = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", commit, directory],
                             capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        raise NpbError(f"git archive {commit} {directory} in {repo} failed: "
                       f"{getattr(error, 'stderr', b'').decode(errors='replace').strip() or error}") from None
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(output.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as out:
        out.write(tar)
    tmp.rename(output)
    return sha256_of(output)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtrepro.builds.npb", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add_obtain_build(sub, "find or download the tarball; write the probe record",
                     "build the binaries the configuration asks for")
    pack = sub.add_parser("pack-git", help="pack the NPB directory of a commit of a git clone as a tarball")
    pack.add_argument("--repo", required=True, help="a clone of a repository that holds the NPB tree")
    pack.add_argument("--commit", required=True)
    pack.add_argument("--directory", default="NPB3.4.1", help="the NPB tree in that commit (the tarball's top directory)")
    pack.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.command == "pack-git":
        digest = pack_git(Path(args.repo), args.commit, Path(args.out), args.directory)
        print(f"{digest}  {args.out}")
        return 0
    return obtain_or_build(parser, args, lambda record: f"NPB {record['version']}",
                           lambda config: {**obtain(settings(config)), "not_planned": not_planned(config)},
                           build, write_record, NpbError)


if __name__ == "__main__":
    from ..cli import run as run_cli  # not "run": a module may have a function of that name

    run_cli(main)


def why_no_runs(data_dir: str | Path, testbed: str, benchmark: str = "NPB") -> str:
    """One line for a notebook on why ``benchmark`` has no runs on ``testbed`` (:func:`sourcebuild.why_no_runs`)."""
    return sourcebuild_why_no_runs(data_dir, testbed, benchmark, datalayout.NPB_PROBE, "NPB")
