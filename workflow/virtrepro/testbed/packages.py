"""Which Debian packages the code relies on, and whether a package list really installs them.

Every module that runs a program or reads a file of the testbed host declares it next to the
code that uses it, in a module-level ``HOST_PATHS`` dict: ``{program name or absolute path:
Debian package that ships it}`` (the package is what the host agent installs on a remote host
when the path is missing). A benchmark declares the programs and files its commands use in an
instance as ``Benchmark.programs`` (they must be on the host, for ``native``, and in the guest
image); the guest image declares what it relies on inside itself as ``GUEST_PATHS`` in
:mod:`virtrepro.guests.image`.

:func:`check` asks ``dpkg-query -S`` which package owns each path and reports every path whose
owner is neither in the list (the host's: ``envs/debian-packages.txt`` and the packages the
benchmarks declare, :func:`host_packages`; or the image's ``PACKAGES``) nor
pulled in by the ``Pre-Depends``/``Depends`` of a listed package (:func:`closure`;
``Recommends`` do not count: the set-up installs without them). A machine that happens to have
a package installed cannot make the check pass. Standard library only (the host agent uses it).
"""

from __future__ import annotations

import glob
import importlib
import os
import pkgutil
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .. import benchmark_packages

# where a program named without a path is looked for (the host agent's PATH has the sbin directories too)
PROGRAM_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


class PackageCheckError(RuntimeError):
    """dpkg or apt cannot answer (not a Debian system, a broken database)."""


def read_list(path: Path | str) -> list[str]:
    """Package names of a list file: one a line, '#' starts a comment (``envs/debian-packages.txt``)."""
    names = []
    for line in Path(path).read_text().splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            names.append(name)
    return names


def host_packages(path: Path | str, benchmarks: Path | str = benchmark_packages.BENCHMARKS_DIR) -> list[str]:
    """What the set-up script installs on the host: the list file's packages, then those the benchmark
    classes of ``benchmarks`` declare (:mod:`virtrepro.benchmark_packages`) that the list does not name."""
    listed = read_list(path)
    return listed + [name for name in benchmark_packages.declared(benchmarks) if name not in listed]


def _names(field: str) -> list[list[str]]:
    """A Depends-like field as OR-groups of package names (versions and ':any' dropped)."""
    groups = []
    for group in field.split(","):
        alternatives = [m.group(0) for m in (re.match(r"[a-z0-9][a-z0-9+.-]*", a.strip()) for a in group.split("|")) if m]
        if alternatives:
            groups.append(alternatives)
    return groups


@dataclass
class PackageInfo:
    depends: list[list[str]]  # Pre-Depends and Depends, as OR-groups
    provides: list[str]
    essential: bool
    priority: str = ""


class PackageDb:
    """Installed packages from dpkg's database (``admindir``: another root's, e.g. a guest image's);
    a package dpkg does not have installed (an alternative this machine did not pick, a guest's
    package) from apt's lists of available packages, read once when first needed."""

    def __init__(self, admindir: str | None = None):
        self.admindir = admindir
        self.installed: dict[str, PackageInfo] = {}
        self._available: dict[str, PackageInfo] | None = None
        self._providers: dict[str, set[str]] | None = None
        fmt = "${Package}\\t${db:Status-Abbrev}\\t${Essential}\\t${Pre-Depends}\\t${Depends}\\t${Provides}\\t${Priority}\\n"
        admin = [f"--admindir={admindir}"] if admindir else []
        result = subprocess.run(["dpkg-query", *admin, "-W", "-f", fmt], capture_output=True, text=True)
        if result.returncode != 0 and not result.stdout:
            raise PackageCheckError(f"dpkg-query -W failed: {result.stderr.strip()[-300:]}")
        for line in result.stdout.splitlines():
            name, status, essential, pre, depends, provides, priority = (line.split("\t") + [""] * 7)[:7]
            if status.startswith("ii"):
                self.installed[name] = PackageInfo(_names(f"{pre},{depends}"), [g[0] for g in _names(provides)],
                                                   essential == "yes", priority)

    @property
    def available(self) -> dict[str, PackageInfo]:
        if self._available is None:
            result = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True)
            if result.returncode != 0:
                raise PackageCheckError(f"apt-cache dumpavail failed: {result.stderr.strip()[-300:]}")
            self._available = {}
            for stanza in result.stdout.split("\n\n"):
                fields = dict(re.findall(r"^(Package|Pre-Depends|Depends|Provides|Priority|Essential): (.*)$", stanza, re.M))
                if "Package" in fields:
                    self._available.setdefault(fields["Package"], PackageInfo(
                        _names(f"{fields.get('Pre-Depends', '')},{fields.get('Depends', '')}"),
                        [g[0] for g in _names(fields.get("Provides", ""))], fields.get("Essential") == "yes",
                        fields.get("Priority", "")))
        return self._available

    def get(self, name: str) -> PackageInfo | None:
        """The package's record, or None for a name that is no real package (a virtual one, or unknown)."""
        return self.installed.get(name) or self.available.get(name)

    def providers(self, virtual: str) -> set[str]:
        """Real packages that provide ``virtual``."""
        if self._providers is None:
            self._providers = {}
            for source in (self.available, self.installed):
                for name, info in source.items():
                    for provided in info.provides:
                        self._providers.setdefault(provided, set()).add(name)
        return self._providers.get(virtual, set())

    def essential(self) -> set[str]:
        """The Essential: yes packages (on every Debian system, and in an mmdebstrap image of any variant)."""
        return {name for name, info in self.installed.items() if info.essential}


# apt prefers, among a virtual package's providers, the one of the highest Priority
PRIORITY_RANK = {"required": 0, "important": 1, "standard": 2, "optional": 3, "extra": 4}


def closure(roots: list[str] | set[str], db: PackageDb) -> set[str]:
    """The packages installing ``roots`` without Recommends surely brings: roots and, recursively, their
    Pre-Depends and Depends. Of alternatives ``a | b`` none is added when one is already in; else the
    first that resolves (what apt picks on a fresh machine). A virtual package resolves to its
    provider when it has one, or one of a higher Priority than the others (apt's choice: mawk for
    awk); with several alike, none of them is sure to be installed."""
    chosen: set[str] = set()
    provided: set[str] = set()
    queue = list(roots)
    deferred: list[list[str]] = []

    def choose(alternatives: list[str]) -> str | None:
        for name in alternatives:
            if db.get(name) is not None:
                return name
            ranked = sorted((PRIORITY_RANK.get(db.get(p).priority if db.get(p) else "", 9), p) for p in db.providers(name))
            if ranked and (len(ranked) == 1 or ranked[0][0] < ranked[1][0]):
                return ranked[0][1]
        return None

    while queue or deferred:
        while queue:
            name = queue.pop()
            if name in chosen:
                continue
            chosen.add(name)
            info = db.get(name)
            if info is None:
                continue
            provided.update(info.provides)
            for group in info.depends:
                if len(group) == 1 and db.get(group[0]) is not None:
                    queue.append(group[0])
                else:
                    deferred.append(group)
        # definite dependencies first, then one open choice at a time (a later definite one may settle others)
        while deferred and not queue:
            group = deferred.pop(0)
            if not any(name in chosen or name in provided for name in group):
                pick = choose(group)
                if pick is not None:
                    queue.append(pick)
    return chosen


def resolve(path: str, root: str = "/") -> list[str]:
    """The files (inside ``root``) a declared path stands for: a program name is looked up in
    PROGRAM_DIRS, a glob is expanded; absolute symlinks are followed inside ``root``. Empty if missing."""
    if "/" not in path:
        candidates = [f"{d}/{path}" for d in PROGRAM_DIRS]
    else:
        candidates = [p[len(root.rstrip("/")):] for p in sorted(glob.glob(root.rstrip("/") + path))] if any(
            c in path for c in "*?[") else [path]
    found = []
    for candidate in candidates:
        if os.path.lexists(root.rstrip("/") + candidate):
            found.append(candidate)
            if "/" not in path:
                break
    return found


def _chain(path: str, root: str) -> list[str]:
    """``path`` and every path its symlinks lead to, inside ``root`` (alternatives: /usr/bin/x -> /etc/alternatives/x -> ...)."""
    chain = [path]
    for _ in range(20):
        full = root.rstrip("/") + chain[-1]
        if not os.path.islink(full):
            break
        target = os.readlink(full)
        chain.append(os.path.normpath(target if target.startswith("/") else os.path.join(os.path.dirname(chain[-1]), target)))
    return chain


def _usrmerge(path: str) -> list[str]:
    """The path and its other spelling on a merged-/usr system (/bin/ip is /usr/bin/ip)."""
    for short in ("/bin/", "/sbin/", "/lib/", "/lib64/"):
        if path.startswith(short):
            return [path, "/usr" + path]
        if path.startswith("/usr" + short):
            return [path, path[4:]]
    return [path]


def owners(paths: list[str], root: str = "/", admindir: str | None = None) -> dict[str, set[str]]:
    """The packages that own each of ``paths`` (files inside ``root``; empty set: none), with one dpkg-query."""
    spellings = {path: [s for link in _chain(path, root) for s in _usrmerge(link)] for path in paths}
    admin = [f"--admindir={admindir}"] if admindir else []
    wanted = sorted({s for group in spellings.values() for s in group})
    result = subprocess.run(["dpkg-query", *admin, "-S", *wanted], capture_output=True, text=True) if wanted else None
    owned: dict[str, set[str]] = {}
    for line in result.stdout.splitlines() if result else ():
        if line.startswith("diversion by") or ": " not in line:
            continue
        packages, path = line.split(": ", 1)
        owned.setdefault(path, set()).update(p.strip().split(":")[0] for p in packages.split(","))
    # the first spelling dpkg knows: the path itself, else where its symlinks lead
    return {path: next((owned[s] for s in group if s in owned), set()) for path, group in spellings.items()}


@dataclass(frozen=True)
class Problem:
    path: str  # as declared
    owner: str  # the owning package, or the declared one when the path is not on this machine
    why: str

    def __str__(self) -> str:
        return f"{self.path}: {self.why}"


def check(needs: dict[str, str | None], listed: list[str], db: PackageDb | None = None, root: str = "/",
          admindir: str | None = None, implicit: set[str] | None = None, what: str = "the list") -> list[Problem]:
    """Every path of ``needs`` (path -> the package declared to ship it, or None) whose owning package the list
    does not install: neither listed nor in the Depends closure of listed packages (plus ``implicit``,
    by default the Essential ones). Also a path that is missing here, or owned by another package than
    declared (unless the declared one depends on the owner, as a metapackage does)."""
    db = db or PackageDb(admindir)
    installed = closure(set(listed) | (db.essential() if implicit is None else implicit), db)
    problems = []
    files = {path: resolve(path, root) for path in needs}
    owned = owners(sorted({f for group in files.values() for f in group}), root, admindir)
    for path, declared in sorted(needs.items()):
        if not files[path]:
            problems.append(Problem(path, declared or "", "missing on this machine"
                                    + (f" (declared to come from {declared})" if declared else "")))
        for file in files[path]:
            owned_by = owned[file]
            if not owned_by:
                problems.append(Problem(path, declared or "", f"{file} belongs to no Debian package"))
            elif declared and not owned_by & closure({declared}, db):
                problems.append(Problem(path, sorted(owned_by)[0], f"{file} is owned by {', '.join(sorted(owned_by))}, "
                                                                   f"not by {declared} as declared"))
            elif not owned_by & installed:
                problems.append(Problem(path, sorted(owned_by)[0], f"{file} is owned by {', '.join(sorted(owned_by))}, "
                                        f"which is neither in {what} nor in the Depends of a package listed there"))
    return problems


def collect(name: str, package: str = "virtrepro") -> dict[str, str | None]:
    """The ``name`` declarations (``HOST_PATHS``, ``INSTANCE_PATHS``, ``GUEST_PATHS``) of every module of
    the package, merged; one path must not be declared with two packages."""
    root = importlib.import_module(package)
    merged: dict[str, str | None] = {}
    for module_info in pkgutil.walk_packages(root.__path__, f"{package}."):
        module = importlib.import_module(module_info.name)
        for path, owner in getattr(module, name, {}).items():
            if merged.setdefault(path, owner) != owner:
                raise ValueError(f"{module_info.name}: {name} says {path} is in {owner}, another module says {merged[path]}")
    return merged


def guest_needs() -> dict[str, str | None]:
    """What the guest image must hold: the benchmarks' programs and the image's own GUEST_PATHS."""
    return {**collect("INSTANCE_PATHS"), **collect("GUEST_PATHS")}


def host_needs() -> dict[str, str | None]:
    """What the testbed host must hold: the modules' HOST_PATHS and the benchmarks' programs (native)."""
    return {**collect("INSTANCE_PATHS"), **collect("HOST_PATHS")}


def check_host(listed: list[str], db: PackageDb | None = None) -> list[Problem]:
    """:func:`check` of :func:`host_needs` against the host's packages (:func:`host_packages`)."""
    return check(host_needs(), listed, db, what="the host's package list")


def check_guest(packages: list[str], rootfs: Path | str | None = None, db: PackageDb | None = None) -> list[Problem]:
    """:func:`check` of :func:`guest_needs` against the image's package list (mmdebstrap's apt variant:
    the Essential packages and apt besides). With ``rootfs`` (a built image's root file system) the
    paths and their owners are looked up in the image itself; else on this host, where
    ``GUEST_PATHS`` (the guest's own kernel, its boot) are only checked to be in the closure."""
    if rootfs is not None:
        admindir = f"{rootfs}/var/lib/dpkg"
        db = db or PackageDb(admindir)
        return check(guest_needs(), packages, db, root=str(rootfs), admindir=admindir,
                     implicit=db.essential() | {"apt"}, what="the guest image's PACKAGES")
    db = db or PackageDb()
    problems = check(collect("INSTANCE_PATHS"), packages, db, implicit=db.essential() | {"apt"},
                     what="the guest image's PACKAGES")
    installed = closure(set(packages) | db.essential() | {"apt"}, db)
    problems += [Problem(path, declared, f"its package {declared} is neither in the guest image's PACKAGES nor in "
                                         "the Depends of a package listed there")
                 for path, declared in sorted(collect("GUEST_PATHS").items()) if declared not in installed]
    return problems


def missing(needs: dict[str, str]) -> dict[str, str]:
    """The paths of ``needs`` not on this host (programs on PATH, files), with the package to install for each."""
    return {path: package for path, package in needs.items()
            if not (shutil.which(path) if "/" not in path else glob.glob(path))}


def main(argv: list[str] | None = None) -> int:
    """python -m virtrepro.testbed.packages [--list FILE] [--image DIR]: the host's and the guest image's checks."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m virtrepro.testbed.packages", description=main.__doc__)
    parser.add_argument("--list", default=str(Path(__file__).resolve().parents[3] / "envs" / "debian-packages.txt"))
    parser.add_argument("--image", help="a built guest image's directory (its rootfs is checked)")
    args = parser.parse_args(argv)
    from ..guests.image import PACKAGES

    db = PackageDb()
    problems = [("host", p) for p in check_host(host_packages(args.list), db)]
    rootfs = Path(args.image) / "rootfs" if args.image else None
    problems += [("guest", p) for p in check_guest(PACKAGES, rootfs, None if rootfs else db)]
    for where, problem in problems:
        print(f"{where}: {problem}")
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    from ..cli import run

    run(main)
