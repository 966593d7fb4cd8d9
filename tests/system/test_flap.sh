#!/bin/bash
# Storm: a port flapping every second for 14 s (issue #12): its link goes
# down and up, and its sessions stall and come back, every second. The
# incidents are rate-limited (incident_cooldown 4 s: at most one per 4 s),
# the stalls meanwhile are logged as suppressed with their count, the next
# incident carries that count, `status` answers throughout and the daemon
# keeps running.
. "$(dirname "$0")/lib.sh"
t_init
pair_up 10.218.0 || exit 1
STATE=$T_DIR/state
mkdir -p "$T_DIR/flows"
{
	conf_daemon "incident_window = 300ms" "incident_cooldown = 4s" "observe_window = 200ms" \
		"capture_time = 200ms" "release_wait = 100ms"
	conf_port cli "flows = tcp port 12801" "track = engine" "promisc_capture = no"
} > "$T_DIR/n.conf"
start_daemon "$T_DIR/n.conf" || exit 1
: > "$T_DIR/lat"
(
	while [ ! -e "$T_DIR/stop" ]; do
		t0=$(date +%s%N)
		timeout 3 "$NICSTALLCTL" -s "$T_SOCK" status > /dev/null 2>&1
		echo "$? $(( ($(date +%s%N) - t0) / 1000000 ))" >> "$T_DIR/lat"
		sleep 0.1
	done
) & T_PIDS+=($!)
# the link: down and up every second, from the peer's side
( end=$((SECONDS + 14)); while ((SECONDS < end)) && [ ! -e "$T_DIR/stop" ]; do
	ip -n "$B" link set vB down; sleep 0.5; ip -n "$B" link set vB up; sleep 0.5; done ) &
T_PIDS+=($!)
# the sessions: a new engine every 1.2 s whose sessions stall after 0.3 s
cycles=0
end=$((SECONDS + 14))
while ((SECONDS < end)); do
	ip netns exec "$A" "$BUILD/flowstorm" --dir "$T_DIR/flows" --name "fl$cycles" --sessions 2 --local 10.218.0.1 \
		--remote 10.218.0.2 --port 12801 --healthy-ms 300 --stall-ms 700 --release-ms 200 \
		> /dev/null 2>&1
	cycles=$((cycles+1))
done
touch "$T_DIR/stop"
sleep 1
ctl -j incident list > "$T_DIR/inv.json"
ctl -j status > "$T_DIR/st.json"
n=$(jq '.investigations | length' "$T_DIR/inv.json")
supp=$(grep -c "not investigated: incident cooldown" "$T_DIR/daemon.log")
echo "$cycles stall cycles, $n incidents investigated, $supp suppression log lines"
check "stalls were seen in most cycles ($cycles cycles)" test "$cycles" -ge 8
check "incidents are rate-limited: $n for 14 s with a 4 s cooldown" test "$n" -ge 2 -a "$n" -le 5
check "the stalls meanwhile are logged as suppressed, with their count" \
	grep -qE "not investigated: incident cooldown .*[1-9][0-9]* suppressed so far" "$T_DIR/daemon.log"
check "the suppression log is itself rate-limited (at most one line a second: $supp)" test "$supp" -le 16
for id in $(jq -r '.investigations[1:][].id' "$T_DIR/inv.json"); do
	ctl -j incident show "$id" | jq '.record.incident.suppressed_before // 0'
done > "$T_DIR/supp.txt"
check "a later incident carries the count of the stalls suppressed before it ($(tr '\n' ' ' < "$T_DIR/supp.txt"))" \
	grep -qE '^[1-9]' "$T_DIR/supp.txt"
bad=$(awk '$1 != 0' "$T_DIR/lat" | wc -l)
max=$(awk '$2 > m { m = $2 } END { print m + 0 }' "$T_DIR/lat")
check "status answered every call ($(wc -l < "$T_DIR/lat") calls, $bad unanswered, max $max ms)" \
	test "$bad" = 0 -a "$(wc -l < "$T_DIR/lat")" -gt 20
check "the port is up again" wait_for 10 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.ports[0].state == \"up\"'"
check "the daemon still runs" kill -0 "$T_DPID"
