#!/bin/bash
# Kernel TCP liveness as kernel events (sock_liveness = events): while sockperf's sessions are healthy no socket is read and no
# deadline is posted; a dropped session is called stalled within the
# threshold and a poll, its siblings seen progressing, as with paced reads;
# a socket that waited from before the daemon started is called at once;
# and sock_liveness = paced reads every socket every threshold less a poll.
. "$(dirname "$0")/lib.sh"
t_init
pair_up 10.205.0 || exit 1
PY=$(command -v python3) || { fail "python3"; exit 1; }
conf() {
	conf_daemon "interval = 250ms" "flow_interval = 50ms" "stall_threshold = 1s"
	conf_port cli "flows = tcp port 11141-11144" "peer = srv" "$@"
	conf_port srv "flows = tcp port 11141-11144" "peer = cli" "$@"
}
conf "sock_liveness = events" > "$T_DIR/ev.conf"
conf "sock_liveness = paced" > "$T_DIR/paced.conf"
# the sock source's status of port P: field F
sockst() { ctl -j status | jq -r --arg p "$1" --arg f "$2" \
	'[.flow_sources.cost[] | select(.source == "sock" and .port == $p) | .[$f]] | .[0]'; }
stop_daemon() { kill -TERM "$T_DPID"; wait "$T_DPID" 2>/dev/null; }
sumst() { ctl -j status | jq --arg f "$1" '[.flow_sources.cost[] | select(.source == "sock") | .[$f] // 0] | add'; }

# CLOCK_MONOTONIC on demand, from a process already running (a python
# start takes a good part of what is measured here)
coproc MONO { "$PY" -u -c 'import sys, time
for _ in sys.stdin: print(time.monotonic_ns(), flush=True)'; }
T_PIDS+=("$MONO_PID")
mono() { echo >&"${MONO[1]}"; read -r "$1" <&"${MONO[0]}"; }
mono t_warm     # started and answering: a python start is 100-200 ms

sockperf_pair "$A" "$B" 10.205.0.2 11141 3 60
start_daemon "$T_DIR/ev.conf" || exit 1
check "three sessions seen" wait_for 10 bash -c "[ \$('$NICSTALLCTL' -s '$T_SOCK' -j flows cli | jq '[.flows[] | select(.source == \"sock\")] | length') -ge 3 ]"
ctl -j status | jq -c '.flow_sources.cost[] | select(.source == "sock")'
check "status: kernel events on both ports" test "$(sockst cli mode)/$(sockst srv mode)" = "kernel events/kernel events"
# this kernel (6.18) has what the sockets' own callbacks need: no hook
# runs for a socket no port watches
check "status: the hooks are the sockets' sockops callbacks" test "$(sockst cli hooks)/$(sockst srv hooks)" = "sockops/sockops"
check "every session's socket watched (3 a port)" bash -c "[ \$('$NICSTALLCTL' -s '$T_SOCK' -j status | jq '[.flow_sources.cost[] | select(.source == \"sock\") | .watched] | min') -ge 3 ]"
sleep 2
r0=$(sumst reads) e0=$(sumst event_wakeups)
sleep 6
r1=$(sumst reads) e1=$(sumst event_wakeups)
echo "healthy 6 s with kernel events: $((r1 - r0)) socket reads, $((e1 - e0)) deadlines posted"
check "healthy: no deadline posted" test "$((e1 - e0))" = 0
check "healthy: no socket read (paced reads would read 6 sockets every 950 ms)" test "$((r1 - r0))" -le 6
check "healthy: no incident" test "$(ctl -j status | jq '.incidents | length')" = 0

victim=$(jflows cli | jq -r 'select(.source=="sock") | .tuple' | grep ':11142$' | head -1)
vport=$(echo "$victim" | sed -E 's/^tcp [0-9.]+:([0-9]+) .*/\1/')
echo "victim: $victim"
nft_drop "$B" tcp sport "$vport"
T_CLEANUP+=("nft_clear $B")
mono t_drop     # the drop is on by now
check "an incident opens" wait_for 5 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.incidents | length == 1'"
sleep 0.5
ctl -j status > "$T_DIR/st.json"
check "the incident is the victim's" jqe --arg p ":$vport" '.incidents[0].flows | all(.tuple | contains($p))' "$T_DIR/st.json"
check "siblings kept progressing (2)" jqe '.incidents[0].siblings_progressing == 2' "$T_DIR/st.json"
lat=$(jq '.incidents[0] as $i | ([$i.flows[].stalled_at_mono_ns] | min) as $s | ($i.opened_mono_ns - $s) / 1000000' "$T_DIR/st.json")
echo "stall declared ${lat} ms after the wait began (threshold 1000 ms, poll 50 ms)"
# the deadline's poll comes a tenth of a poll after the last at the
# soonest (stall_plan.c), not a poll after: 1001 to 1009 ms here, up to
# 1087 when it waited for the interval
check "declared within threshold + a tenth of a poll (+30 ms slack): ${lat} ms" \
	awk -v l="$lat" 'BEGIN { exit !(l >= 1000 && l <= 1035) }'
# the wait began by the time the drop was on (the last reply, whose ACK
# never came); read first a threshold less a poll into it,
# after a tail loss probe and a timeout, its start is the kernel's hooks'
from_drop=$(jq --argjson t "$t_drop" '(.incidents[0].opened_mono_ns - $t) / 1000000' "$T_DIR/st.json")
echo "incident opened ${from_drop} ms after the drop"
check "the wait dated by the kernel's hooks, not the retransmissions (a probe and a timeout, some 250 ms, later): opened ${from_drop} ms after the drop" \
	awk -v l="$from_drop" 'BEGIN { exit !(l <= 1120) }'
check "the kernel posted the deadline" test "$(sumst event_wakeups)" -ge 1
nft_clear "$B"
check "released when the drop is lifted" wait_for 10 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.incidents[0].state == \"released\"'"
stop_daemon

# a socket that waits from before the daemon started: bytes the server
# never reads
ip netns exec "$B" "$PY" -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.205.0.2", 11144)); s.listen(1)
c, _ = s.accept(); time.sleep(120)' &
T_PIDS+=($!)
wait_for 5 bash -c "ip netns exec $B ss -ltn | grep -q ':11144 '"
ip netns exec "$A" "$PY" -c '
import socket, time
c = socket.create_connection(("10.205.0.2", 11144)); c.sendall(b"hello"); time.sleep(120)' &
T_PIDS+=($!)
sleep 1
start_daemon "$T_DIR/ev.conf" || exit 1
check "a wait from before the start: an incident opens" wait_for 5 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.incidents[].flows[].tuple | select(contains(\":11144\"))] | length >= 1'"
check "posted by the kernel at once" test "$(sumst event_wakeups)" -ge 1
stop_daemon

start_daemon "$T_DIR/paced.conf" || exit 1
check "paced: status says so" wait_for 5 bash -c "[ \"\$('$NICSTALLCTL' -s '$T_SOCK' -j status | jq -r '[.flow_sources.cost[] | select(.source == \"sock\") | .mode] | unique | join(\",\")')\" = 'paced reads' ]"
sleep 2
r0=$(sumst reads)
sleep 3
r1=$(sumst reads)
echo "paced: $((r1 - r0)) socket reads in 3 s"
check "paced: idle and healthy sockets read every threshold less a poll" test "$((r1 - r0))" -ge 12
stop_daemon
