#!/bin/bash
# Foundation: the daemon watches both ends of a veth pair in two namespaces;
# `nicstallctl snapshot` reports exactly the counters `ethtool -S` and
# `ip -s link` print for each end.
. "$(dirname "$0")/lib.sh"
t_init
A=${T_PREFIX}a B=${T_PREFIX}b
netns_pair "$A" "$B" vA vB 10.201.0.1 10.201.0.2 || { fail "namespace pair"; exit 1; }
cat > "$T_DIR/n.conf" <<CONF
[daemon]
interval = 200ms
state_dir = $T_DIR/state
[port cli]
netns = $A
interface = vA
[port srv]
netns = /run/netns/$B
interface = vB
CONF
start_daemon "$T_DIR/n.conf" || exit 1
ip netns exec "$A" ping -c 5 -i 0.05 -q 10.201.0.2 >/dev/null
check "ping crosses the pair" test $? -eq 0
sleep 0.5          # traffic settles (no more frames between the reads)

ctl -j snapshot > "$T_DIR/snap.json"
check "snapshot is JSON with both ports" \
	jqe '.ports.cli and .ports.srv' "$T_DIR/snap.json"

for pair in "cli $A vA" "srv $B vB"; do
	set -- $pair
	port=$1 ns=$2 ifc=$3
	ip netns exec "$ns" ethtool -S "$ifc" | sed -n 's/^ *\([^:]*\): *\([0-9][0-9]*\)$/\1 \2/p' > "$T_DIR/eth.$port"
	jq -r ".ports.$port.sources.ethtool | to_entries[] | \"\(.key) \(.value)\"" "$T_DIR/snap.json" > "$T_DIR/snap.$port"
	check "$port: ethtool -S has counters" test -s "$T_DIR/eth.$port"
	check "$port: same counter names in the same order as ethtool -S" \
		cmp -s <(cut -d' ' -f1 "$T_DIR/eth.$port") <(cut -d' ' -f1 "$T_DIR/snap.$port")
	# values: equal, or grown by at most the frames of a stray packet
	bad=$(paste -d' ' "$T_DIR/snap.$port" "$T_DIR/eth.$port" |
		awk '$1 != $3 || $4 < $2 || $4 - $2 > 1000 { print }')
	check "$port: ethtool values equal ethtool -S ($bad)" test -z "$bad"

	ip -n "$ns" -s -j link show "$ifc" | jq -r '.[0].stats64 |
		"rx_bytes \(.rx.bytes)\nrx_packets \(.rx.packets)\nrx_errors \(.rx.errors)\nrx_dropped \(.rx.dropped)\nmulticast \(.rx.multicast)\ntx_bytes \(.tx.bytes)\ntx_packets \(.tx.packets)\ntx_errors \(.tx.errors)\ntx_dropped \(.tx.dropped)\ncollisions \(.tx.collisions)\ntx_carrier_errors \(.tx.carrier_errors)"' > "$T_DIR/ip.$port"
	mism=""
	while read -r name val; do
		got=$(jq -r ".ports.$port.sources.netdev.$name" "$T_DIR/snap.json")
		if [ "$got" = null ] || [ "$val" -lt "$got" ] || [ $((val - got)) -gt 2000 ]; then
			mism="$mism $name=$got/$val"
		fi
	done < "$T_DIR/ip.$port"
	check "$port: netdev stats64 equal ip -s link ($mism)" test -z "$mism"
	check "$port: rx_packets > 0 after ping" \
		jqe ".ports.$port.sources.netdev.rx_packets >= 5" "$T_DIR/snap.json"
	check "$port: identity driver veth" \
		jqe ".ports.$port.identity.driver == \"veth\"" "$T_DIR/snap.json"
done

# status and counters
check "status lists two ports up" \
	bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.ports[] | select(.state == \"up\")] | length == 2'"
ctl status > "$T_DIR/status.txt"
check "text status names the ports" grep -q "^srv  *vB" "$T_DIR/status.txt"
ip netns exec "$A" ping -c 3 -i 0.05 -q 10.201.0.2 >/dev/null
sleep 0.6
ctl -j counters srv --window 2 > "$T_DIR/d.json"
check "counters --window shows rx_packets delta of the pings" \
	jqe '.sources.netdev.rx_packets.delta >= 3 and .mode == "deltas"' "$T_DIR/d.json"
ctl -j counters srv --changed --window 30 > "$T_DIR/c.json"
check "counters --changed omits counters that did not move" \
	jqe '(.sources.netdev | has("rx_crc_errors") | not) and (.sources.netdev | has("rx_packets"))' "$T_DIR/c.json"
# the carrier's counts (IFLA_CARRIER_*), as sysfs gives them: the peer
# taken down and up flaps srv's carrier (veth_close: netif_carrier_off of
# the peer)
carrier() { ip netns exec "$B" sh -c 'cd /sys/class/net/vB && echo $(cat carrier_changes) $(cat carrier_down_count) $(cat carrier_up_count)'; }
c0=$(carrier)
ip -n "$A" link set vA down && ip -n "$A" link set vA up
wait_for 5 bash -c "$(declare -f carrier); B=$B; [ \"\$(carrier)\" != '$c0' ]"
sleep 0.5
ctl -j counters srv --window 2 > "$T_DIR/f.json"
want=$(carrier)
got=$(jq -r '.sources.netdev | "\(.carrier_changes.value) \(.carrier_down_count.value) \(.carrier_up_count.value)"' "$T_DIR/f.json")
check "srv: the carrier's changes, downs and ups as sysfs has them ($got / $want)" test "$got" = "$want"
check "srv: the flap is in the window's deltas (down +1, up +1)" \
	jqe '.sources.netdev.carrier_down_count.delta == 1 and .sources.netdev.carrier_up_count.delta == 1' "$T_DIR/f.json"
check "counters for an unknown port names it" \
	bash -c "'$NICSTALLCTL' -s '$T_SOCK' counters nope 2>&1 | grep -q \"no port 'nope' (configured: cli, srv)\""
check "recorder depth reported" \
	bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.ports[0].recorder.capacity == 601 and .ports[0].recorder.bytes > 0'"
kill -TERM "$T_DPID"
wait "$T_DPID"
check "SIGTERM stops the daemon with status 0" test $? -eq 0
check "daemon logged its stop" grep -q "stopped" "$T_DIR/daemon.log"
check "control socket removed on exit" test ! -e "$T_SOCK"
