#!/bin/bash
# Flow liveness through engine flow tables: the example engine publishes its
# sessions; one stops at its first order, another after thousands of round
# trips (seed 000 saw both), siblings run on. One incident holds both.
. "$(dirname "$0")/lib.sh"
t_init
A=${T_PREFIX}a B=${T_PREFIX}b
netns_pair "$A" "$B" vA vB 10.205.0.1 10.205.0.2 || { fail "namespace pair"; exit 1; }
mkdir -p "$T_DIR/flows"
cat > "$T_DIR/n.conf" <<CONF
[daemon]
flow_interval = 50ms
flows_dir = $T_DIR/flows
incident_timeout = 30s
[port cli]
netns = $A
interface = vA
flows = tcp port 12001
track = engine
peer = srv
[port srv]
netns = $B
interface = vB
flows = tcp port 12001
track = engine
peer = cli
CONF
start_daemon "$T_DIR/n.conf" || exit 1
ip netns exec "$B" "$BUILD/nsengine" server --listen 10.205.0.2:12001 --table-dir "$T_DIR/flows" > "$T_DIR/srv.log" 2>&1 &
T_PIDS+=($!)
wait_for 5 bash -c "ip netns exec $B ss -ltn | grep -q ':12001 '"
ip netns exec "$A" "$BUILD/nsengine" client --connect 10.205.0.2:12001 --sessions 4 --interval-us 500 \
	--duration 20 --mute-after 1:0 --mute-after 2:3000 --table-dir "$T_DIR/flows" > "$T_DIR/cli.log" 2>&1 &
T_PIDS+=($!)
check "engine tables appear in status" wait_for 5 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.flow_sources.tables | length == 2'"
check "session 1 stalls at its first order" wait_for 5 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j flows cli --stalled | jqe '[.flows[] | select(.source==\"engine\" and .tx_msgs == 1 and .rx_msgs == 0)] | length == 1'"
check "one incident opened" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.incidents | length == 1'"
check "session 2 stalls after thousands of round trips and joins it" wait_for 15 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j flows cli --stalled | jqe '[.flows[] | select(.source==\"engine\" and .rx_msgs >= 3000 and .tx_msgs == .rx_msgs + 1)] | length == 1'"
ctl -j status > "$T_DIR/st.json"
jq '.incidents' "$T_DIR/st.json"
check "still one incident, holding both stalled sessions" jqe '.incidents | length == 1 and (.[0].flows | map(select(.source=="engine")) | length == 2)' "$T_DIR/st.json"
check "siblings (sessions 0 and 3) progressing" jqe '.incidents[0].siblings_progressing == 2' "$T_DIR/st.json"
check "the engine holds nothing for the stalled sessions" jqe '[.incidents[0].flows[] | .unsent + .unread + .staged] | add == 0' "$T_DIR/st.json"
check "stalled flows carry the engine name and pid" jqe '.incidents[0].flows | all(.engine == "nsengine" and .pid > 0)' "$T_DIR/st.json"
s0=$(ctl -j flows cli | jq '[.flows[] | select(.source=="engine" and .state != "stalled") | .rx_msgs] | add')
sleep 0.5
s1=$(ctl -j flows cli | jq '[.flows[] | select(.source=="engine" and .state != "stalled") | .rx_msgs] | add')
check "sibling sessions still progressing ($s0 -> $s1)" test "$s1" -gt "$s0"
