#!/bin/sh
# Install the Debian packages nicstalld needs to build and test, quietly and
# only when something is missing (idempotent). libclang-rt-dev: libFuzzer
# (make fuzz, make check). libcurl4-openssl-dev: the [port]/[producer]
# app_metrics scraper (collectors/counters/src_app.c). libfaketime: test_clock_jump.sh moves only the
# daemon's wall clock; valgrind: tests/demo/valgrind.sh. chromium and nodejs: the
# system tests render bundle reports in headless Chromium (test_report.sh).
# mandoc and man-db: the pages are linted, and systemd-analyze verify looks up
# the unit's man: links (test_pages, test_install); prometheus (promtool),
# prometheus-node-exporter and curl: the metrics file is validated and scraped
# through a real textfile collector (test_metrics). systemd-container:
# make check-systemd boots a systemd in a container to run the unit for real.
# python3: the loopback HTTP server the example bundle_hook uploads to
# (test_fleet_ops.sh); promtool also unit-tests the alerting rules there.
# g++: the engines' statistics headers the tests check the VMA/XLIO reader
# against are C++ (tests/fixtures/engines).
# make bench and bench/run.sh compare with node_exporter, scraped with curl,
# and count the idle daemon's system calls with perf stat (linux-perf).
# `deps.sh package` (make deb, rpm, check-package; not make check) adds the
# packaging tools: debhelper, dpkg-dev and fakeroot for dpkg-buildpackage,
# lintian, rpm (rpmbuild) and rpmlint, bash-completion (its pkg-config file
# and the completion's own test).
set -e
PKGS="gcc g++ make pkg-config clang llvm libclang-rt-dev bpftool libbpf-dev libelf-dev zlib1g-dev
libmnl-dev libjson-c-dev libpcap-dev libsystemd-dev libibverbs-dev rdma-core
libcmocka-dev libssl-dev libcurl4-openssl-dev iproute2 ethtool iputils-ping tcpdump tshark sockperf nftables
procps psmisc jq socat util-linux passwd systemd-journal-remote
chromium nodejs mandoc man-db prometheus prometheus-node-exporter curl systemd-container python3
libfaketime valgrind linux-perf"
[ "$1" = package ] && PKGS="$PKGS debhelper dpkg-dev fakeroot lintian rpm rpmlint bash-completion"
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
