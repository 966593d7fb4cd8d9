#!/bin/bash
# A summary an expert trusts line by line (issue 35): every demo scenario's
# bundle passes tests/tools/summary-lint (no fractional frame or packet
# count, no "?" placeholder, no "Not X" twice, no rule expression where
# people read, no figure with more than 4 significant digits, one figure for
# one quantity between summary.txt, report.html and manifest.json), and the
# lint fails the bundle fc70e13's `make demo` wrote (the fixture
# tests/fixtures/bundles/fc70e13-port-drop), naming each of those defects.
. "$(dirname "$0")/lib.sh"
t_init
LINT=$ROOT/tests/tools/summary-lint

# 1. the fc70e13 demo bundle: every kind of defect is found
FIX=$ROOT/tests/fixtures/bundles/fc70e13-port-drop
"$LINT" "$FIX" > "$T_DIR/fc70.txt"
rc=$?
check "fc70e13's bundle fails the lint (exit 1, got $rc)" test "$rc" -eq 1
for what in "summary.txt: a fractional count: healthy rate explains 0.68" \
	"summary.txt: a \"?\" placeholder: .*nic_receive_steering_discard +?" \
	"summary.txt: \"Not fabric-fault\" 2 times" \
	"summary.txt: a rule expression: - \`maxof(gap) >= 2\`" \
	"report.html: more than 4 significant digits: 4.31818" \
	"manifest.json: a number beyond any precision: 4.318178530688086" \
	"the release delay has 2 figures: 0.0 (report.html), 609.6 (manifest.json+summary.txt)" \
	"the gap of port server: span 0.77 in the explanation, 0.773 in its Gap line"; do
	check "fc70e13: $what" grep -q -- "$what" "$T_DIR/fc70.txt"
done

# 2. every scenario of make demo, as a user runs it: under make check-demos
# (NICSTALL_LINT_DEMOS=1; a minute and a half). make check lints the same
# scenarios' bundles where they are made already: test_emu_scenarios,
# test_seed001, test_seed004.
if [ "${NICSTALL_LINT_DEMOS:-0}" != 1 ]; then
	echo "the demo scenarios: make check-demos (NICSTALL_LINT_DEMOS=1)"
	exit 0
fi
# (a *-healthy scenario writes no bundle: its point is that none opens)
scenarios=$(sed -n 's/^\(port-drop|[a-z0-9|-]*\)) ;;$/\1/p' "$ROOT/tests/demo/demo.sh" | tr '|' '\n' |
	grep -v -- '-healthy$' | tr '\n' ' ')
check "the demo's scenarios are read from demo.sh ($scenarios)" test -n "$scenarios"
for s in $scenarios; do
	"$ROOT/tests/demo/demo.sh" "$BUILD" "$s" > "$T_DIR/demo-$s.log" 2>&1
	rc=$?
	b=$(sed -n 's/.*bundle: \(\/.*\)$/\1/p' "$T_DIR/demo-$s.log" | tail -1)
	if [ "$rc" -ne 0 ] || [ -z "$b" ]; then
		fail "$s: the demo wrote no bundle (exit $rc)"
		tail -20 "$T_DIR/demo-$s.log"
		continue
	fi
	T_CLEANUP+=("rm -rf '$b'")
	# seed 000's evidence: each port's device lines from /dev/kmsg at open
	check "$s: the manifest keeps each port's kernel lines read at open" jqe \
		'[.kernel_log[] | select(.what | startswith("the device")) | select(.lines | type == "array")] | length == 2' "$b/manifest.json"
	if "$LINT" "$b" > "$T_DIR/lint-$s.txt"; then
		ok "$s: summary, report and manifest pass the lint ($(basename "$b"))"
	else
		fail "$s: the lint finds:"
		cat "$T_DIR/lint-$s.txt"
	fi
done

