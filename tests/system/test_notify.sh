#!/bin/bash
# The daemon and its service manager: the test stands in for systemd's
# notification socket (build/notifyrecv) and checks READY=1 from the main
# pid, a STATUS line, RELOADING=1 (with MONOTONIC_USEC) then READY=1 around a
# good and a bad reload (the bad one keeps the running configuration and
# says so in STATUS), nicstallctl reload waiting for the result, WATCHDOG=1
# pings at half WatchdogSec, none while the event loop is blocked on purpose
# (debug-block), pings again after, none at all when no watchdog was asked
# for, and STOPPING=1 at the end.
. "$(dirname "$0")/lib.sh"
t_init
NOTIFYRECV=$BUILD/notifyrecv
printf 'NIC statistics:\n     rx_packets: 1\n' > "$T_DIR/s.txt"
good() { printf '[daemon]\ninterval = 100ms\nrules_dir = %s\nstate_dir = %s\n[port p]\nstats_file = %s\n' \
	"$ROOT/rules" "$T_DIR/state" "$T_DIR/s.txt" > "$T_DIR/n.conf"; }
good
N=$T_DIR/notify.sock
"$NOTIFYRECV" "$N" 120 > "$T_DIR/notify.log" 2>&1 &
T_PIDS+=($!)
wait_for 5 test -S "$N"
T_SOCK=$T_DIR/ctl.sock
# as systemd starts a Type=notify service with WatchdogSec=2s: NOTIFY_SOCKET,
# WATCHDOG_USEC, and WATCHDOG_PID naming the service's main process
NOTIFY_SOCKET=$N WATCHDOG_USEC=2000000 bash -c 'export WATCHDOG_PID=$$; exec "$@"' - \
	"$NICSTALLD" -c "$T_DIR/n.conf" --socket "$T_SOCK" -d >> "$T_DIR/daemon.log" 2>&1 &
T_DPID=$!
T_PIDS+=("$T_DPID")
wait_for 10 ctl status || { fail "the daemon starts"; exit 1; }
msgs() { cut -d' ' -f3- "$T_DIR/notify.log"; }
check "READY=1 arrives" wait_for 5 bash -c "grep -q 'READY=1' '$T_DIR/notify.log'"
check "from the daemon's own pid ($T_DPID, NotifyAccess=main)" \
	bash -c "awk '/READY=1/ { print \$2; exit }' '$T_DIR/notify.log' | grep -qx '$T_DPID'"
check "a STATUS line saying what runs" wait_for 5 bash -c "grep -q 'STATUS=1/1 port(s) up, 0 flow(s) watched, 0 stalled; 0 incident(s)' '$T_DIR/notify.log'"
check "the daemon logs the watchdog it was given" grep -q "watchdog: WatchdogSec=2.000 s, pinging every 1.000 s" "$T_DIR/daemon.log"
sleep 3.5
check "WATCHDOG=1 pings arrive (3 or more in 3.5 s at half of 2 s)" test "$(grep -c 'WATCHDOG=1' "$T_DIR/notify.log")" -ge 3
# gaps between pings: systemd kills the service when one exceeds WatchdogSec
gaps() { awk -v a="$1" -v b="$2" '/WATCHDOG=1/ && $1 >= a && $1 <= b { if (p) { d = $1 - p; if (d > m) m = d } p = $1 } END { printf "%.3f\n", m }' "$T_DIR/notify.log"; }
mx=$(gaps 0 1e12)
check "no gap between pings reaches WatchdogSec (largest ${mx} s)" awk -v m="$mx" 'BEGIN { exit !(m > 0 && m < 2.0) }'

# a good reload, through nicstallctl: it waits, and RELOADING/READY frame it
mark() { printf 'MARK=%s' "$1" | socat -u - "UNIX-SENDTO:$N"; }
mark good-reload
out=$(ctl reload 2>&1); rc=$?
check "nicstallctl reload of a good file: exit 0, 'configuration reloaded'" test "$rc" -eq 0 -a "$out" = "configuration reloaded"
mark good-reload-done
after() { sed -n "/MARK=$1\$/,/MARK=$2\$/p" "$T_DIR/notify.log" | cut -d' ' -f3-; }
after good-reload good-reload-done > "$T_DIR/good.txt"
check "RELOADING=1 with MONOTONIC_USEC, then READY=1" bash -c "grep -n 'RELOADING=1' '$T_DIR/good.txt' | grep -q 'MONOTONIC_USEC=[0-9]' &&
	[ \$(grep -n 'RELOADING=1' '$T_DIR/good.txt' | head -1 | cut -d: -f1) -lt \$(grep -n '^READY=1' '$T_DIR/good.txt' | tail -1 | cut -d: -f1) ]"
check "both before nicstallctl returned" bash -c "grep -q '^READY=1' '$T_DIR/good.txt'"

# a bad reload: exit 1, the error with file and line, the old file stays
printf '[daemon]\ninterval = fast\n[port p]\nstats_file = %s\n' "$T_DIR/s.txt" > "$T_DIR/n.conf"
mark bad-reload
out=$(ctl reload 2>&1); rc=$?
mark bad-reload-done
echo "bad reload: $out"
check "nicstallctl reload of a bad file: exit 1" test "$rc" -eq 1
check "and the error names file and line" bash -c "echo '$out' | grep -q 'n.conf:2: interval'"
after bad-reload bad-reload-done > "$T_DIR/bad.txt"
check "a failed reload is framed by RELOADING=1 and READY=1 too" bash -c "grep -q RELOADING=1 '$T_DIR/bad.txt' && grep -q '^READY=1' '$T_DIR/bad.txt'"
check "STATUS says the reload failed and the previous configuration runs" \
	grep -q 'STATUS=1/1 port(s) up.*; last reload failed: 1 error(s), first: .*n.conf:2: interval' "$T_DIR/bad.txt"
check "the running configuration stays (100 ms sampling)" bash -c "ctl() { '$NICSTALLCTL' -s '$T_SOCK' \"\$@\"; }; [ \"\$(ctl -j status | jq .interval_ms)\" = 100 ]"
# a rule file that does not load fails the reload as a whole
good
mkdir -p "$T_DIR/rules.d"
printf 'rule broken {\n    verdict\n}\n' > "$T_DIR/rules.d/90-bad.rules"
printf 'rules_local_dir = %s\n' "$T_DIR/rules.d" > "$T_DIR/extra"
sed -i "/^\[daemon\]/r $T_DIR/extra" "$T_DIR/n.conf"
sed -i 's/^interval = 100ms/interval = 200ms/' "$T_DIR/n.conf"
out=$(ctl reload 2>&1); rc=$?
check "bad rules: reload exits 1 naming the rule file" bash -c "[ $rc -eq 1 ] && echo '$out' | grep -q '90-bad.rules:2:'"
check "and nothing of the file was applied (still 100 ms)" bash -c "[ \"\$('$NICSTALLCTL' -s '$T_SOCK' -j status | jq .interval_ms)\" = 100 ]"
rm -f "$T_DIR/rules.d/90-bad.rules"
mark hup
kill -HUP "$T_DPID"
check "SIGHUP reloads too: RELOADING=1, READY=1, and the new interval" \
	wait_for 5 bash -c "[ \"\$('$NICSTALLCTL' -s '$T_SOCK' -j status | jq .interval_ms)\" = 200 ] && sed -n '/MARK=hup\$/,\$p' '$T_DIR/notify.log' | grep -q READY=1"
check "after a good reload STATUS no longer mentions the failure" \
	wait_for 5 bash -c "sed -n '/MARK=hup\$/,\$p' '$T_DIR/notify.log' | grep 'STATUS=' | tail -1 | grep -qv 'last reload failed'"

# the loop blocked on purpose: no pings while it is, pings again after
# (each time is that of the mark's own line: the receiver writes it a
# moment after the mark is sent, so the log's last line right after a
# mark may still be an earlier one)
mark_time() {
	wait_for 5 grep -q "MARK=$1\$" "$T_DIR/notify.log" &&
		grep "MARK=$1\$" "$T_DIR/notify.log" | tail -1 | cut -d' ' -f1
}
mark block
t0=$(mark_time block)
printf '{"cmd":"debug-block","ms":5000}\n' | timeout 20 socat -t 15 - "UNIX-CONNECT:$T_SOCK" > "$T_DIR/block.out"
mark block-done
t1=$(mark_time block-done)
check "debug-block answers after the block" grep -q '"ok":true' "$T_DIR/block.out"
check "the loop was blocked about 5 s ($t0 .. $t1)" awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 4.9) }'
inside=$(awk -v a="$t0" -v b="$t1" '/WATCHDOG=1/ && $1 > a + 0.3 && $1 < b - 0.3' "$T_DIR/notify.log" | wc -l)
check "no WATCHDOG=1 while the loop was blocked ($inside)" test "$inside" -eq 0
before=$(awk -v a="$t0" '/WATCHDOG=1/ && $1 > a - 3 && $1 <= a' "$T_DIR/notify.log" | wc -l)
check "pings came in the 3 s before the block ($before)" test "$before" -ge 1
check "pings resume after it" wait_for 4 bash -c "awk -v b='$t1' '/WATCHDOG=1/ && \$1 > b' '$T_DIR/notify.log' | grep -q ."
check "the block is logged" grep -q "debug-block: blocking the event loop for 5000 ms" "$T_DIR/daemon.log"

mark stop
kill -TERM "$T_DPID"
check "STOPPING=1 when it stops" wait_for 5 bash -c "sed -n '/MARK=stop\$/,\$p' '$T_DIR/notify.log' | grep -q STOPPING=1"
wait "$T_DPID" 2>/dev/null

# no WatchdogSec (WATCHDOG_PID of another process): no pings
N2=$T_DIR/notify2.sock
"$NOTIFYRECV" "$N2" 30 > "$T_DIR/notify2.log" 2>&1 &
T_PIDS+=($!)
wait_for 5 test -S "$N2"
good
rm -f "$T_SOCK"
NOTIFY_SOCKET=$N2 WATCHDOG_USEC=500000 WATCHDOG_PID=1 "$NICSTALLD" -c "$T_DIR/n.conf" --socket "$T_SOCK" >> "$T_DIR/daemon.log" 2>&1 &
T_DPID=$!
T_PIDS+=("$T_DPID")
check "a daemon not asked for a watchdog gets ready" wait_for 5 bash -c "grep -q READY=1 '$T_DIR/notify2.log'"
sleep 1.5
check "and sends no WATCHDOG=1" bash -c "! grep -q WATCHDOG=1 '$T_DIR/notify2.log'"
kill -TERM "$T_DPID"
