#!/bin/bash
# The readers of unmodified bypass engines in the real daemon: RDMA queue
# pairs from crafted RES_QP_GET dumps (the recorded-reply path: this kernel
# has no RDMA), Onload stacks from fake orm_json / onload_stackdump tools
# printing the Onload 9.0.2 fixtures, and the emulated libvma / libxlio
# engine (tests/engine/vmaengine.c, writing through the engines' own
# headers), which publishes only while its reader_counter moves. Each shows a stalled flow declared, a healthy one not, and the
# bundle's evidence at the stall and after it.
. "$(dirname "$0")/lib.sh"
t_init
C=${T_PREFIX}c S=${T_PREFIX}s
netns_pair "$C" "$S" vC vS 10.9.0.1 10.9.0.2 || { fail "namespace pair"; exit 1; }
QPW=$BUILD/tests/test_flow_readers
[ -x "$QPW" ] || { fail "$QPW missing (make $QPW)"; exit 1; }
mkdir -p "$T_DIR/flows" "$T_DIR/state" "$T_DIR/qp" "$T_DIR/onload" "$T_DIR/vma" "$T_DIR/xlio" \
	"$T_DIR/other" "$T_DIR/ol"

# ---- fake Onload tools (the daemon runs them with PATH=/usr/sbin:/usr/bin:...)
F=$ROOT/tests/fixtures/onload
cat > "$T_DIR/onload/orm_json" <<TOOL
#!/bin/bash
# socket 3 of stack 2 moves at every run (a healthy ping-pong); 5 keeps 64
# bytes unacknowledged, 6 keeps 64 bytes unread
echo "orm_json \$*" >> $T_DIR/ol/calls
[ -e $T_DIR/ol/off ] && { echo '{"onload_version":"9.0.2","json":[]}'; exit 0; }
n=\$(( \$(cat $T_DIR/ol/n 2>/dev/null || echo 0) + 1 )); echo \$n > $T_DIR/ol/n
# with "stats" and "opts" as orm_json_lib.c orm_oo_stats_dump() and
# orm_oo_opts_dump() print them: the periodic poll's "before" (dump 0042)
jq --argjson d \$((n * 64)) --slurpfile so $F/orm_json-stats-opts-0042.json '.json[0]["2"].stack.tcp["3"].tcp_state |= (.snd_nxt += \$d | .snd_una += \$d | .rcv_added += \$d | .rcv_delivered += \$d) | .json[0]["2"] += \$so[0]' $F/orm_json-stack.json
TOOL
cat > "$T_DIR/onload/onload_stackdump" <<TOOL
#!/bin/bash
echo "onload_stackdump \$*" >> $T_DIR/ol/calls
if [ -e $T_DIR/ol/dumped ]; then
	sed -e 's/lock_wakes: 12438/lock_wakes: 28900/' -e 's/tcp_send_nonb_pool_empty: 39/tcp_send_nonb_pool_empty: 44/' \
	    -e 's/tcp_send_ni_lock_contends: 38/tcp_send_ni_lock_contends: 44/' -e 's/free=392/free=379/g' $F/stackdump-lots-0044-during.txt
else
	touch $T_DIR/ol/dumped
	cat $F/stackdump-lots-0044-during.txt
fi
TOOL
chmod 0755 "$T_DIR/onload/orm_json" "$T_DIR/onload/onload_stackdump"
touch "$T_DIR/ol/off"           # no stacks until the Onload part

# ---- RDMA: no QP until the RDMA part
"$QPW" --write-qp "$T_DIR/qp" --dev mlx5_0 --index 1 || { fail "crafted QP dump"; exit 1; }

cat > "$T_DIR/n.conf" <<CONF
[daemon]
rules_dir = $ROOT/rules
rules_local_dir = $T_DIR/rules.d
flow_interval = 50ms
flows_dir = $T_DIR/flows
state_dir = $T_DIR/state
journal_dir = $T_DIR/journal
onload_tools = $T_DIR/onload
vma_stats_dir = $T_DIR/vma
xlio_stats_dir = $T_DIR/xlio
incident_cooldown = 0s
incident_window = 1s
release_wait = 300ms
capture_time = 100ms
[port cli]
netns = $C
interface = vC
track = vma
peer = srv
peer_address = 10.9.0.2
[port srv]
netns = $S
interface = vS
track = onload vma rdmaqp
rdma_device = mlx5_0
rdma_port = 1
rdmaqp_replies = $T_DIR/qp
rdmaqp_interval = 200ms
peer = cli
peer_address = 10.9.0.1
CONF
start_daemon "$T_DIR/n.conf" || exit 1

# bundle_with SOURCE: the bundle of the investigation whose incident holds a
# flow of that source
bundle_with() {
	local id
	for id in $(ctl -j incident list | jq -r '.investigations[].id'); do
		ctl -j incident show "$id" | jq -r --arg s "$1" \
			'select(.record.state == "complete" and (.record.incident.flows | any(.source == $s))) | .record.bundle // empty' \
			2>/dev/null | grep . && return 0
	done
	return 1
}
flows() { ctl -j flows | jq -c --arg s "$1" '[.flows[] | select(.source == $s)]'; }

# ================================================================ RDMA QPs
check "rdmaqp: the port's source reads the crafted device" wait_for 5 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.flow_sources.readers.rdmaqp.srv.state == \"open\" and .flow_sources.readers.rdmaqp.srv.device_index == 1'"
# A: healthy, wraps its 24-bit PSNs; B: its responses stop (waiting); C: goes
# to ERR; D: the other RDMA port (not ours)
(
	for i in $(seq 1 60); do
		a=$(( (0xfffffa + i) & 0xffffff ))
		if [ "$i" -le 8 ]; then b_sq=$((100 + i)); b_rq=$((50 + i)); c=3
		else b_sq=109; b_rq=58; c=6; fi
		"$QPW" --write-qp "$T_DIR/qp" --dev mlx5_0 --index 1 \
			0x11:2:3:$a:$a:1:0x21 0x12:2:3:$b_sq:$b_rq:1:0x22 0x13:2:$c:7:7:1:0x23 0x14:2:3:$i:$i:2:0x24
		sleep 0.25
	done
) &
T_PIDS+=($!)
QPLOOP=$!
check "rdmaqp: the waiting QP stalls" wait_for 10 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j flows srv --stalled | jqe '[.flows[] | select(.source == \"rdmaqp\" and (.tuple | test(\"0x12 \")))] | length == 1'"
check "rdmaqp: the QP in ERR stalls (failed)" wait_for 5 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j flows srv --stalled | jqe '[.flows[] | select(.source == \"rdmaqp\" and (.tuple | test(\"0x13 \")))] | length == 1'"
check "rdmaqp: a bundle holds the QP flows" wait_for 20 bash -c "$(declare -f bundle_with ctl); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' bundle_with rdmaqp"
B=$(bundle_with rdmaqp)
# its PSNs went 0xfffffb .. 0xffffff, 0, 1, ...: past the wrap by now
wait_for 10 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j flows srv | jqe '[.flows[] | select(.tuple | test(\"0x11 \")) | .tx_msgs] | .[0] >= 12'"
flows rdmaqp > "$T_DIR/qpflows.json"
jq -c '.[] | {tuple, state, stalls, tx_msgs}' "$T_DIR/qpflows.json"
check "rdmaqp: the healthy QP crossed the 24-bit wrap and never stalled" jqe \
	'[.[] | select(.tuple | test("0x11 "))] | length == 1 and .[0].stalls == 0 and .[0].state != "stalled" and .[0].tx_msgs >= 12' "$T_DIR/qpflows.json"
check "rdmaqp: the other RDMA port's QP is not watched" jqe '[.[] | select(.tuple | test("0x14 "))] | length == 0' "$T_DIR/qpflows.json"
if [ -n "$B" ]; then
	check "rdmaqp: verify passes" "$NICSTALLCTL" verify "$B"
	# the QP that stalled first opened the incident (at_stall), the other
	# joined it (after: every QP of the incident)
	check "rdmaqp: engines.json has the stalled QPs at the stall and after" jqe \
		'(.at_stall.rdmaqp.srv.involved | length >= 1) and (.after.rdmaqp.srv.involved | any(.lqpn == 18 and .state == "RTS" and .sq_psn == 109 and .rq_psn == 58))' "$B/engines.json"
	check "rdmaqp: the failed QP's entry says ERR" jqe '.after.rdmaqp.srv.involved | any(.lqpn == 19 and .state == "ERR")' "$B/engines.json"
	check "rdmaqp: the summary names the QPs" bash -c "grep -q 'RDMA QP on port srv: mlx5_0 qp 18 -> 34 (RC).*RTS, sq_psn 109, rq_psn 58' '$B/summary.txt' && grep -q 'RDMA QP on port srv: mlx5_0 qp 19 -> 35 (RC).*ERR' '$B/summary.txt'"
fi
kill "$QPLOOP" 2>/dev/null; wait "$QPLOOP" 2>/dev/null
"$QPW" --write-qp "$T_DIR/qp" --dev mlx5_0 --index 1
sleep 3                 # the QP flows close before the next part

# ================================================================ Onload
rm -f "$T_DIR/ol/off"
check "onload: orm_json is run" wait_for 5 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '(.flow_sources.readers.onload.tool | endswith(\"/orm_json\")) and .flow_sources.readers.onload.runs > 1'"
check "onload: the unacknowledged socket stalls" wait_for 10 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j flows srv --stalled | jqe '[.flows[] | select(.source == \"onload\" and (.tuple | test(\":40002\")))] | length == 1'"
check "onload: the unread socket stalls, holding 64 bytes" wait_for 5 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j flows srv --stalled | jqe '[.flows[] | select(.source == \"onload\" and (.tuple | test(\":40003\")) and .held.unread == 64)] | length == 1'"
check "onload: a bundle holds the Onload flows" wait_for 20 bash -c "$(declare -f bundle_with ctl); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' bundle_with onload"
B=$(bundle_with onload)
flows onload > "$T_DIR/olflows.json"
check "onload: the healthy socket never stalled" jqe \
	'[.[] | select(.tuple | test(":40001"))] | length == 1 and .[0].stalls == 0' "$T_DIR/olflows.json"
if [ -n "$B" ]; then
	check "onload: verify passes" "$NICSTALLCTL" verify "$B"
	check "onload: the stackdump at the stall is in the bundle" grep -q "lock_wakes: 12438" "$B/engines/onload-stack2-at_stall.txt"
	check "onload: and after it" grep -q "lock_wakes: 28900" "$B/engines/onload-stack2-after.txt"
	# the record's method: before (the last periodic poll, its age),
	# during and after, each with its run's start and end
	check "onload: before, during and after with their times" jqe \
		'(.at_stall.onload.stacks[0] | .dump == "during" and .start_mono_ns > 0 and .end_mono_ns >= .start_mono_ns and (.start_utc | test("Z$")) and .counters.lock_wakes == 12438 and .opts.EF_BUZZ_USEC == 100)
		 and (.at_stall.onload.stacks[0].before | .dump == "before" and .end_mono_ns > 0 and .age_ms >= 0 and .counters.lock_wakes == 0 and .counters.tcp_send_nonb_pool_empty == 27 and .opts.EF_SPIN_USEC == 100000)
		 and (.at_stall.onload.stacks[0].before.end_mono_ns <= .at_stall.onload.stacks[0].start_mono_ns)
		 and (.after.onload.stacks[0] | .dump == "after" and .counters.lock_wakes == 28900)
		 and (.after.onload.stacks[0].start_mono_ns >= .at_stall.onload.stacks[0].end_mono_ns)' "$B/engines.json"
	check "onload: the facts have the lock wakes over the dumps" jqe \
		'.facts.onload[0] | .stack == 2 and .lock_wakes_before == 0 and .lock_wakes == 12438 and .lock_wakes_after == 28900 and .lock_wakes_rise == 28900 and .pkt_bufs_free_min == 379 and .nonb_pool == true and .ef_buzz_usec == 100 and (has("ef_poll_usec") | not)' "$B/manifest.json"
	check "onload: no process environment in the bundle" bash -c "! grep -rq 'hunter2\|SECRET_TOKEN' '$B'"
	check "onload: the summary has seed 001's table, before, at the stall and after" grep -q "lock_wakes 0 -> 12438 -> 28900, tcp_send_ni_lock_contends 27 -> 38 -> 44, tcp_send_nonb_pool_empty 27 -> 39 -> 44, pkt_bufs_free unknown -> 392 -> 379, .*nonb_pool unknown -> 1 -> 1, .*(before -> at the stall -> after); before taken" "$B/summary.txt"
	check "onload: engines.json has the involved sockets at the stall and after" jqe \
		'(.at_stall.onload.sockets | length >= 1) and ((.at_stall.onload.sockets + .after.onload.sockets) | any(.socket == 5 and .inflight == 64 and .verdict == "waiting")) and ((.at_stall.onload.sockets + .after.onload.sockets) | any(.socket == 6 and .unread == 64 and .verdict == "held"))' "$B/engines.json"
	check "onload: the held bytes reach the facts" jqe '.facts.flows.held.unread >= 64' "$B/manifest.json"
	# socket 5's RTO timer (orm_json stack rto_tid.time) is its next retry
	check "onload: the release watch waits for the socket's own retransmission" jqe \
		'[.steps[] | select(.watch_for) | .watch_for] | length > 0 and all(. == "the flows'"'"' next retry")' "$B/manifest.json"
fi
check "onload: every stackdump ran --nolock, never onload_tcpdump" bash -c \
	"grep '^onload_stackdump' '$T_DIR/ol/calls' | grep -v -- '--nolock' | grep -q . && exit 1; ! grep -q tcpdump '$T_DIR/ol/calls'"
touch "$T_DIR/ol/off"
sleep 3

# ================================================================ VMA
# a real libvma process maps libvma.so: the daemon believes its file only
# then (and when the kernel backs its socket, collectors/flows/claimv.h)
PRE=LD_PRELOAD=$BUILD/libvma.so.9.8.84
# without a reader the engine publishes nothing
ip netns exec "$S" env "$PRE" "$BUILD/vmaengine" --role server --bind 10.9.0.2:11199 --dir "$T_DIR/other" \
	--duration 4 --publish-log > "$T_DIR/other-srv.log" 2>&1 &
T_PIDS+=($!)
ip netns exec "$S" env "$PRE" "$BUILD/vmaengine" --role server --bind 10.9.0.2:11111 --dir "$T_DIR/vma" \
	--stall-after 1350 --duration 40 --publish-log > "$T_DIR/vma-srv.log" 2>&1 &
T_PIDS+=($!)
# a UDP request sent before the server is bound is lost, and the client
# (like sockperf) never sends another: start the clients once both listen
wait_for 5 grep -q '^ready' "$T_DIR/other-srv.log"
wait_for 5 grep -q '^ready' "$T_DIR/vma-srv.log"
ip netns exec "$C" env "$PRE" "$BUILD/vmaengine" --role client --bind 10.9.0.1:0 --peer 10.9.0.2:11199 \
	--dir "$T_DIR/other" --interval-us 2000 --duration 4 --publish-log > "$T_DIR/other-cli.log" 2>&1 &
T_PIDS+=($!)
ip netns exec "$C" env "$PRE" "$BUILD/vmaengine" --role client --bind 10.9.0.1:0 --peer 10.9.0.2:11111 \
	--dir "$T_DIR/vma" --interval-us 2000 --duration 40 --publish-log > "$T_DIR/vma-cli.log" 2>&1 &
T_PIDS+=($!)
sleep 3
p1=$(grep -c '^publish' "$T_DIR/vma-cli.log")
o1=$(grep -c '^publish' "$T_DIR/other-cli.log")
check "vma: an engine nobody reads publishes nothing ($o1 copies)" test "$o1" -eq 0
check "vma: both engines' files are read" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.flow_sources.readers.vma.files[] | select(.release == \"libvma 9.8.84\" and .sockets == 1 and .bumps > 0)] | length == 2'"
# while they are healthy: the server stops replying after 1350 round
# trips, some 13 s at one a tick, sooner when replies are slow (one that
# takes longer than the 2 ms interval lets the next request go at once):
# looked at now, not after the 9 s below (make check's load once brought
# the stall before that look)
check "vma: the healthy ping-pong flows are watched and not stalled" bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j flows | jqe '[.flows[] | select(.source == \"vma\" and (.tuple | test(\":11111\")) and .state != \"stalled\")] | length == 2'"
sleep 9
p2=$(grep -c '^publish' "$T_DIR/vma-cli.log")
echo "vma: the watched client published $p1 copies in its first 3 s, $p2 by 12 s"
# libvma alone publishes every 500 ms for 10 s after one bump: 20 copies
# at most; the daemon's bumps (every 100 ms) keep it copying at each one
check "vma: the daemon keeps it publishing past 10 s ($p1 -> $p2)" test "$p2" -gt $((p1 + 40))
# the engine copies at most once per 10 ms tick: about 100 round trips a
# second, so the server stops replying after some 13 s
check "vma: the client's request without a reply stalls" wait_for 25 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j flows cli --stalled | jqe '[.flows[] | select(.source == \"vma\" and (.tuple | test(\"-> 10.9.0.2:11111\")))] | length == 1'"
check "vma: the server (nothing outstanding) does not" bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j flows srv | jqe '[.flows[] | select(.source == \"vma\" and (.tuple | test(\"10.9.0.2:11111 ->\")) and .stalls == 0)] | length == 1'"
check "vma: a bundle holds the VMA flow" wait_for 20 bash -c "$(declare -f bundle_with ctl); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' bundle_with vma"
B=$(bundle_with vma)
if [ -n "$B" ]; then
	check "vma: verify passes" "$NICSTALLCTL" verify "$B"
	check "vma: engines.json has the socket block at the stall and after, and the layout" jqe \
		'(.at_stall.vma.sockets | any(.remote == "10.9.0.2:11111" and .n_tx_sent_pkt_count == .n_rx_packets + 1 and .verdict == "waiting")) and (.after.vma.sockets | length >= 1) and (.at_stall.vma.files[0].stats_protocol_ver == "25ca1bbb55c2c5536b0b4bded2689e9a")' "$B/engines.json"
	check "vma: the summary shows the socket" grep -q "VMA/XLIO socket 10.9.0.1:[0-9]* -> 10.9.0.2:11111" "$B/summary.txt"
fi

# ================================================================ XLIO
# the emulated engine as libxlio 3.70.2 built with --enable-utls (its own
# header's layout), its socket not offloaded: the ping-pong moves only the
# OS-path counters, and is read, bumped and seen moving
ip netns exec "$S" "$BUILD/vmaengine" --engine xlio-utls --path os --role server \
	--bind 10.9.0.2:11222 --dir "$T_DIR/xlio" --duration 10 > "$T_DIR/xlio-srv.log" 2>&1 &
T_PIDS+=($!)
wait_for 5 grep -q '^ready' "$T_DIR/xlio-srv.log"
ip netns exec "$C" "$BUILD/vmaengine" --engine xlio-utls --path os --role client \
	--bind 10.9.0.1:0 --peer 10.9.0.2:11222 --dir "$T_DIR/xlio" --interval-us 2000 \
	--duration 10 > "$T_DIR/xlio-cli.log" 2>&1 &
T_PIDS+=($!)
check "xlio: both engines' xliostat files are read and bumped" wait_for 6 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.flow_sources.readers.vma.files[] | select(.engine == \"xlio\" and .release == \"libxlio 3.70.2\" and .sockets == 1 and .bumps > 0)] | length == 2'"
check "xlio: the OS-path ping-pong is seen moving, not stalled" wait_for 6 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j flows | jqe '[.flows[] | select(.source == \"vma\" and (.tuple | test(\":11222\")) and .state != \"stalled\" and .tx_msgs > 0 and .rx_msgs > 0)] | length == 2'"
check "daemon alive" kill -0 "$T_DPID"
