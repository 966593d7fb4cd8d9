#!/bin/bash
# make demo's script, twice in a row: both runs succeed, report a bundle
# that verifies, and leave no namespace, process or file outside the build
# tree behind.
. "$(dirname "$0")/lib.sh"
t_init
state() {
	ip netns list | grep -c '^demo' ; ls /tmp | grep -c '^nicstall-demo'
	# only the demo's own: other tests run emulated ports beside this one
	pgrep -fc "emuport run --dir /tmp/nicstall-demo\.|sockperf (server|ping-pong) --tcp -i 10.219|nsengine .*10.219" ; true
}
state > "$T_DIR/before"
for run in 1 2; do
	"$ROOT/tests/demo/demo.sh" "$BUILD" > "$T_DIR/demo$run.log" 2>&1
	rc=$?
	check "demo run $run succeeds" test "$rc" -eq 0
	b=$(sed -n 's/.*bundle: \(\/.*\)$/\1/p' "$T_DIR/demo$run.log" | tail -1)
	check "demo run $run reports its bundle, which verifies" "$NICSTALLCTL" verify "$b"
	check "demo run $run prints the summary" grep -q "^## What it is not" "$T_DIR/demo$run.log"
	[ -n "$b" ] && T_CLEANUP+=("rm -rf '$b'")        # only what this test made
	state > "$T_DIR/after$run"
	check "demo run $run leaves nothing behind" cmp -s "$T_DIR/before" "$T_DIR/after$run"
done
