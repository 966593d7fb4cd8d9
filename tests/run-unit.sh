#!/bin/bash
# Run cmocka unit test binaries; append "PASS n FAIL m" to BUILD/results.
#
# They run NICSTALL_UNIT_JOBS at a time (default: three a core): most of
# their time is waiting (a probe's timeout, a child's exit: the 89 plain
# programs at 4f84abb took 153 s one after another, 64 s of it on a CPU),
# and those that need the kernel's networking each make their own
# namespace (tests/unit/nstest.c), so none shares anything with another.
# NICSTALL_UNIT_FIRST names (space-separated, without directory) those to
# start first, the longest waits, so that none of them begins last: the
# others then fill the cores around them. Each one's lines are printed
# when it ends, in the order given.
build=$1; shift
jobs=${NICSTALL_UNIT_JOBS:-$(( $(nproc) * 3 ))}
case $jobs in
[1-9] | [1-9][0-9]) ;;
*) echo "run-unit.sh: NICSTALL_UNIT_JOBS='$jobs' is not a number from 1 to 99" >&2; exit 2 ;;
esac
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT

# one BINARY INDEX: run it, keep its summary in OUT_DIR/INDEX
one() {
	local t=$1 i=$2 out rc np nf
	out=$(CMOCKA_MESSAGE_OUTPUT=stdout "$t" 2>&1); rc=$?
	{
		printf '%s\n' "$out" | grep -E 'FAILED|ERROR'
		# what a failed test printed on its way (its figures): a flake
		# seen once in CI is then read from the log, not guessed at
		printf '%s\n' "$out" | awk '
			/^\[ RUN      \] / { n = 0; name = $4 }
			{ buf[n++ % 80] = $0 }
			/^\[  FAILED  \] / && $4 == name && name != "" {
				print "--- " name ", as it ran (its last 80 lines at most):"
				for (i = (n > 80 ? n - 80 : 0); i < n; i++) print "    " buf[i % 80]
				name = ""
			}'
		np=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
		nf=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
		np=${np:-0}; nf=${nf:-0}
		if [ "$rc" -ne 0 ] && [ "$nf" -eq 0 ]; then nf=1; printf '%s\n' "$out" | tail -20; fi
		# a program that ran no test (cmocka's lines missing) has failed
		if [ "$np" -eq 0 ] && [ "$nf" -eq 0 ]; then nf=1; echo "$(basename "$t"): no test ran"; fi
		echo "$(basename "$t"): $np passed, $nf failed"
	} > "$out_dir/$i.tmp"
	echo "$np $nf" > "$out_dir/$i.sum"
	if [ "$nf" -ne 0 ]; then
		local why
		why=$(printf '%s\n' "$out" | sed -n 's/^\[  \(FAILED\|ERROR \)  \] \([^ ]*\)$/ \2;/p' |
		      awk '!seen[$0]++' | head -5 | tr -d '\n')
		[ -n "$why" ] || why=" exit status $rc, no failed test named (a crash, a leak at exit, or no test ran)"
		printf 'unit %s (%s):%s\n' "$(basename "$t")" "$build" "$why" > "$out_dir/$i.fail"
	fi
	mv "$out_dir/$i.tmp" "$out_dir/$i"
}

bins=("$@")
# the start order: indexes of NICSTALL_UNIT_FIRST's names as it lists
# them, then the rest as given
order=()
for name in ${NICSTALL_UNIT_FIRST:-}; do
	for i in "${!bins[@]}"; do
		[ "$(basename "${bins[i]}")" = "$name" ] && order+=("$i")
	done
done
for i in "${!bins[@]}"; do
	case " ${order[*]} " in *" $i "*) ;; *) order+=("$i") ;; esac
done
for i in "${order[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	one "${bins[i]}" "$i" &
done
wait

p=0; f=0; n=${#bins[@]}
for ((i = 0; i < n; i++)); do
	if [ ! -f "$out_dir/$i" ]; then
		echo "$(basename "${bins[i]}"): no result"; f=$((f + 1))
		echo "unit $(basename "${bins[i]}") ($build): no result" >> "$build/failures"; continue
	fi
	cat "$out_dir/$i"
	read -r np nf < "$out_dir/$i.sum"
	[ -f "$out_dir/$i.fail" ] && cat "$out_dir/$i.fail" >> "$build/failures"
	p=$((p + np)); f=$((f + nf))
done
echo "PASS $p FAIL $f" >> "$build/results"
echo "unit ($build): $p passed, $f failed"
