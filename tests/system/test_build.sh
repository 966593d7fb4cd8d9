#!/bin/bash
# Build: a bare `make` in a clean clone builds both programs (the default
# goal is `all`), and a user's CFLAGS adds to the flags the build needs
# instead of replacing them. What a bare make would run is read from
# `make -n` in a clean clone: make check's own first step is that build, in
# the clean clone CI makes (a second full build here cost 45 s of it).
. "$(dirname "$0")/lib.sh"
t_init
git clone -q "$ROOT" "$T_DIR/src" 2>"$T_DIR/clone.err" || { fail "git clone"; cat "$T_DIR/clone.err"; }
( cd "$T_DIR/src" && make -n > "$T_DIR/make.log" 2>&1 )
rc=$?
check "bare make has something to do in a clean clone" test "$rc" -eq 0
[ "$rc" -eq 0 ] || tail -20 "$T_DIR/make.log"
check "bare make links build/nicstalld" grep -qE -- '-o build/nicstalld( |$)' "$T_DIR/make.log"
check "bare make links build/nicstallctl" grep -qE -- '-o build/nicstallctl( |$)' "$T_DIR/make.log"
check "bare make builds the BPF skeletons" grep -q 'bpftool gen skeleton' "$T_DIR/make.log"
check "nicstalld (make check's build) runs" "$NICSTALLD" --version
# the compile line of a user's `make CFLAGS=-O0` still has the required flags
( cd "$T_DIR/src" && make -n -B CFLAGS=-O0 build/lib/util.o ) > "$T_DIR/n.log" 2>&1
line=$(grep -E '(^| )-c -o build/lib/util.o' "$T_DIR/n.log" | head -1)
echo "$line"
for f in -std=gnu17 -Wall -Wextra -Werror -MMD -O0; do
	check "CFLAGS=-O0 keeps $f" grep -q -- " $f " <<< "$line "
done
# only the loader waits for the BPF skeleton: another object builds alone
( cd "$T_DIR/src" && rm -rf build && make build/lib/util.o > "$T_DIR/one.log" 2>&1 )
check "an object that includes no skeleton does not build the BPF program" \
	bash -c "! grep -q 'bpftool gen skeleton' '$T_DIR/one.log'"
