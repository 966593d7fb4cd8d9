#!/bin/bash
# What watching costs, as `nicstallctl status` shows it (issue #13): each
# counter and flow source's share of one core, the daemon's own CPU and
# RSS; and the flow polls planned: idle watched sockets are read once per
# threshold less a poll, and the detector polls only then (not at every
# flow_interval); a waiting one is read and its stall called all the same.
. "$(dirname "$0")/lib.sh"
t_init
A=${T_PREFIX}a B=${T_PREFIX}b
netns_pair "$A" "$B" vA vB 10.207.0.1 10.207.0.2 || { fail "namespace pair"; exit 1; }
mkdir -p "$T_DIR/flows" "$T_DIR/state"
cat > "$T_DIR/n.conf" <<CONF
[daemon]
flow_interval = 50ms
stall_threshold = 200ms
flows_dir = $T_DIR/flows
state_dir = $T_DIR/state
incident_cooldown = 0s
[port cli]
netns = $A
interface = vA
flows = tcp port 12002-12003
track = sock
sock_liveness = paced
CONF
# 20 idle connections, and one that will wait for a reply that never comes
ip netns exec "$B" "$BUILD/bench_conns" listen 10.207.0.2 12002 > "$T_DIR/listen.log" 2>&1 &
T_PIDS+=($!)
# (generous waits: they end as soon as the sockets are up, and under make
# check's load, beside the other lane's renders, 5 s and 10 s were once
# not enough for the listener and the 20 exchanges)
wait_for 20 bash -c "ip netns exec $B ss -ltn | grep -q ':12002 '"
ip netns exec "$A" "$BUILD/bench_conns" connect 10.207.0.2 12002 20 > "$T_DIR/conns.out" 2>&1 &
T_PIDS+=($!)
wait_for 30 grep -q "ready 20" "$T_DIR/conns.out"
check "20 idle connections up" grep -q "ready 20" "$T_DIR/conns.out" ||
	{ echo "conns: $(cat "$T_DIR/conns.out")"; echo "listen: $(cat "$T_DIR/listen.log")"; }
start_daemon "$T_DIR/n.conf" || exit 1
sleep 3
# no app_metrics here: libcurl and the 26 libraries only it needs stay out (4 MiB
# resident every daemon paid; collectors/counters/curl_dl.h)
check "libcurl is not loaded where no port asks for app metrics" \
	bash -c "! grep -q /libcurl /proc/$T_DPID/maps"
ctl -j status > "$T_DIR/st.json"
sock='.flow_sources.cost[] | select(.source == "sock" and .port == "cli")'
check "status: the sock_diag source's share of one core and cost per poll" \
	jqe "[$sock | (.cpu_pct | type == \"number\") and .calls > 0 and (.per_call_us | tonumber) > 0] == [true]" \
	"$T_DIR/st.json"
check "status: the detector's share of one core and cost per poll, beside the sources'" \
	jqe '.flow_sources.detector | (.cpu_pct | type == "number") and .calls > 0 and (.per_call_us | tonumber) > 0' \
	"$T_DIR/st.json"
check "status: each counter source's share of one core" \
	jqe '[.ports[].sources[] | .cpu_pct | type == "number"] | length > 0 and all' "$T_DIR/st.json"
check "status: the daemon's own CPU and RSS" \
	jqe '(.cpu.total_s | type == "number") and .cpu.rss_kib > 0' "$T_DIR/st.json"
# wakeups: the flow polls, the sweep (1 a second) and this status call's
# own; no timer ticks for nothing (the control socket's reaper ticked 10 a
# second with no client: 31 a second). Idle sockets owe nothing: they are
# read once per threshold less a poll (150 ms), and the polls are planned
# for then, not every 50 ms (20 polls a second, 21 wakeups, before)
sleep 2
ctl -j status > "$T_DIR/st1.json"
check "status: the daemon's wakeups a second, no idle timer or idle poll among them" \
	jq -e --slurpfile a "$T_DIR/st.json" '(.cpu.wakeups - $a[0].cpu.wakeups) /
		(.uptime_s - $a[0].uptime_s) < 12 and .cpu.wakeups_per_s > 0' "$T_DIR/st1.json"
check "planned flow polls: fewer than 10 a second while nothing waits (not 20)" \
	jq -e --slurpfile a "$T_DIR/st.json" '(.flow_sources.polls - $a[0].flow_sources.polls) /
		(.uptime_s - $a[0].uptime_s) < 10' "$T_DIR/st1.json"
check "status: the next flow poll, within a threshold less a poll, and why then" \
	jqe '.flow_sources.next_poll | .in_ms <= 150 and (.why | IN("a source", "refresh", "flow_interval"))' \
	"$T_DIR/st1.json"
check "status: the 20 watched sockets (the client ends, in the port's namespace)" \
	jqe "[$sock | .flows] == [20]" "$T_DIR/st.json"
ctl status > "$T_DIR/st.txt"
check "nicstallctl status prints the flow sources' cost" \
	grep -Eq '^cli +sock +open +20 +[0-9.]+%' "$T_DIR/st.txt"
check "nicstallctl status prints the detector's cost after the sources'" \
	grep -Eq '^- +detector +- +20 +[0-9.]+% +[0-9.]+$' "$T_DIR/st.txt"
check "nicstallctl status prints the flow polls and when the next comes" \
	grep -Eq '^flow polls: [0-9]+ so far, the next in [0-9]+ ms \((a source|refresh|flow_interval)\)$' "$T_DIR/st.txt"
check "nicstallctl status prints the daemon's CPU and RSS" \
	grep -Eq '^daemon: [0-9.]+% of one core since start .* rss [0-9.]+ MiB, [0-9.]+ wakeups/s$' "$T_DIR/st.txt"

# A stall on a paced port: a sender whose data the peer stops receiving
# (dropped before its stack) waits with data unacknowledged; it is read at
# every poll once its wait is a threshold less a poll old, and the stall is
# called
ip netns exec "$B" socat -u TCP-LISTEN:12003,bind=10.207.0.2,reuseaddr OPEN:/dev/null \
	> "$T_DIR/socat-srv.log" 2>&1 &
T_PIDS+=($!)
SOCAT_PID=$!
wait_for 5 bash -c "ip netns exec $B ss -ltn | grep -q ':12003 '"
ip netns exec "$A" python3 -c '
import socket, time
s = socket.create_connection(("10.207.0.2", 12003))
while True:
    s.sendall(b"q" * 100)
    time.sleep(0.02)
' > "$T_DIR/sender.log" 2>&1 &
T_PIDS+=($!)
SENDER_PID=$!
sleep 2         # a discovery finds it; it moves, so it is paced
nft_drop "$B" tcp dport 12003
T_CLEANUP+=("nft_clear $B")
wait_for 5 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status |
	jqe '[.incidents[] | select(any(.flows[]; .tuple | contains(\":12003\")))] | length >= 1'"
ctl -j status > "$T_DIR/st2.json"
check "the stall of a paced socket opens an incident" \
	jqe '[.incidents[] | select(any(.flows[]; .tuple | contains(":12003")))] | length >= 1' \
	"$T_DIR/st2.json"
check "no incident for the idle sockets" \
	jqe '[.incidents[] | select(any(.flows[]; .tuple | contains(":12002")))] | length == 0' \
	"$T_DIR/st2.json"

# The same 20 idle sockets watched by the kernel (sock_liveness = auto,
# the default: this kernel has the sockops callbacks). No socket owes
# anything, so no source asks for a poll before its own time (the
# discovery's, a second), and the detector sleeps until then: about one
# poll a second and no refresh, not 6.7 a second (a poll a threshold less a
# poll, as before). The sender and its stall are gone first, and only the
# idle sockets' port is selected (the sender's orphan may linger, its
# data unacknowledged, until its next retransmission).
kill "$SENDER_PID" "$SOCAT_PID" 2>/dev/null
kill -TERM "$T_DPID"; wait "$T_DPID" 2>/dev/null
nft_clear "$B"
sed -e 's/^sock_liveness = paced$/sock_liveness = auto/' \
	-e 's/^flows = tcp port 12002-12003$/flows = tcp port 12002/' "$T_DIR/n.conf" > "$T_DIR/auto.conf"
start_daemon "$T_DIR/auto.conf" || exit 1
check "auto: kernel events on the port, the 20 sockets watched" wait_for 5 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status |
	jqe '[$sock | .mode, .watched] == [\"kernel events\", 20]'"
sleep 1
ctl -j status > "$T_DIR/ev0.json"
sleep 2
# a slow control client (one that connects and is not scheduled for a
# while, as under load): held 1.5 s before its request, at no wakeup of
# its own (the control socket's reaper ticked every 100 ms while a client
# was held: 15 here, and a poll while nothing asked rode one of them and
# fell out of the sweep's phase)
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
time.sleep(1.5)
s.sendall(b"{\"cmd\":\"status\"}\n")
r = b""
while not r.endswith(b"\n"):
    b = s.recv(65536)
    if not b:
        break
    r += b
sys.exit(0 if b"\"ok\":true" in r else 1)
' "$T_SOCK"
check "a slow control client is answered" test $? = 0
sleep 2.5
ctl -j status > "$T_DIR/ev1.json"
echo "auto, 6 s idle: $(jq -c --slurpfile a "$T_DIR/ev0.json" '{polls: (.flow_sources.polls - $a[0].flow_sources.polls), why: .flow_sources.polls_why, wakeups: (.cpu.wakeups - $a[0].cpu.wakeups), woken_by: (.cpu.woken_by as $w | $a[0].cpu.woken_by as $v | $w | with_entries(.value -= ($v[.key] // 0)) | with_entries(select(.value > 0))), sweeps: (.ports[0].samples - $a[0].ports[0].samples), s: (.uptime_s - $a[0].uptime_s)}' "$T_DIR/ev1.json")"
check "auto: the detector's polls about one a second while nothing waits (a refresh: 6.7)" \
	jq -e --slurpfile a "$T_DIR/ev0.json" '(.flow_sources.polls - $a[0].flow_sources.polls) /
		(.uptime_s - $a[0].uptime_s) < 2' "$T_DIR/ev1.json"
check "auto: no poll for a refresh, none for a flow" \
	jq -e --slurpfile a "$T_DIR/ev0.json" '.flow_sources.polls_why as $w | $a[0].flow_sources.polls_why as $v |
		($w | type == "object") and ([$w[]] | add) == .flow_sources.polls and
		([("refresh", "a flow waited half its threshold", "a waiting flow", "a flow is stalled") |
		  (($w[.] // 0) - ($v[.] // 0))] | add == 0)' "$T_DIR/ev1.json"
check "auto: wakeups a second, the sweep's and the polls' (8 before)" \
	jq -e --slurpfile a "$T_DIR/ev0.json" '(.cpu.wakeups - $a[0].cpu.wakeups) /
		(.uptime_s - $a[0].uptime_s) < 4' "$T_DIR/ev1.json"
# the detector's polls while nothing asks come at the sweep's wakeups
# (lib/loop.h loop_timer_set_window): the wakeups are the sweeps' (one
# sampler for every port: the port's samples), the polls a source asked
# for, and the three control calls' (up to 3 each: the accept, the
# request, the reply) and a little room, none a poll's of its own nor a
# timer's for the slow client (17 before, 6 of them the polls', against
# 14 here; 11 with this change; 16 to 30 with the reaper's ticks)
check "auto: polls while nothing asks ride on the sweeps' wakeups" \
	jq -e --slurpfile a "$T_DIR/ev0.json" '($a[0].flow_sources.polls_why["nothing asked"] // 0) as $i0 |
		((.flow_sources.polls - $a[0].flow_sources.polls) -
		 ((.flow_sources.polls_why["nothing asked"] // 0) - $i0)) as $asked |
		(.cpu.wakeups - $a[0].cpu.wakeups) <=
		(.ports[0].samples - $a[0].ports[0].samples) + $asked + 11' "$T_DIR/ev1.json"
# the same by cause (status cpu.woken_by): no poll while nothing asked woke
# the daemon itself, nor did the idle sockets' kernel watch, nor the
# control socket's timer beyond its clients' own events
check "auto: by cause, the polls woke it only when a source asked, the idle sockets never" \
	jq -e --slurpfile a "$T_DIR/ev0.json" '($a[0].flow_sources.polls_why["nothing asked"] // 0) as $i0 |
		((.flow_sources.polls - $a[0].flow_sources.polls) -
		 ((.flow_sources.polls_why["nothing asked"] // 0) - $i0)) as $asked |
		.cpu.woken_by as $w | $a[0].cpu.woken_by as $v |
		(($w["flow poll"] // 0) - ($v["flow poll"] // 0)) <= $asked and
		(($w.sock // 0) - ($v.sock // 0)) == 0 and
		(($w.sweep // 0) - ($v.sweep // 0)) >= 5 and
		(($w.control // 0) - ($v.control // 0)) <= 9' "$T_DIR/ev1.json"
check "auto: the next poll, and why then" \
	jqe '.flow_sources.next_poll | .in_ms <= 1000 and (.why | IN("a source", "nothing asked"))' "$T_DIR/ev1.json"
check "auto: no incident for the idle sockets" \
	jqe '[.incidents[] | select(any(.flows[]; .tuple | contains(":12002")))] | length == 0' "$T_DIR/ev1.json"

# The port's addresses route its namespace's sockets to it (a socket on
# another interface's address is not the port's). They are dumped when the
# port comes up and again only when the link monitor reports an address
# event of its interface: none in 6 s idle (a dump every 2 s before), and
# an address added or removed is known at the next poll. (The IPv6
# link-local address the kernel gives the interface is among them.)
check "auto: the port's address known, dumped once, not again while none changes" \
	jq -e --slurpfile a "$T_DIR/ev0.json" '[.flow_sources.port_addresses[] | select(.port == "cli")] as $p |
		[$a[0].flow_sources.port_addresses[] | select(.port == "cli")] as $q |
		($p | length) == 1 and ($p[0].addresses | map(select(contains(".")))) == ["10.207.0.1"] and $p[0].dumps == $q[0].dumps and
		($p[0] | has("error") | not)' "$T_DIR/ev1.json"
ip -n "$A" addr add 10.207.0.9/24 dev vA
ip netns exec "$A" python3 -c '
import socket, time
s = socket.socket()
s.bind(("10.207.0.9", 0))
s.connect(("10.207.0.2", 12002))
print("up", flush=True)
time.sleep(60)' > "$T_DIR/extra.out" 2>&1 &
T_PIDS+=($!)
check "auto: an address added to the port's interface is known, its socket the port's" \
	wait_for 5 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.flow_sources.port_addresses[] |
		select(.port == \"cli\") | .addresses | map(select(contains(\".\")))] == [[\"10.207.0.1\", \"10.207.0.9\"]]' &&
		'$NICSTALLCTL' -s '$T_SOCK' -j flows cli | jqe '[.flows[] | select(.tuple | contains(\"10.207.0.9:\"))] | length == 1'"
ip -n "$A" addr del 10.207.0.9/24 dev vA
check "auto: an address removed is forgotten" \
	wait_for 5 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.flow_sources.port_addresses[] |
		select(.port == \"cli\") | .addresses | map(select(contains(\".\")))] == [[\"10.207.0.1\"]]'"
ctl -j status > "$T_DIR/ev3.json"
check "auto: one dump for each change, no more" \
	jq -e --slurpfile a "$T_DIR/ev1.json" '[.flow_sources.port_addresses[] | select(.port == "cli")][0].dumps -
		[$a[0].flow_sources.port_addresses[] | select(.port == "cli")][0].dumps | . >= 2 and . <= 4' "$T_DIR/ev3.json"
