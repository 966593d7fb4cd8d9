#!/bin/bash
# Storm: 100,000 engine sessions on one port stall at the same moment
# (tests/engine/flowstorm). The daemon keeps sampling and `status` keeps
# answering through the healthy phase, the stall and the release; the
# stall is one incident and one bundle (finding 2: the landed code needed
# 7-10 s for one status call here, and quadratic time to open the incident).
# The latencies measured are printed, not judged against a wall-clock
# figure (shared machine): a call that does not answer within 3 s counts
# as not answering.
. "$(dirname "$0")/lib.sh"
t_init
pair_up 10.214.0 || exit 1
N=${STORM_SESSIONS:-100000}
STATE=$T_DIR/state
mkdir -p "$T_DIR/flows"
{
	conf_daemon "flow_interval = 100ms" "incident_timeout = 30s" "observe_window = 200ms" \
		"capture_time = 200ms" "release_wait = 200ms"
	conf_port cli "flows = tcp port 12401-12403" "track = engine" "promisc_capture = no"
} > "$T_DIR/n.conf"
start_daemon "$T_DIR/n.conf" || exit 1

# status, timed, every 50 ms until the storm ends: "rc ms" per call
probe() {
	while [ ! -e "$T_DIR/probe.stop" ]; do
		local t0 t1 rc
		t0=$(date +%s%N)
		timeout 3 "$NICSTALLCTL" -s "$T_SOCK" status > /dev/null 2>&1
		rc=$?
		t1=$(date +%s%N)
		echo "$rc $(( (t1 - t0) / 1000000 )) $(cat "$T_DIR/phase" 2>/dev/null)" >> "$T_DIR/lat.log"
		sleep 0.05
	done
}
echo healthy > "$T_DIR/phase"
probe &
T_PIDS+=($!)
ip netns exec "$A" "$BUILD/flowstorm" --dir "$T_DIR/flows" --sessions "$N" --local 10.214.0.1 --remote 10.214.0.2 \
	--port 12401 --healthy-ms 4000 --stall-ms 8000 --release-ms 1500 --period-ms 100 \
	> "$T_DIR/storm.out" 2> "$T_DIR/storm.err" &
spid=$!
T_PIDS+=($spid)
check "the daemon tracks all $N sessions" \
	wait_for 20 bash -c "[ \"\$('$NICSTALLCTL' -s '$T_SOCK' -j flows --limit 1 | jq '.flows_total // .total // 0')\" -ge $N ]"
wait_for 20 grep -q stalled "$T_DIR/storm.out"
echo stalled > "$T_DIR/phase"
s0=$(ctl -j status | jq -c '.ports' | md5sum)
check "an incident opens for the stall" wait_for 20 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.incidents | length >= 1'"
# the poll is handled in chunks, so the flows join over a few loop turns
wait_for 10 bash -c "[ \"\$('$NICSTALLCTL' -s '$T_SOCK' -j status | jq '.incidents[0] | (.flows | length) + (.flows_not_listed // 0)')\" -ge $N ]"
ctl -j status > "$T_DIR/st-stalled.json"
wait_for 30 grep -q released "$T_DIR/storm.out"
echo released > "$T_DIR/phase"
wait "$spid"
check "the storm engine ran to its end" grep -q released "$T_DIR/storm.out"
check "the stall became a bundle" wait_for 30 bash -c "compgen -G '$STATE/bundles/2*' >/dev/null"
sleep 1
touch "$T_DIR/probe.stop"
sleep 0.5
ctl -j status > "$T_DIR/st-end.json"
check "the daemon kept sampling the port through the storm" \
	bash -c "[ \"\$(jq -c '.ports' '$T_DIR/st-end.json' | md5sum)\" != '$s0' ]"
check "one incident" jqe '.incidents | length == 1' "$T_DIR/st-stalled.json"
check "holding the stalled sessions (listed or counted: $N)" \
	jqe ".incidents[0] | ((.flows | length) + (.flows_not_listed // 0)) == $N" "$T_DIR/st-stalled.json"
check "one bundle" test "$(ls -d "$STATE"/bundles/2* | wc -l)" = 1
b=$(ls -d "$STATE"/bundles/2* | head -1)
check "the bundle verifies" ctl verify "$b"
calls=$(wc -l < "$T_DIR/lat.log")
bad=$(awk '$1 != 0' "$T_DIR/lat.log" | wc -l)
for ph in healthy stalled released; do
	awk -v p=$ph '$3 == p { print $2 }' "$T_DIR/lat.log" | sort -n |
		awk -v p=$ph '{ a[++n] = $1 } END { if (!n) { print p ": no call"; exit }
			i = int(n * 0.99 + 0.99); if (i < 1) i = 1
			printf "%s: %d status calls, median %d ms, p99 %d ms, max %d ms\n",
			p, n, a[int((n + 1) / 2)], a[i], a[n] }'
done
check "status answered every call ($calls calls, $bad unanswered)" test "$calls" -gt 20 -a "$bad" = 0
check "no sanitizer or crash in the log" bash -c "! grep -qE 'AddressSanitizer|runtime error|Segmentation' '$T_DIR/daemon.log'"
check "the daemon still runs" kill -0 "$T_DPID"
