#!/bin/bash
# bench/perturb_sources.sh BUILD [ROUNDS]: sockperf TCP ping-pong p50/p99
# with the daemon off and with each flow source alone, alternated, the
# benchmark pinned (sockperf server and client on CPU $SP_CPU, default 0)
# and the daemon pinned away (CPU $D_CPU, default 1; D_CPU= unpinned).
# bpfhooks is the tracker alone with tracker_hooks = always; qdisc the
# clsact qdisc alone, no daemon. VARIANTS="off hook ..." picks some.
# A manual experiment beside make bench's perturb section (bench/README.md
# quotes it): it tells which source moves the benchmark once the
# scheduler's placement no longer does. The variant "hook" runs no daemon:
# a classic-BPF program that only returns ("ret #0", cls_bpf) on the same
# clsact hooks of both veths the tracker uses, to tell the hook's cost
# from the tracker program's. As root; the bench's namespaces and 32
# sessions (bench/lib.sh), removed on exit.
set -u
BUILD=$(cd "${1:-build}" && pwd) || exit 1
ROUNDS=${2:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SP_CPU=${SP_CPU:-0} D_CPU=${D_CPU-1}
SMOKE=0 ONLY=""
. "$ROOT/bench/lib.sh"
bench_init
env_up || exit 1
spawn_bg ip netns exec "$S" taskset -c "$SP_CPU" sockperf server --tcp -i $AS -p 11111 \
	> "$WORK/sockperf-srv.log" 2>&1
wait_for 5 sh -c "ip netns exec $S ss -ltnH | grep -q ':11111 '" || exit 1
mkconf "$WORK/all.conf"
for v in sock engine bpf; do mkconf "$WORK/$v.conf" "track = $v"; done
# bpf: the tracker's hooks off while nothing waits (on-wait, the default);
# bpfhooks: on all the time, as before tracker_hooks
mkconf "$WORK/bpfhooks.conf" "track = bpf
tracker_hooks = always"
[ -n "$D_CPU" ] && DPIN=(taskset -c "$D_CPU")
# hook add|del [qdisc]: the empty program on both veths' clsact hooks; with
# qdisc, the clsact qdisc alone (what the on-wait tracker leaves between
# waits)
hook() {
	local x d
	for x in "$C:$VC" "$S:$VS"; do
		if [ "$1" = del ]; then
			ip netns exec "${x%%:*}" tc qdisc del dev "${x#*:}" clsact
			continue
		fi
		ip netns exec "${x%%:*}" tc qdisc add dev "${x#*:}" clsact || exit 1
		[ "${2:-}" = qdisc ] && continue
		for d in ingress egress; do
			ip netns exec "${x%%:*}" tc filter add dev "${x#*:}" "$d" prio 7 \
				bpf bytecode '1,6 0 0 0,' || exit 1
		done
	done
}
echo "round variant p50_us p99_us"
for r in $(seq "$ROUNDS"); do
	for v in ${VARIANTS:-off sock engine bpf bpfhooks all hook qdisc}; do
		case $v in
		off) ;;
		hook) hook add ;;
		qdisc) hook add qdisc ;;
		*) dstart "$WORK/$v.conf" || exit 1; sleep 1 ;;
		esac
		out=$(ip netns exec "$C" taskset -c "$SP_CPU" sockperf ping-pong --tcp -i $AS \
			-p 11111 -t 5 2>&1)
		case $v in off) ;; hook|qdisc) hook del ;; *) dstop ;; esac
		echo "$r $v $(echo "$out" | sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p') $(echo "$out" | sed -n 's/.*percentile 99.000 = *\([0-9.]*\).*/\1/p')"
	done
done
