# Seed 004 emulated (issue 29, item 4): four ranks of a collective on the
# fleet of fleet_lib.sh, in a ring (rank i's producer sends to rank i+1's
# consumer, nsengine client --step-file: no rank gets more than two steps
# ahead of the slowest), every producer reading its data from one loop
# device (4 KiB O_DIRECT reads, --read-kib per message) from inside its own
# cgroup: blkio (v1) for the disk, cpu (v1) for the CPU case; each rank has
# its own disk (a loop device), as each node of the record had. The kernel
# itself makes one rank slow: blkio.throttle.read_iops_device on its cgroup,
# or a CPU quota with --spin-us of compute per message. Its sends stop, the
# collective stops, every rank's consumer waits past the stall threshold.
# The engines run at nice -10 and a flow stalls after 3 s: a test machine's
# load must not stall the healthy collective. Each producer serves its own
# metrics (nsengine --metrics-fd: round trips, reads, the time in its reads)
# on the host's loopback, port SEED_MPORT + I, named by its rank's
# [producer sender] app_metrics. Source after lib.sh and fleet_lib.sh.
#
#   seed_up NET          the fleet, the loop devices, the cgroups, delay
#                        accounting on (all undone at exit); rankI.conf gets
#                        [producer sender] = its cgroup (SEED_CG=blkio|cpu)
#   seed_start [RANKS]   the daemons, the consumers, the producers (the
#                        slow rank's spins with SEED_SPIN_US), then waits
#                        until every daemon has found its producer
#   seed_slow I          the disk of rank I turns slow (SEED_IOPS reads/s)
#   seed_starve I        rank I's CPU quota drops to SEED_QUOTA_US per second
#   seed_bundle I [S]    rank I's own incident bundle (not a peer
#                        snapshot; since the slowness began), once written
#   seed_incidents I     how many incident bundles of its own rank I wrote
#   seed_steps           the collective's steps (the fewest round trips)
#   seed_end NAME        stop producers, consumers and daemons, lift the
#                        throttles, keep the logs as rankI.NAME.log

SEED_IOPS=${SEED_IOPS:-2}
SEED_KIB=${SEED_KIB:-128}
SEED_QUOTA_US=${SEED_QUOTA_US:-1000}   # per second (seed_starve)
SEED_CG=${SEED_CG:-blkio}
# below the default ephemeral range (32768-60999): no connect takes it
SEED_MPORT=${SEED_MPORT:-$((20000 + RANDOM % 12000))}

seed_up() {
	local net=$1 i
	SEED_BLKIO=/sys/fs/cgroup/blkio SEED_CPU=/sys/fs/cgroup/cpu
	[ -w "$SEED_BLKIO/cgroup.procs" ] || { echo "no cgroup v1 blkio hierarchy: skipped"; return 2; }
	command -v losetup >/dev/null || { echo "no losetup: skipped"; return 2; }
	SEED_LOOPS=() SEED_MAJMIN=()
	for i in 0 1 2 3; do
		# the backing file in the page cache: the throttle alone makes it slow
		truncate -s 16M "$T_DIR/disk$i.img"
		SEED_LOOPS[$i]=$(losetup -f --show "$T_DIR/disk$i.img") || { fail "losetup"; return 1; }
		T_CLEANUP+=("losetup -d ${SEED_LOOPS[$i]}")
		SEED_MAJMIN[$i]=$(cat "/sys/block/${SEED_LOOPS[$i]#/dev/}/dev")
		mkdir "$SEED_BLKIO/${T_PREFIX}b$i" || { fail "mkdir blkio cgroup"; return 1; }
		T_CLEANUP+=("seed_kill_cg $SEED_BLKIO/${T_PREFIX}b$i; rmdir $SEED_BLKIO/${T_PREFIX}b$i")
		if [ -w "$SEED_CPU/cgroup.procs" ] && mkdir "$SEED_CPU/${T_PREFIX}c$i"; then
			T_CLEANUP+=("seed_kill_cg $SEED_CPU/${T_PREFIX}c$i; rmdir $SEED_CPU/${T_PREFIX}c$i")
		fi
	done
	t_delayacct_up || return 1
	fleet_up "$net" 4 "peer_wait = 10s
peer_window = 30ms
stall_threshold = 3s" || { fail "the four ranks come up"; return 1; }
	# the daemons read sysfs under the emulator's tree (its RDMA devices):
	# the host's own block devices are linked into it, for the host source
	mkdir -p "$T_DIR/emu/sysfs/sys/dev" &&
	ln -sfn /sys/block "$T_DIR/emu/sysfs/sys/block" &&
	ln -sfn /sys/dev/block "$T_DIR/emu/sysfs/sys/dev/block" || { fail "block devices in the tree"; return 1; }
	seed_conf
}

# seed_conf: each rank's [producer sender], its cgroup of SEED_CG
seed_conf() {
	local i cg
	for i in 0 1 2 3; do
		sed -i '/^# seed004$/,$d' "$T_DIR/rank$i.conf"
		cg=$SEED_BLKIO/${T_PREFIX}b$i
		[ "$SEED_CG" = cpu ] && cg=$SEED_CPU/${T_PREFIX}c$i
		printf '# seed004\n[host]\n\n[producer sender]\ncgroup = %s\napp_metrics = http://127.0.0.1:%s/metrics\n' \
			"$cg" $((SEED_MPORT + i)) >> "$T_DIR/rank$i.conf"
	done
}

seed_kill_cg() {
	local p
	for p in $(cat "$1/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	sleep 0.2
}

# seed_start [RANKS]: SEED_SPIN_RANK and SEED_SPIN_US give one rank compute
seed_start() {
	local ranks=${*:-0 1 2 3} i n cgs spin
	: > "$T_DIR/step"
	SEED_SINCE=
	for i in $ranks; do fleet_start "$i" || return 1; done
	for i in 0 1 2 3; do
		nice -n -10 ip netns exec "$T_PREFIX-r$i" "$BUILD/nsengine" server --await \
			--listen "$FLEET_NET.0.$((i + 1)):11200" --table-dir "$T_DIR/flows$i" \
			> /dev/null 2>&1 &
		T_PIDS+=($!)
	done
	for i in 0 1 2 3; do
		wait_for 5 bash -c "ip netns exec $T_PREFIX-r$i ss -ltn | grep -q ':11200 '" ||
			{ fail "rank $i's consumer listens"; return 1; }
	done
	for i in 0 1 2 3; do
		n=$(( (i + 1) % 4 ))
		cgs="echo \$\$ > $SEED_BLKIO/${T_PREFIX}b$i/cgroup.procs"
		[ -d "$SEED_CPU/${T_PREFIX}c$i" ] && cgs="$cgs && echo \$\$ > $SEED_CPU/${T_PREFIX}c$i/cgroup.procs"
		spin=
		[ "${SEED_SPIN_RANK:-}" = "$i" ] && spin="--spin-us ${SEED_SPIN_US:-500000}"
		"$ROOT/tests/tools/sockact" "127.0.0.1:$((SEED_MPORT + i))" \
		sh -c "$cgs && exec nice -n -10 ip netns exec $T_PREFIX-r$i $BUILD/nsengine client \
			--connect $FLEET_NET.0.$((n + 1)):11200 --sessions 1 --interval-us 5000 \
			--metrics-fd 3 \
			--duration ${SEED_DURATION:-60} --read-file ${SEED_LOOPS[$i]} --read-kib $SEED_KIB $spin \
			--step-file $T_DIR/step --step-rank $i --step-ranks 4 \
			--table-dir $T_DIR/flows$i" > /dev/null 2>&1 &
		T_PIDS+=($!)
	done
	# each daemon finds its producer, and the disk it reads, at its
	# source's next rescan (every 5 s)
	for i in $ranks; do
		wait_for 20 bash -c "'$NICSTALLCTL' -s '$T_DIR/rank$i.sock' -j snapshot rank$i |
			jq -e '.ports.rank$i.host_resources.processes | map(select(.producer == \"sender\" and
				(.devices // [] | index(\"${SEED_LOOPS[$i]#/dev/}\")))) | length >= 1'" ||
			{ fail "rank $i's daemon finds its producer and the disk it reads"; return 1; }
		wait_for 10 bash -c "'$NICSTALLCTL' -s '$T_DIR/rank$i.sock' -j snapshot rank$i |
			jq -e '.ports.rank$i.app_metrics | any(.[]; .name == \"sender\" and .state == \"ok\")'" ||
			{ fail "rank $i's daemon scrapes its producer's metrics"; return 1; }
	done
}

seed_slow() {
	SEED_SINCE=$(date -u +%Y%m%dT%H%M%SZ)
	echo "${SEED_MAJMIN[$1]} $SEED_IOPS" > "$SEED_BLKIO/${T_PREFIX}b$1/blkio.throttle.read_iops_device"
}
seed_starve() {
	SEED_SINCE=$(date -u +%Y%m%dT%H%M%SZ)
	# the longest period (1 s): the quota is enforced at the scheduler's
	# tick (4 ms at HZ=250), so a 1 ms quota per 100 ms ran 3.5% of a CPU,
	# a 100 ms compute finished every 2.9 s, under the 3 s threshold, and a
	# rank's window could see the next message arrive (CI, stop 39); per
	# second it runs 0.13%. The kernel adds run-queue delay when the task
	# runs again and throttled time when the group is unthrottled, so the
	# figures lag the wait by at most the period: a third of a 3 s stall
	echo 1000000 > "$SEED_CPU/${T_PREFIX}c$1/cpu.cfs_period_us" &&
	echo "$SEED_QUOTA_US" > "$SEED_CPU/${T_PREFIX}c$1/cpu.cfs_quota_us"
}

seed_steps() { od -v -An -tu8 -N32 "$T_DIR/step" 2>/dev/null | tr -s ' ' '\n' | grep . | sort -n | head -1; }

# rank I's own incident bundles (not peer snapshots), oldest first; after
# seed_slow or seed_starve, those opened since (a loaded machine may stall
# the healthy collective too: that bundle is not the one judged)
seed_own() {
	local m b
	for m in "$T_DIR/state$1"/bundles/*/manifest.json; do
		[ -f "$m" ] || continue
		b=$(basename "$(dirname "$m")")
		[[ -n "${SEED_SINCE:-}" && "${b:0:16}" < "$SEED_SINCE" ]] && continue
		jq -e '.verdict.verdict != "peer-snapshot" and .verdict.verdict != "manual"' "$m" \
			> /dev/null 2>&1 && dirname "$m"
	done
}
seed_incidents() { seed_own "$1" | wc -l; }
seed_has_own() { [ -n "$(seed_own "$1")" ]; }
seed_bundle() {
	wait_for "${2:-40}" seed_has_own "$1" || return 1
	seed_own "$1" | head -1
}

seed_end() {
	local i
	fleet_kill_engines
	for i in 0 1 2 3; do
		echo "${SEED_MAJMIN[$i]} 0" > "$SEED_BLKIO/${T_PREFIX}b$i/blkio.throttle.read_iops_device" 2>/dev/null
		[ -d "$SEED_CPU/${T_PREFIX}c$i" ] && echo -1 > "$SEED_CPU/${T_PREFIX}c$i/cpu.cfs_quota_us"
		fleet_stop "$i"
	done
	check "$1: no sanitizer report in the ranks' logs" fleet_sanitizers
	for i in 0 1 2 3; do
		[ -f "$T_DIR/rank$i.log" ] && mv "$T_DIR/rank$i.log" "$T_DIR/rank$i.$1.log"
		rm -rf "$T_DIR/state$i"/* "$T_DIR/flows$i"/*
	done
}
