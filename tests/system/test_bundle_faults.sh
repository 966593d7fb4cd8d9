#!/bin/bash
# Bundles under faults: a full state directory leaves no partial bundle, a
# running daemon that logs why, and a bundle written once space returns; a
# daemon killed with SIGKILL while writing leaves no half bundle after its
# restart.
. "$(dirname "$0")/lib.sh"
t_init
pair_up 10.210.0 || exit 1
mkdir -p "$T_DIR/state" "$T_DIR/flows"
mount -t tmpfs -o size=512k,mode=0750 tmpfs "$T_DIR/state" || { fail "mount tmpfs"; exit 1; }
T_CLEANUP+=("umount -l $T_DIR/state")
{
	conf_daemon "incident_cooldown = 0s" "observe_window = 100ms" "capture_time = 100ms" \
		"release_wait = 100ms"
	conf_port cli "flows = tcp port 12001" "track = engine"
} > "$T_DIR/n.conf"
start_daemon "$T_DIR/n.conf" || exit 1
ip netns exec "$B" "$BUILD/nsengine" server --listen 10.210.0.2:12001 --table-dir "$T_DIR/flows" > /dev/null 2>&1 &
T_PIDS+=($!)
wait_for 5 bash -c "ip netns exec $B ss -ltn | grep -q ':12001 '"
# stall N: one client whose session 0 stops listening after 20 round trips
stall() {
	ip netns exec "$A" "$BUILD/nsengine" client --connect 10.210.0.2:12001 --sessions 2 \
		--interval-us 1000 --duration "$1" --mute-after 0:20 --table-dir "$T_DIR/flows" > /dev/null 2>&1 &
	T_PIDS+=($!)
}
nbundles() { ls -d "$T_DIR"/state/bundles/2* 2>/dev/null | wc -l; }
# wait until no incident is open (its flows closed with their client)
settle() { wait_for 30 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.incidents[] | select(.state == \"open\")] | length == 0' >/dev/null"; }

# fill the state directory, leaving ~8 KiB
head -c $((500 * 1024)) /dev/zero > "$T_DIR/state/filler" 2>/dev/null
stall 3
check "an incident on a full disk is logged with the reason" \
	wait_for 15 grep -q "bundle not written: .*No space left on device" "$T_DIR/daemon.log"
check "no partial bundle remains" bash -c "[ \$(ls -A '$T_DIR/state/bundles' 2>/dev/null | wc -l) = 0 ]"
check "the daemon keeps running" kill -0 "$T_DPID"
check "the record stays available" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j incident show | jqe '.record.bundle_error | test(\"No space\")' >/dev/null"
rm -f "$T_DIR/state/filler"
settle
stall 3
check "a bundle is written once space is free" wait_for 15 bash -c "[ \$(ls -d '$T_DIR'/state/bundles/2* 2>/dev/null | wc -l) -ge 1 ]"
b=$(ls -d "$T_DIR"/state/bundles/2* | head -1)
check "and it verifies" "$NICSTALLCTL" verify "$b"
cat "$b/summary.txt" | head -40

# SIGKILL while a bundle is being written: killon holds the daemon in its
# open of the temporary directory (fanotify) and kills it there, so the
# half bundle is certain (a shell loop polling the directory missed a
# write of under a millisecond on a loaded machine, and then waited on a
# daemon that was never killed)
caught=0
for attempt in 1 2 3; do
	settle
	"$BUILD/killon" "$T_DIR/state" /bundles/.tmp- "$T_DPID" 20 > "$T_DIR/killon.out" &
	kpid=$!
	wait_for 5 grep -q watching "$T_DIR/killon.out" ||
		{ echo "attempt $attempt: killon did not start"; kill "$kpid"; wait "$kpid"; continue; }
	stall 3
	wait "$kpid"
	krc=$?
	[ "$krc" = 0 ] || { echo "attempt $attempt: killon exited $krc"; continue; }
	wait "$T_DPID" 2>/dev/null
	compgen -G "$T_DIR/state/bundles/.tmp-*" > /dev/null && { caught=1; break; }
	start_daemon "$T_DIR/n.conf" || exit 1
done
# never caught: the daemon still runs; stop it before the restart below
[ "$caught" = 1 ] || { kill -KILL "$T_DPID"; wait "$T_DPID" 2>/dev/null; }
echo "caught the daemon mid-write: $caught (attempt $attempt)"
check "the daemon was killed while writing a bundle" test "$caught" = 1
check "a half bundle is on disk after the kill" compgen -G "$T_DIR/state/bundles/.tmp-*"
start_daemon "$T_DIR/n.conf" || exit 1
check "after restart no half bundle remains" bash -c "! compgen -G '$T_DIR/state/bundles/.tmp-*'"
check "the restart says so" grep -q "removed 1 unfinished bundle" "$T_DIR/daemon.log"
bad=0
for d in "$T_DIR"/state/bundles/2*; do "$NICSTALLCTL" verify "$d" > /dev/null 2>&1 || bad=$((bad+1)); done
check "every remaining bundle verifies ($bad bad)" test "$bad" = 0
