#!/bin/bash
# Recovery on the emulated pair with the driver's deferred rx-mode work
# (emuport --rx-mode-delay: mlx5e_set_rx_mode_work reads the promiscuity
# when it runs; a toggle undone before then is no change for the card):
#  A. the old reprogram, two RTM_SETLINKs back to back, releases nothing;
#     the held reprogram releases, the bundle names it, the kernel's log
#     confirms both crossings;
#  B. a release by the promiscuous capture of the port the evidence points
#     at is credited to it, and no reprogram runs after it;
#  C. a port held promiscuous by a running tcpdump: no reprogram is
#     claimed, and the bundle names tcpdump as the holder;
#  D. a wedge that outlasts three TCP retransmissions is released by the
#     reprogram and credited to it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu_lib.sh"
t_init
EMU_SRV_EXTRA="promisc_capture = no" EMU_CLI_EXTRA="recover = none" \
	EMU_RX_MODE_DELAY=5 emu_up 10.213.0 || { fail "emulated pair"; exit 1; }
start_daemon "$T_DIR/emu.conf" || exit 1
rxm() { emu rxmode "$1" | sed -n "s/.* $2=\([^ ]*\).*/\1/p" | head -1; }
stalled() { ctl -j flows --stalled | jqe --arg p ":$1" '[.flows[] | select(.tuple | contains($p))] | length > 0' >/dev/null; }
rec_for() {     # rec_for PORT: the complete record of the incident with PORT
	local id
	for id in $(ctl -j incident list | jq -r '.investigations[].id'); do
		ctl -j incident show "$id" | jqe --arg p ":$1" \
			'select(.record.state == "complete" and (.record.incident.flows | any(.tuple | contains($p))))' \
			> "$T_DIR/rec.json" 2>/dev/null && return 0
	done
	return 1
}
wait_rec() { wait_for "${2:-30}" bash -c "$(declare -f rec_for ctl); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' T_DIR='$T_DIR' rec_for $1"; }

# --- A --------------------------------------------------------------------
pingpong 11121; p=$(cport 11121)
sleep 1
emu wedge srv tcp "$CLI_ADDR" "$p" "$SRV_ADDR" 11121
t0=$(rxm srv rx_transitions)
# the reprogram the daemon used to make: on and off, 0.1 ms apart
ip -n "$SRV_NS" -batch - <<B
link set $SRV_IF promisc on
link set $SRV_IF promisc off
B
sleep 0.1
check "A: a zero-dwell toggle makes no transition on the card" test "$(rxm srv rx_transitions)" = "$t0"
check "A: ... and the flow stays stalled" wait_for 3 stalled 11121
check "A: the investigation completes" wait_rec 11121
check "A: released by the reprogram on srv" jqe '.record.release.released and .record.release.action == "reprogram" and .record.release.port == "srv"' "$T_DIR/rec.json"
check "A: the reprogram held its state and made a transition each way" \
	jqe '.record.reprograms[0].performed and .record.reprograms[0].promiscuity == {"before": 0, "held": 1, "after": 0} and .record.reprograms[0].hold_ms == 100' "$T_DIR/rec.json"
check "A: the card applied it (rx-mode work saw the change)" test "$(rxm srv rx_transitions)" -ge $((t0 + 2))
if [ -r /dev/kmsg ]; then
	check "A: the kernel's log confirms both crossings" \
		jqe '.record.reprograms[0].kernel_log.confirmed and (.record.reprograms[0].kernel_log.lines | map(test("'"$SRV_IF"': (entered|left) promiscuous mode")) | all)' "$T_DIR/rec.json"
else
	ok "A: /dev/kmsg not readable here: nothing to confirm"
fi
b=$(jq -r '.record.bundle' "$T_DIR/rec.json")
check "A: the bundle's summary names the releasing action and its port" \
	grep -q "Released by reprogram on srv" "$b/summary.txt"
sleep 1

# --- B --------------------------------------------------------------------
# the server's replies dropped at the client's port: the evidence (the gap)
# points at cli, whose promiscuous capture releases the flow
pingpong 11122; p=$(cport 11122)
sleep 1
emu wedge cli tcp "$SRV_ADDR" 11122 "$CLI_ADDR" "$p"
check "B: the investigation completes" wait_rec 11122
jq -c '.record.port_order, .record.release' "$T_DIR/rec.json"
check "B: the client port goes first (the gap is there)" jqe '.record.port_order[0].port == "cli"' "$T_DIR/rec.json"
check "B: released by the promiscuous capture on cli" jqe '.record.release.action == "promisc-capture" and .record.release.port == "cli"' "$T_DIR/rec.json"
check "B: no reprogram ran after it" jqe '[.record.steps[] | select(.step == "reprogram")] | length == 0' "$T_DIR/rec.json"
check "B: the watch after the capture waited for the flow's retry" \
	jqe '[.record.steps[] | select(.step == "capture-promisc" and .port == "cli") | .watch_for] == ["the flows'"'"' next retry"]' "$T_DIR/rec.json"
sleep 1

# --- C --------------------------------------------------------------------
ip netns exec "$SRV_NS" tcpdump -i "$SRV_IF" -w /dev/null -s 64 > /dev/null 2>&1 &
TD=$!; T_PIDS+=($TD)
wait_for 5 bash -c "ip -n $SRV_NS -d link show $SRV_IF | grep -q 'promiscuity 1'"
pingpong 11123; p=$(cport 11123)
sleep 1
emu wedge srv tcp "$CLI_ADDR" "$p" "$SRV_ADDR" 11123
check "C: the investigation completes" wait_rec 11123
jq -c '.record.reprograms' "$T_DIR/rec.json"
check "C: no reprogram claimed on srv" jqe '[.record.reprograms[] | select(.port == "srv") | .performed] == [false]' "$T_DIR/rec.json"
check "C: the record says why and names tcpdump" \
	jqe '[.record.reprograms[] | select(.port == "srv")][0] | (.refused | test("tcpdump")) and (.holders[0].processes | map(.comm) | index("tcpdump") != null)' "$T_DIR/rec.json"
check "C: the release is not credited to a reprogram" jqe '.record.release.action != "reprogram"' "$T_DIR/rec.json"
kill "$TD" 2>/dev/null; wait "$TD" 2>/dev/null
# (tcpdump leaving took the count across zero: that released the wedge)
sleep 1

# --- D --------------------------------------------------------------------
# a long observation window: three retransmissions (200, 400, 800 ms) pass
# before the reprogram, and the release shows only at the fourth
sed -i 's/^observe_window = .*//; s/^\[daemon\]$/[daemon]\nobserve_window = 2500ms/' "$T_DIR/emu.conf"
ctl reload > /dev/null
pingpong 11124; p=$(cport 11124)
sleep 1
emu wedge srv tcp "$CLI_ADDR" "$p" "$SRV_ADDR" 11124
check "D: the investigation completes" wait_rec 11124 40
jq -c '.record.release, [.record.steps[] | select(.step == "reprogram")]' "$T_DIR/rec.json"
check "D: released by the reprogram, within its watch" \
	jqe '.record.release.action == "reprogram" and .record.release.after_ms <= ([.record.steps[] | select(.step == "reprogram") | .watch_ms] | max)' "$T_DIR/rec.json"
check "D: the flow had retransmitted at least three times by then" \
	jqe '[.record.snapshot_after.flows[] | select(.source == "sock" and (.tuple | contains(":11124")) ) | .retrans] | max >= 3' "$T_DIR/rec.json"
check "flags as before: srv not promiscuous" bash -c "ip -n $SRV_NS -d link show $SRV_IF | grep -q 'promiscuity 0'"
check "daemon alive" kill -0 "$T_DPID"
