#!/bin/bash
# A link that flaps inside a stall (issue 35, verdict link-flap): the
# emulated pair's link goes down for 100 ms and comes back, before the
# stall is called. What the client sent while it was down is lost, and
# both ends' routes hold TCP's retransmission timer at 1.5 s (rto_min, as
# a datacenter's might be set the other way): the session waits far past
# the threshold with the link up again by the time the daemon looks. The
# bundle's verdict is link-flap, with the carrier's down count and the
# link's times from the daemon's link events; not fabric-fault (every link
# up at the snapshot). Bounded: the session runs 30 s, the bundle is
# waited for 25 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu_lib.sh"
t_init
EMU_SRV_EXTRA="promisc_capture = no" emu_up 10.216.0 || { fail "emulated pair"; exit 1; }
# the retransmission of what the flap lost comes 1.5 s later, not 200 ms
ip -n "$CLI_NS" route change 10.216.0.0/24 dev "$CLI_IF" rto_min 1500ms &&
	ip -n "$SRV_NS" route change 10.216.0.0/24 dev "$SRV_IF" rto_min 1500ms ||
	{ fail "rto_min on the pair's routes"; exit 1; }
# the stall called at 600 ms: the 100 ms flap (and a loaded machine's
# delay in the two ip commands) is over by then, and the retransmission
# 1.5 s away
sed -i 's/^incident_cooldown = 0s$/incident_cooldown = 0s\nstall_threshold = 600ms/' "$T_DIR/emu.conf"
start_daemon "$T_DIR/emu.conf" || exit 1
pingpong 11146
sleep 2
# the link down for 100 ms and up again (the server's end: both carriers drop)
ip -n "$SRV_NS" link set "$SRV_IF" down; sleep 0.1; ip -n "$SRV_NS" link set "$SRV_IF" up
wait_for 25 bash -c "$(declare -f bundle_for); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' bundle_for 11146 >/dev/null" ||
	{ fail "a bundle for the session"; ctl flows; exit 1; }
B=$(bundle_for 11146)
ok "bundle $(basename "$B")"
jq '{verdict: .verdict.verdict, explanation: .verdict.explanation, release}' "$B/manifest.json"
check "verdict link-flap" jqe '.verdict.verdict == "link-flap"' "$B/manifest.json"
check "the explanation names the port and the number of times its link went down" bash -c \
	"jq -r .verdict.explanation '$B/manifest.json' | grep -qE '^(srv|cli): the link went down 1 time\\(s\\) and came back'"
check "the explanation gives the times the daemon saw the link go down and come back" bash -c \
	"jq -r .verdict.explanation '$B/manifest.json' | grep -qE 'the daemon saw the link of (srv|cli) down at [+-][0-9]+ ms and up at \\+[0-9]+ ms'"
check "the snapshot keeps the link's changes with their times" jqe \
	'.snapshot.srv.link.events | (.[0].up == false) and (.[-1].up and .[-1].running) and (.[0].mono_ns < .[-1].mono_ns)' "$B/record.json"
check "every link was up at the snapshot" jqe '[.facts.ports[] | .link_up] | all' "$B/manifest.json"
check "the carrier's down count moved over the stall" jqe \
	'[.facts.ports[] | (.stall.counters["netdev/carrier_down_count"] // 0) + (.window.counters["netdev/carrier_down_count"] // 0)] | max >= 1' "$B/manifest.json"
check "not fabric-fault, and the summary says so" grep -q "Not fabric-fault" "$B/summary.txt"
check "verify passes" "$NICSTALLCTL" verify "$B"
check "classify reproduces the verdict" bash -c "'$NICSTALLCTL' classify '$B' --rules '$ROOT/rules' | grep -q 'identical to the recorded'"
"$ROOT/tests/tools/summary-lint" "$B" > "$T_DIR/lint.txt" 2>&1 &&
	ok "summary, report and manifest pass the summary lint" ||
	{ fail "the summary lint finds:"; cat "$T_DIR/lint.txt"; }
check "the daemon logged the link's going down and coming back" bash -c \
	"grep -qiE 'link .*down|carrier' '$T_DIR/daemon.log'"
