#!/bin/bash
# Faults in the middle of an investigation (issue #12): an external probe
# that hangs and one that prints without end; a watched port's namespace
# deleted; the interface renamed, then deleted. Each time the sequence
# finishes, the record and a bundle are kept, the port says why it is down,
# the other ports and `status` go on, and the daemon does not crash.
# (A full or read-only state directory: test_bundle_faults.sh and
# test_bundle's unit tests; an engine truncating its table:
# test_hostile_tables.sh; SIGKILL mid-sequence: test_bundle_faults.sh and
# test_tc_cleanup.sh.)
. "$(dirname "$0")/lib.sh"
t_init
P=$T_PREFIX
for i in 1 2 3; do
	netns_pair "${P}a$i" "${P}b$i" vA$i vB$i 10.215.$i.1 10.215.$i.2 || { fail "namespace pair $i"; exit 1; }
done
STATE=$T_DIR/state
mkdir -p "$T_DIR/flows"
conf_daemon "incident_cooldown = 0s" "observe_window = 300ms" "capture_time = 3s" \
	"release_wait = 200ms" "probe_timeout = 1s" > "$T_DIR/n.conf"
for i in 1 2 3; do
	cat >> "$T_DIR/n.conf" <<CONF
[port p$i]
netns = ${P}a$i
interface = vA$i
flows = tcp port 1250$i
track = engine
peer_address = 10.215.$i.2
promisc_capture = no
CONF
	# named for this run: another run's probes on the host are not ours
	[ "$i" = 1 ] && printf 'probe = sleep 600.%s\nprobe = yes nicstall-flood-%s\n' $$ $$ >> "$T_DIR/n.conf"
done
start_daemon "$T_DIR/n.conf" || exit 1
check "three ports up" wait_for 10 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.ports[] | select(.state == \"up\")] | length == 3'"

# storm I: three sessions of port p$I that stall and stay stalled
storm() {
	ip netns exec "${P}a$1" "$BUILD/flowstorm" --dir "$T_DIR/flows" --name "f$1" --sessions 3 --local 10.215.$1.1 \
		--remote 10.215.$1.2 --port 1250$1 --healthy-ms 600 --stall-ms 20000 --release-ms 100 \
		> "$T_DIR/storm$1.out" 2>&1 &
	T_PIDS+=($!)
}
# inv_state PORT: the state of the newest investigation of PORT
inv_state() { ctl -j incident list | jq -r --arg p "$1" '[.investigations[] | select(.port == $p)] | last | .state // empty'; }
running() { local s; s=$(inv_state "$1"); [ -n "$s" ] && [ "$s" != complete ]; }
complete() { [ "$(inv_state "$1")" = complete ]; }
record() { ctl -j incident show "$(ctl -j incident list | jq -r --arg p "$1" '[.investigations[] | select(.port == $p)] | last | .id')"; }
# status timed while something happens: "rc ms" lines in FILE
probe_status() {
	while [ ! -e "$1.stop" ]; do
		local t0 rc
		t0=$(date +%s%N)
		timeout 3 "$NICSTALLCTL" -s "$T_SOCK" status > /dev/null 2>&1
		rc=$?
		echo "$rc $(( ($(date +%s%N) - t0) / 1000000 ))" >> "$1"
		sleep 0.1
	done
}
answered() { [ "$(wc -l < "$1")" -gt 3 ] && ! awk '$1 != 0 { bad = 1 } END { exit !bad }' "$1"; }
maxms() { awk '$2 > m { m = $2 } END { print m + 0 }' "$1"; }

# ---- 1: a probe that hangs, one that floods ----
probe_status "$T_DIR/lat1" & T_PIDS+=($!)
storm 1
check "1: an investigation of p1 starts" wait_for 20 running p1
check "1: it completes, the hanging probe notwithstanding" wait_for 30 complete p1
touch "$T_DIR/lat1.stop"
record p1 > "$T_DIR/rec1.json"
check "1: the hanging probe was stopped at its timeout" \
	jqe '[.record.probes[] | select(.argv[0] == "sleep")] | length == 1 and (.[0].timed_out == true)' "$T_DIR/rec1.json"
check "1: the flood was cut at the output cap (64 KiB)" \
	jqe '[.record.probes[] | select(.argv[0] == "yes")][0] | (.output | length) <= 65536 and .truncated == true' "$T_DIR/rec1.json"
check "1: no probe process is left" bash -c "! pgrep -f '^yes nicstall-flood-$$\$' >/dev/null && ! pgrep -x -f 'sleep 600\.$$' >/dev/null" ||
	ps -eo pid,ppid,pgid,stat,etimes,args | grep -E "nicstall-flood-$$\$|sleep 600\.$$\$" | grep -v grep
check "1: a bundle was written" wait_for 10 bash -c "ls '$STATE'/bundles/ | grep -q -- '-p1-'"
check "1: status answered all along (max $(maxms "$T_DIR/lat1") ms)" answered "$T_DIR/lat1"

# ---- 2: the port's namespace deleted mid-investigation ----
probe_status "$T_DIR/lat2" & T_PIDS+=($!)
storm 2
check "2: an investigation of p2 starts" wait_for 20 running p2
ip netns del "${P}b2"           # the peer end goes, and with it vA2
ip netns del "${P}a2"
check "2: the investigation completes" wait_for 30 complete p2
touch "$T_DIR/lat2.stop"
record p2 > "$T_DIR/rec2.json"
check "2: its record is kept" jqe '.record.state == "complete" and (.record.steps | length > 0)' "$T_DIR/rec2.json"
check "2: a bundle was written" wait_for 10 bash -c "ls '$STATE'/bundles/ | grep -q -- '-p2-'"
check "2: the port is down and says why" wait_for 10 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status |
	jqe '.ports[] | select(.name == \"p2\") | .state != \"up\" and (.reason | test(\"${P}a2|vA2\"))'"
check "2: status answered all along (max $(maxms "$T_DIR/lat2") ms)" answered "$T_DIR/lat2"

# ---- 3: the interface renamed, then deleted, mid-investigation ----
storm 3
check "3: an investigation of p3 starts" wait_for 20 running p3
ip -n "${P}a3" link set vA3 down
ip -n "${P}a3" link set vA3 name vR3
check "3: the renamed interface takes the port down, naming it" wait_for 10 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status |
	jqe '.ports[] | select(.name == \"p3\") | .state != \"up\" and (.reason | test(\"vA3\"))'"
ip -n "${P}a3" link del vR3
check "3: the investigation completes" wait_for 30 complete p3
record p3 > "$T_DIR/rec3.json"
check "3: its record is kept" jqe '.record.state == "complete"' "$T_DIR/rec3.json"
check "3: a bundle was written" wait_for 10 bash -c "ls '$STATE'/bundles/ | grep -q -- '-p3-'"
check "3: nothing was left on the namespace's interfaces" bash -c "! ip -n '${P}a3' link show | grep -q vR3"

# ---- after all of it ----
check "p1 is still watched and up" bash -c "ctl() { '$NICSTALLCTL' -s '$T_SOCK' \"\$@\"; }; ctl -j status |
	jqe '.ports[] | select(.name == \"p1\") | .state == \"up\"'"
n=0; bad=0
for b in "$STATE"/bundles/2*; do n=$((n+1)); "$NICSTALLCTL" verify "$b" >/dev/null 2>&1 || bad=$((bad+1)); done
check "every bundle verifies ($n bundles, $bad bad)" test "$n" -ge 3 -a "$bad" = 0
check "no half bundle or work file is left" bash -c "! compgen -G '$STATE/bundles/.tmp-*' && ! compgen -G '$STATE/work/*.pcap'"
check "the daemon still runs" kill -0 "$T_DPID"
