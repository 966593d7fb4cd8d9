#!/bin/bash
# make demo SCENARIO=seed-004: seed 004 emulated with its cause. Four ranks
# of a collective in four namespaces (tests/system/seed004_lib.sh), each
# producer reading its data from its own disk (a loop device) inside its
# own cgroup, one nicstalld per rank with the other three as peers. First
# the healthy collective runs 60 s (DEMO_CLEAN_S) with no incident; then
# rank3's disk is slowed by the kernel's block I/O throttle
# (blkio.throttle.read_iops_device), its sends stop, every rank's consumer
# waits, and every rank's bundle names rank3, its disk and its producer's
# block I/O delay. Everything is torn down at the end, also on Ctrl-C.
set -u
BUILD=$(cd "${1:-build}" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "demo: needs root (network namespaces, cgroups, loop devices)" >&2; exit 1; }
. "$ROOT/tests/system/lib.sh" "$BUILD"
. "$ROOT/tests/system/fleet_lib.sh"
. "$ROOT/tests/system/seed004_lib.sh"
t_init
t0=$(date +%s)
CLEAN=${DEMO_CLEAN_S:-60}
step() { printf '[%3ss] %s\n' "$(( $(date +%s) - t0 ))" "$*"; }
step "scenario: seed-004 (four ranks; one node's disk starves its producer, the collective stops)"
step "creating four ranks, their disks (loop devices), cgroups and daemons"
seed_up 10.228
case $? in 0) ;; 2) exit 1 ;; *) exit 1 ;; esac
step "healthy: the collective runs ${CLEAN} s, every producer reading ${SEED_KIB} KiB from its disk per step"
SEED_DURATION=$((CLEAN + 15)) seed_start || exit 1
s0=$(seed_steps)
sleep "$CLEAN"
s1=$(seed_steps)
n=0
for i in 0 1 2 3; do n=$((n + $(seed_incidents "$i"))); done
step "healthy: $((s1 - s0)) steps in ${CLEAN} s, $n incidents"
[ "$n" = 0 ] && ok "no incident in ${CLEAN} s without the throttle" || fail "incidents without the throttle"
seed_end clean
step "now rank3's disk: blkio.throttle.read_iops_device = $SEED_IOPS on its cgroup"
seed_start || exit 1
sleep 2
seed_slow 3
for i in 0 1 2 3; do
	if b=$(seed_bundle "$i" 60); then
		step "rank $i: $(jq -r '"\(.verdict.verdict) (\(.verdict.rule)): \(.verdict.explanation)"' "$b/manifest.json")"
		jq -e '.verdict.verdict == "producer-stall" and (.verdict.explanation | startswith("rank rank3: "))' \
			"$b/manifest.json" > /dev/null && ok "rank $i names rank3" || fail "rank $i names rank3"
	else
		fail "rank $i writes a bundle"
	fi
done
b=$(seed_bundle 0 1) && { echo; cat "$b/summary.txt"; echo; }
KEEP=$BUILD/demo-state/seed-004
rm -rf "$KEEP"; mkdir -p "$KEEP"
for i in 0 1 2 3; do cp -a "$T_DIR/state$i/bundles" "$KEEP/rank$i" 2>/dev/null; done
seed_end slow
step "bundles of the four ranks kept in $KEEP/rank0..rank3"
