#!/bin/bash
# Host-wide state two tests need at once (lib.sh's t_shared): the state is
# made by the first holder, kept while any holder runs, undone by the last
# one to leave, and a holder killed without its cleanup does not keep it.
# A flag file stands for the sysctl or the group.
. "$(dirname "$0")/lib.sh"
t_init
export T_SHARED=$T_DIR/shared
F=$T_DIR/flag
echo 0 > "$F"
# holder NAME: takes the state, says "up", stays until $T_DIR/go.NAME exists
holder() {
	bash -c '. "$1/tests/system/lib.sh" "$2"; t_init; T_SHARED=$3
		echo "$T_DIR" > "$5/dir.$6"
		t_shared flag "[ \"\$(cat $4)\" = 0 ] && echo 1 > $4" "echo 0 > $4" || exit 1
		echo up > "$5/up.$6"
		while [ ! -e "$5/go.$6" ]; do sleep 0.05; done' \
		bash "$ROOT" "$BUILD" "$T_SHARED" "$F" "$T_DIR" "$1" > "$T_DIR/holder.$1.log" 2>&1 &
	T_PIDS+=("$!")
	eval "H_$1=$!"
}
holder a
wait_for 10 test -e "$T_DIR/up.a"
check "the first holder turns the state on" test "$(cat "$F")" = 1
holder b
wait_for 10 test -e "$T_DIR/up.b"
check "a second holder finds it on" test "$(cat "$F")" = 1
touch "$T_DIR/go.a"
wait_for 10 bash -c "! kill -0 $H_a 2>/dev/null"
check "the first one leaving keeps it for the second" test "$(cat "$F")" = 1
touch "$T_DIR/go.b"
wait_for 10 bash -c "! kill -0 $H_b 2>/dev/null"
check "the last one leaving turns it off" test "$(cat "$F")" = 0
# a holder killed past its time limit (no cleanup) and one that leaves
holder c
wait_for 10 test -e "$T_DIR/up.c"
kill -KILL "$H_c"; wait "$H_c" 2>/dev/null   # reaped, as timeout reaps a test
# what its own cleanup would have removed (its test directory)
rm -rf "$(cat "$T_DIR/dir.c")"
holder d
wait_for 10 test -e "$T_DIR/up.d"
check "with a killed holder the state stays on for the next, and its undo is kept" \
	test "$(cat "$F")" = 1 -a -f "$T_SHARED/flag/undo"
touch "$T_DIR/go.d"
wait_for 10 bash -c "! kill -0 $H_d 2>/dev/null"
check "and the killed holder does not keep it after the last leaves" test "$(cat "$F")" = 0
# state already there (an administrator's): nobody undoes it
echo 1 > "$F"
holder e
wait_for 10 test -e "$T_DIR/up.e"
touch "$T_DIR/go.e"
wait_for 10 bash -c "! kill -0 $H_e 2>/dev/null"
check "state the tests did not make is left as it was" test "$(cat "$F")" = 1
