#!/bin/bash
# The eBPF flow tracker leaves nothing behind: after the daemon exits, and
# after a SIGKILL followed by a restart and a stop, `tc filter show` and
# `tc qdisc show` on the veth are as before it started.
. "$(dirname "$0")/lib.sh"
t_init
A=${T_PREFIX}a B=${T_PREFIX}b
netns_pair "$A" "$B" vA vB 10.207.0.1 10.207.0.2 || { fail "namespace pair"; exit 1; }
cat > "$T_DIR/n.conf" <<CONF
[daemon]
flow_interval = 50ms
flows_dir = $T_DIR/flows
[port srv]
netns = $B
interface = vB
flows = tcp port 11111
track = bpf sock
tracker_hooks = always
CONF
tcstate() {
	for d in ingress egress; do ip netns exec "$B" tc filter show dev vB $d; done
	ip netns exec "$B" tc qdisc show dev vB
}
tcstate > "$T_DIR/before"
attached() { ip netns exec "$B" tc filter show dev vB ingress | grep -q ft_ingress && ip netns exec "$B" tc filter show dev vB egress | grep -q ft_egress; }
start_daemon "$T_DIR/n.conf" || exit 1
check "tracker attached on ingress and egress" wait_for 5 attached
kill -TERM "$T_DPID"; wait "$T_DPID"
tcstate > "$T_DIR/after1"
check "after a clean stop: tc state as before" cmp -s "$T_DIR/before" "$T_DIR/after1"
start_daemon "$T_DIR/n.conf" || exit 1
check "attached again" wait_for 5 attached
kill -KILL "$T_DPID"; wait "$T_DPID" 2>/dev/null
check "after SIGKILL the filters are still there" attached
progid() { ip netns exec "$B" tc filter show dev vB ingress | sed -n 's/.*ft_ingress.* id \([0-9]*\).*/\1/p'; }
old=$(progid)
start_daemon "$T_DIR/n.conf" || exit 1
check "restart replaces the stale filters (program $old -> new)" wait_for 5 bash -c "$(declare -f progid); B=$B; p=\$(progid); [ -n \"\$p\" ] && [ \"\$p\" != '$old' ]"
n=$(ip netns exec "$B" tc filter show dev vB ingress | grep -c ft_ingress)
check "one tracker filter, not two, after the restart ($n)" test "$n" = 1
kill -TERM "$T_DPID"; wait "$T_DPID"
tcstate > "$T_DIR/after2"
check "after SIGKILL + restart + stop: tc state as before" cmp -s "$T_DIR/before" "$T_DIR/after2"
# a pre-existing qdisc with a filter of someone else is left alone
ip netns exec "$B" tc qdisc add dev vB clsact
ip netns exec "$B" tc filter add dev vB ingress prio 7 protocol ip u32 match ip dst 10.207.0.9/32
tcstate > "$T_DIR/before3"
start_daemon "$T_DIR/n.conf" || exit 1
check "attached beside a foreign filter" wait_for 5 attached
kill -TERM "$T_DPID"; wait "$T_DPID"
tcstate > "$T_DIR/after3"
check "the foreign qdisc and filter are kept, ours removed" cmp -s "$T_DIR/before3" "$T_DIR/after3"
