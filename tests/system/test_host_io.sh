#!/bin/bash
# Host resources (issue 29, item 1): a reader starved by the kernel's own
# block I/O throttle (cgroup v1 blkio.throttle.read_iops_device on a loop
# device) shows in the daemon's recorder as the loop device's reads per
# second near the throttle, and as the producer's block I/O delay growing
# with the time it waits; the device's identity and the producer's process
# in the snapshot. A second producer held to 20% of a core by a v1 cpu quota
# shows its CPU time near the quota, its throttled time, and its wait on
# the run queue, not on I/O. Bounded: the reader and the spinner run at most
# 20 and 25 s; the loop device, the cgroups and kernel.task_delayacct are
# restored in the EXIT trap.
. "$(dirname "$0")/lib.sh"
t_init
IOPS=200
BLKIO=/sys/fs/cgroup/blkio
[ -w "$BLKIO/cgroup.procs" ] || { echo "no cgroup v1 blkio hierarchy at $BLKIO: skipped"; exit 0; }
command -v losetup >/dev/null || { echo "no losetup: skipped"; exit 0; }

pair_up 10.213.0 || exit 1
truncate -s 64M "$T_DIR/disk.img"
LOOP=$(losetup -f --show --direct-io=on "$T_DIR/disk.img" 2>/dev/null ||
       losetup -f --show "$T_DIR/disk.img") || { fail "losetup"; exit 1; }
T_CLEANUP+=("losetup -d $LOOP")
DEV=${LOOP#/dev/}
MAJMIN=$(cat "/sys/block/$DEV/dev")
CG=$BLKIO/${T_PREFIX}io
mkdir "$CG" || { fail "mkdir $CG"; exit 1; }
# the reader ends before the cgroup goes (rmdir fails while it has tasks)
T_CLEANUP+=("kill -KILL \$(cat $T_DIR/reader.pid); sleep 0.2; rmdir $CG")
echo "$MAJMIN $IOPS" > "$CG/blkio.throttle.read_iops_device" ||
	{ fail "blkio.throttle.read_iops_device"; exit 1; }
# a CPU-bound producer held to 20% of a core by a v1 cpu quota
CPUCG=/sys/fs/cgroup/cpu/${T_PREFIX}cpu
if [ -w /sys/fs/cgroup/cpu/cgroup.procs ] && mkdir "$CPUCG"; then
	T_CLEANUP+=("kill -KILL \$(cat $T_DIR/spin.pid); sleep 0.2; rmdir $CPUCG")
	echo 100000 > "$CPUCG/cpu.cfs_period_us"
	echo 20000 > "$CPUCG/cpu.cfs_quota_us"
else
	CPUCG=
fi
t_delayacct_up || exit 1

{ conf_daemon "interval = 500ms"
  conf_port cli
  printf '[host]\n[producer reader]\ncgroup = %s\n' "$CG"
  [ -z "$CPUCG" ] || printf '[producer spinner]\ncgroup = %s\n' "$CPUCG"
} > "$T_DIR/n.conf"
start_daemon "$T_DIR/n.conf" || exit 1

# the reader: 4 KiB O_DIRECT reads, one at a time, from inside the cgroup
# (20 s of them at the throttle)
sh -c "echo \$\$ > $CG/cgroup.procs && exec dd if=$LOOP of=/dev/null bs=4k \
	iflag=direct count=$((IOPS * 20))" 2>/dev/null &
echo $! > "$T_DIR/reader.pid"
T_PIDS+=("$(cat "$T_DIR/reader.pid")")
if [ -n "$CPUCG" ]; then
	sh -c "echo \$\$ > $CPUCG/cgroup.procs && exec timeout 25 sh -c 'while :; do :; done'" &
	echo $! > "$T_DIR/spin.pid"
	T_PIDS+=("$(cat "$T_DIR/spin.pid")")
fi
# the producer's processes are found at the source's next rescan (5 s)
wait_for 12 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j snapshot cli |
	jqe '.ports.cli.host_resources.processes | map(select(.producer == \"reader\")) | length == 1'"
check "snapshot names the producer's process (by its cgroup)" test $? -eq 0
# the kernel's own block I/O delay of the reader (field 42 of its stat,
# delayacct_blkio_ticks()) read before the window starts and after it ends
blkio_ticks() { sed 's/.*) //' "/proc/$(cat "$T_DIR/reader.pid")/stat" | awk '{ print $40 }'; }
k0=$(blkio_ticks)
sleep 3.2
ctl -j counters cli --window 3 > "$T_DIR/w.json"
k1=$(blkio_ticks)
ctl -j snapshot cli > "$T_DIR/s.json"
ctl snapshot cli > "$T_DIR/s.txt"
ctl -j snapshot --bundle cli > "$T_DIR/b.json"
# an investigation's fast window reads the host source too
ctl investigate cli > /dev/null
wait_for 20 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j incident show | jqe '.record.state == \"complete\"'"
ctl -j incident show > "$T_DIR/inv.json"
kill -TERM "$(cat "$T_DIR/reader.pid")" 2>/dev/null
[ -z "$CPUCG" ] || kill -TERM "$(cat "$T_DIR/spin.pid")" 2>/dev/null

# reads per second over the window: near the throttle
span=$(jq -r '.span_s' "$T_DIR/w.json")
reads=$(jq -r ".sources.host[\"host.disk.$DEV.reads\"].delta" "$T_DIR/w.json")
rate=$(awk -v r="$reads" -v s="$span" 'BEGIN { printf "%d", (s > 0 ? r / s : 0) }')
echo "# $DEV: $reads reads in ${span}s = $rate reads/s (throttle $IOPS)"
check "the loop device reads near the throttle ($rate/s of $IOPS)" \
	test "$rate" -ge $((IOPS * 7 / 10)) -a "$rate" -le $((IOPS * 13 / 10))
bd=$(jq -r '.sources.host["producer.reader.blkio_delay_ns"].delta' "$T_DIR/w.json")
share=$(awk -v d="$bd" -v s="$span" 'BEGIN { printf "%d", (s > 0 ? d / (s * 1e7) : 0) }')
echo "# producer reader: block I/O delay $bd ns over ${span}s ($share% of the window);" \
	"the kernel's, over a span holding the window: $((k1 - k0)) ticks"
check "the producer's block I/O delay grows with the wait ($share% of the window)" \
	test "$share" -ge 50
# Not above the kernel's own figure over a span that holds the window (a
# bound of 100% of the window is not one: delayacct_end() sets a wait's
# end, local_clock() on the waker's CPU, against its start on the
# sleeper's, and on a VM whose sched_clock is unstable the two differ by
# up to a tick; CI's 2-core machine read 346% of the window for this
# single-threaded reader). A window that counted a total twice reads above.
check "the producer's block I/O delay is the kernel's ($bd ns, at most $((k1 - k0)) ticks)" \
	awk -v d="$bd" -v k="$((k1 - k0))" -v t="$(getconf CLK_TCK)" \
	'BEGIN { exit !(d <= k * 1e9 / t) }'
if [ -n "$CPUCG" ]; then
	cpu=$(jq -r '.sources.host["producer.spinner.cpu_ns"].delta' "$T_DIR/w.json")
	thr=$(jq -r '.sources.host["producer.spinner.throttled_ns"].delta' "$T_DIR/w.json")
	rq=$(jq -r '.sources.host["producer.spinner.run_delay_ns"].delta' "$T_DIR/w.json")
	cshare=$(awk -v d="$cpu" -v s="$span" 'BEGIN { printf "%d", (s > 0 ? d / (s * 1e7) : 0) }')
	echo "# producer spinner: CPU $cshare% of a core, throttled $thr ns, run-queue delay $rq ns over ${span}s"
	check "the CPU-quota producer's CPU time is near its quota ($cshare% of 20%)" \
		test "$cshare" -ge 12 -a "$cshare" -le 28
	check "the CPU-quota producer's throttled time grows" test "${thr:-0}" -gt 0
	rshare=$(awk -v d="$rq" -v s="$span" 'BEGIN { printf "%d", (s > 0 ? d / (s * 1e7) : 0) }')
	check "the CPU-quota producer waits on the run queue, not on I/O ($rshare% of the window)" \
		jqe "$rshare >= 50 and .sources.host[\"producer.spinner.blkio_delay_ns\"].delta == 0" "$T_DIR/w.json"
else
	echo "# no writable cgroup v1 cpu controller: the CPU-quota part skipped"
fi
check "the io pressure moved" \
	jqe '.sources.host["host.psi.io.some_us"].delta > 0' "$T_DIR/w.json"
check "the snapshot gives the loop device's identity (transport loop)" \
	jqe ".ports.cli.host_resources.devices | map(select(.name == \"$DEV\" and .transport == \"loop\")) | length == 1" "$T_DIR/s.json"
check "the snapshot's host source counts the producer's reads" \
	jqe '.ports.cli.sources.host["producer.reader.syscr"] > 100' "$T_DIR/s.json"
check "the text snapshot lists the disk and the producer" \
	bash -c "grep -q '^  disk $DEV .*loop' '$T_DIR/s.txt' && grep -q 'producer reader' '$T_DIR/s.txt'"
# the bundle: the series in recorder/PORT.json, the identity in the manifest
BD=$(jq -r '.bundle' "$T_DIR/b.json")
check "the bundle's recorder holds the loop device's reads" \
	jqe "[.samples[] | (.values // .changed).host[\"host.disk.$DEV.reads\"] // empty] | length >= 4" "$BD/recorder/cli.json"
check "the bundle's manifest names the device and the producer" \
	jqe "(.ports.cli.host.devices | map(select(.name == \"$DEV\")) | length == 1) and
	     (.ports.cli.host.processes | map(select(.producer == \"reader\")) | length == 1)" "$BD/manifest.json"
fw=$(jq -r ".record.window.cli.deltas.host[\"host.disk.$DEV.reads\"] // 0" "$T_DIR/inv.json")
fs=$(jq -r '.record.window.span_s // 0' "$T_DIR/inv.json")
echo "# fast window: $fw reads of $DEV in ${fs}s, $(jq '.record.window.samples' "$T_DIR/inv.json") samples"
check "the fast window's deltas hold the loop device's reads (${fw} in ${fs}s)" \
	awk -v r="$fw" -v s="$fs" 'BEGIN { exit !(s > 0 && r / s >= '$((IOPS / 2))' && r / s <= '$((IOPS * 3 / 2))') }'
check "the facts hold the host's counters and the pressure signals" \
	jqe ".record.facts.ports.cli.window.counters[\"producer.reader.blkio_delay_ns\"] > 0 and
	     (.record.facts.ports.cli.stall.counters | has(\"host.psi.io.full_us\"))" "$T_DIR/inv.json"
# the reader exits: dropped, said once, its use kept in the producer's sums
# (its end is the kernel's: a read held by the throttle first; and the
# daemon sees it at its next sample, which make check's load can delay)
wait_for 5 bash -c "! kill -0 $(cat "$T_DIR/reader.pid") 2>/dev/null" ||
	kill -KILL "$(cat "$T_DIR/reader.pid")" 2>/dev/null
wait_for 20 grep -q "producer reader: process .* exited; dropped" "$T_DIR/daemon.log"
check "the daemon logs the producer's exit" test $? -eq 0
