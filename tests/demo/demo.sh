#!/bin/bash
# make demo [SCENARIO=...]: the whole job on an emulated ConnectX port pair.
# Builds are done by make; this script sets up two namespaces joined by the
# emulated pair, runs ping-pong traffic and nicstalld, injects the failure,
# lets the daemon detect, investigate, recover and write its bundle, prints
# the bundle's summary and path, and tears everything down, also on Ctrl-C
# or failure. Scenarios: port-drop (default), already-promiscuous,
# egress, buffer-drop, steering-miss, engine-hold, fabric-fault,
# producer-stall, self-release; producer-stall-4 (four ranks with their peers) is
# demo-fleet.sh.
set -u
BUILD=$(cd "${1:-build}" && pwd)
SCENARIO=${2:-port-drop}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PREFIX=demo$$
PREFIX=${PREFIX:0:10}
WORK=$(mktemp -d /tmp/nicstall-demo.XXXXXX)
STATE=$BUILD/demo-state
NET=10.219.0
CLI_NS=$PREFIX-cli SRV_NS=$PREFIX-srv CLI_IF=${PREFIX}c SRV_IF=${PREFIX}s
CLI_ADDR=$NET.1 SRV_ADDR=$NET.2
PIDS=()
t0=$(date +%s)

[ "$SCENARIO" = producer-stall-4 ] && exec "$ROOT/tests/demo/demo-fleet.sh" "$BUILD"
case "$SCENARIO" in
port-drop|already-promiscuous|egress|buffer-drop|steering-miss|engine-hold|fabric-fault|producer-stall|self-release) ;;
*) echo "demo: unknown SCENARIO '$SCENARIO' (port-drop, already-promiscuous, egress, buffer-drop, steering-miss, engine-hold, fabric-fault, producer-stall, self-release, producer-stall-4)" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "demo: needs root (network namespaces, tc, BPF)" >&2; exit 1; }

step() { printf '[%3ss] %s\n' "$(( $(date +%s) - t0 ))" "$*"; }
cleanup() {
	local p
	trap - EXIT INT TERM
	step "tearing down: processes, namespaces, tc programs, temporary files"
	for p in "${PIDS[@]}"; do kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	EMUPORT=$BUILD/emuport "$ROOT/tests/emu/emu-pair.sh" down "$PREFIX" "$WORK/emu" >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo; step "interrupted"; exit 130' INT TERM
wait_for() { local n=$(( $1 * 10 )); shift; while [ "$n" -gt 0 ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; n=$((n-1)); done; return 1; }
ctl() { "$BUILD/nicstallctl" -s "$WORK/ctl.sock" "$@"; }

step "scenario: $SCENARIO"
step "creating the emulated ConnectX-4 Lx pair: namespaces $CLI_NS and $SRV_NS, veth $CLI_IF <-> $SRV_IF"
EMU_NET=$NET EMU_ARGS=--fw-frames EMUPORT=$BUILD/emuport "$ROOT/tests/emu/emu-pair.sh" up "$PREFIX" "$WORK/emu" >/dev/null ||
	{ echo "demo: the emulated pair did not come up" >&2; exit 1; }
mkdir -p "$STATE" "$WORK/flows"
srv_extra="promisc_capture = no"
[ "$SCENARIO" = egress ] && srv_extra=""
EMU_DAEMON_EXTRA="flows_dir = $WORK/flows
state_dir = $STATE
run_dir = $WORK
rules_local_dir = $WORK/rules.d" EMU_SRV_EXTRA=$srv_extra \
	"$ROOT/tests/emu/emu-conf.sh" "$PREFIX" "$WORK/emu" "$NET" "tcp port 11111-11114" client server \
	> "$WORK/demo.conf"
step "starting nicstalld on both ports (config: $WORK/demo.conf)"
# NICSTALL_WRAP runs the daemon under a tool (valgrind: tests/demo/valgrind.sh)
${NICSTALL_WRAP:-} "$BUILD/nicstalld" -c "$WORK/demo.conf" --socket "$WORK/ctl.sock" > "$WORK/nicstalld.log" 2>&1 &
PIDS+=($!)
wait_for "${NICSTALL_START_WAIT:-10}" ctl status || { echo "demo: nicstalld did not start:" >&2; cat "$WORK/nicstalld.log" >&2; exit 1; }
ctl status | sed 's/^/        /'

if [ "$SCENARIO" = producer-stall ]; then
	step "starting the example engine: a consumer awaiting a stream, and its producer (3 sessions)"
	ip netns exec "$SRV_NS" "$BUILD/nsengine" server --await --listen "$SRV_ADDR:11111" --table-dir "$WORK/flows" >/dev/null 2>&1 &
	PIDS+=($!)
	wait_for 5 bash -c "ip netns exec $SRV_NS ss -ltn | grep -q ':11111 '"
	ip netns exec "$CLI_NS" "$BUILD/nsengine" client --connect "$SRV_ADDR:11111" --sessions 3 --interval-us 2000 \
		--duration 60 --stop-after 0:1500 --stop-after 1:1500 --stop-after 2:1500 --table-dir "$WORK/flows" >/dev/null 2>&1 &
	PIDS+=($!)
	step "the producer stops sending after 1500 messages per session (about 3 s)"
else
	step "starting sockperf TCP ping-pong: 4 sessions, 500 round trips per second each"
	for i in 1 2 3 4; do
		ip netns exec "$SRV_NS" sockperf server --tcp -i "$SRV_ADDR" -p $((11110 + i)) >/dev/null 2>&1 &
		PIDS+=($!)
		[ "$i" = 1 ] && SRV1=$!
	done
	for i in 1 2 3 4; do
		wait_for 5 bash -c "ip netns exec $SRV_NS ss -ltn | grep -q ':$((11110 + i)) '"
		ip netns exec "$CLI_NS" sockperf ping-pong --tcp -i "$SRV_ADDR" -p $((11110 + i)) -t 60 --mps 500 >/dev/null 2>&1 &
		PIDS+=($!)
	done
	sleep 3
	ctl flows client | sed 's/^/        /'
	cport=$(ip netns exec "$CLI_NS" ss -Htn "dport = :11111" | awk '{print $4}' | sed 's/.*://' | head -1)
	emu() { "$BUILD/emuport" ctl "$WORK/emu" "$@" >/dev/null; }
	case "$SCENARIO" in
	port-drop)
		step "wedging session 1 at the server port: its frames count at the port, never at the vport"
		emu wedge srv tcp "$CLI_ADDR" "$cport" "$SRV_ADDR" 11111 ;;
	already-promiscuous)
		step "server port promiscuous already; wedging session 1 at the server port"
		ip -n "$SRV_NS" link set "$SRV_IF" promisc on
		# the port applies it in its own time (emuport --rx-mode-delay);
		# a wedge set before that would be cleared by the transition
		wait_for 5 bash -c "'$BUILD/emuport' ctl '$WORK/emu' rxmode srv | grep -q ' promisc_applied=on '"
		emu wedge srv tcp "$CLI_ADDR" "$cport" "$SRV_ADDR" 11111 ;;
	egress)
		step "wedging session 1's replies at the client port"
		emu wedge cli tcp "$SRV_ADDR" 11111 "$CLI_ADDR" "$cport" ;;
	buffer-drop)
		step "server port out of receive buffers: every data frame dropped"
		emu mode srv buffer-drop 1 ;;
	steering-miss)
		step "session 1's frames miss the server port's steering rules"
		emu mode srv steer-miss "tcp $CLI_ADDR $cport $SRV_ADDR 11111" ;;
	self-release)
		step "wedging session 1 at the server port for 3 frames only: the request, its tail-loss probe and its first retransmission are lost, the second retransmission gets through before any action"
		emu wedge srv tcp "$CLI_ADDR" "$cport" "$SRV_ADDR" 11111 limit 3 ;;
	engine-hold)
		step "stopping the server process of session 1 (SIGSTOP): requests pile up in its socket"
		kill -STOP "$SRV1" ;;
	fabric-fault)
		step "RDMA transport errors on the server port, and session 1 wedged"
		emu mode srv fabric-fault always
		emu wedge srv tcp "$CLI_ADDR" "$cport" "$SRV_ADDR" 11111 ;;
	esac
fi
step "waiting for nicstalld to detect the stall, investigate, recover and write its bundle"
bundle=""
for _ in $(seq 1 $(( ${NICSTALL_BUNDLE_WAIT:-30} * 10 ))); do
	bundle=$(grep -o 'bundle /[^ ]*' "$WORK/nicstalld.log" | head -1 | cut -d' ' -f2)
	[ -n "$bundle" ] && break
	sleep 0.1
done
grep -E "incident|investigation|reprogram|bundle" "$WORK/nicstalld.log" | sed 's/^<[0-9]>/        /'
if [ -z "$bundle" ]; then
	echo "demo: no bundle was written within ${NICSTALL_BUNDLE_WAIT:-30} s; the flows and the daemon's log:" >&2
	ctl flows >&2
	tail -30 "$WORK/nicstalld.log" >&2
	exit 1
fi
step "investigation timeline:"
ctl incident show | sed 's/^/        /'
step "bundle check:"
"$BUILD/nicstallctl" verify "$bundle" | sed 's/^/        /'
echo
cat "$bundle/summary.txt"
echo
step "bundle: $bundle"
