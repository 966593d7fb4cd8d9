#!/bin/bash
# bench/perturb_sources.sh BUILD [ROUNDS]: sockperf TCP ping-pong p50/p99
# with the daemon off and with each flow source alone, alternated, the
# benchmark pinned (sockperf server and client on CPU $SP_CPU, default 0)
# and the daemon pinned away (CPU $D_CPU, default 1; D_CPU= unpinned).
# A manual experiment beside make bench's perturb section (bench/README.md
# quotes it): it tells which source moves the benchmark once the
# scheduler's placement no longer does. As root; its own namespaces,
# removed on exit.
set -u
BUILD=$(cd "${1:-build}" && pwd) || exit 1
ROUNDS=${2:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SP_CPU=${SP_CPU:-0} D_CPU=${D_CPU-1}
W=$(mktemp -d /tmp/nicstall-perturb.XXXXXX) || exit 1
C=nsps$$c S=nsps$$s AC=10.253.8.1 AS=10.253.8.2
cleanup() {
	kill $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	ip netns del "$C" 2>/dev/null
	ip netns del "$S" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ip netns add "$C" && ip netns add "$S" || exit 1
ip link add vc netns "$C" type veth peer name vs netns "$S" || exit 1
ip -n "$C" addr add $AC/24 dev vc
ip -n "$S" addr add $AS/24 dev vs
for n in "$C" "$S"; do ip -n "$n" link set lo up; done
ip -n "$C" link set vc up
ip -n "$S" link set vs up
mkdir -p "$W/flows" "$W/state" "$W/run" "$W/rules.d"
# the bench's 32 watched sessions at 500/s, and the measured session
ip netns exec "$S" "$BUILD/nsengine" server --listen $AS:12001 --table-dir "$W/flows" \
	> "$W/es.log" 2>&1 &
sleep 0.5
ip netns exec "$C" "$BUILD/nsengine" client --connect $AS:12001 --sessions 32 \
	--interval-us 2000 --duration 3600 --table-dir "$W/flows" > "$W/ec.log" 2>&1 &
ip netns exec "$S" taskset -c "$SP_CPU" sockperf server --tcp -i $AS -p 11111 \
	> "$W/sps.log" 2>&1 &
sleep 2
conf() {        # conf NAME [track = ...]
	cat > "$W/$1.conf" <<CONF
[daemon]
state_dir = $W/state
run_dir = $W/run
flows_dir = $W/flows
rules_dir = $ROOT/rules
rules_local_dir = $W/rules.d
[port cli]
netns = $C
interface = vc
flows = tcp port 12001
${2:-}
peer = srv
[port srv]
netns = $S
interface = vs
flows = tcp port 12001
${2:-}
peer = cli
CONF
}
conf all
conf sock "track = sock"
conf engine "track = engine"
conf bpf "track = bpf"
pin=()
[ -n "$D_CPU" ] && pin=(taskset -c "$D_CPU")
echo "round variant p50_us p99_us"
for r in $(seq "$ROUNDS"); do
	for v in off sock engine bpf all; do
		dp=
		if [ "$v" != off ]; then
			"${pin[@]}" "$BUILD/nicstalld" -c "$W/$v.conf" --socket "$W/ctl.sock" \
				>> "$W/d.log" 2>&1 &
			dp=$!
			sleep 1.5
			kill -0 "$dp" 2>/dev/null || { echo "nicstalld ($v) did not start:" >&2; tail -5 "$W/d.log" >&2; exit 1; }
		fi
		out=$(ip netns exec "$C" taskset -c "$SP_CPU" sockperf ping-pong --tcp -i $AS \
			-p 11111 -t 5 2>&1)
		echo "$r $v $(echo "$out" | sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p') $(echo "$out" | sed -n 's/.*percentile 99.000 = *\([0-9.]*\).*/\1/p')"
		[ -n "$dp" ] && { kill "$dp"; wait "$dp" 2>/dev/null; }
	done
done
