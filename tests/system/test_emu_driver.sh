#!/bin/bash
# test_emu_driver: the emulated port applies promiscuity the way the mlx5
# driver does (tests/emu/rxmode.h), without the daemon:
#  (a) `promisc on; promisc off` back to back, well inside the rx-mode
#      work's delay, releases nothing: the one work run reads "off", which
#      is what it applied last (the former instant model did release);
#  (b) on, a dwell longer than the delay, off: released;
#  (c) a port already `promisc on`: a tcpdump (count 1 -> 2) changes
#      nothing, a zero-dwell off-then-on nothing, off-then-on with a dwell
#      releases;
#  (d) a port held by a running tcpdump (count 1, flag clear): the user
#      flag's on/off is 1 -> 2 -> 1, no crossing, nothing released; the
#      tcpdump leaving (1 -> 0) is a crossing and releases;
#  (e) allmulticast on and off: the work runs, nothing released.
# Where /dev/kmsg is readable, the kernel's own "IF: entered/left
# promiscuous mode" lines (netdev_info in __dev_set_promiscuity) are
# recorded for each case: they witness the count crossing zero in the
# kernel, not the driver's work applying it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu_lib.sh"
t_init
for t in sockperf tcpdump ss; do
	command -v $t > /dev/null || { ok "skipped: $t not installed"; exit 0; }
done
DELAY=5         # ms: the rx-mode work's delay, as on a quiet card
emu_up 10.212.0 "--rx-mode-delay $DELAY" || { fail "emulated pair"; exit 1; }
NS=$SRV_NS IF=$SRV_IF

# kernel log, from now on (cat keeps reading as records arrive)
KMSG=$T_DIR/kmsg.log
if [ -r /dev/kmsg ]; then
	cat /dev/kmsg > "$KMSG" 2>/dev/null &
	T_PIDS+=($!)
	sleep 0.3
fi
kmark() { [ -f "$KMSG" ] && wc -l < "$KMSG" || echo 0; }
# klines FROM: the srv veth's promiscuity lines since mark FROM, raw
klines() {
	[ -f "$KMSG" ] || return 0
	tail -n +$(($1 + 1)) "$KMSG" | grep -a -E "^[0-9]+,[0-9]+,[0-9]+,[^;]*;$IF: (entered|left) promiscuous mode\$"
}
# kwhat FROM: the same, as "entered,left,..." (empty: none)
kwhat() { klines "$1" | sed -E 's/.*: (entered|left) promiscuous mode$/\1/' | paste -sd, -; }

# the model's state: rx KEY
rx() { emu rxmode srv | awk -v k="$1" 'NR == 2 { for (i = 1; i <= NF; i++) { n = index($i, "=");
	if (substr($i, 1, n - 1) == k) print substr($i, n + 1) } }'; }
wedges() { emu status srv | grep -c '^wedge '; }
count() { ip -n "$NS" -d link show "$IF" | grep -o 'promiscuity [0-9]*' | cut -d' ' -f2; }
count_is() { [ "$(count)" = "$1" ]; }
flag() { ip -n "$NS" link show "$IF" | head -1 | grep -q '[<,]PROMISC[,>]' && echo on || echo off; }
# a snapshot of the counters a case compares: runs transitions crossings coalesced
snap() { echo "$(rx work_runs) $(rx rx_transitions) $(rx crossings) $(rx work_coalesced)"; }
# bytes the server socket of the flow has received
rcvd() {
	ip netns exec "$NS" ss -tniH state established "( sport = :$SP )" |
		grep -o 'bytes_received:[0-9]*' | head -1 | cut -d: -f2 | grep . || echo 0
}
grows() {       # grows SECONDS: the flow moves within SECONDS
	local b i
	b=$(rcvd)
	for i in $(seq $(($1 * 10))); do
		[ "$(rcvd)" -gt "$b" ] && return 0
		sleep 0.1
	done
	return 1
}
stopped() { local b; b=$(rcvd); sleep 0.6; [ "$(rcvd)" = "$b" ]; }
batch() { printf 'link set dev %s promisc %s\nlink set dev %s promisc %s\n' "$IF" "$1" "$IF" "$2" |
	ip -n "$NS" -batch -; }
# wedge CASE: wedge the flow once it moves, check that it stopped
wedge() {
	grows 15 || fail "$1: the flow moves before the wedge"
	emu wedge srv $FLOW > /dev/null
	check "$1: wedged, the flow stopped" stopped
}
settle() { sleep 0.25; }     # 50 times the delay: every queued work has run
tcpdump_start() {       # tcpdump_start COUNT: start one, wait for the count to be COUNT
	ip netns exec "$NS" tcpdump -i "$IF" -w /dev/null > /dev/null 2>&1 &
	TD=$!
	T_PIDS+=("$TD")
	wait_for 5 count_is "$1"
}
tcpdump_stop() { kill -TERM "$TD"; wait "$TD" 2>/dev/null; }

check "srv port: deferred model, delay $DELAY ms" test "$(rx rx_mode) $(rx rx_mode_delay_ms)" = "deferred $DELAY.000"
check "srv port: not promiscuous, applied off" test "$(rx promiscuity) $(rx promisc_applied)" = "0 off"

SP=11100
pingpong $SP 200
FLOW="tcp $CLI_ADDR $(cport $SP) $SRV_ADDR $SP"
check "flow $FLOW moves" grows 10

# ---- (a) a zero-dwell toggle releases nothing ----
wedge "(a)"
read -r r0 t0 c0 k0 < <(snap); m=$(kmark)
batch on off                            # two RTM_SETLINK, ~0.1 ms apart
settle
read -r r1 t1 c1 k1 < <(snap)
echo "(a) one process, on then off: runs +$((r1 - r0)), coalesced +$((k1 - k0)), crossings +$((c1 - c0)), transitions +$((t1 - t0)), kmsg [$(kwhat "$m")]"
check "(a) the kernel's count crossed zero twice (on, off)" test $((c1 - c0)) = 2
check "(a) one work run: the second message coalesced into it" test $((r1 - r0)) = 1 -a $((k1 - k0)) = 1
check "(a) no transition: the work read 'off', as applied" test "$t1" = "$t0" -a "$(rx promisc_applied)" = off
check "(a) the wedge stays" test "$(wedges)" = 1
check "(a) the flow is still stopped" stopped
[ -f "$KMSG" ] && check "(a) kmsg has the kernel's entered+left lines all the same" test "$(kwhat "$m")" = "entered,left"
klines "$m" | sed 's/^/    kmsg: /'

# the same with two `ip` commands (a few ms apart here): with the work
# 50 ms away they are still well inside the delay
emu rxmode srv 50 > /dev/null
read -r r0 t0 c0 k0 < <(snap); m=$(kmark)
ip -n "$NS" link set "$IF" promisc on; ip -n "$NS" link set "$IF" promisc off
sleep 0.3
read -r r1 t1 c1 k1 < <(snap)
gap=$(klines "$m" | awk -F, '{ t[NR] = $3 } END { if (NR == 2) printf "%.1f", (t[2] - t[1]) / 1000 }')
echo "(a) two ip commands ${gap:-?} ms apart (kmsg), work at 50 ms: runs +$((r1 - r0)), coalesced +$((k1 - k0)), transitions +$((t1 - t0))"
check "(a) two ip commands inside a 50 ms delay: one run, no transition" test $((r1 - r0)) = 1 -a "$t1" = "$t0"
check "(a) two ip commands: the wedge stays" test "$(wedges)" = 1
emu rxmode srv $DELAY > /dev/null

# the former instant model releases on the same toggle: it is not the driver
emu rxmode srv instant > /dev/null
batch on off
settle
check "(a) the former instant model: the same zero-dwell toggle clears the wedge" test "$(wedges)" = 0
check "(a) instant model: two transitions, no work run" test "$(rx rx_transitions)" = $((t1 + 2)) -a "$(rx work_runs)" = "$r1"
emu rxmode srv $DELAY > /dev/null
check "(a) instant model: the flow comes back" grows 15

# ---- (b) on, a dwell longer than the delay, off: released ----
wedge "(b)"
read -r r0 t0 c0 k0 < <(snap); m=$(kmark)
ip -n "$NS" link set "$IF" promisc on
settle
check "(b) promisc on + $((250 / DELAY))x the delay: the work applied 'on', the wedge is gone" \
	test "$(rx promisc_applied)" = on -a "$(wedges)" = 0
ip -n "$NS" link set "$IF" promisc off
settle
read -r r1 t1 c1 k1 < <(snap)
echo "(b) on, 250 ms, off: runs +$((r1 - r0)), transitions +$((t1 - t0)), kmsg [$(kwhat "$m")]"
check "(b) two runs, two transitions (on, off)" test $((r1 - r0)) = 2 -a $((t1 - t0)) = 2
check "(b) the flow comes back" grows 15
[ -f "$KMSG" ] && check "(b) kmsg: entered, left" test "$(kwhat "$m")" = "entered,left"

# ---- (c) a port already promiscuous ----
ip -n "$NS" link set "$IF" promisc on
settle
check "(c) promisc on: count 1, flag on, applied on" test "$(count) $(flag) $(rx promisc_applied)" = "1 on on"
wedge "(c)"
read -r r0 t0 c0 k0 < <(snap); m=$(kmark)
tcpdump_start 2 || fail "(c) tcpdump raised the count to 2"
settle
check "(c) tcpdump on the promiscuous port: count $(count), flag $(flag)" test "$(count) $(flag)" = "2 on"
check "(c) tcpdump: no crossing, no transition, the wedge stays" \
	test "$(rx crossings) $(rx rx_transitions) $(wedges)" = "$c0 $t0 1"
tcpdump_stop
wait_for 5 count_is 1
settle
check "(c) tcpdump gone (2 -> 1): no transition, the wedge stays" test "$(rx rx_transitions) $(wedges)" = "$t0 1"
[ -f "$KMSG" ] && check "(c) kmsg: no line for the tcpdump's 1 -> 2 -> 1" test -z "$(kwhat "$m")"
batch off on                            # what a zero-dwell reprogram does
settle
read -r r1 t1 c1 k1 < <(snap)
echo "(c) tcpdump start/stop, then off-on zero dwell: crossings +$((c1 - c0)), runs +$((r1 - r0)), transitions +$((t1 - t0)), kmsg [$(kwhat "$m")]"
check "(c) off then on, zero dwell: no transition, the wedge stays" test "$t1 $(wedges)" = "$t0 1"
m=$(kmark)
ip -n "$NS" link set "$IF" promisc off
settle
ip -n "$NS" link set "$IF" promisc on
settle
read -r r2 t2 c2 k2 < <(snap)
echo "(c) off, 250 ms, on: runs +$((r2 - r1)), transitions +$((t2 - t1)), kmsg [$(kwhat "$m")]"
check "(c) off then on with a dwell: two transitions, the wedge is gone" test $((t2 - t1)) = 2 -a "$(wedges)" = 0
check "(c) the flow comes back" grows 15
[ -f "$KMSG" ] && check "(c) kmsg: left, entered" test "$(kwhat "$m")" = "left,entered"
ip -n "$NS" link set "$IF" promisc off
settle

# ---- (d) a port held promiscuous by a running tcpdump ----
tcpdump_start 1 || fail "(d) tcpdump raised the count to 1"
settle
check "(d) tcpdump holds the port: count 1, flag off, applied on" \
	test "$(count) $(flag) $(rx promisc_applied)" = "1 off on"
wedge "(d)"
read -r r0 t0 c0 k0 < <(snap); m=$(kmark)
ip -n "$NS" link set "$IF" promisc on
settle
check "(d) promisc on under tcpdump: count 2, no transition" test "$(count) $(rx rx_transitions)" = "2 $t0"
ip -n "$NS" link set "$IF" promisc off
settle
read -r r1 t1 c1 k1 < <(snap)
echo "(d) tcpdump held, on, 250 ms, off: crossings +$((c1 - c0)), runs +$((r1 - r0)), transitions +$((t1 - t0)), kmsg [$(kwhat "$m")]"
check "(d) on/off under tcpdump (1 -> 2 -> 1): no crossing, no transition" test $((c1 - c0)) = 0 -a "$t1" = "$t0"
check "(d) the wedge stays" test "$(wedges)" = 1
check "(d) the flow is still stopped" stopped
[ -f "$KMSG" ] && check "(d) kmsg: no line" test -z "$(kwhat "$m")"
m=$(kmark)
tcpdump_stop
settle
check "(d) tcpdump leaves (1 -> 0): a crossing, the work applies 'off', the wedge is gone" \
	test "$(rx promisc_applied) $(rx rx_transitions) $(wedges)" = "off $((t1 + 1)) 0"
[ -f "$KMSG" ] && check "(d) kmsg: left" test "$(kwhat "$m")" = "left"
check "(d) the flow comes back" grows 15

# ---- (e) allmulticast: the work runs, the promiscuous table stays ----
# IFF_ALLMULTI crossing queues the work as well (dev_set_rx_mode); the work
# adds or removes only the allmulti l2 rule (ea->allmulti_enabled), and the
# promiscuous table, what releases a wedge, is not touched
wedge "(e)"
read -r r0 t0 c0 k0 < <(snap)
ip -n "$NS" link set "$IF" allmulticast on
settle
ip -n "$NS" link set "$IF" allmulticast off
settle
read -r r1 t1 c1 k1 < <(snap)
echo "(e) allmulticast on, 250 ms, off: runs +$((r1 - r0)), crossings +$((c1 - c0)), transitions +$((t1 - t0))"
check "(e) allmulticast on/off: the work ran, no promiscuous crossing or transition" \
	test $((r1 - r0)) -ge 1 -a $((c1 - c0)) = 0 -a "$t1" = "$t0"
check "(e) the wedge stays" test "$(wedges)" = 1
check "(e) the flow is still stopped" stopped

echo "---- the model's state and its last work runs ----"
emu rxmode srv
echo "---- emuport's log (rx-mode) ----"
grep -E "rx-mode|reprogrammed" "$T_DIR/emu/emuport.log" | tail -40
[ -f "$KMSG" ] || echo "kmsg: /dev/kmsg not readable here, kernel lines not checked"
check "emuport alive" emu status
