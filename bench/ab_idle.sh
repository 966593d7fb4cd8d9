#!/bin/bash
# bench/ab_idle.sh BUILD_A BUILD_B [ROUNDS [SECS]]: the idle daemon of two
# builds (each directory holding its nicstalld and nicstallctl) on make
# bench's set-up (two ports, 32 sessions at 500/s, every default flow
# source), run in alternated rounds (A B, B A, ...), the daemon pinned to
# CPU 1. Per run: its CPU over SECS (schedstat), its wakeups a second
# (status cpu.wakeups; 0 for a daemon that has no such count) and, after
# that window, its system calls a second counted by perf stat
# (raw_syscalls:sys_enter, linux-perf). Prints each series' median and
# min-max and B's ratio to A. For a change that should move the idle
# figures: the bench's idle row compares variants of one build, this
# compares builds side by side. As root; the bench's namespaces and
# sessions (bench/lib.sh), removed on exit. AB_TRACK, if set, is the
# ports' track line (AB_TRACK="track = sock": kernel TCP sockets alone).
set -u
A=$(cd "${1:?usage: bench/ab_idle.sh BUILD_A BUILD_B [ROUNDS [SECS]]}" && pwd) || exit 2
B=$(cd "${2:?usage: bench/ab_idle.sh BUILD_A BUILD_B [ROUNDS [SECS]]}" && pwd) || exit 2
ROUNDS=${3:-5} SECS=${4:-20}
for b in "$A" "$B"; do
	[ -x "$b/nicstalld" ] && [ -x "$b/nicstallctl" ] ||
		{ echo "ab_idle: $b has no nicstalld and nicstallctl" >&2; exit 2; }
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$A SMOKE=0 ONLY=""
. "$ROOT/bench/lib.sh"
bench_init
env_up || exit 1
mkconf "$WORK/all.conf" "${AB_TRACK:-}"
DPIN=(taskset -c 1)
perf stat -e raw_syscalls:sys_enter -- true > /dev/null 2>&1 || PERF=0

# one_run BUILD KEY: a daemon of BUILD, measured
one_run() {
	local st0 st c0 c1 t0 t1 x
	BUILD=$1
	dstart "$WORK/all.conf" || return 1
	sleep 3
	st0=$(ctl -j status)
	c0=$(cpu_ns "$DPID") t0=$(mono_ns)
	sleep "$SECS"
	c1=$(cpu_ns "$DPID") t1=$(mono_ns)
	st=$(ctl -j status)
	sample "$2_cpu" "$(awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) 'BEGIN { printf "%.4f", 100 * c / t }')"
	x=$(jq -n --argjson a "${st0:-null}" --argjson b "${st:-null}" \
		'(($b.cpu.wakeups // 0) - ($a.cpu.wakeups // 0)) / ($b.uptime_s - $a.uptime_s) * 10 | round / 10' \
		2>/dev/null) && [ -n "$x" ] && sample "$2_wakeups" "$x"
	if [ "${PERF:-1}" = 1 ]; then
		perf stat -x, -e raw_syscalls:sys_enter -p "$DPID" -o "$WORK/perf.txt" -- sleep 5 > /dev/null 2>&1
		x=$(awk -F, '$3 == "raw_syscalls:sys_enter" && $1 ~ /^[0-9]+$/ { printf "%.1f", $1 / 5 }' "$WORK/perf.txt")
		[ -n "$x" ] && sample "$2_syscalls" "$x"
	fi
	dstop
}

for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
	for k in $order; do
		if [ "$k" = A ]; then one_run "$A" A; else one_run "$B" B; fi
	done
	echo "ab_idle: round $r of $ROUNDS done"
done
echo "A = $A"
echo "B = $B"
printf '%-22s %-28s %-28s %s\n' "idle daemon" "A median (min-max)" "B median (min-max)" "B / A"
for m in cpu wakeups syscalls; do
	sa=$(stats "A_$m") sb=$(stats "B_$m")
	[ -n "$sa" ] && [ -n "$sb" ] || { echo "$m: no samples"; continue; }
	read -r ma la ha _ <<< "$sa"
	read -r mb lb hb _ <<< "$sb"
	case $m in cpu) u="% of a core" ;; *) u="/s" ;; esac
	printf '%-22s %-28s %-28s %s\n' "$m ($u)" "$ma ($la-$ha)" "$mb ($lb-$hb)" \
		"$(awk -v a="$ma" -v b="$mb" 'BEGIN { if (a > 0) printf "%.3fx", b / a; else print "-" }')"
done
