# Helpers for tests (and the demo) of a fleet: N "ranks" in N namespaces,
# each with one emulated ConnectX port (one emuport, ports rank0..rankN-1,
# RDMA devices mlx5_0..) on a fabric bridge, and a management network
# beside it on which the daemons talk to each other (the peer notices must
# not move the RDMA counters they are about). Each rank is watched by its
# own nicstalld with every other rank as a peer. Source after lib.sh.
#
#   fleet_up NET N [EXTRA]   fabric NET.0.0/24, management NET.1.0/24 (NET is
#                            two octets); rank i is NET.0.(i+1) / NET.1.(i+1);
#                            $T_DIR/rankI.conf for each rank, EXTRA added to
#                            each [daemon] section
#   fleet_start I            start rank I's daemon (socket $T_DIR/rankI.sock)
#   fleet_stop I             stop it (TERM, then KILL after 2 s)
#   fleet_kill_engines       end the engines in the ranks' namespaces
#   rctl I ARGS...           nicstallctl against rank I
#   fleet_metric I SERIES    a value of rank I's metrics textfile

FLEET_PIDS=()

fleet_up() {
	local net=$1 n=$2 extra=${3:-} i j ports=() fab=$T_PREFIX-fab
	FLEET_NET=$net FLEET_N=$n FLEET_KEY=$T_DIR/fleet.keys
	ip netns add "$fab" && T_NETNS+=("$fab") || return 1
	ip -n "$fab" link add brf type bridge && ip -n "$fab" link add brm type bridge || return 1
	ip -n "$fab" link set brf up && ip -n "$fab" link set brm up && ip -n "$fab" link set lo up
	for i in $(seq 0 $((n - 1))); do
		ip netns add "$T_PREFIX-r$i" && T_NETNS+=("$T_PREFIX-r$i") || return 1
		ip link add "${T_PREFIX}f$i" netns "$T_PREFIX-r$i" type veth peer name "pf$i" netns "$fab" &&
		ip link add "${T_PREFIX}m$i" netns "$T_PREFIX-r$i" type veth peer name "pm$i" netns "$fab" ||
			return 1
		ip -n "$fab" link set "pf$i" master brf up && ip -n "$fab" link set "pm$i" master brm up
		ip -n "$T_PREFIX-r$i" addr add "$net.0.$((i + 1))/24" dev "${T_PREFIX}f$i"
		ip -n "$T_PREFIX-r$i" addr add "$net.1.$((i + 1))/24" dev "${T_PREFIX}m$i"
		ip -n "$T_PREFIX-r$i" link set lo up
		ip -n "$T_PREFIX-r$i" link set "${T_PREFIX}f$i" up
		ip -n "$T_PREFIX-r$i" link set "${T_PREFIX}m$i" up
		ports+=(--port "rank$i:$T_PREFIX-r$i:${T_PREFIX}f$i")
		mkdir -p "$T_DIR/state$i" "$T_DIR/flows$i" "$T_DIR/run$i"
	done
	mkdir -p "$T_DIR/emu"
	# the ranks' engine traffic (port 11200) stands in for their RDMA
	# transport: only it moves the RDMA work counters
	"$BUILD/emuport" run --dir "$T_DIR/emu" "${ports[@]}" --rx-mode-delay 5 --rdma-port 11200 \
		> "$T_DIR/emuport.log" 2>&1 < /dev/null &
	FLEET_EMU=$!
	T_PIDS+=("$FLEET_EMU")
	wait_for 10 test -S "$T_DIR/emu/ctl.sock" -a -f "$T_DIR/emu/rank$((n - 1)).ethtool" || {
		cat "$T_DIR/emuport.log"; return 1; }
	# one key for the fleet, readable by root alone (chrony's format)
	( umask 077; echo "1 SHA256 HEX:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$FLEET_KEY" )
	for i in $(seq 0 $((n - 1))); do
		{
			cat <<CONF
[daemon]
interval = 100ms
sysfs_root = $T_DIR/emu/sysfs
rules_dir = $ROOT/rules
rules_local_dir = $T_DIR/rules.d
state_dir = $T_DIR/state$i
flows_dir = $T_DIR/flows$i
run_dir = $T_DIR/run$i
journal_dir = $T_DIR/journal
incident_cooldown = 0s
host_name = rank$i
peer_listen = $net.1.$((i + 1)):7499
peer_netns = $T_PREFIX-r$i
metrics_file = $T_DIR/metrics$i.prom
metrics_interval = 1s
$extra

[port rank$i]
netns = $T_PREFIX-r$i
interface = ${T_PREFIX}f$i
stats_file = $T_DIR/emu/rank$i.ethtool
info_file = $T_DIR/emu/rank$i.info
flows = tcp port 11200-11299
recover = none
promisc_capture = no
CONF
			for j in $(seq 0 $((n - 1))); do
				[ "$j" = "$i" ] && continue
				printf '\n[peer rank%s]\naddress = %s\nkey_file = %s\n' "$j" "$net.1.$((j + 1))" "$FLEET_KEY"
			done
		} > "$T_DIR/rank$i.conf"
	done
}

fleet_start() {
	local i=$1
	rm -f "$T_DIR/rank$i.sock"
	"$NICSTALLD" -c "$T_DIR/rank$i.conf" --socket "$T_DIR/rank$i.sock" >> "$T_DIR/rank$i.log" 2>&1 &
	FLEET_PIDS[$i]=$!
	T_PIDS+=($!)
	wait_for 10 "$NICSTALLCTL" -s "$T_DIR/rank$i.sock" status || {
		fail "rank $i's daemon starts"; tail -20 "$T_DIR/rank$i.log"; return 1; }
}

fleet_stop() {
	local p=${FLEET_PIDS[$1]:-}
	[ -n "$p" ] || return 0
	kill -TERM "$p" 2>/dev/null
	for _ in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	FLEET_PIDS[$1]=
}

# fleet_kill_engines: end the nsengine processes in every rank's namespace
fleet_kill_engines() {
	local i p
	for i in $(seq 0 $((FLEET_N - 1))); do
		for p in $(ip netns pids "$T_PREFIX-r$i"); do
			grep -qa nsengine "/proc/$p/cmdline" 2>/dev/null && kill "$p"
		done
	done
}

rctl() { local i=$1; shift; "$NICSTALLCTL" -s "$T_DIR/rank$i.sock" "$@"; }

# fleet_metric I SERIES: the value of SERIES (name{labels}) in rank I's
# metrics textfile ($T_DIR/metricsI.prom, rewritten every second), or ""
fleet_metric() { awk -v s="$2" '$1 == s { print $2 }' "$T_DIR/metrics$1.prom" 2>/dev/null; }

# fleet_sanitizers: the sanitizer reports in the ranks' logs (the ASan build)
fleet_sanitizers() {
	! grep -lE "runtime error|AddressSanitizer|LeakSanitizer" "$T_DIR"/rank*.log 2>/dev/null | grep -q .
}

# fleet_traffic STOP_AFTER: rank 0 consumes a stream from every other rank
# (nsengine server --await; its sessions wait on the producers), each
# producer sending every 2 ms and stopping after STOP_AFTER messages, as the
# ranks of a collective stop together when one of them stalls
fleet_traffic() {
	local stop=$1 i
	ip netns exec "$T_PREFIX-r0" "$BUILD/nsengine" server --await --listen "$FLEET_NET.0.1:11200" \
		--table-dir "$T_DIR/flows0" > /dev/null 2>&1 &
	T_PIDS+=($!)
	wait_for 5 bash -c "ip netns exec $T_PREFIX-r0 ss -ltn | grep -q ':11200 '"
	for i in $(seq 1 $((FLEET_N - 1))); do
		ip netns exec "$T_PREFIX-r$i" "$BUILD/nsengine" client --connect "$FLEET_NET.0.1:11200" \
			--sessions 1 --interval-us 2000 --duration 40 --stop-after "0:$stop" \
			--table-dir "$T_DIR/flows$i" > /dev/null 2>&1 &
		T_PIDS+=($!)
	done
}

# fleet_bundle I [SECONDS]: the path of rank I's first bundle, once written
fleet_bundle() {
	local i=$1 s=${2:-20} b
	wait_for "$s" bash -c "grep -q 'bundle /' '$T_DIR/rank$i.log'" || return 1
	b=$(grep -o 'bundle /[^ ]*' "$T_DIR/rank$i.log" | head -1 | cut -d' ' -f2)
	wait_for 5 test -f "$b/manifest.json" && echo "$b"
}
