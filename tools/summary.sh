#!/bin/sh
# Sum "PASS n FAIL m" lines written by the test runners into one closing line.
p=0; f=0
for r in "$@"; do
	[ -f "$r" ] || { echo "summary: $r missing (a stage did not run)"; f=$((f+1)); continue; }
	while read -r _ a _ b; do p=$((p+a)); f=$((f+b)); done < "$r"
done
echo "check: $p passed, $f failed"
[ "$f" -eq 0 ] && [ "$p" -gt 0 ]
