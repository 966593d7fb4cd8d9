#!/bin/bash
# make demo SCENARIO=producer-stall-4: seed 004 on the emulator. Four ranks
# in four namespaces, one emulated ConnectX port each (RDMA counters under
# the emulator's sysfs tree), one nicstalld each with the other three as
# peers on a management network. Rank 0 consumes a stream from every other
# rank; the producers stop together, as a collective does when one rank is
# starved. Rank 0's incident notifies every peer; each writes a
# peer-snapshot bundle and answers; rank 0's verdict uses all four ranks.
# Everything is torn down at the end, also on Ctrl-C or failure.
set -u
BUILD=$(cd "${1:-build}" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "demo: needs root (network namespaces, tc, BPF)" >&2; exit 1; }
. "$ROOT/tests/system/lib.sh" "$BUILD"
. "$ROOT/tests/system/fleet_lib.sh"
t_init
t0=$(date +%s)
step() { printf '[%3ss] %s\n' "$(( $(date +%s) - t0 ))" "$*"; }
step "scenario: producer-stall-4 (seed 004: four ranks, the rank that stalled is not the rank that failed)"
step "creating four ranks: namespaces $T_PREFIX-r0..r3 on a fabric bridge, emulated ports rank0..rank3, a management network"
fleet_up 10.229 4 "peer_wait = 1s" || { fail "the four ranks come up"; exit 1; }
step "starting nicstalld on each rank, the other three as peers (key $FLEET_KEY, mode 0600)"
for i in 0 1 2 3; do fleet_start "$i" || exit 1; done
sed -n '/^\[peer/,$p' "$T_DIR/rank0.conf" | sed 's/^/        /'
step "rank 0 consumes a stream from ranks 1, 2 and 3; every producer stops after 1500 messages (about 3 s)"
fleet_traffic 1500
step "waiting for rank 0 to detect the stall, notify its peers and classify"
b0=$(fleet_bundle 0 30) || { fail "rank 0 writes a bundle"; tail -30 "$T_DIR/rank0.log"; exit 1; }
for i in 1 2 3; do fleet_bundle "$i" 5 > /dev/null || fail "rank $i writes a peer-snapshot bundle"; done
for i in 0 1 2 3; do
	step "rank $i's log:"
	grep -E "incident|peer .*:|bundle" "$T_DIR/rank$i.log" | grep -v '^<7>' | sed 's/^<[0-9]>/        /'
done
echo
cat "$b0/summary.txt"
echo
for i in 1 2 3; do
	b=$(fleet_bundle "$i" 1) && step "rank $i: $(jq -r '"\(.verdict.verdict) for incident \(.peer.origin_host):\(.peer.incident_id), snapshot \(((.peer.received_real_ns - .peer.notice_sent_real_ns) / 1e6 * 10 | floor) / 10) ms after the notice"' "$b/manifest.json")"
done
jqe '.verdict.verdict == "producer-stall"' "$b0/manifest.json" > /dev/null && ok "verdict producer-stall on rank 0, with every rank's work counters" || fail "verdict"
KEEP=$BUILD/demo-state/producer-stall-4
rm -rf "$KEEP"; mkdir -p "$KEEP"
for i in 0 1 2 3; do cp -a "$T_DIR/state$i/bundles" "$KEEP/rank$i"; done
step "bundles of the four ranks kept in $KEEP/rank0..rank3"
step "bundle: $KEEP/rank0/$(basename "$b0")"
