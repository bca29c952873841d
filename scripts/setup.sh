#!/usr/bin/env bash
# Set up everything virtrepro needs on a Debian or Ubuntu machine (root, or a user with sudo):
#   1. enables Debian's non-free component (Ubuntu: multiverse), where iozone3 and netperf live;
#   2. installs the Debian packages of envs/debian-packages.txt that are missing, then those the
#      benchmarks declare (their classes' packages, read by workflow/virtrepro/benchmark_packages.py);
#   3. creates the Python virtual environment .venv from envs/requirements.txt (pinned)
#      and installs the virtrepro package into it (editable).
# Idempotent: a second run checks and returns in a second or two.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

log() { echo "[setup] $*" >&2; }
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { log "run as root or install sudo"; exit 1; }
  SUDO="sudo"
fi

enable_extra_component() {
  # Adds the component to every apt source that has 'main' but not it yet. Names no mirror.
  local comp=$1 file changed=1
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    if grep -qE '^Components:(.*\s)?main(\s|$)' "$file" && grep -E '^Components:' "$file" | grep -qvE "\s$comp(\s|$)"; then
      $SUDO sed -i -E "/^Components:/{/\s$comp(\s|\$)/!s/(\s)main(\s|\$)/\1main $comp\2/}" "$file"
      log "enabled '$comp' in $file"
      changed=0
    fi
  done
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    if grep -E '^deb(-src)?\s' "$file" | grep -E '\smain(\s|$)' | grep -qvE "\s$comp(\s|$)"; then
      $SUDO sed -i -E "/^deb(-src)?\s/{/\s$comp(\s|\$)/!s/\smain(\s|\$)/ main $comp\1/}" "$file"
      log "enabled '$comp' in $file"
      changed=0
    fi
  done
  return $changed
}

install_debian_packages() {
  # $1: where the list comes from (for the log); the rest: package names
  local what=$1 id="" missing=() package sources_changed=1
  shift
  [ -r /etc/os-release ] && id=$(. /etc/os-release && echo "${ID:-}")
  if ! command -v dpkg-query >/dev/null; then
    log "no dpkg here: install these yourself ($what): $*"
    return 0
  fi
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && { log "Debian packages present ($what)"; return 0; }
  case "$id" in
    debian) enable_extra_component non-free && sources_changed=0 || true ;;
    ubuntu) enable_extra_component multiverse && sources_changed=0 || true ;;
    *) log "not Debian or Ubuntu ($id): trying apt anyway" ;;
  esac
  log "installing ($what): ${missing[*]}"
  # Installing must not start services (e.g. an sshd on port 22): the testbed starts its own.
  local policy=/usr/sbin/policy-rc.d created_policy=1
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod +x "$policy"
    created_policy=0
  fi
  # apt's failure is caught here, not by set -e: the policy file is removed whatever apt did
  # (a RETURN trap does not run when set -e ends the script inside the function)
  local status=0
  { $SUDO apt-get update -q >/dev/null &&
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; } || status=$?
  [ $created_policy -eq 0 ] && $SUDO rm -f "$policy"
  if [ $status -ne 0 ]; then
    log "apt-get failed (exit status $status) installing ($what): ${missing[*]}"
    exit $status
  fi
  if printf '%s\n' "${missing[@]}" | grep -qx openssh-server && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now ssh >/dev/null 2>&1 || true
    log "openssh-server installed for the testbed; its system service stays disabled"
  fi
  # the SLURM tests start their own controller, nodes and munged (tests/slurmcluster.py)
  local service
  for service in slurmctld slurmd munge; do
    if printf '%s\n' "${missing[@]}" | grep -qx "$service" && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
      $SUDO systemctl disable --now "$service" >/dev/null 2>&1 || true
    fi
  done
}

python_environment() {
  local python=${PYTHON:-python3} stamp=.venv/.virtrepro-setup wanted
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    log "$python is older than 3.11 (Snakemake 9 needs 3.11+); set PYTHON=python3.11 or newer"
    exit 1
  }
  wanted=$(cat envs/requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
  if [ -x .venv/bin/python ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then
    log "Python environment .venv up to date"
    return 0
  fi
  [ -x .venv/bin/python ] || "$python" -m venv .venv
  log "installing Python packages into .venv (pinned: envs/requirements.txt)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r envs/requirements.txt
  .venv/bin/python -m pip install -q --no-deps -e .
  echo "$wanted" > "$stamp"
}

listed=$(sed -e 's/#.*//' -e '/^\s*$/d' envs/debian-packages.txt)
# shellcheck disable=SC2086  # one package name a line, no spaces in them
install_debian_packages "envs/debian-packages.txt" $listed
# the list brings python3, which reads the benchmarks' declarations (standard library only)
command -v python3 >/dev/null || { log "no python3 here: install it, then run this again"; exit 1; }
declared=$(python3 workflow/virtrepro/benchmark_packages.py) || { log "the benchmarks' package declarations cannot be read"; exit 1; }
# shellcheck disable=SC2086
install_debian_packages "declared by the benchmarks" $declared
python_environment
log "ready: .venv/bin/snakemake --cores all (or source .venv/bin/activate)"
