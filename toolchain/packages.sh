#!/usr/bin/env bash
# Debian packages the e2e cluster needs beside the Go toolchain: Argo CD's
# cache (redis), the git server Argo CD reaches over SSH (openssh-server, git),
# the SOCKS client Argo CD runs as ssh's ProxyCommand for a repository with a
# proxy (connect-proxy), certificate generation (openssl), and the loopback of each
# run's own network namespace (iproute2's ip, e2e/isolation.ts). Installs only
# what is missing.
set -euo pipefail
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
echo "[toolchain] installing Debian packages: ${missing[*]}" >&2
apt-get update -qq
# The packages' service scripts must not start system daemons: the harness
# runs its own copies on loopback.
DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
