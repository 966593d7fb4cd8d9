#!/bin/bash
# SIGKILL of the daemon at random points of a forensic sequence, 20 runs,
# each followed by a restart (issue #12): after every restart no half
# bundle and no work file is left, and once the daemon is stopped at the
# end no tcx program, tc filter or clsact qdisc it attached is left on the
# interface, whose promiscuity and flags are as they were before the daemon
# first touched it. Every bundle that was finished verifies.
. "$(dirname "$0")/lib.sh"
t_init
pair_up 10.216.0 || exit 1
RUNS=${KILL_RUNS:-20}
STATE=$T_DIR/state
mkdir -p "$T_DIR/flows"
{
	conf_daemon "incident_cooldown = 0s" "observe_window = 300ms" "capture_time = 600ms" \
		"release_wait = 200ms"
	conf_port cli "flows = tcp port 12601" "track = engine bpf" "promisc_capture = yes"
} > "$T_DIR/n.conf"
promisc() { ip -n "$A" -d link show vA | grep -o 'promiscuity [0-9]*'; }
flags() { ip -n "$A" -o link show vA | sed 's/.*<\([^>]*\)>.*/\1/'; }
tcstate() { tc -n "$A" qdisc show dev vA; tc -n "$A" filter show dev vA ingress; tc -n "$A" filter show dev vA egress; ip netns exec "$A" "$BUILD/tcxq" vA; }
before_p=$(promisc) before_f=$(flags) before_tc=$(tcstate)
inv_state() { ctl -j incident list 2>/dev/null | jq -r '[.investigations[]] | last | .state // empty'; }
running() { local s; s=$(inv_state); [ -n "$s" ] && [ "$s" != complete ]; }

half=0 work=0 killed=0 phases=""
for run in $(seq 1 "$RUNS"); do
	start_daemon "$T_DIR/n.conf" || break
	compgen -G "$STATE/bundles/.tmp-*" >/dev/null && half=$((half+1))
	compgen -G "$STATE/work/*" >/dev/null && work=$((work+1))
	ip netns exec "$A" "$BUILD/flowstorm" --dir "$T_DIR/flows" --name "k$run" --sessions 2 --local 10.216.0.1 \
		--remote 10.216.0.2 --port 12601 --healthy-ms 500 --stall-ms 30000 > /dev/null 2>&1 &
	spid=$!
	T_PIDS+=($spid)
	if wait_for 15 running; then
		# somewhere in the sequence: up to 1.6 s after it began (it lasts
		# about 1.5 s here: snapshot, window, pings, two captures, bundle)
		sleep "0.$(( RANDOM % 10 ))$(( RANDOM % 10 ))"
		[ $((RANDOM % 2)) = 1 ] && sleep 0.8
		ph=$(inv_state)
		kill -KILL "$T_DPID"
		killed=$((killed+1))
		phases+="${ph:-?} "
	else
		kill -KILL "$T_DPID"
	fi
	wait "$T_DPID" 2>/dev/null
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
done
echo "killed in phase: $phases"
check "the daemon was killed mid-sequence in $killed of $RUNS runs" test "$killed" -ge $((RUNS * 3 / 4))
echo "phases hit: $(echo "$phases" | tr ' ' '\n' | grep -v '^$' | sort | uniq -c | tr -s ' \n' ' ')"
start_daemon "$T_DIR/n.conf" || exit 1
compgen -G "$STATE/bundles/.tmp-*" >/dev/null && half=$((half+1))
compgen -G "$STATE/work/*" >/dev/null && work=$((work+1))
check "no half bundle after any restart ($half seen)" test "$half" = 0
check "no work file after any restart ($work seen)" test "$work" = 0
check "the restarted daemon answers" ctl status
kill -TERM "$T_DPID"
wait "$T_DPID" 2>/dev/null
after_tc=$(tcstate)
check "no tc filter or qdisc left behind" test "$after_tc" = "$before_tc" ||
	{ echo "before: $before_tc"; echo "after: $after_tc"; ls -la /run/nicstalld/tc 2>/dev/null; }
check "promiscuity as before ($(promisc))" test "$(promisc)" = "$before_p"
check "flags as before ($(flags))" test "$(flags)" = "$before_f"
n=0 bad=0
for b in "$STATE"/bundles/2*; do
	[ -d "$b" ] || continue
	n=$((n+1)); "$NICSTALLCTL" verify "$b" >/dev/null 2>&1 || bad=$((bad+1))
done
check "every finished bundle verifies ($n bundles, $bad bad)" test "$bad" = 0
