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
	timeout -k 10 "$limit" bash "$t" "$build" > "$log" 2>&1 8>&- 9>&-
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
	fi
	echo "$np $nf" >> "$tally"
}

tally=$(mktemp) side_out=$(mktemp) side_tally=$(mktemp) lockf=$(mktemp)
trap 'rm -f "$tally" "$side_out" "$side_tally" "$lockf"' EXIT
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
# lane FD TALLY TEST...: run the tests in order, those of NICSTALL_ALONE
# under an exclusive lock on FD (each lane opens the lock file itself: a
# lock belongs to an open file). An alone test whose lock is held waits
# while a free test after it runs; with none left, the lane waits for it.
lane() {
	local fd=$1 tally=$2 t i pick
	shift 2
	local todo=("$@")
	while [ ${#todo[@]} -gt 0 ]; do
		pick=
		for i in "${!todo[@]}"; do
			t=${todo[$i]}
			if [ -z "${NICSTALL_ALONE:-}" ] || ! echo "$t" | grep -qE "$NICSTALL_ALONE"; then
				pick=$i; break
			fi
			if flock -n "$fd"; then pick=$i; break; fi
		done
		if [ -z "$pick" ]; then
			pick=0
			flock "$fd"
		fi
		one_test "${todo[$pick]}" "$tally"
		flock -u "$fd"
		unset "todo[$pick]"
		todo=("${todo[@]}")
	done
}
side_pid=
if [ ${#side[@]} -gt 0 ]; then
	( exec 9> "$lockf"; lane 9 "$side_tally" "${side[@]}" ) > "$side_out" 2>&1 &
	side_pid=$!
fi
exec 8> "$lockf"
[ ${#main[@]} -gt 0 ] && lane 8 "$tally" "${main[@]}"
if [ -n "$side_pid" ]; then
	wait "$side_pid"
	echo "(beside the others:)"
	cat "$side_out"
	cat "$side_tally" >> "$tally"
fi
while read -r a b; do p=$((p+a)); f=$((f+b)); done < "$tally"
echo "PASS $p FAIL $f" >> "$build/results"
echo "system: $p passed, $f failed"
