#!/bin/bash
# Foundation: every counter of every real `ethtool -S` dump (through the
# recorded-text source) and of the real mlx5 sysfs hw_counters tree
# (through --sysfs-root) is read with its exact value.
. "$(dirname "$0")/lib.sh"
t_init
FIX=$ROOT/tests/fixtures/real
"$ROOT/tests/tools/ttar-unpack" "$FIX/sysfs-infiniband-hw_counters_mlx5_0_procfs-fixture.ttar.txt" "$T_DIR/sysroot"
check "ttar fixture unpacked" test -d "$T_DIR/sysroot/fixtures/sys/class/infiniband/mlx5_0/ports/1/hw_counters"
{
	printf '[daemon]\ninterval = 200ms\n'
	i=0
	for f in "$FIX"/ethtool-S_*.txt; do
		i=$((i+1))
		printf '[port f%d]\nstats_file = %s\nrdma_device = none\n' "$i" "$f"
	done
	printf '[port ib]\nstats_file = %s\nrdma_device = mlx5_0\nrdma_port = 1\n' "$FIX/ethtool-S_mlx5-cx4lx-k4.15-ethq_1.txt"
} > "$T_DIR/n.conf"
start_daemon "$T_DIR/n.conf" --sysfs-root "$T_DIR/sysroot/fixtures" || exit 1
sleep 0.5
ctl -j snapshot > "$T_DIR/snap.json"
i=0
for f in "$FIX"/ethtool-S_*.txt; do
	i=$((i+1))
	# independent reading of the dump: every "name: number" line
	grep -E '^[[:space:]]*[^#:[:space:]][^:]*:[[:space:]]*[0-9]+[[:space:]]*$' "$f" |
		sed -E 's/^[[:space:]]*//; s/:[[:space:]]*([0-9]+)[[:space:]]*$/\t\1/' |
		awk -F'\t' '!seen[$1]++' > "$T_DIR/want.$i"
	jq -r ".ports.f$i.sources.text | to_entries[] | \"\(.key)\t\(.value)\"" "$T_DIR/snap.json" |
		sort > "$T_DIR/got.$i"
	n=$(wc -l < "$T_DIR/want.$i")
	check "$(basename "$f"): all $n counters with exact values" \
		cmp -s <(sort "$T_DIR/want.$i") "$T_DIR/got.$i"
done
check "ConnectX-4 Lx rx_packets_phy exact" \
	jqe '.ports.f5.sources.text.rx_packets_phy == 845715962' "$T_DIR/snap.json"
hw=$T_DIR/sysroot/fixtures/sys/class/infiniband/mlx5_0/ports/1
bad=""; n=0
for d in hw_counters counters; do
	[ -d "$hw/$d" ] || continue
	for c in "$hw/$d"/*; do
		n=$((n+1))
		want=$(tr -d '\n' < "$c")
		got=$(jq -r ".ports.ib.sources.rdma[\"$d/$(basename "$c")\"]" "$T_DIR/snap.json")
		[ "$want" = "$got" ] || bad="$bad $d/$(basename "$c")=$got/$want"
	done
done
check "sysfs hw_counters: all $n counters exact ($bad)" test -z "$bad" -a "$n" -gt 20
check "identity of the RDMA device from sysfs (fw_ver)" \
	bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.ports[] | select(.name==\"ib\") | .rdma_device == \"mlx5_0\"'"

# a recorded file replaced atomically with garbage, then a good one again
cp "$FIX/ethtool-S_sfc-ethq_1.txt" "$T_DIR/live.txt"
cat >> "$T_DIR/n.conf" <<CONF
[port live]
stats_file = $T_DIR/live.txt
CONF
kill -HUP "$T_DPID"
wait_for 5 bash -c "'$NICSTALLCTL' -s '$T_SOCK' counters live >/dev/null"
printf 'NIC statistics:\n     rx_packets: 12\n     garbage here\n' > "$T_DIR/g.txt"; mv "$T_DIR/g.txt" "$T_DIR/live.txt"
check "garbage file reported with file and line" wait_for 5 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jq -r '.ports[] | select(.name==\"live\") | .sources[0].error' | grep -q 'live.txt:3'"
check "daemon alive after garbage" kill -0 "$T_DPID"
printf 'NIC statistics:\n     rx_packets: 99\n' > "$T_DIR/g.txt"; mv "$T_DIR/g.txt" "$T_DIR/live.txt"
check "good file read again" wait_for 5 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j snapshot live | jqe '.ports.live.sources.text.rx_packets == 99'"
: > "$T_DIR/live.txt"
check "empty (truncated) file reported" wait_for 5 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jq -r '.ports[] | select(.name==\"live\") | .sources[0].state' | grep -q error"
rm -f "$T_DIR/live.txt"
check "missing file reported by name" wait_for 5 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jq -r '.ports[] | select(.name==\"live\") | .sources[0].error' | grep -q 'live.txt'"
