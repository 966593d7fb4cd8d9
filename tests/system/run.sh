#!/bin/bash
# Run every system test (tests/system/test_*.sh BUILD), each bounded in time;
# sum their "N passed, N failed" lines into BUILD/results and one closing line.
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
limit=${NICSTALL_TEST_TIMEOUT:-300}
p=0; f=0
if [ "$(id -u)" != 0 ]; then
	echo "system tests need root (network namespaces): skipped"
	echo "PASS 0 FAIL 0" >> "$build/results"
	exit 0
fi
for t in "$here"/test_*.sh; do
	[ -n "$NICSTALL_TESTS" ] && ! echo "$t" | grep -qE "$NICSTALL_TESTS" && continue
	name=$(basename "$t" .sh)
	log="$build/system-$name.log"
	start=$(date +%s)
	timeout -k 10 "$limit" bash "$t" "$build" > "$log" 2>&1
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
	p=$((p+np)); f=$((f+nf))
done
echo "PASS $p FAIL $f" >> "$build/results"
echo "system: $p passed, $f failed"
