#!/bin/sh
# Run cmocka unit test binaries; append "PASS n FAIL m" to BUILD/results.
build=$1; shift
p=0; f=0
for t in "$@"; do
	out=$(CMOCKA_MESSAGE_OUTPUT=stdout "$t" 2>&1); rc=$?
	printf '%s\n' "$out" | grep -E '^\[  (FAILED|ERROR) |^\[ +(OK|RUN) ' | grep -v '^\[ *RUN' | grep -v '^\[       OK' >/dev/null && printf '%s\n' "$out" | grep -E 'FAILED|ERROR'
	np=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	nf=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	np=${np:-0}; nf=${nf:-0}
	if [ "$rc" -ne 0 ] && [ "$nf" -eq 0 ]; then nf=1; printf '%s\n' "$out" | tail -20; fi
	echo "$(basename "$t"): $np passed, $nf failed"
	p=$((p+np)); f=$((f+nf))
done
echo "PASS $p FAIL $f" >> "$build/results"
echo "unit ($build): $p passed, $f failed"
