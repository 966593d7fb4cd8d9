#!/bin/bash
# Issue 34, finding 2, live: an unprivileged user forges a vmastat.<pid>
# for one of their own `sleep` processes, naming another conversation on
# the watched port (10.223.0.1:11111 -> 10.223.0.9:40000) with 4096 unread
# bytes that never move. The claim is checked against the kernel and fails
# (the process holds no such socket and maps no libvma): no incident, no
# capture, no promiscuous transition, no reprogram; `nicstallctl flows`
# shows the flow as unverified; the daemon says so in one rate-limited
# line. Then the emulated engine (tests/engine/vmaengine.c, preloading a
# root-installed libvma.so stand-in) on the same port, whose claim the
# kernel backs, still opens an incident.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/forged_lib.sh"
t_init
fv_setup fv || exit 1

# ---- the forgery: the user's own sleep, a file the user writes
setpriv --reuid="$U" --regid="$(id -g "$U")" --init-groups sleep 60 &
SP=$!                           # setpriv execs sleep: the same pid
T_PIDS+=("$SP")
sleep 0.2
F=$T_DIR/vma/vmastat.$SP
# fd 3, inode 777: nobody's
python3 -c "import sys; sys.path.insert(0, sys.argv[1]); import vmastat_forge as v; \
open(sys.argv[2], 'wb').write(v.image(3, 777, '10.223.0.1', '10.223.0.9', 11111, 40000))" \
	"$T_DIR" "$T_DIR/forged"
chmod 644 "$T_DIR/forged"
as_user cp "$T_DIR/forged" "$F"         # written by the user: theirs
check "the forged file is the user's" test "$(stat -c %U "$F")" = "$U"
fv_nothing_acted
n=$(grep -c 'socket claims the kernel did not verify' "$T_DIR/daemon.log")
check "one rate-limited line about it ($n)" test "$n" -eq 1
check "the line says why" grep -q "process $SP runs no code from a file named libvma.so" "$T_DIR/daemon.log"

# ---- the real (emulated) engine on the same port: verified, investigated.
# Its server stops answering after 1500 requests (about 3 s at one per 2 ms):
# the reader must first see the flow move, or a flow first seen already
# waiting is idle to the detector (it cannot date the wait), and the check
# below flipped with how soon the daemon's rescan found the engine's file.
PRE=LD_PRELOAD=$BUILD/libvma.so.9.8.84
ip netns exec "$B" env "$PRE" "$BUILD/vmaengine" --role server --bind 10.223.0.2:11111 --dir "$T_DIR/vma" \
	--stall-after 1500 --duration 40 > "$T_DIR/vsrv.log" 2>&1 &
T_PIDS+=($!)
wait_for 5 grep -q '^ready' "$T_DIR/vsrv.log"
ip netns exec "$A" env "$PRE" "$BUILD/vmaengine" --role client --bind 10.223.0.1:0 --peer 10.223.0.2:11111 \
	--dir "$T_DIR/vma" --interval-us 2000 --duration 40 > "$T_DIR/vcli.log" 2>&1 &
T_PIDS+=($!)
check "the engine's claim verifies" wait_for 10 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j flows cli | jqe '[.flows[] | select(.source == \"vma\" and (.tuple | test(\"-> 10.223.0.2:11111\")) and .claim == \"verified\")] | length == 1'"
check "its stall opens an incident" wait_for 20 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j incident list | jqe '[.investigations[]] | length >= 1'"
ID=$(ctl -j incident list | jq -r '.investigations[0].id')
check "its investigation completes" wait_for 30 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j incident show '$ID' | jqe '.record.state == \"complete\"'"
check "the incident holds the verified flow, not the forged one" bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j incident show '$ID' | jqe '(.record.incident.flows | map(select(.source == \"vma\")) | length) >= 1 and (.record.incident.flows | all(.tuple | test(\"10.223.0.9\") | not))'"
check "still one line about unverified claims" test "$(grep -c 'socket claims the kernel did not verify' "$T_DIR/daemon.log")" -eq 1
check "daemon alive" kill -0 "$T_DPID"
