#!/bin/bash
# A stall whose frames the host's own kernel dropped: the client's egress
# qdisc (htb with a u32 filter putting one session into a class that cannot
# keep up, its pfifo one packet long) drops that session's frames while
# pings and the other sessions pass. The verdict is host-drop, with the
# qdisc's drops in the evidence; "what it is not" names the other verdicts.
. "$(dirname "$0")/lib.sh"
t_init
pair_up 10.214.0 || exit 1
{
	conf_daemon "interval = 250ms" "journal_dir = $T_DIR/journal" "incident_cooldown = 0s" \
		"capture_time = 250ms" "release_wait = 500ms"
	conf_port cli "flows = tcp port 11131-11132" "peer = srv"
	conf_port srv "flows = tcp port 11131-11132" "peer = cli"
} > "$T_DIR/n.conf"
mkdir -p "$T_DIR/flows" "$T_DIR/state"
start_daemon "$T_DIR/n.conf" || exit 1
check "the kernel-drops source reads the port" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.ports[] | .sources[] | select(.name == \"kernel\" and .state == \"ok\" and .counters == 5)] | length == 2' >/dev/null"
sockperf_pair "$A" "$B" 10.214.0.2 11131 2 30
sleep 2
T="ip netns exec $A tc"
$T qdisc add dev vA root handle 1: htb default 10 2>/dev/null
$T class add dev vA parent 1: classid 1:10 htb rate 1gbit 2>/dev/null
$T class add dev vA parent 1: classid 1:20 htb rate 1kbit ceil 1kbit burst 200 cburst 200 2>/dev/null
$T qdisc add dev vA parent 1:20 handle 20: pfifo limit 1
$T filter add dev vA parent 1: protocol ip prio 1 u32 match ip protocol 6 0xff match ip dport 11131 0xffff flowid 1:20
check "the qdisc is in place" bash -c "$T qdisc show dev vA | grep -q htb"
rec() {
	local id
	for id in $(ctl -j incident list | jq -r '.investigations[].id'); do
		ctl -j incident show "$id" | jqe 'select(.record.state == "complete")' > "$T_DIR/rec.json" 2>/dev/null && return 0
	done
	return 1
}
check "an investigation completes" wait_for 30 bash -c "$(declare -f rec ctl); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' T_DIR='$T_DIR' rec"
$T qdisc del dev vA root
jq -c '.record.verdict | {verdict, explanation}' "$T_DIR/rec.json"
check "verdict host-drop" jqe '.record.verdict.verdict == "host-drop"' "$T_DIR/rec.json"
check "the qdisc's drops are in the facts" jqe '.record.facts.ports.cli.stall.counters["qdisc/drops"] > 0 or .record.facts.ports.cli.window.counters["qdisc/drops"] > 0' "$T_DIR/rec.json"
check "the explanation names the qdisc" jqe '.record.verdict.explanation | test("the host.s kernel dropped [0-9]+ frames") and test("qdisc [0-9]+")' "$T_DIR/rec.json"
check "kernel pings passed (not kernel-path-down)" jqe '[.record.pings[].received] | min > 0' "$T_DIR/rec.json"
check "what it is not: port-drop, engine-hold and the others" jqe '[.record.verdict.not[].verdict] | (index("port-drop") != null and index("engine-hold") != null and index("buffer-drop") != null)' "$T_DIR/rec.json"
b=$(jq -r '.record.bundle' "$T_DIR/rec.json")
check "the bundle verifies and classify reproduces it" bash -c "'$NICSTALLCTL' verify '$b' >/dev/null && '$NICSTALLCTL' classify '$b' --rules '$ROOT/rules' | grep -q 'identical to the recorded'"
check "daemon alive" kill -0 "$T_DPID"
