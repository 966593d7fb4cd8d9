#!/bin/bash
# Seed 004 emulated (issue 29, items 3 and 4): four ranks of a collective
# (seed004_lib.sh), one rank's producer starved by the kernel itself. Every
# rank's own bundle ends in producer-stall naming the starved rank, its
# resource and figures, the other ranks as waiting on it:
#   1. rank3's disk slow (blkio.throttle.read_iops_device on its cgroup)
#   2. the same disk slowness on rank1: the verdict follows the node
#   3. (test_seed004_cpu.sh, which runs this file with SEED004_PARTS=cpu)
#      rank2's producer, 500 ms of compute a step, starved of CPU (a v1 cpu
#      quota of 1 ms a second, 0.13% of a CPU with the tick's overrun: the
#      step it was in finishes 3 to 6 s on, in the windows, once in 130
#      starts): run-queue delay, not I/O
#   4. no throttle: the collective runs clean, no incident, for
#      SEED_CLEAN_S seconds (20; `make demo SCENARIO=seed-004` runs 60)
# Bounded: each part waits at most 60 s for its bundles; the producers run
# at most 60 s; the loop device, the cgroups and kernel.task_delayacct are
# restored in the EXIT trap.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fleet_lib.sh"
. "$(dirname "$0")/seed004_lib.sh"
t_init
jqe() { command jqe "$@" > /dev/null; }     # tests/tools/jqe: an empty input fails
# the parts this run makes: SEED004_PARTS (test_seed004_cpu.sh runs the CPU
# part alone, with no test beside it: make check's NICSTALL_QUIET)
part() { [[ " ${SEED004_PARTS:-io moved clean} " == *" $1 "* ]]; }
NET=10.$((240 + RANDOM % 8))
seed_up "$NET"
case $? in 0) ;; 2) exit 0 ;; *) exit 1 ;; esac

# every rank's own bundle: producer-stall by RULE naming rank SLOW; prints
# the explanations; WANT is a regular expression on each explanation, APP
# one on what it cites of the slow rank's own application metrics
judge() {
	local part=$1 slow=$2 rule=$3 want=$4 app=$5 i b others
	for i in 0 1 2 3; do
		if ! b=$(seed_bundle "$i" 60); then
			fail "$part: rank $i writes a bundle of its own incident"
			continue
		fi
		jq -c '{rank: .host, rule: .verdict.rule, verdict: .verdict.verdict,
			explanation: .verdict.explanation}' "$b/manifest.json"
		check "$part: rank $i's bundle ends in producer-stall ($rule)" jqe --arg r "$rule" \
			'.verdict.verdict == "producer-stall" and .verdict.rule == $r' "$b/manifest.json" ||
			grep -iE "^- (not )?producer-stall|rank" "$b/summary.txt" | head -12
		check "$part: rank $i's bundle names rank$slow and why" jqe --arg w "$want" \
			'.verdict.explanation | test($w)' "$b/manifest.json"
		check "$part: rank $i's bundle cites rank$slow's own application metrics" jqe --arg w "$app" \
			'.verdict.explanation | test("its application.s own metrics \\(sender\\): " + $w)' \
			"$b/manifest.json"
		others=$(for j in 0 1 2 3; do [ "$j" != "$slow" ] && printf 'rank%s\n' "$j"; done)
		check "$part: rank $i's bundle names the three others as waiting on rank$slow" \
			jqe --arg s "rank$slow" --arg o "$(echo $others)" \
			'.verdict.explanation | capture("; ranks (?<w>[a-z0-9, ]+):[^;]*waiting on (?<on>rank[0-9])") |
			 (.w | split(", ") | sort | join(" ")) == $o and .on == $s' "$b/manifest.json"
		check "$part: rank $i's bundle says it is not the fabric nor the local NIC, with figures" \
			jqe '.verdict.explanation | test("Not the fabric: fabric errors 0 on this host.s ports and 0 at the peers that answered .*RDMA work frozen on every rank. Not the local NIC: -?[0-9]+ frames lost before the vport")' \
			"$b/manifest.json"
		# the summary lint (issue 35) on one rank's bundle of each part
		[ "$i" = "$slow" ] && { "$ROOT/tests/tools/summary-lint" "$b" > "$T_DIR/lint.txt" 2>&1 &&
			ok "$part: rank $i's summary, report and manifest pass the summary lint" ||
			{ fail "$part: the summary lint finds:"; cat "$T_DIR/lint.txt"; }; }
		check "$part: rank $i's facts carry the four ranks' figures" jqe \
			'(.facts.ranks | length == 4) and all(.facts.ranks[]; .answered and .span_s > 0)' \
			"$b/manifest.json"
	done
}

# ---- 1. rank3's disk is slow (seed 004's dgx4) ----
if part io; then
	if seed_start; then
		sleep 2
		s0=$(seed_steps)
		seed_slow 3
		echo "# rank3's disk throttled to $SEED_IOPS reads/s after $s0 steps of the collective"
		judge io 3 producer-stall-io \
			"^rank rank3: its producer sender waited on block I/O [0-9.]+ s of [0-9.]+ s \\([0-9.]+%\\); I/O pressure full [0-9.]+% \\(some [0-9.]+%\\) over the stall; ${SEED_LOOPS[3]#/dev/} \\([^,]+, firmware [^,]+, loop\\) [0-9.]+ reads/s at [0-9.]+ ms await" \
			"nsengine_read_wait_nanoseconds_total rose [0-9.]+ s in [0-9.]+ s \\([0-9.]+%\\); stopped: [^;]*nsengine_round_trips_total \\(was [0-9.]+/s\\)"
		b=$(seed_bundle 3 1)
		jq -c '.facts.host, [.record.snapshot // {} | .[] | .host? // empty | .processes[]?]' "$b/manifest.json" 2>/dev/null
		jq -c '.facts.host' "$b/facts.json" 2>/dev/null
		pct=$(jq -r '.facts.host.producer_blkio_pct' "$b/manifest.json")
		rs=$(jq -r '.facts.host.disk_reads_s' "$b/manifest.json")
		echo "note: seed-004 io: rank3's producer block I/O delay ${pct}% of the stall, ${rs} reads/s of a ${SEED_IOPS}/s throttle"
		check "rank3's own facts: its producer waited on I/O most of the stall (${pct}%)" \
			awk -v p="$pct" 'BEGIN { exit !(p >= 50) }'
		check "rank3's own facts name its own disk, ${SEED_LOOPS[3]#/dev/} (${rs} reads/s)" jqe \
			--arg d "${SEED_LOOPS[3]#/dev/}" '.facts.host.disk == $d' "$b/manifest.json"
		# the throttle is a cgroup's: named, and the action is to raise it
		check "rank3's bundle names its cgroup's I/O limit, riops=$SEED_IOPS of ${T_PREFIX}b3" jqe \
			--arg l "riops=$SEED_IOPS" --arg c "/${T_PREFIX}b3" \
			'(.verdict.explanation | contains("its cgroup limits its I/O to that disk: " + $l +
			  " (" + $c + "), so its reads wait before the device")) and
			 (.verdict.action | startswith("the producer on rank3 is starved of disk by its cgroup" +
			  "'"'"'s I/O limit (" + $l + "): raise or lift it"))' "$b/manifest.json"
	fi
	seed_end io
fi

# ---- 2. the same slow disk on rank1: the verdict follows the node ----
if part moved; then
	if seed_start; then
		sleep 2
		seed_slow 1
		judge moved 1 producer-stall-io \
			"^rank rank1: its producer sender waited on block I/O [0-9.]+ s .*; ${SEED_LOOPS[1]#/dev/} \\(" \
			"nsengine_read_wait_nanoseconds_total rose [0-9.]+ s"
	fi
	seed_end moved
fi

# ---- 3. rank2's producer starved of CPU ----
if part cpu; then
	if [ -d "$SEED_CPU/${T_PREFIX}c2" ]; then
		SEED_CG=cpu seed_conf
		if SEED_SPIN_RANK=2 seed_start; then
			sleep 2
			seed_starve 2
			judge cpu 2 producer-stall-cpu \
				"^rank rank2: its producer sender waited for a CPU [0-9.]+ s of [0-9.]+ s \\([0-9.]+% on the run queue, its threads together\\), throttled by its CPU quota [0-9.]+ s.*not I/O: its block I/O delay 0(\\.[0-9]+)? s" \
				"(.* rose [0-9.]+ s in [0-9.]+ s \\([0-9.]+%\\); )?stopped: [^;]*nsengine_round_trips_total \\(was [0-9.]+/s\\)"
		fi
		seed_end cpu
		SEED_CG=blkio seed_conf
	else
		echo "# no writable cgroup v1 cpu controller: the CPU part skipped"
	fi
fi

# ---- 4. no throttle: clean ----
if part clean; then
	CLEAN=${SEED_CLEAN_S:-20}
	if SEED_DURATION=$((CLEAN + 15)) seed_start; then
		s0=$(seed_steps)
		sleep "$CLEAN"
		s1=$(seed_steps)
		echo "note: seed-004 clean: the collective made $((s1 - s0)) steps in ${CLEAN} s"
		check "clean: the collective kept stepping (${s0} -> ${s1})" test "$s1" -gt $((s0 + CLEAN * 20))
		for i in 0 1 2 3; do
			check "clean: rank $i opened no incident in ${CLEAN} s" test "$(seed_incidents "$i")" = 0
		done
	fi
	seed_end clean
fi

# the ranks' logs of a failed run, for the reader
[ "$T_FAIL" -gt 0 ] && mkdir -p "$BUILD/seed004-logs" && cp "$T_DIR"/rank*.log "$BUILD/seed004-logs/"
true
