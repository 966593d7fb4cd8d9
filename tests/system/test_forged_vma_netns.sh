#!/bin/bash
# Issue 34, finding 2 (review 1c), live: the claim check runs in the
# namespace of the watched port, not the claimer's. An unprivileged user
# makes a network namespace of their own (`unshare -Urn`), puts the
# watched port's address on its lo, binds 10.223.0.1:11111 there, maps the
# root-installed libvma.so stand-in (LD_PRELOAD) and writes a vmastat.<pid>
# whose block names that very socket (its fd and inode) in a conversation
# 10.223.0.1:11111 -> 10.223.0.9:40000 on the watched port, with 4096
# unread bytes that never move. Everything the process says of itself is
# true in its own namespace; in the port's namespace no socket takes that
# conversation: unverified, no incident, no capture, no reprogram.
. "$(dirname "$0")/lib.sh"
t_init
A=${T_PREFIX}a B=${T_PREFIX}b IA=fn$$a IB=fn$$b
IA=${IA:0:15} IB=${IB:0:15}
netns_pair "$A" "$B" "$IA" "$IB" 10.223.0.1 10.223.0.2 || exit 1
chmod 755 "$T_DIR"
mkdir -p "$T_DIR/vma" "$T_DIR/xlio" "$T_DIR/flows"
chmod 1777 "$T_DIR/vma"         # a /tmp: every user may write there
U=nsn$$ U=${U:0:16}
useradd -M -N -g nogroup -s /usr/sbin/nologin "$U" && T_CLEANUP+=("userdel $U")
as_user() { setpriv --reuid="$U" --regid="$(id -g "$U")" --init-groups "$@"; }
if ! as_user unshare -Urn true 2>/dev/null; then
	echo "SKIP: unprivileged user namespaces are off here"
	exit 0
fi
{
	conf_daemon "vma_stats_dir = $T_DIR/vma" "xlio_stats_dir = $T_DIR/xlio" \
		"stall_threshold = 500ms" "flow_interval = 50ms" "incident_cooldown = 0s" \
		"incident_window = 1s" "observe_window = 100ms" "capture_time = 100ms" \
		"release_wait = 300ms"
	printf '[port cli]\nnetns = %s\ninterface = %s\npeer_address = 10.223.0.2\n' "$A" "$IA"
	printf 'track = vma\nrecover = reprogram\npromisc_capture = yes\n'
} > "$T_DIR/n.conf"
start_daemon "$T_DIR/n.conf" || exit 1

( while :; do ip -n "$A" -d link show "$IA" | grep -o 'promiscuity [0-9]*'; sleep 0.02; done \
	> "$T_DIR/promisc.log" 2>/dev/null ) &
T_PIDS+=($!)
kmsg0=$(dmesg 2>/dev/null | grep -c "$IA: entered promiscuous mode")

# ---- the user's own namespace, the port's address on its lo, a real
# socket on it, the library mapped, a file that tells the truth about it
# but for the namespace
cat > "$T_DIR/forge.py" <<'PY'
import os, socket, struct, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.223.0.1", 11111))
fd, ino = s.fileno(), os.fstat(s.fileno()).st_ino
# libvma 9.8.84 (src/vma/util/vma_stats.h): sh_mem_t with one socket block
V_SHMEM, V_BLOCKS, SKT, CNT = 12416, 12072, 12072 + 8, 12072 + 8 + 72
b = bytearray(V_SHMEM + 344)
b[4:8] = bytes([9, 8, 84, 0])
b[8:40] = b"25ca1bbb55c2c5536b0b4bded2689e9a"
struct.pack_into("<Q", b, 12064, 1)
b[V_BLOCKS] = 1
struct.pack_into("<II", b, SKT, fd, ino)            # its own socket, truly
b[SKT + 12] = socket.SOCK_DGRAM
b[SKT + 16] = 1
b[SKT + 20:SKT + 24] = socket.inet_aton("10.223.0.1")
b[SKT + 24:SKT + 28] = socket.inet_aton("10.223.0.9")
struct.pack_into("!HH", b, SKT + 32, 11111, 40000)
struct.pack_into("<IQ", b, SKT + 44, 1, 4096)
struct.pack_into("<II", b, CNT, 10, 640)
struct.pack_into("<II", b, CNT + 64, 10, 640)
p = os.path.join(sys.argv[1], "vmastat.%d" % os.getpid())
with open(p + ".tmp", "wb") as f:
    f.write(b)
os.chmod(p + ".tmp", 0o644)
os.rename(p + ".tmp", p)
print("ready", os.getpid(), fd, ino, flush=True)
time.sleep(60)
PY
as_user unshare -Urn sh -c "ip addr add 10.223.0.1/24 dev lo && ip link set lo up && \
	exec env LD_PRELOAD='$BUILD/libvma.so.9.8.84' python3 '$T_DIR/forge.py' '$T_DIR/vma'" \
	> "$T_DIR/forge.log" 2>&1 &
T_PIDS+=($!)
check "the user's process is up in its own namespace" wait_for 5 grep -q '^ready' "$T_DIR/forge.log"
read -r _ FP _ _ < "$T_DIR/forge.log"
T_PIDS+=("$FP")
check "it maps the root-installed library" grep -q libvma.so.9.8.84 "/proc/$FP/maps"
check "its namespace is not the port's" test "$(readlink "/proc/$FP/ns/net")" != "$(ip netns exec "$A" readlink /proc/self/ns/net)"
check "the file is the user's" test "$(stat -c %U "$T_DIR/vma/vmastat.$FP")" = "$U"
check "the flow is read and marked unverified" wait_for 10 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j flows cli | jqe '[.flows[] | select(.source == \"vma\" and (.tuple | test(\"10.223.0.1:11111 -> 10.223.0.9:40000\")) and .claim == \"unverified\")] | length == 1'"
check "it is held long past the threshold (stalled)" wait_for 10 bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j flows cli | jqe '[.flows[] | select(.source == \"vma\" and .claim == \"unverified\" and .state == \"stalled\")] | length == 1'"
sleep 4                         # the code before opened, captured and reprogrammed here
check "no incident, no investigation" bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j incident list | jqe '(.investigations | length) == 0 and ((.incidents // []) | length) == 0'"
check "no bundle, no capture file" bash -c "! find '$T_DIR/state' \\( -name '*.pcap*' -o -name manifest.json \\) | grep -q ."
check "the port never went promiscuous" bash -c "! grep -qv 'promiscuity 0' '$T_DIR/promisc.log' && grep -q 'promiscuity 0' '$T_DIR/promisc.log'"
kmsg1=$(dmesg 2>/dev/null | grep -c "$IA: entered promiscuous mode")
check "the kernel logged no promiscuous transition ($kmsg0 -> $kmsg1)" test "$kmsg1" = "$kmsg0"
check "no reprogram" bash -c "! grep -qi 'reprogram' '$T_DIR/daemon.log'"
grep 'socket claims the kernel did not verify' "$T_DIR/daemon.log" | head -1
check "the line says why: no socket in the port's namespace" grep -q "no udp socket receives 10.223.0.9:40000 -> 10.223.0.1:11111" "$T_DIR/daemon.log"
check "daemon alive" kill -0 "$T_DPID"
