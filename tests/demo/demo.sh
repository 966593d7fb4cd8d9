#!/bin/bash
# make demo [SCENARIO=...]: the whole job on an emulated ConnectX port pair.
# Builds are done by make; this script sets up two namespaces joined by the
# emulated pair, runs ping-pong traffic and nicstalld, injects the failure,
# lets the daemon detect, investigate, recover and write its bundle, prints
# the bundle's summary and path, and tears everything down, also on Ctrl-C
# or failure. Scenarios: port-drop (default), already-promiscuous,
# egress, buffer-drop, steering-miss, engine-hold, fabric-fault,
# producer-stall, self-release, oversize-drop, flow-control, link-flap, seed-001, seed-001-healthy; producer-stall-4 (four ranks
# with their peers) is demo-fleet.sh; seed-004 (four ranks, one node's disk
# slowed by the kernel, every rank naming it) is demo-seed004.sh.
#
# seed-001 (nicstalld's seed 001, an engine thread starved of a shared
# lock): tests/engine/lockengine.c serves 4 sessions with 2 spinning
# workers that share a lock; one send of worker 0 waits for it
# SEED001_STALL_MS (default 650, the record's send) while a sibling thread
# keeps it and wakes the waiter tens of thousands of times to lose again;
# worker 1's sessions run on. The flows are the engine's flow table. Knobs:
# SEED001_THRESHOLD (stall_threshold, default the daemon's),
# SEED001_CLIENT_THRESHOLD (the client port's own), SEED001_SERVER_TRACK
# (the server port's flow sources, default "engine onload") and
# SEED001_THREAD_WATCH (thread_watch, default auto), SEED001_SYSCALLS
# (thread_watch_syscalls, default no). seed-001-healthy: the
# same engine sleeping in epoll_wait between requests (and its sibling in
# futex_wait), two clients 1 ms and 250 ms between requests, for
# SEED001_HEALTHY_S seconds (default 60): no incident may open.
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
OLDIR="" OLSTATE=""
t0=$(date +%s)

[ "$SCENARIO" = producer-stall-4 ] && exec "$ROOT/tests/demo/demo-fleet.sh" "$BUILD"
[ "$SCENARIO" = seed-004 ] && exec "$ROOT/tests/demo/demo-seed004.sh" "$BUILD"
case "$SCENARIO" in
port-drop|already-promiscuous|egress|buffer-drop|steering-miss|engine-hold|fabric-fault|producer-stall|self-release|oversize-drop|flow-control|link-flap|seed-001|seed-001-healthy) ;;
*) echo "demo: unknown SCENARIO '$SCENARIO' (port-drop, already-promiscuous, egress, buffer-drop, steering-miss, engine-hold, fabric-fault, producer-stall, self-release, oversize-drop, flow-control, link-flap, producer-stall-4, seed-001, seed-001-healthy, seed-004)" >&2; exit 2 ;;
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
	rm -rf "$WORK" ${OLDIR:+"$OLDIR"} ${OLSTATE:+"$OLSTATE"}
}
trap cleanup EXIT
trap 'echo; step "interrupted"; exit 130' INT TERM
wait_for() { local n=$(( $1 * 10 )); shift; while [ "$n" -gt 0 ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; n=$((n-1)); done; return 1; }
ctl() { "$BUILD/nicstallctl" -s "$WORK/ctl.sock" "$@"; }

step "scenario: $SCENARIO"
step "creating the emulated ConnectX-4 Lx pair: namespaces $CLI_NS and $SRV_NS, veth $CLI_IF <-> $SRV_IF"
# the example engine's stream (producer-stall) stands in for an RDMA
# transport: only its frames move the emulated RDMA counters, as only RDMA
# traffic moves a real card's; sockperf's TCP moves none
emu_args=--fw-frames
[ "$SCENARIO" = producer-stall ] && emu_args="--fw-frames --rdma-port 11111"
EMU_NET=$NET EMU_ARGS=$emu_args EMUPORT=$BUILD/emuport "$ROOT/tests/emu/emu-pair.sh" up "$PREFIX" "$WORK/emu" >/dev/null ||
	{ echo "demo: the emulated pair did not come up" >&2; exit 1; }
mkdir -p "$STATE" "$WORK/flows"
srv_extra="promisc_capture = no"
[ "$SCENARIO" = egress ] && srv_extra=""
seed_extra="" seed_srv="" seed_cli=""
case "$SCENARIO" in seed-001*)
	# cooldown 1s: an incident a loaded machine opens before the send
	# (a scheduling delay) must not hold back the send's own
	# the stack-dump stand-in: the engine's counters in Onload's lots
	# text. Not under $WORK: the daemon's run_dir, which its tools do not
	# see (daemon/detect/srcrun.c)
	OLDIR=$(mktemp -d /tmp/nicstall-demo-ol.XXXXXX)
	# its state file on tmpfs where there is one: the engine's worker
	# replaces it (a rename) at each lock wake, and where /tmp is a disk
	# mounted with discard, freeing the old file's blocks sleeps on the
	# disk (ext4_free_blocks -> blkdev_issue_discard); once that sleep,
	# not the futex, was the worker's at the daemon's call (stall-650).
	# The real engine writes no file.
	OLSTATE=$(mktemp -d /dev/shm/nicstall-demo-ol.XXXXXX 2>/dev/null) || OLSTATE=$OLDIR
	chmod 0755 "$OLSTATE"
	seed_extra="thread_watch = ${SEED001_THREAD_WATCH:-auto}
thread_watch_syscalls = ${SEED001_SYSCALLS:-no}
incident_cooldown = 1s
onload_tools = $OLDIR"
	sed -e "s|@STATE@|$OLSTATE/state|" -e "s|@FIXTURE@|$ROOT/tests/fixtures/onload/stackdump-lots-0044-during.txt|" \
		"$ROOT/tests/engine/onload_stackdump.in" > "$OLDIR/onload_stackdump"
	chmod 0755 "$OLDIR" "$OLDIR/onload_stackdump"
	# the flows are the engine's tables (their owner is the engine's
	# process, whose Onload stack is dumped); a kernel socket's flow has no
	# owner until the investigation's threads step finds it
	seed_srv="track = ${SEED001_SERVER_TRACK:-engine onload}"
	seed_cli="track = engine"
	# SEED001_CLIENT_THRESHOLD: the client's port calls its flows sooner,
	# so that the incident opens on the other end's port and the engine's
	# flows join it (test_seed001's client-first)
	[ -n "${SEED001_CLIENT_THRESHOLD:-}" ] && seed_cli="$seed_cli
stall_threshold = $SEED001_CLIENT_THRESHOLD"
	[ -n "${SEED001_THRESHOLD:-}" ] && seed_extra="$seed_extra
stall_threshold = $SEED001_THRESHOLD" ;;
esac
EMU_DAEMON_EXTRA="$seed_extra
flows_dir = $WORK/flows
state_dir = $STATE
run_dir = $WORK
rules_local_dir = $WORK/rules.d" EMU_SRV_EXTRA="$srv_extra
$seed_srv" EMU_CLI_EXTRA="$seed_cli" \
	"$ROOT/tests/emu/emu-conf.sh" "$PREFIX" "$WORK/emu" "$NET" "tcp port 11111-11114" client server \
	> "$WORK/demo.conf"
step "starting nicstalld on both ports (config: $WORK/demo.conf)"
# NICSTALL_WRAP runs the daemon under a tool (valgrind: tests/demo/valgrind.sh)
${NICSTALL_WRAP:-} "$BUILD/nicstalld" -c "$WORK/demo.conf" --socket "$WORK/ctl.sock" > "$WORK/nicstalld.log" 2>&1 &
PIDS+=($!)
wait_for "${NICSTALL_START_WAIT:-10}" ctl status || { echo "demo: nicstalld did not start:" >&2; cat "$WORK/nicstalld.log" >&2; exit 1; }
ctl status | sed 's/^/        /'

seed_engine() {        # seed_engine SPIN_US: the lockengine, its sessions' clients
	ip netns exec "$SRV_NS" "$BUILD/lockengine" --listen "$SRV_ADDR:11111" --table-dir "$WORK/flows" \
		--workers 2 --spin-us "$1" --spin-workers 1 --stall-ms "${SEED001_STALL_MS:-650}" \
		--onload-state "$OLSTATE/state" > "$WORK/engine.out" 2>&1 &
	PIDS+=($!)
	ENGINE=$!
	wait_for 5 bash -c "ip netns exec $SRV_NS ss -ltn | grep -q ':11111 '"
}
if [ "$SCENARIO" = seed-001 ]; then
	step "starting the emulated seed 001 engine: worker 0 spinning on its sessions (EF_SPIN_USEC as the record), worker 1 blocking in epoll_wait, sharing one lock with a sibling thread"
	seed_engine 100000
	ip netns exec "$CLI_NS" "$BUILD/nsengine" client --connect "$SRV_ADDR:11111" --sessions 4 --interval-us 1000 \
		--duration 60 --table-dir "$WORK/flows" >/dev/null 2>&1 &
	PIDS+=($!)
	sleep 3
	ctl flows server | sed 's/^/        /'
	step "worker 0's next send waits for the shared lock for ${SEED001_STALL_MS:-650} ms, woken to lose it again"
	FIRST_INCIDENT=$(( $(grep -c "incident [0-9]* on port [^:]*: [0-9]* flow(s) stalled" "$WORK/nicstalld.log") + 1 ))
	[ "$FIRST_INCIDENT" -gt 1 ] && step "(an incident opened before the send: a loaded machine; the send's is number $FIRST_INCIDENT or later)"
	kill -USR1 "$ENGINE"
	wait_for 5 grep -q send-end "$WORK/engine.out"
	sed 's/^/        engine: /' "$WORK/engine.out"
elif [ "$SCENARIO" = seed-001-healthy ]; then
	step "starting the same engine healthy: workers asleep in epoll_wait between requests, the sibling in futex_wait"
	seed_engine 0
	ip netns exec "$CLI_NS" "$BUILD/nsengine" client --connect "$SRV_ADDR:11111" --sessions 2 --interval-us 1000 \
		--duration "$(( ${SEED001_HEALTHY_S:-60} + 10 ))" --table-dir "$WORK/flows" >/dev/null 2>&1 &
	PIDS+=($!)
	ip netns exec "$CLI_NS" "$BUILD/nsengine" client --connect "$SRV_ADDR:11111" --sessions 2 --interval-us 250000 \
		--duration "$(( ${SEED001_HEALTHY_S:-60} + 10 ))" --table-dir "$WORK/flows" >/dev/null 2>&1 &
	PIDS+=($!)
	sleep 2
	ctl flows server | sed 's/^/        /'
	step "healthy traffic for ${SEED001_HEALTHY_S:-60} s: no incident may open"
	sleep "${SEED001_HEALTHY_S:-60}"
	ctl status | grep "thread watch:" | sed 's/^ */        /'
	if grep -q "incident" "$WORK/nicstalld.log"; then
		grep "incident\|thread watch" "$WORK/nicstalld.log" >&2
		echo "demo: an incident opened on a healthy engine" >&2
		exit 1
	fi
	step "no incident in ${SEED001_HEALTHY_S:-60} s of healthy traffic"
	exit 0
elif [ "$SCENARIO" = producer-stall ]; then
	step "starting the example engine: a consumer awaiting a stream, and its producer (3 sessions)"
	ip netns exec "$SRV_NS" "$BUILD/nsengine" server --await --listen "$SRV_ADDR:11111" --table-dir "$WORK/flows" >/dev/null 2>&1 &
	PIDS+=($!)
	wait_for 5 bash -c "ip netns exec $SRV_NS ss -ltn | grep -q ':11111 '"
	ip netns exec "$CLI_NS" "$BUILD/nsengine" client --connect "$SRV_ADDR:11111" --sessions 3 --interval-us 2000 \
		--duration 60 --stop-after 0:1500 --stop-after 1:1500 --stop-after 2:1500 --table-dir "$WORK/flows" >/dev/null 2>&1 &
	PIDS+=($!)
	step "the producer stops sending after 1500 messages per session (about 3 s)"
else
	msg1=""
	if [ "$SCENARIO" = oversize-drop ]; then
		# jumbo frames end to end while the sessions connect (MSS 8948);
		# session 1 sends 3000-byte messages, one 3052-byte segment each
		ip -n "$CLI_NS" link set "$CLI_IF" mtu 9000
		ip -n "$SRV_NS" link set "$SRV_IF" mtu 9000
		msg1="-m 3000"
	fi
	if [ "$SCENARIO" = link-flap ]; then
		# what the flap loses is sent again 1.5 s later, not 200 ms
		# (rto_min on both ends' routes): the flow waits past the
		# threshold with the link up again when the daemon looks
		ip -n "$CLI_NS" route change "$NET.0/24" dev "$CLI_IF" rto_min 1500ms
		ip -n "$SRV_NS" route change "$NET.0/24" dev "$SRV_IF" rto_min 1500ms
	fi
	step "starting sockperf TCP ping-pong: 4 sessions, 500 round trips per second each${msg1:+ (session 1: 3000-byte messages, both ports at MTU 9000)}"
	for i in 1 2 3 4; do
		ip netns exec "$SRV_NS" sockperf server --tcp -i "$SRV_ADDR" -p $((11110 + i)) >/dev/null 2>&1 &
		PIDS+=($!)
		[ "$i" = 1 ] && SRV1=$!
	done
	for i in 1 2 3 4; do
		wait_for 5 bash -c "ip netns exec $SRV_NS ss -ltn | grep -q ':$((11110 + i)) '"
		# shellcheck disable=SC2086
		ip netns exec "$CLI_NS" sockperf ping-pong --tcp -i "$SRV_ADDR" -p $((11110 + i)) -t 60 --mps 500 \
			$([ "$i" = 1 ] && echo "$msg1") >/dev/null 2>&1 &
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
	link-flap)
		step "the link down for 100 ms and up again (the server's end: both carriers drop); what was sent meanwhile is lost"
		ip -n "$SRV_NS" link set "$SRV_IF" down; sleep 0.1; ip -n "$SRV_NS" link set "$SRV_IF" up ;;
	flow-control)
		step "the server port paused by its peer for 3 s (802.3x global pause): its transmitter stops, what it sends waits in its queue, nothing is lost"
		emu pause srv 3000 ;;
	oversize-drop)
		step "the server port's MTU lowered to 1500 under the live sessions: session 1's 3052-byte segments are too long for its MAC (rx_oversize_pkts_phy), the small sessions and pings pass"
		emu mtu srv 1500
		ip -n "$SRV_NS" link set "$SRV_IF" mtu 1500 ;;
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
	# the first bundle of an incident that opened after the failure was
	# injected (FIRST_INCIDENT: on a loaded machine a scheduling delay
	# may stall flows before it)
	# (a whole line only: the log read while the daemon writes it once
	# ended "bundle /tm", and the demo went on with that)
	bundle=$(sed -n 's/.*incident \([0-9]*\): bundle \(\/[^ ]*\) (verdict .*)$/\1 \2/p' "$WORK/nicstalld.log" |
		awk -v f="${FIRST_INCIDENT:-1}" '$1 >= f { print $2; exit }')
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
