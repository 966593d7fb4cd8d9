#!/bin/bash
# Frames too long for the receive path (issue 35, verdict oversize-drop):
# both hosts at MTU 9000 while their sessions connect (MSS 8948), then the
# server's port lowered to 1500 under them (`ip link set mtu` and `emuport
# ctl mtu`: the port takes frames up to MLX5E_SW2HW_MTU(1500); longer ones
# its MAC counts as too long, rx_oversize_pkts_phy and the RFC 2819 length
# bucket, and drops before the vport, not as frames received OK). The
# session of 3000-byte messages stalls while one of small messages runs on
# and small pings pass; the bundle's verdict is oversize-drop, naming the
# port, its MTU and the length of the lost frames, and the don't-fragment
# ping at the client's MTU went unanswered beside the small one. The port
# lost nothing between port and vport: no reprogram is planned. The rules
# without this verdict read the same stall as no port-drop (the gap is
# zero). Bounded: the sessions run 30 s, the bundle is waited for 25 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu_lib.sh"
t_init
EMU_SRV_EXTRA="promisc_capture = no" emu_up 10.214.0 || { fail "emulated pair"; exit 1; }
ip -n "$CLI_NS" link set "$CLI_IF" mtu 9000 && ip -n "$SRV_NS" link set "$SRV_IF" mtu 9000 ||
	{ fail "veth MTU 9000"; exit 1; }
start_daemon "$T_DIR/emu.conf" || exit 1

# a session of small messages, and one of 3000-byte messages (one TCP
# segment of 3052 bytes at MSS 8948)
pingpong 11140
ip netns exec "$SRV_NS" sockperf server --tcp -i "$SRV_ADDR" -p 11141 > /dev/null 2>&1 &
T_PIDS+=($!)
wait_for 5 bash -c "ip netns exec $SRV_NS ss -ltn | grep -q ':11141 '"
ip netns exec "$CLI_NS" sockperf ping-pong --tcp -i "$SRV_ADDR" -p 11141 -t 30 --mps 200 -m 3000 > /dev/null 2>&1 &
T_PIDS+=($!)
wait_for 5 bash -c "ip netns exec $CLI_NS ss -tn | grep -q ':11141 '"
sleep 2
# the port first, then the interface: a frame sent between the two would
# be the veth's drop (tx_dropped), no port's
check "the emulated port takes an MTU" bash -c "'$BUILD/emuport' ctl '$T_DIR/emu' mtu srv 1500 | grep -qx ok"
ip -n "$SRV_NS" link set "$SRV_IF" mtu 1500 || { fail "the server's MTU lowered"; exit 1; }
check "an MTU out of range is refused, saying the range" bash -c \
	"'$BUILD/emuport' ctl '$T_DIR/emu' mtu srv 9 | grep -q 'error: mtu PORT 68..65535 | off'"

wait_for 25 bash -c "$(declare -f bundle_for); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' bundle_for 11141 >/dev/null" ||
	{ fail "a bundle for the large session"; ctl flows; exit 1; }
B=$(bundle_for 11141)
ok "bundle $(basename "$B")"
jq '{verdict: .verdict.verdict, explanation: .verdict.explanation, release}' "$B/manifest.json"
check "verdict oversize-drop" jqe '.verdict.verdict == "oversize-drop"' "$B/manifest.json"
check "the explanation names the port, its MTU and the length of the lost frames" bash -c \
	"jq -r .verdict.explanation '$B/manifest.json' | grep -qE '^srv: [0-9]+ frames longer than its MTU of 1500 bytes dropped by the port .*in the observation window, by length: .*2048-4095 bytes: [0-9]+'"
check "the MAC counted them too long, and they were in no port-vport gap" jqe \
	'.facts.ports.srv.stall.counters.rx_oversize_pkts_phy + (.facts.ports.srv.window.counters.rx_oversize_pkts_phy // 0) >= 1' "$B/manifest.json"
check "the client's don't-fragment ping at its MTU went unanswered, the small ones passed" jqe \
	'.facts.ping_mtu.ok == false and .facts.ping_mtu.from == "cli" and .facts.ping_mtu.size == 9000 and ([.facts.pings[] | .received > 0] | all)' "$B/manifest.json"
check "the record keeps each don't-fragment ping at its port's MTU, with the bit" jqe \
	'([.pings_mtu[] | select(.from == "cli") | .df and .size == 9000 and .received == 0] == [true]) and
	 ([.pings_mtu[] | select(.from == "srv") | .df and .size == 1500 and .received > 0] == [true])' "$B/record.json"
check "the steps say the don't-fragment ping's figures" jqe \
	'[.steps[] | select(.step == "ping-mtu") | .note | test("^0/[0-9]+ replies of 9000 bytes")] | any' "$B/manifest.json"
check "no reprogram planned: the port lost no frame between port and vport" jqe \
	'[.steps[] | select(.step == "reprogram")] | length == 0' "$B/manifest.json"
check "the small session ran on" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j flows | jqe '[.flows[] | select(.tuple | test(\":11140\")) | .state] | all(. != \"stalled\")'"
check "verify passes" "$NICSTALLCTL" verify "$B"
check "classify reproduces the verdict" bash -c "'$NICSTALLCTL' classify '$B' --rules '$ROOT/rules' | grep -q 'identical to the recorded'"
"$ROOT/tests/tools/summary-lint" "$B" > "$T_DIR/lint.txt" 2>&1 &&
	ok "summary, report and manifest pass the summary lint" ||
	{ fail "the summary lint finds:"; cat "$T_DIR/lint.txt"; }
grep -E "^# nicstalld|Also held" "$B/summary.txt"
check "the summary names the verdict, and no other rule held" bash -c \
	"grep -q '^# nicstalld: oversize-drop' '$B/summary.txt' && grep -q 'Not port-drop' '$B/summary.txt' && ! grep -q 'Also held' '$B/summary.txt'"

# the rules before this one read the same stall as nothing: without the
# too-long counters and the don't-fragment ping it is unknown, not port-drop
old=$(classify_without "$B" oversize-drop oversize-drop-path)
check "without the new rules the stall is unknown, not port-drop (its gap is zero): $old" \
	test "${old%% (*}" = "verdict: unknown"
emu mtu srv off > /dev/null
