#!/bin/bash
# make demo's script, twice in a row: both runs succeed, report a bundle
# that verifies, and leave no namespace, process or file outside the build
# tree behind.
. "$(dirname "$0")/lib.sh"
t_init
# what a run made is gone after it: its namespaces, its work directory and
# the processes that ran from it. Only its own (named in its log): other
# tests run the same demo beside this one (test_seed001, in the other lane)
gone() {
	local log=$1 ns work
	ns=$(sed -n 's/.*namespaces \([^ ]*\) and \([^,]*\),.*/\1|\2/p' "$log" | head -1)
	work=$(sed -n 's/.*(config: \(.*\)\/demo\.conf).*/\1/p' "$log" | head -1)
	[ -n "$ns" ] && [ -n "$work" ] || { echo "no namespaces or work directory in $log"; return 1; }
	! ip netns list | grep -qE "^($ns)( |$)" || { echo "namespace left: $ns"; return 1; }
	[ ! -e "$work" ] || { echo "work directory left: $work"; return 1; }
	! pgrep -f "$work" > /dev/null || { echo "processes left: $(pgrep -af "$work")"; return 1; }
}
for run in 1 2; do
	"$ROOT/tests/demo/demo.sh" "$BUILD" > "$T_DIR/demo$run.log" 2>&1
	rc=$?
	check "demo run $run succeeds" test "$rc" -eq 0
	b=$(sed -n 's/.*bundle: \(\/.*\)$/\1/p' "$T_DIR/demo$run.log" | tail -1)
	check "demo run $run reports its bundle, which verifies" "$NICSTALLCTL" verify "$b"
	check "demo run $run prints the summary" grep -q "^## What it is not" "$T_DIR/demo$run.log"
	[ -n "$b" ] && T_CLEANUP+=("rm -rf '$b'")        # only what this test made
	check "demo run $run leaves nothing behind" gone "$T_DIR/demo$run.log"
done
