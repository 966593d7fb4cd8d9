#!/bin/bash
# Link-level flow control (issue 35, verdict flow-control): the emulated
# server port paused by its peer for 3 s (`emuport ctl pause`: 802.3x
# global pause, its transmitter stopped, what it sends held in a queue and
# sent at XON; rx_global_pause, rx_global_pause_duration in microseconds,
# rx_pause_ctrl_phy, one rx_global_pause_transition at the end; the peer
# counts what it sent). A sockperf session stalls, no drop counter moves;
# the bundle's verdict is flow-control, naming the port, the direction,
# every priority (a global pause), the paused time and the frames; the
# port lost nothing, so no reprogram is planned, and the flows move again
# by themselves when the pause ends. The rules without the verdict read it
# as something else. Bounded: the session runs 30 s, the bundle is
# waited for 25 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu_lib.sh"
t_init
EMU_SRV_EXTRA="promisc_capture = no" emu_up 10.215.0 || { fail "emulated pair"; exit 1; }
start_daemon "$T_DIR/emu.conf" || exit 1
pingpong 11145
sleep 2
check "a pause out of range is refused, saying the range" bash -c \
	"'$BUILD/emuport' ctl '$T_DIR/emu' pause srv 0 | grep -q 'error: pause PORT MS (1..60000)'"
check "the peer pauses the server port for 3 s" bash -c "'$BUILD/emuport' ctl '$T_DIR/emu' pause srv 3000 | grep -qx ok"
wait_for 25 bash -c "$(declare -f bundle_for); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' bundle_for 11145 >/dev/null" ||
	{ fail "a bundle for the paused session"; ctl flows; exit 1; }
B=$(bundle_for 11145)
ok "bundle $(basename "$B")"
jq '{verdict: .verdict.verdict, explanation: .verdict.explanation, release}' "$B/manifest.json"
check "verdict flow-control, the port paused by its peer" jqe \
	'.verdict.verdict == "flow-control" and .verdict.rule == "flow-control"' "$B/manifest.json"
check "the explanation names the port, the paused time, the frames and every priority" bash -c \
	"jq -r .verdict.explanation '$B/manifest.json' | grep -qE '^srv: paused by its peer for [0-9]+ ms of the [0-9.]+ s of the stall \\([0-9]+% of it[^)]*\\), [0-9]+ pause frames received, on every priority \\(a global pause\\)'"
check "the port counted the pause in microseconds, its peer what it sent" jqe \
	'(.facts.ports.srv.stall.counters.rx_global_pause_duration + (.facts.ports.srv.window.counters.rx_global_pause_duration // 0)) > 100000 and
	 (.facts.ports.cli.stall.counters.tx_global_pause + (.facts.ports.cli.window.counters.tx_global_pause // 0)) > 0' "$B/manifest.json"
check "no drop counter moved: frames wait, they are not lost" jqe \
	'[.facts.ports.srv.stall.counters | (.rx_out_of_buffer, .rx_discards_phy, .rx_oversize_pkts_phy, .["qdisc/drops"] // 0)] | all(. == 0)' "$B/manifest.json"
check "no reprogram planned: the port lost no frame" jqe \
	'[.steps[] | select(.step == "reprogram")] | length == 0' "$B/manifest.json"
check "the flows moved again by themselves when the pause ended" jqe \
	'.release.released == true and .release.action == "self"' "$B/manifest.json"
# the whole pause in microseconds: 3 s, give or take a publication
us=$(sed -n 's/^ *rx_global_pause_duration: *//p' "$T_DIR/emu/srv.ethtool")
check "the port counted the 3 s pause as 2.4-3.6 million microseconds ($us)" \
	test "${us:-0}" -ge 2400000 -a "${us:-0}" -le 3600000
check "the port counted the end of the pause (XON)" bash -c \
	"wait_for() { local n=\$((\$1 * 10)); shift; while [ \$n -gt 0 ]; do \"\$@\" && return 0; sleep 0.1; n=\$((n-1)); done; return 1; };
	 wait_for 5 grep -qE '^ *rx_global_pause_transition: [1-9]' '$T_DIR/emu/srv.ethtool'"
check "verify passes" "$NICSTALLCTL" verify "$B"
check "classify reproduces the verdict" bash -c "'$NICSTALLCTL' classify '$B' --rules '$ROOT/rules' | grep -q 'identical to the recorded'"
"$ROOT/tests/tools/summary-lint" "$B" > "$T_DIR/lint.txt" 2>&1 &&
	ok "summary, report and manifest pass the summary lint" ||
	{ fail "the summary lint finds:"; cat "$T_DIR/lint.txt"; }
grep -E "^# nicstalld|Also held" "$B/summary.txt"
# (a global pause holds the pings too: kernel-path-down's facts hold, and
# the summary says so under the verdict that explains them)
check "the summary names the verdict and what it is not" bash -c \
	"grep -q '^# nicstalld: flow-control' '$B/summary.txt' && grep -q 'Not port-drop' '$B/summary.txt' && grep -q 'Not buffer-drop' '$B/summary.txt'"
# the rules without the verdict: a stall with nothing lost and the pings
# held reads as the kernel path down, the lead this verdict corrects
old=$(classify_without "$B" flow-control flow-control-tx)
check "without the new rules the stall reads as the kernel path down: $old" \
	test "${old%% (*}" = "verdict: kernel-path-down"
