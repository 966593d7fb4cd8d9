#!/bin/bash
# port-drop does not flip with timing (issue 35): the port-drop and the
# already-promiscuous scenarios of the emulated pair, NICSTALL_REPEAT times
# each (default 20, the acceptance run; make check-repeat, outside make
# check),
# every one ending in port-drop; every third run of each
# raises the client's retransmission timeout (rto_min 1500ms on its route,
# read by tcp_rto_min()) so that a single frame, the request, is all that
# falls in the stall and the observation window.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu_lib.sh"
t_init
N=${NICSTALL_REPEAT:-20}
EMU_SRV_EXTRA="promisc_capture = no" emu_up 10.212.0 --fw-frames || { fail "emulated pair"; exit 1; }
# one incident a run: 2 * N of them within minutes (30 an hour by default)
sed -i '/^\[daemon\]/a incidents_per_hour = 3600' "$T_DIR/emu.conf"
start_daemon "$T_DIR/emu.conf" || exit 1
T_CLEANUP+=("ip -n $CLI_NS route del $SRV_ADDR/32 2>/dev/null")
# one session at a time, each on its own port (11120 on): a bundle per run
run_one() {     # run_one SCENARIO PORT SINGLE
	local sc=$1 port=$2 single=$3 p b
	[ "$single" = 1 ] && ip -n "$CLI_NS" route replace "$SRV_ADDR/32" dev "$CLI_IF" rto_min 1500ms
	[ "$sc" = already-promiscuous ] && {
		ip -n "$SRV_NS" link set "$SRV_IF" promisc on
		wait_for 5 bash -c "'$BUILD/emuport' ctl '$T_DIR/emu' rxmode srv | grep -q ' promisc_applied=on '"
	}
	pingpong "$port" 20; p=$(cport "$port")
	sleep 1
	emu wedge srv tcp "$CLI_ADDR" "$p" "$SRV_ADDR" "$port" > /dev/null
	if wait_for 30 bash -c "$(declare -f bundle_for); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' bundle_for $port >/dev/null"; then
		b=$(bundle_for "$port")
		V=$(jq -r '.verdict.verdict' "$b/manifest.json")
		X=$(jq -r '"window +\(.extended // 0), retrans \(.flows.retrans // "?")"' "$b/window.json")
		X="$X, released by $(jq -r '.release.action' "$b/manifest.json")"
		# a single frame: the window waited for the next retransmission,
		# and the explanation puts the flow's count beside the gap
		[ "$single" = 1 ] && ! jqe '.extended >= 1 and .flows.retrans >= 1' "$b/window.json" >/dev/null &&
			V="$V, but the window did not wait for a retransmission"
		jq -r .verdict.explanation "$b/manifest.json" | grep -q 'own retransmission count rose by [1-9]' ||
			V="$V, but without the flow's retransmission count"
		jqe '.release.action == "reprogram"' "$b/manifest.json" >/dev/null || V="$V, not released by the reprogram"
	else
		V="no bundle" X=""
	fi
	kill "$PP_CLI" "$PP_SRV" 2>/dev/null
	emu unwedge srv > /dev/null
	[ "$sc" = already-promiscuous ] && ip -n "$SRV_NS" link set "$SRV_IF" promisc off
	[ "$single" = 1 ] && ip -n "$CLI_NS" route del "$SRV_ADDR/32"
	echo "$sc run (port $port$([ "$single" = 1 ] && echo ", single frame")): $V ($X)"
	[ "$V" = port-drop ]
}
declare -A good=([port-drop]=0 [already-promiscuous]=0)
port=11120
for i in $(seq 1 "$N"); do
	for sc in port-drop already-promiscuous; do
		run_one "$sc" "$port" $(( i % 3 == 1 )) && good[$sc]=$(( ${good[$sc]} + 1 ))
		port=$((port + 1))
	done
done
check "port-drop: $N of $N runs end in port-drop (${good[port-drop]})" test "${good[port-drop]}" = "$N"
check "already-promiscuous: $N of $N runs end in port-drop (${good[already-promiscuous]})" test "${good[already-promiscuous]}" = "$N"
check "daemon alive after every run" kill -0 "$T_DPID"
