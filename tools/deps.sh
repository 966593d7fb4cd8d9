#!/bin/sh
# Install the Debian packages nicstalld needs to build and test, quietly and
# only when something is missing (idempotent). chromium and nodejs: the
# system tests render bundle reports in headless Chromium (test_report.sh).
# `tools/deps.sh bench`: also what make bench compares with.
set -e
PKGS="gcc make pkg-config clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev
libmnl-dev libjson-c-dev libpcap-dev libsystemd-dev libibverbs-dev rdma-core
libcmocka-dev libssl-dev iproute2 ethtool iputils-ping tcpdump tshark sockperf nftables
procps psmisc jq socat util-linux passwd systemd-journal-remote
chromium nodejs"
# make bench also compares with node_exporter (scraped with curl)
[ "${1:-}" = bench ] && PKGS="$PKGS prometheus-node-exporter curl"
missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in *"ok installed"*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages:$missing (run as root to install)" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends $missing >/dev/null
