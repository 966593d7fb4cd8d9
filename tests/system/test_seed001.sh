#!/bin/bash
# Seed 001 emulated (make demo SCENARIO=seed-001: tests/engine/lockengine.c,
# an echo server whose worker 0 waits for a lock its sibling keeps, woken
# thousands of times to lose it again, while worker 1's sessions run on;
# the flows are the engine's flow table; an onload_stackdump stand-in
# prints its stack's counters). For sends of 300 ms, 650 ms and
# 1.2 s at the defaults, and 150 ms with a 100 ms threshold: the incident
# opens within the threshold and one poll of the send's start; the bundle
# holds the thread's kernel stack at sleep, its switches and off-CPU share
# over the wait, the stack dumps before, during and after with their
# times; the verdict is engine-blocked with what it is not. The
# same 650 ms send with thread_watch = off: what is lost. And the same
# engine healthy (its threads asleep in epoll_wait and futex_wait between
# requests) for SEED001_HEALTHY_S seconds (10 here; 60 under make demo
# SCENARIO=seed-001-healthy): no incident.
. "$(dirname "$0")/lib.sh"
t_init
POLL_MS=50      # flow_interval's default
SLACK_MS=150    # reading the watch on a loaded 2-core machine (181-192 ms
                # measured at a 200 ms threshold in a clean-root make check)
jqe() { jq -e "$@" >/dev/null 2>&1; }

# run NAME VAR=VALUE...: the demo's seed-001 scenario; sets LOG, B (the
# bundle), START (the send's start, CLOCK_MONOTONIC ns) and SENT_MS
run() {
	local name=$1
	shift
	LOG=$T_DIR/$name.log
	env "$@" NICSTALL_BUNDLE_WAIT=30 "$ROOT/tests/demo/demo.sh" "$BUILD" seed-001 > "$LOG" 2>&1
	RC=$?
	B=$(sed -n 's/.*bundle: \(\/.*\)$/\1/p' "$LOG" | tail -1)
	[ -n "$B" ] && T_CLEANUP+=("rm -rf '$B'")
	START=$(sed -n 's/.*engine: send-start mono_ns=\([0-9]*\).*/\1/p' "$LOG" | head -1)
	SENT_MS=$(sed -n 's/.*engine: send-end .* ms=\([0-9]*\).*/\1/p' "$LOG" | head -1)
}

# stall NAME STALL_MS THRESHOLD_MS [THRESHOLD]
stall() {
	local name=$1 ms=$2 th=$3 opened lat
	if [ -n "${4:-}" ]; then
		run "$name" SEED001_STALL_MS="$ms" SEED001_THRESHOLD="$4"
	else
		run "$name" SEED001_STALL_MS="$ms"
	fi
	check "$name: the demo ran and wrote a bundle" test "$RC" -eq 0 -a -n "$B"
	check "$name: the engine's send waited ${ms} ms" test "${SENT_MS:-0}" -ge "$ms"
	opened=$(jq -r '.opened_mono_ns' "$B/record.json" 2>/dev/null)
	lat=$(( (${opened:-0} - ${START:-0}) / 1000000 ))
	echo "note: $name: a ${ms} ms send, threshold ${th} ms: incident opened ${lat} ms after the send's start"
	check "$name: the incident opened within the threshold and one poll of the send's start ($lat ms)" \
		test "$lat" -ge 0 -a "$lat" -le $(( th + POLL_MS + SLACK_MS ))
	check "$name: verdict engine-blocked" jqe '.verdict.verdict == "engine-blocked" and .verdict.rule == "engine-blocked"' "$B/manifest.json" ||
		{ grep -E "engine:|incident|verdict|thread watch" "$LOG" | head -20
		  jq -c '.[] | {pid, watch: [.watch[]? | {name, window_ns, voluntary_switches,
			involuntary_switches, off_cpu_share, off_cpu_preempted_ns, verdict, called}]}' "$B/threads.json"
		  jq -c '.facts.threads[] | {comm, state, off_cpu_pct, watch, called}' "$B/manifest.json"; }
	# called by the watch (its stack and verdict then), or, when the flows
	# opened the incident first, read over the flows' wait all the same
	check "$name: the bundle has the blocked thread's stack at sleep, its switches and off-CPU share over the wait" jqe \
		'[.[] | .watch[]? | select(.name == "worker0" and .voluntary_switches >= 50
		  and .off_cpu_share >= 0.5 and .window_ns > 0 and
		  ((.called == true and (.stack_at_call | test("futex")) and
		    (.verdict_at_call == "asleep" or .verdict_at_call == "one-sleep")) or
		   (.called != true and (.stack_at_sleep | test("futex")))))] | length == 1' "$B/threads.json" ||
		jq -c '.[] | {pid, watch: [.watch[]? | {name, called, window_ns, voluntary_switches,
			off_cpu_share, verdict, verdict_at_call, stack_at_call}]}' "$B/threads.json"
	check "$name: the facts have worker0 off CPU over the wait, asleep in a futex" jqe \
		'[.facts.threads[] | select(.comm == "worker0" and .off_cpu_pct >= 50
		  and (.sleep_func | test("futex")) and .vcsw > 0 and .sleep_us > 0)] | length == 1' "$B/manifest.json" ||
		jq -c '.facts.threads[] | {comm, called, off_cpu_pct, sleep_func, vcsw, sleep_us, watch}' "$B/manifest.json"
	"$ROOT/tests/tools/summary-lint" "$B" > "$T_DIR/lint.txt" 2>&1 &&
		ok "$name: summary, report and manifest pass the summary lint" ||
		{ fail "$name: the summary lint finds:"; cat "$T_DIR/lint.txt"; }
	check "$name: the summary says what it is not, with figures" bash -c \
		"grep -q 'asleep in futex.*Not spinning: on CPU [0-9.]*% of the wait.*Not a fixed timeout: woken [0-9]* times over the wait.*Not the network: [0-9]* of [0-9]* pings answered' '$B/summary.txt'"
	check "$name: worker 1's sessions ran on" jqe '.facts.flows.progressing >= 1' "$B/manifest.json"
	check "$name: the Onload stand-in's dumps before, during and after, with their times" jqe \
		'(.at_stall.onload.stacks[0] | .dump == "during" and .start_mono_ns > 0 and .end_mono_ns >= .start_mono_ns
		  and .before.dump == "before" and .before.end_mono_ns <= .start_mono_ns and .before.age_ms >= 0)
		 and (.after.onload.stacks[0] | .dump == "after" and .start_mono_ns >= 0 and .counters.lock_wakes > 0)' "$B/engines.json"
	check "$name: the stack's lock wakes set against the thread's switches" bash -c \
		"grep -q 'Onload stack 2 woke lock waiters [0-9]* times in [0-9.]* ms against the thread.s [0-9]* voluntary switches' '$B/summary.txt'"
}

stall stall-300 300 200
stall stall-650 650 200
stall stall-1200 1200 200
# 150 ms at a 100 ms threshold: on a loaded 2-core machine (a clean-clone
# make check) the flows opened the incident at 105 ms before the watch's
# account of the 100 ms covered the blocked send, and the verdict was not
# engine-blocked once in three runs: the evidence is read over the flows'
# wait when the watch called nothing (test_threadpass). It failed again in
# a clean clone at d163f18, the thread's share over the wait 0.9 but its
# verdict, judged over the threshold before the reading (after the send
# returned), "running": the verdict is now judged over the wait too
# (tj_judge_span, test_threadpass's read-after-the-wait case).
stall stall-150 150 100 100ms

# the incident opens on the other end's port (the client's threshold is
# the lower) and the engine's process comes into it only after, as the
# thread watch calls its thread (the server's flows are Onload's, whose
# sockets look idle while the thread waits): its Onload dumps follow it
# (a clean-clone run at be1e7c1 lost them when the client's port opened
# first, and the explanation printed "?" for their figures)
# (with thread_watch_syscalls = yes: the watched threads' system calls in
# the bundle, as of its writing, after the stall)
run client-first SEED001_STALL_MS=650 SEED001_CLIENT_THRESHOLD=100ms SEED001_SERVER_TRACK=onload \
	SEED001_SYSCALLS=yes
check "client-first: the demo ran and wrote a bundle" test "$RC" -eq 0 -a -n "$B"
check "client-first: the status says the system calls are traced" grep -q "thread watch: on.*; system calls: on" "$LOG"
check "client-first: the engine's threads' system calls in the bundle, with their times" jqe \
	'[.[] | .watch[]? | select((.syscall and .syscall_for_ns >= 0 and .syscall_since_ns > 0)
	  or (.last_syscall and .last_syscall_for_ns >= 0))] | length >= 1' "$B/threads.json" ||
	jq -c '.[] | [.watch[]? | {name, syscall, syscall_since_ns, syscall_for_ns, last_syscall,
		last_syscall_for_ns}]' "$B/threads.json"
check "client-first: the incident opened on the client's port" jqe '.port == "client"' "$B/record.json"
check "client-first: the engine's stack dumped during the stall (after the incident opened), before and after it" jqe \
	'(.at_stall.onload.stacks[0] | .dump == "during" and (.taken | test("after the incident opened"))
	  and .before.dump == "before" and .start_mono_ns > 0)
	 and (.after.onload.stacks[0] | .dump == "after" and .counters.lock_wakes > 0)' "$B/engines.json" ||
	jq -c '{at: [.at_stall.onload.stacks[]? | {id, pid, dump, taken}], after: [.after.onload.stacks[]? | {id, dump}]}' "$B/engines.json"
"$ROOT/tests/tools/summary-lint" "$B" > "$T_DIR/lint.txt" 2>&1 &&
	ok "client-first: summary, report and manifest pass the summary lint" ||
	{ fail "client-first: the summary lint finds:"; cat "$T_DIR/lint.txt"; }

# without the thread watch
run off SEED001_STALL_MS=650 SEED001_THREAD_WATCH=off
check "off: the demo ran and wrote a bundle" test "$RC" -eq 0 -a -n "$B"
check "off: the status says the watch is off and why" grep -q "thread watch: off" "$LOG"
check "off: no thread watch account in the bundle" jqe '[.[] | select(has("watch"))] | length == 0' "$B/threads.json"
check "off: no off-CPU share in the facts" jqe '[.facts.threads[] | select(has("off_cpu_pct"))] | length == 0' "$B/manifest.json"
check "off: not the thread rule (no account of the thread over the wait)" jqe '.verdict.rule != "engine-blocked"' "$B/manifest.json"
check "off: the summary names no thread off CPU" bash -c "! grep -q 'off CPU of its own accord' '$B/summary.txt'"
echo "note: off: without the thread watch the verdict is $(jq -r '.verdict.verdict + " (rule " + .verdict.rule + ")"' "$B/manifest.json" 2>/dev/null): no stack at sleep, no share or switches over the wait, no detection from the thread"

# healthy: threads that sleep by design. The thread watch may call no
# stall; an incident opened by the flows alone (a scheduling delay of a
# threshold on this loaded machine stalls them for real) is reported, and
# make demo SCENARIO=seed-001-healthy fails on it
LOG=$T_DIR/healthy.log
SEED001_HEALTHY_S=${SEED001_HEALTHY_S:-10} "$ROOT/tests/demo/demo.sh" "$BUILD" seed-001-healthy > "$LOG" 2>&1
rc=$?
check "healthy: the engine's and the clients' processes were watched" \
	grep -Eq 'thread watch: on, [2-9] process' "$LOG"
check "healthy: the thread watch called no stall in ${SEED001_HEALTHY_S:-10} s" bash -c \
	"! grep -q 'they are stalled' '$LOG' && grep -Eq 'thread watch: on, [2-9] process.*, 0 stall\(s\) called' '$LOG'"
if [ "$rc" -eq 0 ]; then
	ok "healthy: no incident in ${SEED001_HEALTHY_S:-10} s"
else
	echo "note: healthy: an incident opened without the thread watch (load $(cut -d' ' -f1 /proc/loadavg)):"
	grep -E "incident|thread watch" "$LOG" | sed 's/^/note:   /'
fi
