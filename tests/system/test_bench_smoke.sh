#!/bin/bash
# The benchmark programs of `make bench` (bench/) with tiny counts: each
# runs and says what it measured in the form bench/run.sh reads. Figures
# are not judged here (shared machines: bench/README.md holds the goals);
# this only keeps the programs from rotting between bench runs. Seconds.
. "$(dirname "$0")/lib.sh"
t_init

TEXT=$ROOT/tests/fixtures/real/ethtool-S_mlx5-cx4lx-k4.15-ethq_1.txt
SYSFS_TTAR=$ROOT/tests/fixtures/real/sysfs-infiniband-hw_counters_mlx5_0_procfs-fixture.ttar.txt

# built by `make system` (bench/bench.mk adds them to EXTRA_BINS)
for b in bench_sweep bench_scale bench_conns bench_metrics bench_runs bench_app bench_window bench_tpfloor; do
	[ -x "$BUILD/$b" ] || { fail "$BUILD/$b missing (make system builds it)"; exit 1; }
done
ok "bench programs built"

# jq_ok WHAT JSON FILTER: the program's line holds what the filter asks
jq_ok() {
	local what=$1 json=$2 filter=$3
	if [ -n "$json" ] && echo "$json" | jq -e "$filter" > /dev/null 2>&1; then
		ok "$what"
	else
		fail "$what: got '${json:-nothing}'"
	fi
}

# the tracepoints' floor: both programs loaded while it runs, gone when
# it exits (their release comes after an RCU grace period: 5 s allowed)
tfprogs() { bpftool prog show | grep -cE ' name tf_(send|recv) '; }
check "bpftool is there" command -v bpftool
"$BUILD/bench_tpfloor" 3 > "$T_DIR/tpfloor.out" &
tfpid=$!
T_PIDS+=("$tfpid")
check "bench_tpfloor says both attached" wait_for 10 grep -q '"attached":2' "$T_DIR/tpfloor.out"
check "bench_tpfloor's two programs loaded while it runs" test "$(tfprogs)" = 2
wait "$tfpid"
check "bench_tpfloor's programs gone after it" wait_for 5 bash -c "[ \$(bpftool prog show | grep -cE ' name tf_(send|recv) ') = 0 ]"
check "bench_tpfloor refuses a bad argument" bash -c "! '$BUILD/bench_tpfloor' x 2>/dev/null"

A=${T_PREFIX}a
ip netns add "$A" && T_NETNS+=("$A")
ip -n "$A" link add "${T_PREFIX}v0" type veth peer name "${T_PREFIX}v1"
ip -n "$A" link set "${T_PREFIX}v0" up
ip -n "$A" link set "${T_PREFIX}v1" up
ip -n "$A" link set lo up

out=$(ip netns exec "$A" "$BUILD/bench_sweep" ours-veth "${T_PREFIX}v0" 3)
jq_ok "bench_sweep ours-veth: CPU per sweep and the veth's counters" "$out" \
	'.mode == "ours-veth" and .cpu_us > 0 and .counters > 0'
out=$(ip netns exec "$A" "$BUILD/bench_sweep" floor-veth "${T_PREFIX}v0" 3)
jq_ok "bench_sweep floor-veth" "$out" '.mode == "floor-veth" and .cpu_us >= 0'
out=$("$BUILD/bench_sweep" ours-text "$TEXT" 3)
jq_ok "bench_sweep ours-text: the 751 counters of the dump" "$out" '.counters == 751 and .cpu_us > 0'
out=$("$BUILD/bench_sweep" floor-text "$TEXT" 3)
jq_ok "bench_sweep floor-text reads the file" "$out" '.bytes > 0'
sh "$ROOT/tests/tools/ttar-unpack" "$SYSFS_TTAR" "$T_DIR/sysfs" > /dev/null 2>&1
out=$("$BUILD/bench_sweep" ours-sysfs "$T_DIR/sysfs/fixtures" mlx5_0 1 3)
jq_ok "bench_sweep ours-sysfs: the mlx5 fixture tree" "$out" '.counters > 0 and .cpu_us > 0'
# the host source on bench/sections.sh's tree: 16 disks kept of 32 lines,
# this test's own process watched (psi 6 or fewer, 16 x 17, 7 of it)
. "$ROOT/bench/sections.sh"     # functions only
host_tree "$T_DIR/host"
ln -s "/proc/$$" "$T_DIR/host/proc/$$"
out=$("$BUILD/bench_sweep" ours-host "$T_DIR/host/proc" "$T_DIR/host" "$$" 3)
jq_ok "bench_sweep ours-host: 16 disks and one process" "$out" \
	'.counters >= 16 * 17 + 7 and .counters <= 16 * 17 + 7 + 6 and .cpu_us > 0'
out=$("$BUILD/bench_sweep" spawn "true" 2)
jq_ok "bench_sweep spawn" "$out" '.mode == "spawn" and .cpu_us > 0'

out=$("$BUILD/bench_scale" engine 100 1)
jq_ok "bench_scale engine: every record read, none idle passed on again, memory per flow" "$out" \
	'.read == 100 and .idle_emitted == 0 and .poll_us > 0 and .moved_us > 0 and .table_bytes_per_flow > 0'
out=$("$BUILD/bench_scale" detector 100 1)
jq_ok "bench_scale detector" "$out" '.obs_ns > 0 and .flow_bytes > 0'
out=$("$BUILD/bench_scale" recorder | head -1)
jq_ok "bench_scale recorder" "$out" '.bytes > 0 and .model_bytes > 0'
if bpftool feature probe kernel 2>/dev/null | grep -q "sched_cls"; then
	out=$("$BUILD/bench_scale" tracker 100 1)
	jq_ok "bench_scale tracker: the map read back" "$out" '.read == 100 and .map_bytes_per_flow > 0'
	out=$("$BUILD/bench_scale" pkt 1)
	jq_ok "bench_scale pkt: per-frame cost in the kernel" "$out" '.watched_ns > 0 and .empty_ns > 0'
else
	ok "no BPF: tracker benchmarks not run"
fi

out=$(cd "$ROOT" && "$BUILD/bench_metrics" 2>&1)
check "bench_metrics: a metrics write and a render timed against a sample" \
	bash -c "echo \"\$1\" | grep -Eq '^one metrics_write after 5 samples +[0-9.]+ +[0-9.]+$' &&
		 echo \"\$1\" | grep -Eq '^metrics, [0-9.]+ % of one core'" _ "$out"

# bench_conns: N connections up, then it says so
ip netns exec "$A" "$BUILD/bench_conns" listen 127.0.0.1 13999 > "$T_DIR/listen.out" 2>&1 &
T_PIDS+=($!)
for _ in $(seq 50); do
	ip netns exec "$A" ss -ltnH | grep -q ':13999 ' && break
	sleep 0.1
done
ip netns exec "$A" "$BUILD/bench_conns" connect 127.0.0.1 13999 20 > "$T_DIR/conns.out" 2>&1 &
T_PIDS+=($!)
for _ in $(seq 50); do grep -q ready "$T_DIR/conns.out" && break; sleep 0.1; done
check "bench_conns: 20 connections up" grep -q "ready 20" "$T_DIR/conns.out"

# run begin and end with 8 ports of 751 counters: both timed (the goal,
# under 10 ms each, is make bench's row, not a wall-clock bound here: a
# loaded CI machine crosses it)
out=$(cd "$ROOT" && "$BUILD/bench_runs" 5)
echo "$out"
check "bench_runs: run begin and run end each timed (median)" \
	bash -c "echo '$out' | awk '/^run (begin|end) / && \$3 + 0 > 0 { n++ } END { exit !(n == 2) }'"
# a scrape of a 2,000-series endpoint on 127.0.0.1 (the make bench row)
out=$("$BUILD/bench_app" 10 2000)
echo "$out"
check "bench_app: a 2,000-series scrape and its parse timed" \
	bash -c "echo '$out' | grep -q '^page: 2000 series' &&
		 echo '$out' | grep -Eq '^one scrape \(.*\): [0-9.]+ us CPU$' &&
		 echo '$out' | grep -Eq '^of which the parse alone: [0-9.]+ us CPU$'"
# a window's deltas over churning series, side by side with the search
out=$("$BUILD/bench_window" 1 500 20)
echo "$out"
check "bench_window: the window's deltas, the search and one layout timed" \
	bash -c "echo '$out' | grep -Eq '^deltas, churning series: [0-9.]+ us CPU$' &&
		 echo '$out' | grep -Eq '^by search, churning series: [0-9.]+ us CPU$' &&
		 echo '$out' | grep -Eq '^deltas, one layout: [0-9.]+ us CPU$'"
# run.sh refuses what it does not know, before touching anything
"$ROOT/bench/run.sh" "$BUILD" --bogus > "$T_DIR/run.out" 2>&1
rc=$?
check "bench/run.sh: an unknown option is refused (exit 2) and named" \
	test "$rc" = 2 -a -n "$(grep -- '--bogus' "$T_DIR/run.out")"
