#!/bin/bash
# test_emu_consistency: the emulated ConnectX pair (tests/emu) behaves like
# the port of seed 000: healthy counters add up exactly, a wedged flow is
# counted at the port and nowhere else while ping passes, a real promiscuous
# transition releases it and a non-transition does not.
#   usage: test_emu_consistency.sh [BUILD]     (root; prints "N passed, N failed")
set -u
BUILD=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
E=$BUILD/emuport
PAIR=$top/tests/emu/emu-pair.sh
PREFIX=emuc$$
PREFIX=${PREFIX:0:12}
NSC=$PREFIX-cli NSS=$PREFIX-srv IFC=${PREFIX}c IFS_=${PREFIX}s
CLI=10.77.0.1 SRV=10.77.0.2 SPORT=11111 RPORT=11112   # RPORT: the RDMA transport's stand-in
pass=0 fail=0 pids=()
TMP=

ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

cleanup() {
	local p
	trap - EXIT INT TERM
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$TMP" ] && "$PAIR" down "$PREFIX" "$TMP/out" >/dev/null 2>&1
	[ -n "$TMP" ] && rm -rf "$TMP"
}
finish() { cleanup; echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }
trap 'bad "interrupted or timed out"; finish' INT TERM
trap cleanup EXIT

skip() { echo "skip: $*"; echo "0 passed, 0 failed"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root"
[ -x "$E" ] || { bad "$E not built"; finish; }
for t in ip sockperf ping ss; do command -v $t >/dev/null || skip "$t not installed"; done
( sleep 150; kill -TERM $$ 2>/dev/null ) & pids+=($!)	# whole test bound

TMP=$(mktemp -d /tmp/test_emu.XXXXXX)
D=$TMP/out
# counters: published ethtool file / status snapshot / sysfs hw_counters
cnt() { awk -v n="$2:" '$1 == n { print $2; f = 1 } END { if (!f) print "x" }' "$D/$1.ethtool"; }
st() { "$E" ctl "$D" status "$1" | awk -v n="$1.$2" '$1 == n { print $2 }'; }
# one status snapshot: "rx_packets_phy vport_sum wedge_drops"
snap() {
	"$E" ctl "$D" status "$1" | awk -v p="$1." '
		$1 == p "rx_packets_phy" { phy = $2 }
		$1 ~ "^" p "rx_vport_(unicast|multicast|broadcast)_packets$" { vp += $2 }
		$1 == p "wedge_drops" { dr = $2 }
		END { print phy + 0, vp + 0, dr + 0 }'
}
hw() { cat "$D/sysfs/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo x; }
wedges() { "$E" ctl "$D" status "$1" | grep -c '^wedge '; }
# bytes the server socket of the sockperf flow has received
rcvd() {
	ip netns exec "$NSS" ss -tniH state established "( sport = :$SPORT )" |
		grep -o 'bytes_received:[0-9]*' | head -1 | cut -d: -f2 | grep . || echo 0
}
# wait up to $1 s for the flow to grow past $2 bytes
grows() {
	local i
	for i in $(seq $(($1 * 10))); do
		[ "$(rcvd)" -gt "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
ctl() { "$E" ctl "$D" "$@" >/dev/null; }
pingok() { ip netns exec "$1" ping -c 3 -i 0.2 -W 1 -q "$2" >/dev/null 2>&1; }

if ! EMU_ARGS="--fw-frames --rdma-port $RPORT" "$PAIR" up "$PREFIX" "$D" >"$TMP/up.log" 2>&1; then
	cat "$TMP/up.log"
	bad "emu-pair.sh up"
	finish
fi
ok "emu-pair.sh up: namespaces $NSC/$NSS, emuport running"
check "cli.info says mlx5_core, firmware 14.17.1010 (MT_2420110034)" \
	grep -qx 'firmware-version: 14.17.1010 (MT_2420110034)' "$D/cli.info"
check "mlx5_1 fw_ver and board_id" test "$(cat "$D/sysfs/sys/class/infiniband/mlx5_1/fw_ver" \
	"$D/sysfs/sys/class/infiniband/mlx5_1/board_id" | tr '\n' ' ')" = "14.17.1010 MT_2420110034 "
m1=$(stat -c %Y.%y "$D/srv.ethtool"); sleep 0.05; m2=$(stat -c %Y.%y "$D/srv.ethtool")
check "srv.ethtool is republished (mtime moves within 50 ms)" test "$m1" != "$m2"

# ---- healthy run: every frame is at the vport or was firmware-consumed ----
ip netns exec "$NSS" sockperf server --tcp -i $SRV -p $SPORT >"$TMP/sps.log" 2>&1 &
pids+=($!)
ip netns exec "$NSS" sockperf server --tcp -i $SRV -p $RPORT >"$TMP/spr.log" 2>&1 &
pids+=($!)
sleep 0.3
tx0=$(cnt cli tx_packets_phy) rx0=$(cnt srv rx_packets_phy)
WR=$D/sysfs/sys/class/infiniband/mlx5_1/ports/1/hw_counters/rx_write_requests
ino0=$(stat -c %i "$WR") wr0=$(cat "$WR")
ip netns exec "$NSC" ping -c 20 -i 0.05 -q $SRV >"$TMP/ping1.log" 2>&1
check "healthy: 20 pings cli->srv" grep -q ' 0% packet loss' "$TMP/ping1.log"
ip netns exec "$NSC" sockperf ping-pong --tcp -i $SRV -p $SPORT -t 2 --mps=200 \
	</dev/null >"$TMP/spc1.log" 2>&1
check "healthy: sockperf ping-pong completed" grep -q 'percentile 50.000' "$TMP/spc1.log"
ip netns exec "$NSC" sockperf ping-pong --tcp -i $SRV -p $RPORT -t 1 --mps=200 \
	</dev/null >"$TMP/spr1.log" 2>&1
check "healthy: ping-pong on the RDMA stand-in completed" grep -q 'percentile 50.000' "$TMP/spr1.log"
sleep 1.1	# at least one LLDP frame per port
"$E" ctl "$D" fwframes cli off >/dev/null && "$E" ctl "$D" fwframes srv off >/dev/null
sleep 0.3	# traffic over, several publish intervals passed
# one publication per port for all its counters: a frame after the traffic
# (an IPv6 router solicitation or MLD report, sent at a random delay after
# the link came up) between two reads of the live file made them disagree
# (a clean-root run: rx_prio0_packets and rx_packets one past phy)
for p in cli srv; do
	cp "$D/$p.ethtool" "$TMP/$p.ethtool"
	cnt() { awk -v n="$2:" '$1 == n { print $2; f = 1 } END { if (!f) print "x" }' "$TMP/$1.ethtool"; }
	phy=$(cnt $p rx_packets_phy)
	vp=$(( $(cnt $p rx_vport_unicast_packets) + $(cnt $p rx_vport_multicast_packets) +
		$(cnt $p rx_vport_broadcast_packets) ))
	fw=$(st $p fw_frames_injected)
	check "healthy $p: rx_packets_phy $phy == vport $vp + fw frames $fw" \
		test "$phy" -eq $((vp + fw))
	check "healthy $p: fw frames injected ($fw) > 0" test "$fw" -gt 0
	check "healthy $p: rx_prio0_packets == rx_packets_phy" test "$(cnt $p rx_prio0_packets)" = "$phy"
	check "healthy $p: rx_packets == vport sum" test "$(cnt $p rx_packets)" = "$vp"
	check "healthy $p: no drop counter moved" test "$(cnt $p rx_out_of_buffer)$(cnt $p \
		rx_discards_phy)$(cnt $p rx_steer_missed_packets)$(st $p wedge_drops)" = 0000
done
cnt() { awk -v n="$2:" '$1 == n { print $2; f = 1 } END { if (!f) print "x" }' "$D/$1.ethtool"; }
# the RDMA counters count RDMA frames only: a real card's rx_write_requests
# is a queue counter of its QPs, and port_rcv_packets on RoCE counts the
# vport's received_ib_* (mlx5_ib pma_cnt_ext_assign()); TCP moves neither
check "healthy srv: rx_write_requests ($(hw mlx5_1 rx_write_requests)) == RDMA frames > 0" \
	test "$(hw mlx5_1 rx_write_requests)" = "$(st srv rx_rdma_packets)" -a \
	"$(hw mlx5_1 rx_write_requests)" -gt 0
check "healthy srv: TCP data frames ($(st srv rx_data_packets)) are not RDMA work" \
	test "$(st srv rx_data_packets)" -gt "$(st srv rx_rdma_packets)"
check "healthy srv: port_rcv_packets == RDMA frames" \
	test "$(cat "$D/sysfs/sys/class/infiniband/mlx5_1/ports/1/counters/port_rcv_packets")" = "$(st srv rx_rdma_packets)"
check "rx_write_requests moved ($wr0 -> $(cat "$WR")) in place (same inode, sysfs-like)" \
	test "$(stat -c %i "$WR")" = "$ino0" -a "$(cat "$WR")" -gt "$wr0"
check "healthy srv: RDMA error counters at 0" test "$(hw mlx5_1 local_ack_timeout_err)$(hw \
	mlx5_1 out_of_buffer)$(hw mlx5_1 req_cqe_error)" = 000
tx1=$(( $(cnt cli tx_packets_phy) - tx0 )) rx1=$(( $(cnt srv rx_packets_phy) - rx0 ))
check "tx side: cli tx_packets_phy +$tx1 == srv rx_packets_phy +$rx1 (LLDP leaves the peer)" \
	test "$tx1" -eq "$rx1" -a "$tx1" -gt 0

# ---- a wedged flow: counted at the port and nowhere else ----
ip netns exec "$NSC" sockperf ping-pong --tcp -i $SRV -p $SPORT -t 100 --mps=200 \
	</dev/null >"$TMP/spc2.log" 2>&1 &
pids+=($!)
check "long flow started" grows 8 0
cport=$(ip netns exec "$NSC" ss -tnH state established "( dport = :$SPORT )" |
	awk '{ split($3, a, ":"); print a[2]; exit }')
FLOW="tcp $CLI $cport $SRV $SPORT"
check "wedge srv $FLOW" ctl wedge srv $FLOW
sleep 0.5
b1=$(rcvd)
read -r phy1 vp1 dr1 < <(snap srv)
check "wedged: kernel ping cli->srv passes" pingok "$NSC" $SRV
check "wedged: kernel ping srv->cli passes" pingok "$NSS" $CLI
sleep 0.6
b2=$(rcvd)
read -r phy2 vp2 dr2 < <(snap srv)
check "wedged: flow stopped (server received $b1 then $b2 bytes)" test "$b1" = "$b2"
check "wedged: port frames grew ($phy1 -> $phy2)" test "$phy2" -gt "$phy1"
gap=$(( (phy2 - phy1) - (vp2 - vp1) ))
check "wedged: port-vport gap $gap == wedge drops $((dr2 - dr1)) > 0" \
	test "$gap" -gt 0 -a "$gap" -eq $((dr2 - dr1))
check "wedged: status lists the wedge" test "$(wedges srv)" = 1

# ---- a real promiscuous transition releases it ----
ip netns exec "$NSS" ip link set "$IFS_" promisc on
sleep 0.2
check "promisc on (transition): wedge cleared" test "$(wedges srv)" = 0
check "promisc on (transition): flow continues" grows 10 "$b2"

# ---- already promiscuous: promisc on again changes nothing, off does ----
check "wedge srv again (port promiscuous)" ctl wedge srv $FLOW
sleep 0.3
ip netns exec "$NSS" ip link set "$IFS_" promisc on
sleep 0.5
b3=$(rcvd)
check "promisc on again (no transition): wedge still there" test "$(wedges srv)" = 1
sleep 1
check "promisc on again: flow still stopped" test "$(rcvd)" = "$b3"
ip netns exec "$NSS" ip link set "$IFS_" promisc off
sleep 0.2
check "promisc off (transition): wedge cleared" test "$(wedges srv)" = 0
check "promisc off: flow continues" grows 12 "$b3"

# ---- tcpdump (a packet socket's promiscuity) is a transition too ----
check "wedge srv for tcpdump" ctl wedge srv $FLOW
ip netns exec "$NSS" timeout 1 tcpdump -q -i "$IFS_" -w /dev/null >/dev/null 2>&1
check "tcpdump on a non-promiscuous port: wedge cleared" test "$(wedges srv)" = 0

# ---- one-shot wedge after N frames ----
grows 12 "$(rcvd)" >/dev/null
check "wedge srv after 5" ctl wedge srv $FLOW after 5
sleep 1.5
w=$("$E" ctl "$D" status srv | grep '^wedge ')
check "after 5: 5 frames passed then dropped ($w)" eval '[[ "$w" == *"passed=5 dropped="[1-9]* ]]'
"$E" ctl "$D" unwedge srv >/dev/null
grows 12 "$(rcvd)" >/dev/null

# ---- modes ----
"$E" ctl "$D" mode srv buffer-drop 3 >/dev/null; sleep 0.5; "$E" ctl "$D" mode srv healthy >/dev/null
sleep 0.05
o=$(cnt srv rx_out_of_buffer)
check "buffer-drop: rx_out_of_buffer ($o) == rx_discards_phy == rx_prio0_discards > 0" \
	test "$o" -gt 0 -a "$o" = "$(cnt srv rx_discards_phy)" -a "$o" = "$(cnt srv rx_prio0_discards)"
grows 12 "$(rcvd)" >/dev/null
"$E" ctl "$D" mode srv steer-miss $FLOW >/dev/null; sleep 0.5; "$E" ctl "$D" mode srv healthy >/dev/null
sleep 0.05
check "steer-miss: rx_steer_missed_packets ($(cnt srv rx_steer_missed_packets)) > 0" \
	test "$(cnt srv rx_steer_missed_packets)" -gt 0
grows 12 "$(rcvd)" >/dev/null
# transport errors come with RDMA traffic (the stand-in on RPORT), not TCP
"$E" ctl "$D" mode srv fabric-fault >/dev/null
ip netns exec "$NSC" sockperf ping-pong --tcp -i $SRV -p $RPORT -t 1 --mps=200 </dev/null >/dev/null 2>&1
"$E" ctl "$D" mode srv healthy >/dev/null
sleep 0.05
check "fabric-fault: local_ack_timeout_err ($(hw mlx5_1 local_ack_timeout_err)), retries_exceeded moved" test "$(hw mlx5_1 local_ack_timeout_err)" -gt 0 -a \
	"$(hw mlx5_1 req_transport_retries_exceeded)" -gt 0
a=$(hw mlx5_1 local_ack_timeout_err); sleep 0.3
check "healthy again: RDMA error counters stay put" test "$(hw mlx5_1 local_ack_timeout_err)" = "$a"

# ---- hostile control input ----
for c in "wedge srv tcp" "wedge srv tcp 1.2.3.4 99999 1.2.3.4 1" "mode srv nope" \
	"mode srv buffer-drop 0" "wedge nope tcp $FLOW" "frobnicate" "fwframes srv maybe"; do
	r=$("$E" ctl "$D" $c 2>&1)
	check "bad command '$c' -> '$r'" eval '[[ "$r" == "error: "* ]]'
done
r=$(timeout 3 "$E" ctl "$D" "$(printf 'a%.0s' $(seq 3000))" 2>&1)
check "overlong command -> '${r:0:40}'" eval '[[ "$r" == "error: "* ]]'
check "emuport still answers after bad input" ctl status

# ---- teardown leaves nothing ----
epid=$(cat "$D/emuport.pid")
"$PAIR" down "$PREFIX" "$D" >/dev/null 2>&1
check "down: namespaces gone" eval '! ip netns list | grep -q "^$PREFIX-"'
check "down: emuport stopped" eval '! kill -0 '"$epid"' 2>/dev/null'
check "down: output directory removed" test ! -e "$D"
"$PAIR" down "$PREFIX" "$D" >/dev/null 2>&1
check "down again: idempotent" test $? -eq 0
finish
