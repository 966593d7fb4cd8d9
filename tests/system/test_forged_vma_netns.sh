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
. "$(dirname "$0")/forged_lib.sh"
t_init
fv_setup fn || exit 1
if ! as_user unshare -Urn true 2>/dev/null; then
	echo "SKIP: unprivileged user namespaces are off here"
	exit 0
fi

# ---- the user's own namespace, the port's address on its lo, a real
# socket on it, the library mapped, a file that tells the truth about it
# but for the namespace
cat > "$T_DIR/forge.py" <<'PY'
import os, socket, sys, time
sys.path.insert(0, sys.argv[1])
import vmastat_forge
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.223.0.1", 11111))
fd, ino = s.fileno(), os.fstat(s.fileno()).st_ino     # its own socket, truly
p = os.path.join(sys.argv[2], "vmastat.%d" % os.getpid())
with open(p + ".tmp", "wb") as f:
    f.write(vmastat_forge.image(fd, ino, "10.223.0.1", "10.223.0.9", 11111, 40000))
os.chmod(p + ".tmp", 0o644)
os.rename(p + ".tmp", p)
print("ready", os.getpid(), fd, ino, flush=True)
time.sleep(60)
PY
# the root-owned library, where the user may map it (the checkout may be
# in a 0700 directory)
LIBVMA=$(t_public_copy "$BUILD/libvma.so.9.8.84") || { fail "a copy of the library"; exit 1; }
as_user unshare -Urn sh -c "ip addr add 10.223.0.1/24 dev lo && ip link set lo up && \
	exec env LD_PRELOAD='$LIBVMA' python3 '$T_DIR/forge.py' '$T_DIR' '$T_DIR/vma'" \
	> "$T_DIR/forge.log" 2>&1 &
T_PIDS+=($!)
check "the user's process is up in its own namespace" wait_for 5 grep -q '^ready' "$T_DIR/forge.log"
read -r _ FP _ _ < "$T_DIR/forge.log"
T_PIDS+=("$FP")
check "it maps the root-installed library" grep -q libvma.so.9.8.84 "/proc/$FP/maps"
check "its namespace is not the port's" test "$(readlink "/proc/$FP/ns/net")" != "$(ip netns exec "$A" readlink /proc/self/ns/net)"
check "the file is the user's" test "$(stat -c %U "$T_DIR/vma/vmastat.$FP")" = "$U"
fv_nothing_acted
check "the line says why: no socket in the port's namespace" grep -q "no udp socket receives 10.223.0.9:40000 -> 10.223.0.1:11111" "$T_DIR/daemon.log"
check "daemon alive" kill -0 "$T_DPID"
