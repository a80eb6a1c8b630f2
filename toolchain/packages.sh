#!/usr/bin/env bash
# Debian packages the e2e cluster needs beside the Go toolchain: Argo CD's
# cache (redis), the git server Argo CD reaches over SSH (openssh-server, git),
# the SOCKS client Argo CD runs as ssh's ProxyCommand for a repository with a
# proxy (connect-proxy), certificate generation (openssl), and the loopback of each
# run's own network namespace (iproute2's ip, e2e/isolation.ts). Installs only
# what is missing.
#
# Another apt or dpkg at work (unattended-upgrades, a fresh machine's first boot) is waited
# for, up to TOOLCHAIN_APT_LOCK_TIMEOUT seconds (default 600), instead of failing at once:
# install with apt's DPkg::Lock::Timeout (the dpkg frontend lock), and update in a retry
# loop, because apt-get update does not apply that option to the package lists' lock (apt
# 2.6 fails at once with "Could not get lock /var/lib/apt/lists/lock" whatever it is set
# to). Past the bound it fails naming the process that holds the lock.
set -euo pipefail
LOCK_TIMEOUT=${TOOLCHAIN_APT_LOCK_TIMEOUT:-600}
LOCK_POLL=${TOOLCHAIN_APT_LOCK_POLL:-5}
packages=(redis-server openssh-server openssh-client git openssl connect-proxy iproute2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
if [[ $(id -u) -ne 0 ]]; then
  echo "e2e: missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi

# The holder of a lock, from apt's own message ("It is held by process 1234 (apt-get)"),
# with its command line.
lock_holder() {
  local pid
  pid=$(grep -o 'held by process [0-9]*' "$1" | head -n 1 | grep -o '[0-9]*$' || true)
  if [[ -z $pid ]]; then
    echo "a process apt did not name"
  else
    echo "process $pid ($(ps -o args= -p "$pid" 2>/dev/null || echo 'gone since'))"
  fi
}

# apt-get "$@" with -o DPkg::Lock::Timeout, tried again every LOCK_POLL seconds while another
# process holds one of apt's locks, for at most LOCK_TIMEOUT seconds in all. Its stdout is
# dropped (the packages' own chatter), its stderr shown.
apt_get() {
  local deadline=$((SECONDS + LOCK_TIMEOUT)) errors waited=''
  errors=$(mktemp)
  while true; do
    if apt-get -o DPkg::Lock::Timeout="$((deadline > SECONDS ? deadline - SECONDS : 0))" "$@" >/dev/null 2>"$errors"; then
      cat "$errors" >&2
      rm -f "$errors"
      return 0
    fi
    if ! grep -q 'Could not get lock' "$errors"; then
      cat "$errors" >&2
      rm -f "$errors"
      return 1
    fi
    if ((SECONDS >= deadline)); then
      cat "$errors" >&2
      echo "[toolchain] apt-get $1: another process still holds apt's lock after ${LOCK_TIMEOUT} s: $(lock_holder "$errors")" >&2
      rm -f "$errors"
      return 1
    fi
    if [[ -z $waited ]]; then
      echo "[toolchain] apt-get $1: waiting up to ${LOCK_TIMEOUT} s for apt's lock, held by $(lock_holder "$errors")" >&2
      waited=yes
    fi
    sleep "$LOCK_POLL"
  done
}

echo "[toolchain] installing Debian packages: ${missing[*]}" >&2
apt_get update -qq
# The packages' service scripts must not start system daemons: the harness
# runs its own copies on loopback.
DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt_get install -y -qq --no-install-recommends "${missing[@]}"
