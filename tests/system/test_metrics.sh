#!/bin/bash
# Prometheus metrics: the textfile the daemon writes passes promtool check
# metrics, holds what happened (a port-vs-vport gap and buffer drops put into
# a recorded mlx5 port, a stall on a namespace pair with its verdict and
# reprogram, a port that is down), is never seen half-written, and is
# scraped through a real node_exporter textfile collector the test starts on
# a loopback port; the file goes when the daemon stops.
. "$(dirname "$0")/lib.sh"
t_init
A=${T_PREFIX}a B=${T_PREFIX}b
netns_pair "$A" "$B" vA vB 10.213.0.1 10.213.0.2 || { fail "namespace pair"; exit 1; }
stats() {
	printf 'NIC statistics:\n     rx_packets_phy: %s\n     rx_vport_unicast_packets: %s\n     rx_out_of_buffer: %s\n' \
		"$1" "$2" "$3" > "$T_DIR/s.new" && mv "$T_DIR/s.new" "$T_DIR/s.txt"
}
stats 1000 1000 0
mkdir -p "$T_DIR/textfile"
F=$T_DIR/textfile/nicstalld.prom
cat > "$T_DIR/n.conf" <<CONF
[daemon]
interval = 250ms
state_dir = $T_DIR/state
flows_dir = $T_DIR/flows
rules_dir = $ROOT/rules
reprogram_interval = 0s
capture_time = 100ms
metrics_file = $F
metrics_interval = 1s
[port nic]
stats_file = $T_DIR/s.txt
profile = mlx5
[port cli]
netns = $A
interface = vA
flows = tcp port 11111-11112
peer = srv
peer_address = 10.213.0.2
[port srv]
netns = $B
interface = vB
flows = tcp port 11111-11112
peer = cli
peer_address = 10.213.0.1
recover = reprogram
[port gone]
netns = $A
interface = nosuch0
CONF
start_daemon "$T_DIR/n.conf" || exit 1
check "the metrics file appears" wait_for 5 test -s "$F"
val() { awk -v s="$1" 'index($0, s " ") == 1 { print $2; found = 1 } END { if (!found) print "none" }' "$F"; }
sleep 1
stats 1500 1000 7               # 500 frames lost between port and vport, 7 buffer drops
check "the gap reaches the metric (500 frames)" wait_for 5 bash -c "[ \"\$(awk 'index(\$0, \"nicstalld_port_frames_gap_total{port=\\\"nic\\\"} \") == 1 { print \$2 }' '$F')\" = 500 ]"
check "buffer drops by kind (7)" test "$(val 'nicstalld_port_drops_total{port="nic",kind="buffer"}')" = 7
check "a down port is 0, an up one 1" test "$(val 'nicstalld_port_up{port="gone"}')" = 0 -a "$(val 'nicstalld_port_up{port="nic"}')" = 1

# a stall with its investigation
sockperf_pair "$A" "$B" 10.213.0.2 11111 2 60
sleep 2
check "flows watched on srv" wait_for 5 bash -c "awk -F'} ' '/^nicstalld_port_flows\\{port=\"srv\"/ { n += \$2 } END { exit !(n >= 2) }' '$F'"
nft_drop "$B" tcp dport 11111
T_CLEANUP+=("nft_clear $B")
check "an incident is counted" wait_for 10 bash -c "grep -qE '^nicstalld_port_incidents_opened_total\\{port=\"(srv|cli)\"\\} [1-9]' '$F'"
check "a stalled flow shows in the flows gauge" wait_for 5 bash -c "grep -qE '^nicstalld_port_flows\\{port=\"(srv|cli)\",state=\"stalled\"\\} [1-9]' '$F'"
check "the investigation completes" wait_for 20 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j incident show 2>/dev/null | jq -en 'input | .record.state == \"complete\" and .record.bundle != null' >/dev/null"
verdict=$(ctl -j incident show | jq -r '.record.verdict.verdict')
port=$(ctl -j incident show | jq -r '.record.port')
check "incidents by verdict: $port $verdict" wait_for 5 bash -c "grep -qE '^nicstalld_port_incidents_total\\{port=\"$port\",verdict=\"$verdict\"\\} 1\$' '$F'"
check "the reprogram is a performed recovery of srv" \
	wait_for 5 bash -c "grep -qE '^nicstalld_port_recoveries_total\\{port=\"srv\",action=\"reprogram\",outcome=\"performed\"\\} [1-9]' '$F'"
ts=$(awk -v p="$port" '$0 ~ "^nicstalld_port_last_incident_timestamp_seconds\\{port=\"" p "\"\\}" { print $2 }' "$F")
check "the last incident's time is now (${ts:-none})" awk -v t="${ts:-0}" -v n="$(date +%s)" 'BEGIN { exit !(t > n - 120 && t <= n + 1) }'
check "the daemon's own CPU time is counted" awk '/^nicstalld_cpu_seconds_total\{mode="user"\}/ { f = $2 > 0 } END { exit !f }' "$F"
check "sample cost per port" awk '/^nicstalld_port_sample_seconds_total\{port="srv"\}/ { f = $2 > 0 } END { exit !f }' "$F"
nft_clear "$B"

# promtool: format and naming conventions
cp "$F" "$T_DIR/copy.prom"
promtool check metrics < "$T_DIR/copy.prom" > "$T_DIR/promtool.out" 2>&1
rc=$?
cat "$T_DIR/promtool.out"
check "promtool check metrics: valid, no lint complaint" test "$rc" -eq 0 -a ! -s "$T_DIR/promtool.out"
check "and it does complain about a broken copy (the check can fail)" \
	bash -c "sed 's/_total{/{/' '$T_DIR/copy.prom' | promtool check metrics >/dev/null 2>&1; [ \$? -ne 0 ]"
# never half a file: read it while it is rewritten every second
bad=0
for i in $(seq 1 400); do
	c=$(cat "$F" 2>/dev/null) || { bad=$((bad+1)); continue; }
	case "$c" in "# HELP nicstalld_build_info"*"# HELP nicstalld_port_last_incident_timestamp_seconds"*) ;; *) bad=$((bad+1)) ;; esac
	[ $((i % 40)) = 0 ] && sleep 0.2
done
check "400 reads during rewrites all saw a complete file ($bad not)" test "$bad" -eq 0
check "the file is world-readable (the collector's user)" test "$(stat -c %a "$F")" = 644

# a real node_exporter, textfile collector only, on loopback
for try in 1 2 3 4 5; do
	P=$((20000 + RANDOM % 20000))
	prometheus-node-exporter --web.listen-address="127.0.0.1:$P" --collector.disable-defaults \
		--collector.textfile --collector.textfile.directory="$T_DIR/textfile" > "$T_DIR/ne.log" 2>&1 &
	NE=$!
	T_PIDS+=("$NE")
	wait_for 5 curl -sf "http://127.0.0.1:$P/metrics" && break
	kill "$NE" 2>/dev/null
done
curl -sf "http://127.0.0.1:$P/metrics" > "$T_DIR/scrape.txt"
check "node_exporter serves the textfile collector on 127.0.0.1:$P" grep -q '^node_textfile_scrape_error 0$' "$T_DIR/scrape.txt" || tail -5 "$T_DIR/ne.log"
check "the scrape holds nicstalld's metrics" grep -q '^nicstalld_port_frames_gap_total{port="nic"} 500$' "$T_DIR/scrape.txt"
check "with their types" grep -q '^# TYPE nicstalld_port_incidents_total counter$' "$T_DIR/scrape.txt"
kill -TERM "$T_DPID"
check "the file is removed when the daemon stops" wait_for 5 test ! -e "$F"
curl -sf "http://127.0.0.1:$P/metrics" > "$T_DIR/scrape2.txt"
check "and the next scrape has no stale nicstalld numbers" bash -c "! grep -q '^nicstalld_' '$T_DIR/scrape2.txt'"
