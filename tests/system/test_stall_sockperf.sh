#!/bin/bash
# Flow liveness: sockperf TCP ping-pong with three sessions between two
# namespaces; dropping one session's frames at the server's ingress makes
# the daemon report exactly that flow stalled (within the threshold plus
# one poll), its siblings progressing, one incident, and its release with
# the measured stall duration when the drop is lifted.
. "$(dirname "$0")/lib.sh"
t_init
A=${T_PREFIX}a B=${T_PREFIX}b
netns_pair "$A" "$B" vA vB 10.204.0.1 10.204.0.2 || { fail "namespace pair"; exit 1; }
cat > "$T_DIR/n.conf" <<CONF
[daemon]
interval = 250ms
flow_interval = 50ms
stall_threshold = 200ms
flows_dir = $T_DIR/flows
[port cli]
netns = $A
interface = vA
flows = tcp port 11111-11113
peer = srv
[port srv]
netns = $B
interface = vB
flows = tcp port 11111-11113
peer = cli
CONF
start_daemon "$T_DIR/n.conf" || exit 1
sockperf_pair "$A" "$B" 10.204.0.2 11111 3 25
nsock() { jflows cli | jq -r 'select(.source=="sock") | .tuple' | sort -u | wc -l; }
check "three sessions visible through sock_diag" wait_for 10 bash -c "[ \$($(declare -f ctl jflows nsock); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' nsock) -ge 3 ]"
sleep 1
check "no stall while healthy" test "$(ctl -j flows --stalled | jq '.flows | length')" = 0
# TCP-only selectors: the tracker's flows are evidence, its hooks on only
# while a watched flow waits (tracker_hooks = on-wait, the default)
hooks() { tracker_progs "$1" "$2"; }
H="$(declare -f hooks tracker_progs); BUILD='$BUILD'"
# healthy traffic rarely waits 100 ms, but a loaded machine may: the
# programs on the ports are what status says, and are off when it says
# off. Status and the ports are read one after the other, so a hook that
# comes or goes in between is read again (agreement within 3 s).
agree() {
	local n
	n=$(ctl -j status | jq '[.flow_sources.cost[] | select(.source == "bpf") | .hooks | select(startswith("on"))] | length')
	[ "$( { hooks "$A" vA; hooks "$B" vB; } | grep -c ft_)" = $((n * 2)) ] && echo "$n"
}
nhooked=""
for _ in $(seq 30); do nhooked=$(agree) && break; sleep 0.1; done
echo "ports with tracker hooks on while healthy: ${nhooked:-?} (of 2)"
check "healthy: tracker programs on the ports as status says (${nhooked:-disagree})" test -n "$nhooked"
check "status: the tracker hooks with tcx links (this kernel has them)" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.flow_sources.cost[] | select(.source == \"bpf\") | .attach] == [\"tcx links\", \"tcx links\"]'"
check "status: the tracker waits for a wait (on-wait)" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.flow_sources.cost[] | select(.source == \"bpf\") | .hooks_on | numbers] | length == 2'"
victim=$(jflows cli | jq -r 'select(.source=="sock") | .tuple' | grep ':11112$' | head -1)
vport=$(echo "$victim" | sed -E 's/^tcp [0-9.]+:([0-9]+) .*/\1/')
echo "victim: $victim (client port $vport)"
nft_drop "$B" tcp sport "$vport"
T_CLEANUP+=("nft_clear $B")
check "an incident opens" wait_for 5 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.incidents | length == 1'"
sleep 1
ctl -j status > "$T_DIR/st.json"
ctl -j flows --stalled > "$T_DIR/stalled.json"
jq . "$T_DIR/st.json" | sed -n '/incidents/,$p' | head -60
check "only the victim's connection is stalled" \
	jqe --arg p ":$vport " '[.flows[].tuple + " "] | all(contains($p))' "$T_DIR/stalled.json"
check "and it is stalled" jqe '.flows | length >= 1' "$T_DIR/stalled.json"
check "the incident lists only the victim's connection" \
	jqe --arg p ":$vport" '.incidents[0].flows | all(.tuple | contains($p))' "$T_DIR/st.json"
check "siblings kept progressing (2)" jqe '.incidents[0].siblings_progressing == 2' "$T_DIR/st.json"
lat=$(jq '.incidents[0] as $i | ([$i.flows[].stalled_at_mono_ns] | min) as $s | ($i.opened_mono_ns - $s) / 1000000' "$T_DIR/st.json")
echo "stall declared ${lat} ms after the wait began (threshold 200 ms, poll 50 ms)"
check "declared within threshold + one poll (+20 ms scheduling slack): ${lat} ms" \
	awk -v l="$lat" 'BEGIN { exit !(l >= 200 && l <= 270) }'
sleep 1.5       # several retransmissions meanwhile
check "still one incident despite retransmissions" test "$(ctl -j status | jq '.incidents | length')" = 1
check "stalled: the tracker hooked on the server's port" bash -c "{ $H; hooks $B vB; } | grep -c ft_ | grep -qx 2"
check "stalled: the tracker hooked on the client's port" bash -c "{ $H; hooks $A vA; } | grep -c ft_ | grep -qx 2"
# the drop is after tc ingress (nft prerouting): the server's tracker counts
# the victim's retransmissions arriving while its socket sees nothing
check "the server's tracker counts the victim's frames arriving" wait_for 3 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j flows srv | jqe --arg p ':$vport' '[.flows[] | select(.source == \"bpf\" and (.tuple | contains(\$p)))] | length == 1 and .[0].rx_msgs >= 1'"
nft_clear "$B"
check "the flow is released when the drop is lifted" wait_for 10 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.incidents[0].state == \"released\"'"
ctl -j status > "$T_DIR/st2.json"
dur=$(jq '[.incidents[0].flows[].stall_ms] | max' "$T_DIR/st2.json")
echo "measured stall: ${dur} ms"
check "released flow carries its stall duration (>= 2.5 s)" awk -v d="$dur" 'BEGIN { exit !(d >= 2500) }'
check "the daemon logged the release" grep -q "released after" "$T_DIR/daemon.log"
check "flows report the last stall" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j flows cli | jqe '[.flows[] | select(.last_stall_ms != null)] | length >= 1'"
check "text flows view" bash -c "'$NICSTALLCTL' -s '$T_SOCK' flows srv | grep -q '^srv  *sock  *tcp 10.204.0.2:1111[123]'"
check "released: the hooks come off again (5 s after the last wait)" wait_for 12 bash -c "! { $H; hooks $A vA; hooks $B vB; } | grep -q ft_"
check "and the daemon logged both" bash -c "grep -q 'tracker hooks on: a watched flow waits' '$T_DIR/daemon.log' && grep -q 'tracker hooks off' '$T_DIR/daemon.log'"
