#!/bin/bash
# The real daemon against the emulated ConnectX pair: each scenario ends in
# a bundle whose verdict, releasing action and evidence are checked, that
# verifies, that `classify` reproduces, and whose report renders in headless
# Chromium without a console error, with its bands at the manifest's times
# (where Chromium can run; screenshots in BUILD/report/scenarios/).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu_lib.sh"
. "$(dirname "$0")/report_lib.sh"
t_init
REPORTS=1
report_can_run || { REPORTS=0; echo "skip - reports not rendered: $REPORT_SKIP"; }
# The server port's devlink health through the recorded-reply path (the
# emulated pair has no devlink): a ConnectX-6 Dx set whose vnic
# nic_receive_steering_discard follows the emulated port's steering
# counter, as the firmware's one QUERY_VNIC_ENV field feeds both
# (mlx5 en_stats.c: ethtool's rx_steer_missed_packets is that field).
DL=$T_DIR/devlink DLW=$BUILD/tests/test_devlink_health
mkdir -p "$DL"
[ -x "$DLW" ] || { fail "$DLW missing (make $DLW)"; exit 1; }
"$DLW" --write-set "$DL" --netdev "${T_PREFIX}s" --steer 1000 || { fail "devlink replies"; exit 1; }
EMU_SRV_EXTRA="promisc_capture = no
devlink = on
devlink_replies = $DL
devlink_interval = 100ms" emu_up 10.211.0 "--fw-frames --rdma-port 11109" || { fail "emulated pair"; exit 1; }
(
	last=-1
	while sleep 0.1; do
		v=$(sed -n 's/^ *rx_steer_missed_packets: *//p' "$T_DIR/emu/srv.ethtool" 2>/dev/null)
		[ -n "$v" ] && [ "$v" != "$last" ] || continue
		"$DLW" --write-set "$DL" --netdev "$SRV_IF" --steer $((1000 + v)) && last=$v
	done
) &
T_PIDS+=($!)
start_daemon "$T_DIR/emu.conf" || exit 1
ctl -j snapshot srv cli > "$T_DIR/snap.json"
check "snapshot: the server port's devlink health reporters" jqe \
	'[.ports.srv.devlink_health.reporters[].name] == ["fw", "fw_fatal", "rx", "tx", "vnic"] and (.ports.srv.devlink_health.reporters[] | select(.name == "vnic") | .diagnose != null)' "$T_DIR/snap.json"
check "snapshot: the client port says no devlink health, and why" jqe \
	'.ports.cli.devlink_health.note == "no devlink health" and (.ports.cli.devlink_health.reason | length > 0)' "$T_DIR/snap.json"
ctl snapshot srv cli > "$T_DIR/snap.txt"
check "snapshot in text: one line per reporter of the server port" bash -c \
	"[ \$(grep -cE '^    (fw|fw_fatal|rx|tx|vnic) +[a-z0-9]+ +errors [0-9]+, recovers [0-9]+' '$T_DIR/snap.txt') = 5 ]"
check "snapshot in text: the client port has none, and says why" grep -qE '^  devlink health: none \(.+\)$' "$T_DIR/snap.txt"
check "status: the devlink source's cost is accounted" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.ports[] | select(.name == \"srv\") | .sources[] | select(.name == \"devlink\") | .state == \"ok\" and .queries > 0 and .mean_query_us > 0'"
check "ports come up with the mlx5 profile and their RDMA devices" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.ports[] | select(.profile == \"mlx5\" and (.rdma_device | startswith(\"mlx5_\")) and .firmware == \"14.17.1010\" and .psid == \"MT_2420110034\")] | length == 2' >/dev/null"

# 0. a healthy run with firmware-consumed (LLDP) frames: no incident at all,
#    although the port always counts a few frames more than the vport
pingpong 11100 16
ip netns exec "$CLI_NS" "$BUILD/nsengine" server --listen "$CLI_ADDR:11199" --table-dir "$T_DIR/flows" > /dev/null 2>&1 &
T_PIDS+=($!)
wait_for 5 bash -c "ip netns exec $CLI_NS ss -ltn | grep -q ':11199 '"
ip netns exec "$SRV_NS" "$BUILD/nsengine" client --connect "$CLI_ADDR:11199" --sessions 3 --interval-us 1000 --duration 15 --table-dir "$T_DIR/flows" > /dev/null 2>&1 &
T_PIDS+=($!)
sleep 15
ctl -j counters srv --window 14 > "$T_DIR/healthy.json"
gap=$(jq '.sources.text | .rx_packets_phy.delta - .rx_vport_unicast_packets.delta - .rx_vport_multicast_packets.delta - .rx_vport_broadcast_packets.delta' "$T_DIR/healthy.json")
echo "healthy: port - vport = $gap frames over 14 s (LLDP consumed by the firmware)"
check "healthy: the port shows its steady firmware-consumed gap" test "$gap" -ge 10
check "healthy: engine and kernel flows were watched" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j flows | jqe '[.flows[].source] | (index(\"engine\") != null) and (index(\"sock\") != null)' >/dev/null"
check "healthy: no incident over the run" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.incidents | length == 0' >/dev/null"

# scenario NAME PORT: wait for the bundle of the session to PORT, check it
scenario_bundle() {
	local b
	wait_for 25 bash -c "$(declare -f bundle_for); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' bundle_for $2 >/dev/null" || { fail "$1: a bundle is written"; return 1; }
	b=$(bundle_for "$2")
	ok "$1: bundle $(basename "$b")"
	jq '{verdict: .verdict.verdict, explanation: .verdict.explanation, release}' "$b/manifest.json"
	jq -c '{flows: [.incident.flows[]? | "\(.tuple) \(.state)"], window: {extended: .window.extended, flows: .window.flows}}' "$b/record.json" 2>/dev/null
	check "$1: verify passes" "$NICSTALLCTL" verify "$b"
	check "$1: classify reproduces the verdict" bash -c "'$NICSTALLCTL' classify '$b' --rules '$ROOT/rules' | grep -q 'identical to the recorded'"
	# the summary lint (issue 35): whole frames, no placeholder, no rule
	# expression, one figure per quantity across summary, report, manifest
	"$ROOT/tests/tools/summary-lint" "$b" > "$T_DIR/lint-$1.txt" 2>&1 &&
		ok "$1: summary, report and manifest pass the summary lint" ||
		{ fail "$1: the summary lint finds:"; cat "$T_DIR/lint-$1.txt"; }
	[ "$REPORTS" = 1 ] && report_later "$1: report" "$b" "$BUILD/report/scenarios/$1" --full
	B=$b
}
# isolate: the earlier scenarios' sessions end and their wedges and modes
# go (their retransmissions would be frames the port counts and the vport
# does not, their flows would join the next incident)
isolate() {
	local pid
	# only the traffic: emuport may be in a namespace for a moment
	for pid in $(ip netns pids "$CLI_NS") $(ip netns pids "$SRV_NS"); do
		case $(cat "/proc/$pid/comm" 2>/dev/null) in
		sockperf|nsengine) kill -CONT "$pid"; kill "$pid" ;;
		esac
	done 2>/dev/null
	emu unwedge srv > /dev/null; emu unwedge cli > /dev/null; emu mode srv healthy > /dev/null
	# until their sockets are gone or idle: a stalled one would join the
	# next incident
	wait_for 20 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j flows | jq -e '[.flows[] | select(.state == \"stalled\" or .state == \"waiting\")] | length == 0'"
	sleep 1
}
verdict_is() { jqe --arg v "$1" '.verdict.verdict == $v' "$B/manifest.json" > /dev/null; }
released_by() { jqe --arg a "$1" '.release.released == true and .release.action == $a' "$B/manifest.json" > /dev/null; }

# 1. port-drop on the server port, released by the reprogram (the server's
#    promiscuous capture is off by policy, so only the reprogram can)
pingpong 11101; p=$(cport 11101)
sleep 1
emu wedge srv tcp "$CLI_ADDR" "$p" "$SRV_ADDR" 11101
if scenario_bundle "port-drop" 11101; then
	check "port-drop: verdict port-drop" verdict_is port-drop
	check "port-drop: released by the reprogram" released_by reprogram
	check "port-drop: frames counted at the port, not at the vport" jqe '.facts.ports.srv.stall.counters.rx_packets_phy > (.facts.ports.srv.stall.counters.rx_vport_unicast_packets // 0)' "$B/manifest.json"
	check "port-drop: summary says what it is not" grep -q "Not buffer-drop" "$B/summary.txt"
	check "port-drop: not a steering discard, by the devlink figure" grep -q "not a steering discard: ethtool rx_steer_missed_packets +0, devlink vnic nic_receive_steering_discard +0" "$B/summary.txt"
	check "port-drop: devlink health at the stall and after in the bundle" jqe \
		'(.at_stall.reporters | length == 5) and (.after.reporters | length == 5) and (.events | type == "array")' "$B/devlink/srv.json"
	check "port-drop: the summary's devlink section" grep -q "^- Port cli: no devlink health" "$B/summary.txt"
fi

# 2. the server port already promiscuous: the promiscuous capture changes
#    nothing, the reprogram (off, then on again) releases
ip -n "$SRV_NS" link set "$SRV_IF" promisc on
pingpong 11102; p=$(cport 11102)
sleep 1
emu wedge srv tcp "$CLI_ADDR" "$p" "$SRV_ADDR" 11102
if scenario_bundle "already-promiscuous" 11102; then
	check "already-promiscuous: verdict port-drop" verdict_is port-drop
	check "already-promiscuous: released by the reprogram" released_by reprogram
	check "already-promiscuous: reprogram went off then on" jqe '[.steps[] | select(.step == "reprogram" and .port == "srv") | .note] == ["promisc off, hold 100 ms, promisc on"]' "$B/manifest.json"
fi
ip -n "$SRV_NS" link set "$SRV_IF" promisc off

# 3. a wedge after thousands of round trips (seed 000: after up to 18,000)
pingpong 11103; p=$(cport 11103)
emu wedge srv tcp "$CLI_ADDR" "$p" "$SRV_ADDR" 11103 after 3000
if scenario_bundle "wedge-after-3000" 11103; then
	check "wedge-after-3000: verdict port-drop" verdict_is port-drop
	rt=$(jq '[.at_open[] | select(.source == "sock" and (.tuple | test(":11103$"))) | .tx_msgs] | max' "$B/flows.json")
	echo "wedge-after-3000: the stalled session had sent $rt messages"
	check "wedge-after-3000: the flow had made thousands of round trips ($rt)" test "${rt:-0}" -ge 2000
fi

# 4. egress direction: the server's replies dropped at the client's port;
#    the client's promiscuous capture may release it (seed 000's tcpdump)
pingpong 11104; p=$(cport 11104)
sleep 1
emu wedge cli tcp "$SRV_ADDR" 11104 "$CLI_ADDR" "$p"
if scenario_bundle "egress" 11104; then
	check "egress: verdict port-drop" verdict_is port-drop
	check "egress: the gap is on the client's port" jqe '.facts.ports.cli.stall.counters.rx_packets_phy > .facts.ports.cli.stall.counters.rx_vport_unicast_packets' "$B/manifest.json"
	check "egress: released by the promiscuous capture or the reprogram" bash -c "jqe '.release.released and (.release.action == \"promisc-capture\" or .release.action == \"reprogram\")' '$B/manifest.json' >/dev/null"
fi

# 5. buffer drops. The earlier sessions go first: buffer drops hit every
#    flow through the port, and one of theirs whose retransmissions had
#    backed off (its wedge released late) stayed stalled past this
#    incident's end once, in a clean clone; the next scenario's stall
#    then joined this incident and no bundle of its own came
isolate
pingpong 11105
sleep 1
emu mode srv buffer-drop 1
if scenario_bundle "buffer-drop" 11105; then
	check "buffer-drop: verdict buffer-drop" verdict_is buffer-drop
	check "buffer-drop: rx_out_of_buffer moved" jqe '.facts.ports.srv.stall.counters.rx_out_of_buffer > 0' "$B/manifest.json"
fi
emu mode srv healthy

# 6. steering miss (buffer drops' session gone first, for the same reason)
isolate
pingpong 11106; p=$(cport 11106)
sleep 1
emu mode srv steer-miss "tcp $CLI_ADDR $p $SRV_ADDR 11106"
if scenario_bundle "steering-miss" 11106; then
	check "steering-miss: verdict steering-miss" verdict_is steering-miss
	check "steering-miss: the firmware (devlink) figure in the explanation" bash -c \
		"jq -r .verdict.explanation '$B/manifest.json' | grep -qE 'firmware nic_receive_steering_discard \\+[1-9]'"
	check "steering-miss: the devlink figure in the summary" grep -qE "^  vnic nic_receive_steering_discard \+[1-9][0-9]*" "$B/summary.txt"
	grep -A3 "^## Devlink health" "$B/summary.txt"
fi
emu mode srv healthy

# 7. engine hold: the server stopped, no frame lost anywhere
isolate
pingpong 11107
sleep 1
kill -STOP "$PP_SRV"; T_CLEANUP+=("kill -CONT $PP_SRV")
if scenario_bundle "engine-hold" 11107; then
	check "engine-hold: verdict engine-hold" verdict_is engine-hold
	check "engine-hold: threads of the stopped server recorded" jqe '[.facts.threads[] | select(.state == "T")] | length >= 1' "$B/manifest.json"
	# no port lost a frame of the flows: a receive-filter reprogram
	# cannot act on the cause, so none is planned, and the record says why
	check "engine-hold: no reprogram ran" jqe '[.steps[] | select(.step == "reprogram")] | length == 0' "$B/manifest.json"
	check "engine-hold: the plan says why" jqe '[.port_order[] | .reprogram | startswith("not planned: the port lost no frame")] | all' "$B/record.json"
	check "engine-hold: no action credited" jqe '.release.action == "none" or .release.action == "self"' "$B/manifest.json"
fi
kill -CONT "$PP_SRV"

# 8. fabric fault: RDMA error counters moving while a flow stalls
pingpong 11108; p=$(cport 11108)
sleep 1
emu mode srv fabric-fault always
emu wedge srv tcp "$CLI_ADDR" "$p" "$SRV_ADDR" 11108
if scenario_bundle "fabric-fault" 11108; then
	check "fabric-fault: verdict fabric-fault" verdict_is fabric-fault
	check "fabric-fault: RDMA error counters moved" jqe '.facts.ports.srv.stall.counters["hw_counters/req_transport_retries_exceeded"] > 0' "$B/manifest.json"
fi
emu mode srv healthy

# (8b. a single frame in the stall and the window: repeat_emu_portdrop.sh (make check-repeat),
#     where each run is alone on the pair and the healthy rate is the port's)
isolate

# 8c. a stall that clears by itself: the wedge lets the flow's third try
#     through (the request, its tail-loss probe (tcp_send_loss_probe) and its
#     first retransmission lost), before any
#     action; the release is the flow's own, the verdict the evidence's
pingpong 11111; p=$(cport 11111)
sleep 1
emu wedge srv tcp "$CLI_ADDR" "$p" "$SRV_ADDR" 11111 limit 3
if scenario_bundle "self-release" 11111; then
	check "self-release: verdict port-drop" verdict_is port-drop
	check "self-release: released by itself" released_by self
	check "self-release: no action ran before it" jqe '[.steps[] | select(.step == "reprogram" or .step == "capture-promisc")] | length == 0' "$B/manifest.json"
	check "self-release: which came first, with the time" jqe '.release.order | test("^the flows moved again at \\+[0-9.]+ ms, before any action")' "$B/manifest.json"
	check "self-release: the summary says no action is credited" grep -q "^- Released by itself, no action credited" "$B/summary.txt"
fi

# 9. producer stall: a consumer engine awaiting a stream, the producer stopped
#    (the earlier sessions end first: nothing else may move on the pair)
for pid in $(ip netns pids "$CLI_NS") $(ip netns pids "$SRV_NS"); do kill -CONT "$pid"; kill "$pid"; done 2>/dev/null
sleep 3
ip netns exec "$SRV_NS" "$BUILD/nsengine" server --await --listen "$SRV_ADDR:11109" --table-dir "$T_DIR/flows" > /dev/null 2>&1 &
T_PIDS+=($!)
wait_for 5 bash -c "ip netns exec $SRV_NS ss -ltn | grep -q ':11109 '"
# the producer stops sending after 1000 messages (it has read every reply:
# nothing is held anywhere), like a rank starved on its disk
ip netns exec "$CLI_NS" "$BUILD/nsengine" client --connect "$SRV_ADDR:11109" --sessions 1 --interval-us 2000 \
	--duration 30 --stop-after 0:1000 --table-dir "$T_DIR/flows" > /dev/null 2>&1 &
T_PIDS+=($!)
if scenario_bundle "producer-stall" 11109; then
	check "producer-stall: verdict producer-stall" verdict_is producer-stall
	check "producer-stall: RDMA work counters frozen" jqe '.facts.ports.srv.window.counters["hw_counters/rx_write_requests"] == 0 and .facts.ports.cli.window.counters["hw_counters/rx_write_requests"] == 0' "$B/manifest.json"
fi
check "daemon alive after every scenario" kill -0 "$T_DPID"
# the reports last: Chromium's CPU beside the scenarios would only delay
# their detections. Every scenario's engines and the daemon end first (the
# checks above were its last use; the emulated ports go at cleanup).
for pid in $(ip netns pids "$CLI_NS") $(ip netns pids "$SRV_NS"); do kill -CONT "$pid"; kill "$pid"; done 2>/dev/null
t_stop_pids
t0=$(date +%s) n=${#REPORT_QUEUE[@]}
report_flush
echo "reports: $n rendered in $(( $(date +%s) - t0 )) s"
