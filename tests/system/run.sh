#!/bin/bash
# Run every system test (tests/system/test_*.sh BUILD), each bounded in time;
# sum their "N passed, N failed" lines into BUILD/results and one closing line.
#
# NICSTALL_TESTS=REGEX       only the tests whose path matches
# NICSTALL_SIDE_TESTS=REGEX  these run one after another in a second lane,
#                            beside the others: tests that mostly wait and
#                            assert no timing of their own (make check puts
#                            the 60 s healthy run there). Their lines are
#                            printed when the lane ends.
# NICSTALL_SIDE_FIRST=REGEX  of those, these first (in the main lane's first
#                            minutes, before its heavy tests)
# NICSTALL_ALONE=REGEX       of all, these never run beside one another (a
#                            lock taken for each): tests that time what
#                            they judge and the heaviest. A lane whose next
#                            test must wait runs its next free one first.
# NICSTALL_QUIET=REGEX       of all, these run with no test at all beside
#                            them (each other test takes a shared lock,
#                            these an exclusive one): tests whose verdicts
#                            judge the host's own CPU load (seed 004's rank
#                            starved of CPU, the others waiting on it)
# NICSTALL_KEEP=DIR          a failed test's directory (the daemon's log,
#                            its state, bundles and certificates) is moved
#                            under DIR (an absolute path) instead of removed
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
limit=${NICSTALL_TEST_TIMEOUT:-300}
p=0; f=0
if [ "$(id -u)" != 0 ]; then
	echo "system tests need root (network namespaces): skipped"
	echo "PASS 0 FAIL 0" >> "$build/results"
	exit 0
fi

# one_test PATH: run it, print its line (and its log's tail on failure),
# add its counts to the file $2
one_test() {
	local t=$1 tally=$2 name log start rc line np nf
	name=$(basename "$t" .sh)
	log="$build/system-$name.log"
	start=$(date +%s)
	timeout -k 10 "$limit" bash "$t" "$build" > "$log" 2>&1 6>&- 7>&- 8>&- 9>&-
	rc=$?
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
	np=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p'); np=${np:-0}
	nf=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p'); nf=${nf:-0}
	if [ "$rc" -ne 0 ] && [ "$nf" -eq 0 ]; then nf=1; fi
	[ "$rc" -eq 124 ] && echo "$name: TIMED OUT after ${limit}s"
	echo "$name: $np passed, $nf failed ($(( $(date +%s) - start ))s)"
	sed -n 's/^note: /  /p' "$log"           # figures a test reports (e.g. a score)
	if [ "$nf" -ne 0 ]; then
		echo "---- $log (last 40 lines) ----"; tail -40 "$log"; echo "----"
		# for the closing summary (tools/summary.sh): what failed, by
		# name, in one write (the two lanes append beside each other)
		local why
		why=$(grep -E '^FAIL ' "$log" | head -3 | sed 's/^FAIL - */ /; s/$/;/' | tr -d '\n')
		[ "$rc" -eq 124 ] && why="$why timed out after ${limit}s"
		[ -n "$why" ] || why=" exit status $rc, no FAIL line"
		printf 'system %s (%s):%s\n' "$name" "$build" "$why" >> "$build/failures"
	fi
	echo "$np $nf" >> "$tally"
}

tally=$(mktemp) side_out=$(mktemp) side_tally=$(mktemp) lockf=$(mktemp) qlockf=$(mktemp)
trap 'rm -f "$tally" "$side_out" "$side_tally" "$lockf" "$qlockf"' EXIT
main=() side=()
for t in "$here"/test_*.sh; do
	[ -n "$NICSTALL_TESTS" ] && ! echo "$t" | grep -qE "$NICSTALL_TESTS" && continue
	if [ -n "$NICSTALL_SIDE_TESTS" ] && echo "$t" | grep -qE "$NICSTALL_SIDE_TESTS"; then
		side+=("$t")
	else
		main+=("$t")
	fi
done
if [ -n "${NICSTALL_SIDE_FIRST:-}" ] && [ ${#side[@]} -gt 0 ]; then
	first=() rest=()
	for t in "${side[@]}"; do
		if echo "$t" | grep -qE "$NICSTALL_SIDE_FIRST"; then first+=("$t"); else rest+=("$t"); fi
	done
	side=("${first[@]}" "${rest[@]}")
fi
# locks FD QFD TEST [-n]: take what TEST needs to run (-n: without
# waiting; 1 when one is held elsewhere, nothing then kept): FD exclusive
# for a NICSTALL_ALONE test, QFD exclusive for a NICSTALL_QUIET one and
# shared for any other. Always FD before QFD, so two lanes cannot wait on
# each other.
locks() {
	local fd=$1 qfd=$2 t=$3 nb=${4:-} q=-s
	[ -n "${NICSTALL_QUIET:-}" ] && echo "$t" | grep -qE "$NICSTALL_QUIET" && q=-x
	if [ -n "${NICSTALL_ALONE:-}" ] && echo "$t" | grep -qE "$NICSTALL_ALONE"; then
		flock $nb "$fd" || return 1
	fi
	flock $nb $q "$qfd" && return 0
	flock -u "$fd"
	return 1
}
# lane FD QFD TALLY TEST...: run the tests in order, each under locks (each
# lane opens the lock files itself: a lock belongs to an open file). A
# test whose locks are held elsewhere waits while a free test after it
# runs; with none left, the lane waits for the first.
lane() {
	local fd=$1 qfd=$2 tally=$3 i pick
	shift 3
	local todo=("$@")
	while [ ${#todo[@]} -gt 0 ]; do
		pick=
		for i in "${!todo[@]}"; do
			if locks "$fd" "$qfd" "${todo[$i]}" -n; then pick=$i; break; fi
		done
		if [ -z "$pick" ]; then
			pick=0
			locks "$fd" "$qfd" "${todo[0]}"
		fi
		one_test "${todo[$pick]}" "$tally"
		flock -u "$fd"
		flock -u "$qfd"
		unset "todo[$pick]"
		todo=("${todo[@]}")
	done
}
side_pid=
if [ ${#side[@]} -gt 0 ]; then
	( exec 9> "$lockf" 7> "$qlockf"; lane 9 7 "$side_tally" "${side[@]}" ) > "$side_out" 2>&1 &
	side_pid=$!
fi
exec 8> "$lockf" 6> "$qlockf"
[ ${#main[@]} -gt 0 ] && lane 8 6 "$tally" "${main[@]}"
if [ -n "$side_pid" ]; then
	wait "$side_pid"
	echo "(beside the others:)"
	cat "$side_out"
	cat "$side_tally" >> "$tally"
fi
while read -r a b; do p=$((p+a)); f=$((f+b)); done < "$tally"
echo "PASS $p FAIL $f" >> "$build/results"
echo "system: $p passed, $f failed"
