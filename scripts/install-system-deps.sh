#!/usr/bin/env bash
# Installs the Debian packages the tests and the sandbox drive for real: Open vSwitch
# (userspace datapath), Debian's CNI plugins (host-local, bridge), iproute2, ping, nsenter, and
# ethtool (the agent turns TX checksum offload off on pod interfaces of a netdev bridge).
# Installing starts no daemons here; tests start their own in temp dirs.
set -euo pipefail

missing=()
need() { # need <path-or-command> <debian package>
  if [[ "$1" == /* ]]; then [[ -e "$1" ]] || missing+=("$2"); else command -v "$1" >/dev/null 2>&1 || missing+=("$2"); fi
}
need ovs-vswitchd openvswitch-switch
need ovsdb-tool openvswitch-common
need /usr/lib/cni/host-local containernetworking-plugins
need ip iproute2
need ping iputils-ping
need nsenter util-linux
need ethtool ethtool

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
# shellcheck disable=SC2207
missing=($(printf '%s\n' "${missing[@]}" | sort -u))
if [[ $(id -u) -ne 0 ]]; then
  echo "install-system-deps: missing Debian packages: ${missing[*]} (run as root to install them; tests that need them will fail)" >&2
  exit 0
fi
echo "install-system-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq </dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
