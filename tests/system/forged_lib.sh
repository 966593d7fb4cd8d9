# The setting of the forged-claim tests (test_forged_vma*.sh): a watched
# port cli in namespace $A (10.223.0.1) with track = vma, recover =
# reprogram and promiscuous captures, an unprivileged user $U who may
# write the VMA directory, the port's promiscuity sampled all along, and
# what a forger writes: vmastat_forge.py's image() is a libvma 9.8.84
# (src/vma/util/vma_stats.h) sh_mem_t with one socket block.
# Source after lib.sh; $1: two letters for the names.
fv_setup() {
	A=${T_PREFIX}a B=${T_PREFIX}b IA=$1$$a IB=$1$$b
	IA=${IA:0:15} IB=${IB:0:15}
	netns_pair "$A" "$B" "$IA" "$IB" 10.223.0.1 10.223.0.2 || return 1
	chmod 755 "$T_DIR"
	mkdir -p "$T_DIR/vma" "$T_DIR/xlio" "$T_DIR/flows"
	chmod 1777 "$T_DIR/vma"         # a /tmp: every user may write there
	U=ns$1$$ U=${U:0:16}
	# its engine still runs when the cleanup comes (the pids are stopped after)
	useradd -M -N -g nogroup -s /usr/sbin/nologin "$U" && T_CLEANUP+=("pkill -KILL -u $U; userdel -f $U")
	{
		conf_daemon "vma_stats_dir = $T_DIR/vma" "xlio_stats_dir = $T_DIR/xlio" \
			"stall_threshold = 500ms" "flow_interval = 50ms" "incident_cooldown = 0s" \
			"incident_window = 1s" "observe_window = 100ms" "capture_time = 100ms" \
			"release_wait = 300ms"
		printf '[port cli]\nnetns = %s\ninterface = %s\npeer_address = 10.223.0.2\n' "$A" "$IA"
		printf 'track = vma\nrecover = reprogram\npromisc_capture = yes\n'
	} > "$T_DIR/n.conf"
	start_daemon "$T_DIR/n.conf" || return 1
	# the port's promiscuity count, sampled all along: a capture or
	# reprogram would move it, however briefly
	( while :; do ip -n "$A" -d link show "$IA" | grep -o 'promiscuity [0-9]*'; sleep 0.02; done \
		> "$T_DIR/promisc.log" 2>/dev/null ) &
	T_PIDS+=($!)
	FV_KMSG0=$(dmesg 2>/dev/null | grep -c "$IA: entered promiscuous mode")
	cat > "$T_DIR/vmastat_forge.py" <<'PY'
import socket, struct
def image(fd, inode, laddr, raddr, lport, rport):
    V_SHMEM, V_BLOCKS, SKT, CNT = 12416, 12072, 12072 + 8, 12072 + 8 + 72
    b = bytearray(V_SHMEM + 344)                 # SHMEM_STATS_SIZE(1)
    b[4:8] = bytes([9, 8, 84, 0])                       # ver_info
    b[8:40] = b"25ca1bbb55c2c5536b0b4bded2689e9a"        # stats_protocol_ver
    struct.pack_into("<Q", b, 12064, 1)                 # max_skt_inst_num
    b[V_BLOCKS] = 1                                     # b_enabled
    struct.pack_into("<II", b, SKT, fd, inode)
    b[SKT + 12] = socket.SOCK_DGRAM
    b[SKT + 16] = 1                                     # offloaded
    b[SKT + 20:SKT + 24] = socket.inet_aton(laddr)
    b[SKT + 24:SKT + 28] = socket.inet_aton(raddr)
    struct.pack_into("!HH", b, SKT + 32, lport, rport)
    struct.pack_into("<IQ", b, SKT + 44, 1, 4096)       # rx ready: 1 packet, 4096 bytes
    struct.pack_into("<II", b, CNT, 10, 640)            # n_rx_packets, n_rx_bytes
    struct.pack_into("<II", b, CNT + 64, 10, 640)       # n_tx_sent_pkt/byte_count
    return bytes(b)
PY
}

as_user() { setpriv --reuid="$U" --regid="$(id -g "$U")" --init-groups "$@"; }

# The forged flow is listed unverified and stalled, and after 4 s (when
# the code before opened, captured and reprogrammed) nothing acted.
fv_nothing_acted() {
	local kmsg1
	check "the forged flow is read and marked unverified" wait_for 10 bash -c \
		"'$NICSTALLCTL' -s '$T_SOCK' -j flows cli | jqe '[.flows[] | select(.source == \"vma\" and (.tuple | test(\"10.223.0.1:11111 -> 10.223.0.9:40000\")) and .claim == \"unverified\")] | length == 1'"
	check "it is held long past the threshold (stalled)" wait_for 10 bash -c \
		"'$NICSTALLCTL' -s '$T_SOCK' -j flows cli | jqe '[.flows[] | select(.source == \"vma\" and .claim == \"unverified\" and .state == \"stalled\")] | length == 1'"
	sleep 4
	check "nicstallctl flows says unverified" bash -c "'$NICSTALLCTL' -s '$T_SOCK' flows cli | grep '10.223.0.1:11111 -> 10.223.0.9:40000' | grep -q unverified"
	check "no incident, no investigation" bash -c \
		"'$NICSTALLCTL' -s '$T_SOCK' -j incident list | jqe '(.investigations | length) == 0 and ((.incidents // []) | length) == 0'"
	check "the detector counted the stall it did not act on" bash -c \
		"'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.flow_sources.unverified_stalls >= 1'"
	check "no bundle, no capture file" bash -c "! find '$T_DIR/state' \\( -name '*.pcap*' -o -name manifest.json \\) | grep -q ."
	check "the port never went promiscuous" bash -c "! grep -qv 'promiscuity 0' '$T_DIR/promisc.log' && grep -q 'promiscuity 0' '$T_DIR/promisc.log'"
	kmsg1=$(dmesg 2>/dev/null | grep -c "$IA: entered promiscuous mode")
	check "the kernel logged no promiscuous transition ($FV_KMSG0 -> $kmsg1)" test "$kmsg1" = "$FV_KMSG0"
	check "no reprogram" bash -c "! grep -qi 'reprogram' '$T_DIR/daemon.log'"
	grep 'socket claims the kernel did not verify' "$T_DIR/daemon.log" | head -1
}
