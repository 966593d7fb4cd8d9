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
t_init
A=${T_PREFIX}a B=${T_PREFIX}b IA=fv$$a IB=fv$$b
IA=${IA:0:15} IB=${IB:0:15}
netns_pair "$A" "$B" "$IA" "$IB" 10.223.0.1 10.223.0.2 || exit 1
chmod 755 "$T_DIR"
mkdir -p "$T_DIR/vma" "$T_DIR/xlio" "$T_DIR/flows"
chmod 1777 "$T_DIR/vma"         # a /tmp: every user may write there
U=nsf$$ U=${U:0:16}
useradd -M -N -g nogroup -s /usr/sbin/nologin "$U" && T_CLEANUP+=("userdel $U")
as_user() { setpriv --reuid="$U" --regid="$(id -g "$U")" --init-groups "$@"; }
{
	conf_daemon "vma_stats_dir = $T_DIR/vma" "xlio_stats_dir = $T_DIR/xlio" \
		"stall_threshold = 500ms" "flow_interval = 50ms" "incident_cooldown = 0s" \
		"incident_window = 1s" "observe_window = 100ms" "capture_time = 100ms" \
		"release_wait = 300ms"
	printf '[port cli]\nnetns = %s\ninterface = %s\npeer_address = 10.223.0.2\n' "$A" "$IA"
	printf 'track = vma\nrecover = reprogram\npromisc_capture = yes\n'
} > "$T_DIR/n.conf"
start_daemon "$T_DIR/n.conf" || exit 1

# the port's promiscuity count, sampled all along: a capture or reprogram
# would move it, however briefly
( while :; do ip -n "$A" -d link show "$IA" | grep -o 'promiscuity [0-9]*'; sleep 0.02; done \
	> "$T_DIR/promisc.log" 2>/dev/null ) &
T_PIDS+=($!)
kmsg0=$(dmesg 2>/dev/null | grep -c "$IA: entered promiscuous mode")

# ---- the forgery: the user's own sleep, a file the user writes
setpriv --reuid="$U" --regid="$(id -g "$U")" --init-groups sleep 60 &
SP=$!                           # setpriv execs sleep: the same pid
T_PIDS+=("$SP")
sleep 0.2
F=$T_DIR/vma/vmastat.$SP
python3 - "$T_DIR/forged" <<'PY'
import socket, struct, sys
# libvma 9.8.84 (src/vma/util/vma_stats.h): sh_mem_t with one socket block
V_SHMEM, V_BLOCKS, SKT, CNT = 12416, 12072, 12072 + 8, 12072 + 8 + 72
b = bytearray(V_SHMEM + 344)                 # SHMEM_STATS_SIZE(1)
b[4:8] = bytes([9, 8, 84, 0])                       # ver_info
b[8:40] = b"25ca1bbb55c2c5536b0b4bded2689e9a"        # stats_protocol_ver
struct.pack_into("<Q", b, 12064, 1)                 # max_skt_inst_num
b[V_BLOCKS] = 1                                     # b_enabled
struct.pack_into("<II", b, SKT, 3, 777)             # fd, inode (nobody's)
b[SKT + 12] = socket.SOCK_DGRAM
b[SKT + 16] = 1                                     # offloaded
b[SKT + 20:SKT + 24] = socket.inet_aton("10.223.0.1")
b[SKT + 24:SKT + 28] = socket.inet_aton("10.223.0.9")
struct.pack_into("!HH", b, SKT + 32, 11111, 40000)
struct.pack_into("<IQ", b, SKT + 44, 1, 4096)       # rx ready: 1 packet, 4096 bytes
struct.pack_into("<II", b, CNT, 10, 640)            # n_rx_packets, n_rx_bytes
struct.pack_into("<II", b, CNT + 64, 10, 640)       # n_tx_sent_pkt/byte_count
open(sys.argv[1], "wb").write(b)
PY
chmod 644 "$T_DIR/forged"
as_user cp "$T_DIR/forged" "$F"         # written by the user: theirs
check "the forged file is the user's" test "$(stat -c %U "$F")" = "$U"
forged() { ctl -j flows cli | jq -c '[.flows[] | select(.source == "vma" and (.tuple | test("10.223.0.1:11111 -> 10.223.0.9:40000")))]'; }
check "the forged flow is read and marked unverified" wait_for 10 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j flows cli | jqe '[.flows[] | select(.source == \"vma\" and (.tuple | test(\"10.223.0.1:11111 -> 10.223.0.9:40000\")) and .claim == \"unverified\")] | length == 1'"
check "it is held long past the threshold (stalled)" wait_for 10 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j flows cli | jqe '[.flows[] | select(.source == \"vma\" and .claim == \"unverified\" and .state == \"stalled\")] | length == 1'"
sleep 4                         # a landed daemon opens, captures and reprograms here
check "nicstallctl flows says unverified" bash -c "'$NICSTALLCTL' -s '$T_SOCK' flows cli | grep '10.223.0.1:11111 -> 10.223.0.9:40000' | grep -q unverified"
check "no incident, no investigation" bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j incident list | jqe '(.investigations | length) == 0 and ((.incidents // []) | length) == 0'"
check "the detector counted the stall it did not act on" bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.flow_sources.unverified_stalls >= 1'"
check "no bundle, no capture file" bash -c "! find '$T_DIR/state' \\( -name '*.pcap*' -o -name manifest.json \\) | grep -q ."
check "the port never went promiscuous" bash -c "! grep -qv 'promiscuity 0' '$T_DIR/promisc.log' && grep -q 'promiscuity 0' '$T_DIR/promisc.log'"
kmsg1=$(dmesg 2>/dev/null | grep -c "$IA: entered promiscuous mode")
check "the kernel logged no promiscuous transition ($kmsg0 -> $kmsg1)" test "$kmsg1" = "$kmsg0"
check "no reprogram" bash -c "! grep -qi 'reprogram' '$T_DIR/daemon.log'"
n=$(grep -c 'socket claims the kernel did not verify' "$T_DIR/daemon.log")
check "one rate-limited line about it ($n)" test "$n" -eq 1
grep 'socket claims the kernel did not verify' "$T_DIR/daemon.log" | head -1
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
