# bench/sections.sh: the benchmarks of bench/run.sh, one function each.
# Every comparison runs its variants interleaved, several rounds.

# ---- sweep: CPU per full counter sweep, three inputs, four ways ----

TEXT_DUMP=tests/fixtures/real/ethtool-S_mlx5-cx4lx-k4.15-ethq_1.txt
SYSFS_TTAR=tests/fixtures/real/sysfs-infiniband-hw_counters_mlx5_0_procfs-fixture.ttar.txt

# ne_start NETNS|- PORT ARGS...: a node_exporter on 127.0.0.1:PORT; NE_PID
ne_start() {
	local ns=$1 port=$2
	shift 2
	if [ "$ns" = - ]; then
		prometheus-node-exporter --web.listen-address=127.0.0.1:"$port" \
			--collector.disable-defaults "$@" > "$WORK/ne-$port.log" 2>&1 &
	else
		ip netns exec "$ns" prometheus-node-exporter --web.listen-address=127.0.0.1:"$port" \
			--collector.disable-defaults "$@" > "$WORK/ne-$port.log" 2>&1 &
	fi
	NE_PID=$!
	PIDS+=("$NE_PID")
	if [ "$ns" = - ]; then
		wait_for 10 curl -sf "http://127.0.0.1:$port/metrics"
	else
		wait_for 10 ip netns exec "$ns" curl -sf "http://127.0.0.1:$port/metrics"
	fi
}

# sweep_one SERIES [netns] ARGS...: one bench_sweep run, its CPU per sweep
sweep_one() {
	local series=$1 ns=$2 out
	shift 2
	if [ "$ns" = - ]; then
		out=$("$BUILD/bench_sweep" "$@") || { echo "bench: bench_sweep $*: failed" >&2; return; }
	else
		out=$(ip netns exec "$ns" "$BUILD/bench_sweep" "$@") ||
			{ echo "bench: bench_sweep $*: failed" >&2; return; }
	fi
	sample "$series" "$(echo "$out" | jq .cpu_us)"
	echo "$out" >> "$WORK/sweep.jsonl"
}

# host_tree DIR: a /proc and /sys tree of 16 NVMe disks (and their
# partitions, which the host source skips) and the live pressure files;
# the watched processes are linked in by the caller.
host_tree() {
	local d=$1 i
	mkdir -p "$d/proc/sys/kernel" "$d/sys/block"
	ln -s /proc/pressure "$d/proc/pressure"
	echo 1 > "$d/proc/sys/kernel/task_delayacct"
	: > "$d/proc/diskstats"
	for i in $(seq 0 15); do
		printf '259 %d nvme%dn1 2320000 0 18560000 9100000 1000 0 8000 500 31 9900000 17010000 0 0 0 0 60602 106555\n' \
			"$i" "$i" >> "$d/proc/diskstats"
		printf '259 %d nvme%dn1p1 492 813 17572 96 848 81 108288 210 0 76 307 0 0 0 0 0 0\n' \
			"$((i + 100))" "$i" >> "$d/proc/diskstats"
		mkdir -p "$d/sys/block/nvme${i}n1/device" "$d/sys/block/nvme${i}n1/queue"
		echo "XG7000-2TB 2242" > "$d/sys/block/nvme${i}n1/device/model"
		echo GT0d9d63 > "$d/sys/block/nvme${i}n1/device/firmware_rev"
		echo "SN$i" > "$d/sys/block/nvme${i}n1/device/serial"
		echo 1023 > "$d/sys/block/nvme${i}n1/queue/nr_requests"
		echo 0 > "$d/sys/block/nvme${i}n1/queue/rotational"
	done
}

# host_procs DIR: 8 processes of 4 threads each (cleaned up with the
# bench's), linked into DIR/proc; their pids in HPIDS as a,b,...
host_procs() {
	local d=$1 i
	HPIDS=""
	for i in 1 2 3 4 5 6 7 8; do
		spawn_bg python3 -c 'import threading, time
[threading.Thread(target=time.sleep, args=(3600,), daemon=True).start() for _ in range(3)]
time.sleep(3600)' </dev/null >/dev/null 2>&1
		ln -s "/proc/$LAST_PID" "$d/proc/$LAST_PID"
		HPIDS=$HPIDS${HPIDS:+,}$LAST_PID
	done
}

section_sweep() {
	local W=${PFX}w IF=${PFX}w0 sysroot=$WORK/sysfs/fixtures port rounds n m k
	local ib=$sysroot/sys/class/infiniband/mlx5_0/ports/1
	rounds=$(pick 1 5) n=$(pick 200 5000) m=$(pick 5 100) k=$(pick 5 200)
	ip netns add "$W" && NETNS+=("$W")
	ip -n "$W" link add "$IF" type veth peer name "${IF%0}1"
	ip -n "$W" link set lo up
	ip -n "$W" link set "$IF" up
	ip -n "$W" link set "${IF%0}1" up
	sh tests/tools/ttar-unpack "$SYSFS_TTAR" "$WORK/sysfs" || return
	# node_exporter: the ethtool collector on the veth (in its namespace),
	# the infiniband collector on the same sysfs tree, the textfile
	# collector on the 751 counters of the dump as Prometheus text
	mkdir -p "$WORK/textfile"
	awk -F: '/^[[:space:]]+[^#].*:[[:space:]]*[0-9]+[[:space:]]*$/ {
		n = $1; gsub(/^[[:space:]]+|[[:space:]]+$/, "", n); v = $2; gsub(/[[:space:]]/, "", v)
		gsub(/[\\"]/, "_", n); printf "node_ethtool_text{device=\"cx4lx\",stat=\"%s\"} %s\n", n, v }' \
		"$TEXT_DUMP" | sort -u -t'}' -k1,1 > "$WORK/textfile/ethtool.prom"
	ne_start "$W" 19101 --collector.ethtool "--collector.ethtool.device-include=^$IF\$" ||
		echo "bench: node_exporter (ethtool) did not start" >&2
	NE_VETH=$NE_PID
	ne_start - 19102 --collector.infiniband "--path.sysfs=$sysroot/sys" ||
		echo "bench: node_exporter (infiniband) did not start" >&2
	NE_SYSFS=$NE_PID
	ne_start - 19103 --collector.textfile "--collector.textfile.directory=$WORK/textfile" ||
		echo "bench: node_exporter (textfile) did not start" >&2
	NE_TEXT=$NE_PID
	ip netns exec "$W" curl -s http://127.0.0.1:19101/metrics | grep '^node_ethtool' > "$WORK/ne-veth.txt"
	host_tree "$WORK/host"
	host_procs "$WORK/host"
	sleep 0.5       # their threads are up
	for r in $(seq "$rounds"); do
		sweep_one host_ours - ours-host "$WORK/host/proc" "$WORK/host" "$HPIDS" "$n"
		sweep_one veth_ours "$W" ours-veth "$IF" "$n"
		sweep_one veth_floor "$W" floor-veth "$IF" "$n"
		sweep_one veth_spawn "$W" spawn "ethtool -S $IF; ip -s link show dev $IF" "$m"
		sweep_one veth_ne "$W" scrape 127.0.0.1:19101 "$NE_VETH" "$k"
		sweep_one text_ours - ours-text "$TEXT_DUMP" "$n"
		sweep_one text_floor - floor-text "$TEXT_DUMP" "$n"
		sweep_one text_spawn - spawn "cat $TEXT_DUMP" "$m"
		sweep_one text_ne - scrape 127.0.0.1:19103 "$NE_TEXT" "$k"
		sweep_one sysfs_ours - ours-sysfs "$sysroot" mlx5_0 1 "$n"
		sweep_one sysfs_floor - floor-sysfs "$sysroot" mlx5_0 1 "$n"
		sweep_one sysfs_spawn - spawn "cat $ib/hw_counters/* $ib/counters/*" "$m"
		sweep_one sysfs_ne - scrape 127.0.0.1:19102 "$NE_SYSFS" "$k"
	done
	stop_pid "$NE_VETH"; stop_pid "$NE_SYSFS"; stop_pid "$NE_TEXT"
	for p in ${HPIDS//,/ }; do stop_pid "$p"; done
	row section=sweep name="host resources (16 disks, 8 processes of 4 threads): ours" unit=us \
		series=host_ours goal="" check=none \
		note="CPU per sweep of the host source (src_host.c), recorder push included: PSI, 32 diskstats lines (16 whole disks kept), and per process its stat and io and each thread's schedstat and stat; once per port per sweep"
	local nveth nser
	nveth=$(jq -s '[.[] | select(.mode == "ours-veth")][0].counters' "$WORK/sweep.jsonl")
	nser=$(wc -l < "$WORK/ne-veth.txt")
	for inp in veth text sysfs; do
		local what
		case $inp in
		veth) what="veth ($nveth counters: ethtool ioctl + stats64)" ;;
		text) what="recorded ethtool -S text (751 counters)" ;;
		sysfs) what="mlx5 sysfs tree (hw_counters + counters)" ;;
		esac
		row section=sweep name="$what: ours" unit=us series=${inp}_ours \
			goal="" check=none note="CPU per sweep, recorder push included"
		row section=sweep name="  (a) spawning the tools / ours" unit=us series=${inp}_spawn \
			vs=${inp}_ours goal=">= 100x" check=ratio_min:100 \
			note="$(sweep_note_spawn $inp)"
		row section=sweep name="  (b) node_exporter scrape / ours" unit=us series=${inp}_ne \
			vs=${inp}_ours goal="> 1x (ours faster)" check=ratio_above:1 \
			note="$(sweep_note_ne $inp "$nser")"
		row section=sweep name="  ours / (c) the bare system calls" unit=us series=${inp}_ours \
			vs=${inp}_floor goal="<= 1.2x" check=ratio_max:1.2 \
			note="$(sweep_note_floor $inp)"
	done
}

sweep_note_spawn() {
	case $1 in
	veth) echo "ethtool -S and ip -s link through a shell, per sweep" ;;
	text) echo "cat of the dump through a shell: the cheapest stand-in for ethtool -S on an mlx5 port, which also makes the driver query the firmware; ours reads the file and, its names and order unchanged since the sweep before, only its 751 values (etxt_parse's same-layout path)" ;;
	sysfs) echo "one cat of every hw_counters and counters file" ;;
	esac
}
sweep_note_ne() {
	case $1 in
	veth) echo "ethtool collector on the one veth: it reports driver info and the $2 ethtool -S series a veth has (no link settings or module data)" ;;
	text) echo "node_exporter cannot read recorded ethtool -S text: its textfile collector on the same 751 counters as Prometheus text" ;;
	sysfs) echo "infiniband collector (--path.sysfs) on the same tree" ;;
	esac
}
sweep_note_floor() {
	case $1 in
	text) echo "the floor only reads the file; finding and reading 751 values in 17.5 kB of text is ours (etxt_parse's same-layout path: a compare per name, no hash or copy; the line split alone about a fifth of the sweep). No parse of 751 lines comes within 1.2x of reading them; only skipping the parse of an unchanged file (inode, size, mtime) would, and a counter file that does not change is not a sweep" ;;
	*) echo "the same system calls with nothing done with what they return" ;;
	esac
}

# ---- idle: the daemon's CPU over 60 s per source and all together ----

section_idle() {
	local seg secs warm v
	env_up || return
	seg=$(pick 1 4) secs=$(pick 2 15) warm=$(pick 1 3)
	mkconf "$WORK/all.conf"
	mkconf "$WORK/sock.conf" "track = sock"
	# the tracker alone with its hooks on all the time: what it costs
	# when on (in "all" they stay off while nothing waits)
	mkconf "$WORK/bpf.conf" "track = bpf
tracker_hooks = always"
	mkconf "$WORK/engine.conf" "track = engine"
	# all sources, the thread watch off: beside "all", what watching the
	# sessions' owners' threads costs the idle daemon
	mkconf "$WORK/notw.conf" "" "" "thread_watch = off"
	# all sources and a producer (the engines, by comm) serving 2,000
	# series (promserve.py): the host source reads its processes, the app
	# source scrapes its endpoint every sample, for both ports (one share)
	local pf=$WORK/promserve.port pp
	rm -f "$pf"
	python3 "$ROOT/tests/tools/promserve.py" "$pf" > /dev/null 2>&1 &
	pp=$!
	for _ in $(seq 50); do [ -s "$pf" ] && break; sleep 0.1; done
	mkconf "$WORK/app.conf"
	printf '[producer engine]\ncomm = nsengine\napp_metrics = http://127.0.0.1:%s/series/2000\n' \
		"$(cat "$pf" 2>/dev/null)" >> "$WORK/app.conf"
	for r in $(seq "$seg"); do
		for v in all app notw sock bpf engine; do
			idle_run "$v" "$WORK/$v.conf" "$warm" "$secs"
		done
	done
	stop_pid "$pp"
	local total=$(( seg * secs ))
	# issue 31's goal for this row (issue 13's was < 0.5%): a row that
	# misses says what it is made of (the rows below) and what would close it
	row section=idle name="all default sources (engine, sock, bpf), ${total} s" unit=% \
		series=idle_all goal="< 0.1% (issue 31; < 0.5% before it)" check=below:0.1 \
		note="$(idle_note all); the sessions are busy (a request every 2 ms each), so every poll of the engine tables finds each record moved and hands it to the detector, and sock_diag reads them on their pace: the parts below are the work of watching 32 busy flows at 7 polls a second, not of idle ones (the scale rows); under 0.1% needs the engine tables read only for the flows whose deadline comes (a record's own send time, as the kernel-event source does for sockets) instead of every record each poll"
	row section=idle name="  of it: sock_diag (daemon's own accounting)" unit=% series=idle_all_sock \
		note="CPU of its polls (reading and routing; the detector's work on the flows is done after the poll: its own row)"
	row section=idle name="  of it: tc tracker" unit=% series=idle_all_bpf \
		note="its hooks on only while a watched flow waits (tracker_hooks = on-wait): put on $(awk '{ s += $1 } END { print s + 0 }' "$WORK/series/idle_hooks_on" 2>/dev/null) time(s) in the idle runs"
	row section=idle name="  of it: engine flow tables" unit=% series=idle_all_engine
	row section=idle name="  of it: counter sweeps (ethtool, stats64, recorder)" unit=% series=idle_all_counters
	row section=idle name="  of it: the detector" unit=% series=idle_all_detector \
		note="its work on the sources' observations, done after each poll (status flow_sources.detector); the rest of the total is the wakeups"
	row section=idle name="all default sources and a producer with a 2,000-series endpoint, ${total} s" \
		unit=% series=idle_app goal="< 0.5%" check=below:0.5 \
		note="[producer engine] comm = nsengine (the sessions' two processes) with app_metrics on a 2,000-series page (promserve.py), scraped every sample (1 s) for both ports; runs alternated with the all-sources runs"
	row section=idle name="  of it: the host and app sources (daemon's own accounting)" unit=% \
		series=idle_app_src note="status ports[].sources[host, app].cpu_pct summed over the ports: the second port's share of a shared source costs it nothing (read once per sweep)"
	row section=idle name="  all sources / with the producer (this: the producer's part)" unit=% \
		series=idle_all vs=idle_app note="the same runs"
	row section=idle name="  the same, thread watch off (all / this: the watch's part)" unit=% \
		series=idle_notw vs=idle_all note="thread_watch = off, runs alternated with the all-sources runs; in those the watch held at most $(stats idle_tw_procs | cut -d' ' -f3) processes (the sessions' owners), their every switch accounted in the kernel"
	row section=idle name="track = sock only, ${total} s" unit=% series=idle_sock \
		goal="< 0.5%" check=below:0.5 note="$(idle_note sock)"
	row section=idle name="track = bpf only, hooks always on, ${total} s" unit=% series=idle_bpf \
		goal="< 0.5%" check=below:0.5 note="$(idle_note bpf)"
	row section=idle name="track = engine only, ${total} s" unit=% series=idle_engine \
		goal="< 0.5%" check=below:0.5 note="$(idle_note engine)"
	row section=idle name="incidents during the idle runs (all variants)" unit=count \
		series=idle_incidents note="the sessions' own stalls (retransmits on the loaded veth) open incidents; their investigations are in the figures"
	row section=idle name="  all sources: wakeups a second" unit=/s series=idle_wakeups \
		note="the daemon's own count (status cpu.wakeups) over the measured span: flow polls (planned: the engine tables ask for one a threshold less a poll after the last while nothing waits, 6.7/s at the defaults; 20/s when they came every flow_interval; about 1/s with idle kernel sockets alone, tests/system/test_cost_status.sh, but not beside these busy sessions: the sock row), the sweep (1/s), and timers that fire for nothing if any"
	idle_syscalls "$WORK/all.conf" "$warm" "$(pick 2 10)"
	row section=idle name="  all sources: system calls a second" unit=/s series=idle_syscalls \
		note="$(cat "$WORK/syscalls_note" 2>/dev/null)"
	row section=idle name="daemon start: CPU until status answers (all sources)" unit=ms \
		series=start_cpu_ms note="from exec: configuration, two ports' sources and recorders, BPF programs loaded (the socket reader once for both ports), first sweeps and polls"
	row section=idle name="daemon peak RSS (VmHWM, all sources)" unit=MiB series=hwm_mib \
		goal="< 32 MiB" check=below:32 note="the most it held at once, start-up (BTF parsed for the BPF loads) included"
}

# idle_syscalls CONF WARM SECS: the idle daemon's system calls a second,
# counted in the kernel (perf stat, raw_syscalls:sys_enter) in a run of
# its own, so the count costs the CPU figures nothing; each kind's rate in
# the note. Without perf (Debian linux-perf) the row says so.
idle_syscalls() {
	local conf=$1 warm=$2 secs=$3 out=$WORK/perf-syscalls.txt
	if ! perf stat -e raw_syscalls:sys_enter -- true > /dev/null 2>&1; then
		echo "perf stat cannot count system calls here (Debian linux-perf)" > "$WORK/syscalls_note"
		return 0
	fi
	local ev=(-e raw_syscalls:sys_enter) k v
	# the kinds this kernel has a tracepoint for (perf stops at a missing one)
	for k in pread64 epoll_wait clock_gettime setns bpf read sendto recvmsg; do
		perf stat -e "syscalls:sys_enter_$k" -- true > /dev/null 2>&1 &&
			ev+=(-e "syscalls:sys_enter_$k")
	done
	dstart "$conf" || return
	sleep "$warm"
	perf stat -x, "${ev[@]}" -p "$DPID" -o "$out" -- sleep "$secs" > /dev/null 2>&1
	dstop
	v=$(awk -F, -v s="$secs" '$3 == "raw_syscalls:sys_enter" && $1 ~ /^[0-9]+$/ { printf "%.1f", $1 / s }' "$out")
	[ -n "$v" ] && sample idle_syscalls "$v"
	awk -F, -v s="$secs" '$3 ~ /^syscalls:sys_enter_/ && $1 ~ /^[0-9]+$/ { sub("syscalls:sys_enter_", "", $3);
		printf "%s%s %.0f", n++ ? ", " : "of them a second: ", $3, $1 / s } END { print "" }' \
		"$out" > "$WORK/syscalls_note"
}

idle_note() {
	local inc
	inc=$(awk '{ s += $1 } END { print s + 0 }' "$WORK/series/idle_incidents" 2>/dev/null)
	echo "two ports, 32 kernel TCP sessions at 500/s, engine tables of both ends; CPU of the daemon's thread (schedstat), $inc incident(s) in all idle runs$(wake_note "$1")"
}

# idle_run VARIANT CONF WARM SECS
idle_run() {
	local v=$1 conf=$2 warm=$3 secs=$4 c0 c1 t0 t1 st st0="" x wk=""
	dstart "$conf" || return
	x=$(cpu_ns "$DPID")
	[ "$v" = all ] && [ -n "$x" ] && sample start_cpu_ms "$(awk -v c="$x" 'BEGIN { printf "%.1f", c / 1e6 }')"
	sleep "$warm"
	st0=$(ctl -j status)
	c0=$(cpu_ns "$DPID") t0=$(mono_ns)
	sleep "$secs"
	c1=$(cpu_ns "$DPID") t1=$(mono_ns)
	st=$(ctl -j status)
	sample "idle_$v" "$(awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) 'BEGIN { printf "%.4f", 100 * c / t }')"
	sample rss_kib "$(rss_kib "$DPID")"
	sample idle_incidents "$(echo "$st" | jq '.incidents | length')"
	# the wakeups and the detector's polls a second over the span, every
	# variant (a failed status leaves the series without a sample)
	wk=$(jq -n --argjson a "${st0:-null}" --argjson b "${st:-null}" \
		'(($b.cpu.wakeups - $a.cpu.wakeups) / ($b.uptime_s - $a.uptime_s)) * 10 | round / 10' \
		2>/dev/null) && [ -n "$wk" ] && sample "wake_$v" "$wk"
	x=$(jq -n --argjson a "${st0:-null}" --argjson b "${st:-null}" \
		'(($b.flow_sources.polls - $a.flow_sources.polls) / ($b.uptime_s - $a.uptime_s)) * 10 | round / 10' \
		2>/dev/null) && [ -n "$x" ] && sample "dpolls_$v" "$x"
	[ "$v" = app ] && sample idle_app_src "$(echo "$st" | jq '[.ports[] | .sources[] | select(.name == "host" or .name == "app") | .cpu_pct // 0] | add // 0')"
	if [ "$v" = all ]; then
		for s in sock bpf engine; do
			sample "idle_all_$s" "$(echo "$st" | jq --arg s $s '[.flow_sources.cost[] | select(.source == $s) | .cpu_pct] | add // 0')"
		done
		sample idle_all_counters "$(echo "$st" | jq '[.ports[] | (.sources[].cpu_pct // 0), (.recorder.cpu_pct // 0)] | add // 0')"
		x=$(echo "$st" | jq '.flow_sources.detector.cpu_pct // empty') && [ -n "$x" ] &&
			sample idle_all_detector "$x"
		sample idle_tw_procs "$(echo "$st" | jq '.flow_sources.thread_watch.processes // 0')"
		sample idle_hooks_on "$(echo "$st" | jq '[.flow_sources.cost[] | select(.source == "bpf") | .hooks_on // 0] | add // 0')"
		echo "$st" > "$WORK/status-all.json"
		# the same as wake_all (kept: the row's series name)
		[ -n "$wk" ] && sample idle_wakeups "$wk"
		x=$(awk '/^VmHWM/ { printf "%.2f", $2 / 1024 }' "/proc/$DPID/status") &&
			[ -n "$x" ] && sample hwm_mib "$x"
	fi
	dstop
}

# wake_note V: "; W wakeups a second, P of them the detector's polls" of
# the idle runs of variant V (medians), or nothing without samples.
wake_note() {
	local w p
	w=$(med "wake_$1") p=$(med "dpolls_$1")
	[ -n "$w" ] && [ -n "$p" ] && printf '; %s wakeups a second, %s of them the detector'"'"'s polls (medians)' "$w" "$p"
	return 0
}

# ---- rss: the daemon's memory, and how the recorder grows ----

section_rss() {
	local kib
	if [ -z "$(stats rss_kib)" ]; then
		env_up || return
		mkconf "$WORK/all.conf"
		dstart "$WORK/all.conf" || return
		sleep 3
		sample rss_kib "$(rss_kib "$DPID")"
		dstop
	fi
	kib=$(med rss_kib)
	sample rss_mib "$(awk -v k="$kib" 'BEGIN { printf "%.2f", k / 1024 }')"
	row section=rss name="daemon RSS, default configuration (idle runs)" unit=MiB series=rss_mib \
		goal="< 32 MiB" check=below:32 note="two ports, recorders at 1 s x 120 s, BPF maps and skeletons mapped"
	"$BUILD/bench_scale" recorder > "$WORK/recorder.jsonl" || return
	while read -r l; do
		local k i h b mb key
		k=$(echo "$l" | jq .counters) i=$(echo "$l" | jq .interval_ms) h=$(echo "$l" | jq .horizon_s)
		b=$(echo "$l" | jq .bytes) mb=$(echo "$l" | jq .model_bytes)
		key=rec_${k}_${i}_${h}
		sample "$key" "$(awk -v b="$b" 'BEGIN { printf "%.3f", b / 1048576 }')"
		sample "${key}_model" "$(awk -v b="$mb" 'BEGIN { printf "%.3f", b / 1048576 }')"
		row section=rss name="recorder: $k counters x every $i ms x $h s" unit=MiB \
			series="$key" vs="${key}_model" \
			note="ratio: to samples x counters x 8 B (the values); the rest is per-sample bookkeeping"
	done < "$WORK/recorder.jsonl"
}

# ---- perturb: sockperf ping-pong beside the daemon, off / on alternated ----

drops() {       # the host's dropped frames: tx_dropped + rx_dropped of both veths
	local s=0 v
	for x in "$C:$VC" "$S:$VS"; do
		for f in tx_dropped rx_dropped; do
			v=$(ip netns exec "${x%%:*}" cat "/sys/class/net/${x#*:}/statistics/$f")
			s=$((s + v))
		done
	done
	echo "$s"
}

# goal_pair_rows NAME SERIES NOTE: the p50 and p99 rows of the pair
# series SERIES_p50 and SERIES_p99, with the perturbation goals (1.02x and
# 1.05x) and perturb_note's NOTE
goal_pair_rows() {
	local p goal check
	for p in p50 p99; do
		goal="<= 1.02x" check=max:1.02
		[ $p = p99 ] && goal="<= 1.05x" check=max:1.05
		row section=perturb name="$1" unit=x series="$2_$p" goal="$goal" check="$check" \
			note="$(perturb_note $p "$3")"
	done
}

# round_pair V SERIES P: the round's run of variant V over the off run
# beside it, at percentile P, as a sample of SERIES_P (none when either
# run failed, so that no later pair shifts)
round_pair() {
	[ -s "$WORK/round_off_$3" ] && [ -s "$WORK/round_$1_$3" ] &&
		sample "$2_$3" "$(awk 'NR == FNR { on = $1; next }
			$1 > 0 && on > 0 { printf "%.6g\n", on / $1 }' \
			"$WORK/round_$1_$3" "$WORK/round_off_$3")"
	rm -f "$WORK/round_$1_$3"
}

section_perturb() {
	local rounds secs v
	env_up || return
	rounds=$(pick 1 10) secs=$(pick 1 6)
	# pinned apart, as a latency sitting runs: sockperf's server and
	# client on one CPU, the daemon on another. Unpinned, sockperf's p50
	# is bimodal with the scheduler's placement (7-9 us on one core,
	# 23-28 us apart), daemon or not, and the ratio measures placement.
	SPPIN=()
	if [ "$(nproc)" -ge 2 ]; then
		SPPIN=(taskset -c 0) DPIN=(taskset -c 1)
	fi
	spawn_bg ip netns exec "$S" "${SPPIN[@]}" sockperf server --tcp -i $AS -p 11111 > "$WORK/sockperf-srv.log" 2>&1
	SP_PID=$LAST_PID
	wait_for 5 sh -c "ip netns exec $S ss -ltnH | grep -q ':11111 '" || return
	mkconf "$WORK/perturb.conf"
	mkconf "$WORK/perturb-watched.conf" "" "flows = tcp port 11111"
	mkconf "$WORK/perturb-always.conf" "tracker_hooks = always"
	# the same watched flow, the thread watch off: the pair "watched"
	# and "watchednotw" is what watching sockperf's own threads costs
	mkconf "$WORK/perturb-watchednotw.conf" "" "flows = tcp port 11111" "thread_watch = off"
	# its flow watched by the kernel-event source (the hooks on every TCP
	# socket's paths, the deadline wheel), over the off run beside it
	mkconf "$WORK/perturb-events.conf" "" "flows = tcp port 11111
sock_liveness = events"
	# the same source with sockperf's flow not selected (the 32 sessions
	# are): what the hooks cost a flow the daemon does not watch at all
	mkconf "$WORK/perturb-evns.conf" "" "sock_liveness = events"
	# its flow watched with sock_liveness = auto: the sockops callbacks
	# until a socket is busier than they are worth, then its reads on a
	# pace (the kernel hands it back)
	mkconf "$WORK/perturb-auto.conf" "" "flows = tcp port 11111
sock_liveness = auto"
	# the on run's daemon with paced reads (the default before auto): the
	# pair beside the on pair is what the default's kernel-event watch
	# costs a flow it does not watch, side by side
	mkconf "$WORK/perturb-paced.conf" "" "sock_liveness = paced"
	for r in $(seq "$rounds"); do
		# off and on swap places every other round (off on, on off,
		# ...), so whatever follows a daemon's start or stop, and any
		# drift of the shared machine, falls on both alike
		local order="floor off on paced always watched watchednotw events evns auto"
		[ $((r % 2)) = 0 ] && order="auto paced on off floor evns events always watchednotw watched"
		for v in $order; do
			# off and on carry the goals: every round (a p99 of 6 s
			# runs moves by some 10% from run to run here, so the
			# median of 10 pairs, not of 6: 0.945x and 1.057x in two
			# runs of 6 an hour apart). always and watched are
			# remarks: one round in five each (the whole bench stays
			# inside 15 minutes)
			[ "$v" = always ] && [ $((r % 5)) != 1 ] && [ "$rounds" -gt 1 ] && continue
			case $v in watched|watchednotw)
				[ $((r % 5)) != 3 ] && [ $((r % 5)) != 4 ] && [ "$rounds" -gt 1 ] && continue ;;
			events)
				[ $((r % 5)) = 0 ] || [ $((r % 5)) = 1 ] && [ "$rounds" -gt 1 ] && continue ;;
			evns)
				[ $((r % 5)) != 2 ] && [ $((r % 5)) != 4 ] && [ "$rounds" -gt 1 ] && continue ;;
			floor)
				[ $((r % 5)) != 1 ] && [ $((r % 5)) != 3 ] && [ "$rounds" -gt 1 ] && continue ;;
			auto)
				[ $((r % 5)) = 2 ] || [ $((r % 5)) = 4 ] && [ "$rounds" -gt 1 ] && continue ;;
			esac
			perturb_run "$v" "$secs"
		done
		# the round's pair: on over the off run beside it (none when a
		# run of the round failed, so no later pair shifts)
		for p in p50 p99; do
			round_pair events sp_evpair "$p"
			round_pair evns sp_evnspair "$p"
			round_pair auto sp_autopair "$p"
			round_pair floor sp_floorpair "$p"
			round_pair paced sp_pacedpair "$p"
			[ -s "$WORK/round_off_$p" ] && [ -s "$WORK/round_on_$p" ] &&
				sample "sp_pair_$p" "$(awk 'NR == FNR { on = $1; next }
					$1 > 0 && on > 0 { printf "%.6g\n", on / $1 }' \
					"$WORK/round_on_$p" "$WORK/round_off_$p")"
			rm -f "$WORK/round_off_$p" "$WORK/round_on_$p"
			[ -s "$WORK/round_watchednotw_$p" ] && [ -s "$WORK/round_watched_$p" ] &&
				sample "sp_twpair_$p" "$(awk 'NR == FNR { on = $1; next }
					$1 > 0 && on > 0 { printf "%.6g\n", on / $1 }' \
					"$WORK/round_watched_$p" "$WORK/round_watchednotw_$p")"
			rm -f "$WORK/round_watched_$p" "$WORK/round_watchednotw_$p"
		done
	done
	stop_pid "$SP_PID"
	perturb_engines "$rounds" "$secs"
	DPIN=()
	for p in p50 p99 p999; do
		row section=perturb name="sockperf ping-pong $p, daemon on / off" unit=us \
			series=sp_on_$p vs=sp_off_$p note="$(perturb_note $p on)"
	done
	# the goal: each round's on run over the off run beside it, the
	# median of the rounds' ratios. The ratio of the medians above is
	# moved by where the machine's states fall among the rounds: this
	# machine runs sockperf in two states (p50 8.8 or 11.4 us) for
	# minutes at a time, and the ratio of medians then turns on which of
	# the middle rounds of each series fell in the slow one (1.138x in a
	# run whose pairs gave 1.004x: bench/README.md)
	for p in p50 p99; do
		local goal="<= 1.02x" check=max:1.02
		[ $p = p99 ] && goal="<= 1.05x" check=max:1.05
		row section=perturb name="  $p of each round's on run / its off run" unit=x \
			series=sp_pair_$p goal="$goal" check="$check" \
			note="the ratio of a pair of runs side by side (on and off alternated, swapping places every other round), the median of the rounds' ratios: it carries the goal, since the machine's slow and fast states, which last minutes, fall on both runs of a pair alike but not on the middle rounds of two series alike"
	done
	for p in p50 p99 p999; do
		row section=perturb name="  the same with the tracker's hooks always on / off" unit=us \
			series=sp_always_$p vs=sp_off_$p note="$(perturb_note $p always)"
	done
	for p in p50 p99 p999; do
		row section=perturb name="  the same with sockperf's own flow watched / off" unit=us \
			series=sp_watched_$p vs=sp_off_$p note="$(perturb_note $p watched)"
	done
	goal_pair_rows "  its flow watched, thread watch on / off (sockperf's threads watched)" sp_twpair tw
	goal_pair_rows "  its flow watched by kernel events (sock_liveness = events) / off" sp_evpair events
	goal_pair_rows "  its flow watched with sock_liveness = auto (busy sockets handed back to a pace) / off" sp_autopair auto
	for p in p50 p99; do
		row section=perturb name="  the same daemon with sock_liveness = paced (the default before auto) / off, $p" \
			unit=x series=sp_pacedpair_$p note="$(perturb_note $p paced)"
	done
	for p in p50 p99; do
		row section=perturb name="  its flow not selected, the 32 sessions' watched by kernel events / off, $p" \
			unit=x series=sp_evnspair_$p note="$(perturb_note $p evns)"
	done
	for p in p50 p99; do
		row section=perturb name="  the floor: two tp_btf programs that only look for socket storage, no daemon / off, $p" \
			unit=x series=sp_floorpair_$p note="$(perturb_note $p floor)"
	done
	for e in engine:ep vma:vp; do
		for p in p50 p99; do
			local goal="<= 1.02x" check=max:1.02
			[ $p = p99 ] && goal="<= 1.05x" check=max:1.05
			row section=perturb name="  $( [ ${e%%:*} = engine ] && echo "nsengine's own session watched through its flow table (track = engine)" || echo "the VMA imitation's socket watched through its statistics file (track = vma)") / off, $p" \
				unit=x series=${e#*:}_pair_$p goal="$goal" check="$check" \
				note="$(perturb_note $p ${e%%:*})"
		done
	done
	row section=perturb name="host drops (tx/rx_dropped, both veths), daemon off" unit=frames \
		series=drops_off
	row section=perturb name="host drops, daemon on" unit=frames series=drops_on \
		goal="no more than off" check=max:"$(awk '{ if ($1 > m) m = $1 } END { print m + 0 }' \
		"$WORK/series/drops_off" 2>/dev/null)" note="per ${secs} s run; met when the on median is within the off runs"
	local att
	att=$(sort -u "$WORK/series/sp_attach" 2>/dev/null | tr '\n' ' ')
	row section=perturb name="host drops across a daemon start and stop (outside the runs)" \
		unit=frames series=drops_startstop goal="0 in every one" check=every_max:0 \
		note="the tracker hooked with: ${att:-?}(tracker_attach = auto). tcx links make no qdisc, so a start and a stop graft nothing; on clsact (kernels before 6.6) the qdisc made at the start and removed at the stop deactivates the veth for a moment each time (qdisc_graft -> dev_deactivate) and what it sends then is lost (nicstalld(8) BUGS): 10 frames over 5 starts and stops in tests/system/test_tc_cleanup.sh"
}

# The engine readers' own pairs: the measured engine's round trips, its
# source watching it (and nothing else of the port but the 32 sessions'
# selector) over the off run beside it. nsengine (TCP, one session at full
# rate, its flow table read by change: flow_engine_read.c) and the VMA
# imitation (tests/engine/vmaengine.c, UDP, its statistics file: the
# reader's counter makes it copy its stats every 500 ms, which the pair
# counts too). Pinned as sockperf is. perturb_engines ROUNDS SECS
perturb_engines() {
	local rounds=$1 secs=$2 r v order e out pre
	pre=LD_PRELOAD=$BUILD/libvma.so.9.8.84
	mkdir -p "$WORK/vma"
	mkconf "$WORK/perturb-engine.conf" "track = engine" "flows = tcp port 11112"
	mkconf "$WORK/perturb-vma.conf" "track = vma" "flows = udp port 11113" \
		"vma_stats_dir = $WORK/vma"
	spawn_bg ip netns exec "$S" "${SPPIN[@]}" "$BUILD/nsengine" server --listen $AS:11112 \
		--table-dir "$WORK/flows" > "$WORK/ep-srv.log" 2>&1
	local EP_PID=$LAST_PID
	spawn_bg ip netns exec "$S" "${SPPIN[@]}" env "$pre" "$BUILD/vmaengine" --role server \
		--bind $AS:11113 --dir "$WORK/vma" --duration 3600 > "$WORK/vp-srv.log" 2>&1
	local VP_PID=$LAST_PID
	wait_for 5 sh -c "ip netns exec $S ss -ltnH | grep -q ':11112 '" &&
		wait_for 5 grep -q '^ready' "$WORK/vp-srv.log" || {
		echo "bench: the measured engines did not come up" >&2
		stop_pid "$EP_PID"; stop_pid "$VP_PID"; return 1; }
	for r in $(seq "$rounds"); do
		# six rounds of ten, as the kernel-event pair (the bench stays
		# near 15 minutes)
		[ $((r % 5)) = 0 ] || [ $((r % 5)) = 1 ] && [ "$rounds" -gt 1 ] && continue
		for e in engine vma; do
			order="off on"
			[ $((r % 2)) = 0 ] && order="on off"
			for v in $order; do
				if [ "$v" = on ]; then
					dstart "$WORK/perturb-$e.conf" || { dstop; continue; }
					perturb_settle "${e}_"
				fi
				if [ $e = engine ]; then
					out=$(ip netns exec "$C" "${SPPIN[@]}" "$BUILD/nsengine" client \
						--connect $AS:11112 --sessions 1 --interval-us 0 \
						--duration "$secs" --table-dir "$WORK/flows" --latency 2>&1)
				else
					out=$(ip netns exec "$C" "${SPPIN[@]}" env "$pre" "$BUILD/vmaengine" \
						--role client --bind $AC:0 --peer $AS:11113 --dir "$WORK/vma" \
						--interval-us 0 --duration "$secs" --latency 2>&1)
				fi
				[ "$v" = on ] && dstop
				# a run with no round trip timed (its client failed):
				# no sample, and no pair this round
				echo "$out" | awk '/^latency_us/ && $9 > 0 { print $3 }' > "$WORK/round_${e}${v}_p50"
				echo "$out" | awk '/^latency_us/ && $9 > 0 { print $5 }' > "$WORK/round_${e}${v}_p99"
				[ -s "$WORK/round_${e}${v}_p50" ] &&
					sample "${e}_${v}_p50" "$(cat "$WORK/round_${e}${v}_p50")"
			done
			for p in p50 p99; do
				[ -s "$WORK/round_${e}off_$p" ] && [ -s "$WORK/round_${e}on_$p" ] &&
					sample "$( [ $e = engine ] && echo ep || echo vp)_pair_$p" \
					"$(awk 'NR == FNR { on = $1; next } $1 > 0 && on > 0 { printf "%.6g\n", on / $1 }' \
					"$WORK/round_${e}on_$p" "$WORK/round_${e}off_$p")"
				rm -f "$WORK/round_${e}on_$p" "$WORK/round_${e}off_$p"
			done
		done
	done
	stop_pid "$EP_PID"
	stop_pid "$VP_PID"
}

# how many of a pair's on runs began with an incident (perturb_settle's
# counts under PREFIX): settled_note PREFIX
settled_note() {
	echo "on runs that began with an incident: $(cat "$WORK/series/${1}perturb_settled" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')$( [ -s "$WORK/${1}perturb_incidents" ] && echo " ($(head -3 "$WORK/${1}perturb_incidents" | paste -sd';' -))");"
}

# The kernel-event source's hooks in the runs of variant $1, as status
# gave them ("sockops" callbacks, or "tracepoints").
perturb_hooks() {
	local h
	h=$(sort -u "$WORK/series/sp_hooks_$1" 2>/dev/null | paste -sd, -)
	case $h in
	sockops) echo "the watched sockets' sockops callbacks (segments sent, the first ACK of data a round trip, RTOs, state changes) and the sock_recv_length tracepoint" ;;
	tracepoints) echo "tracepoints on every TCP socket's paths (tcp_probe, sock_send_length, sock_recv_length, inet_sock_set_state)" ;;
	*) echo "${h:-not recorded}" ;;
	esac
}

perturb_note() {
	case $2 in
	engine) echo "nsengine client and server (one TCP session, a request as soon as the reply came, its round trips timed by the client: examples/nsengine_lathist.h) pinned to CPU 0, the daemon to CPU 1 reading its flow table (track = engine, flows = tcp port 11112) and the 32 sessions'; each round's on run over the off run beside it, the median of $(stats ep_pair_$1 | cut -d' ' -f4) pairs; $(settled_note engine_) on runs $(stats engine_on_p50 | awk '{ print $2 "-" $3 }') us p50, off $(stats engine_off_p50 | awk '{ print $2 "-" $3 }') us" ;;
	vma) echo "the VMA imitation (tests/engine/vmaengine.c, libvma 9.8.84's statistics header; a UDP ping-pong over the kernel, a request as soon as the reply came) pinned to CPU 0, the daemon to CPU 1 reading its vmastat file (track = vma; its reader counter makes the engine copy its statistics every 500 ms, counted here too); each round's on run over the off run beside it, the median of $(stats vp_pair_$1 | cut -d' ' -f4) pairs; $(settled_note vma_) on runs $(stats vma_on_p50 | awk '{ print $2 "-" $3 }') us p50, off $(stats vma_off_p50 | awk '{ print $2 "-" $3 }') us" ;;
	on) echo "one TCP session at full rate beside the 32 watched ones (its flow not selected); one-way latency; medians of $(stats sp_off_$1 | cut -d' ' -f4) off and $(stats sp_on_$1 | cut -d' ' -f4) on runs of $(pick 1 6) s, alternated; $( [ ${#SPPIN[@]} -gt 0 ] && echo "sockperf's server and client pinned to CPU 0, the daemon to CPU 1 (CPUAffinity= in nicstalld.service does the same; unpinned, the p50 ratio measures the scheduler's placement: bench/README.md); " )off runs $(stats sp_off_$1 | awk '{ print $2 "-" $3 }') us, on runs $(stats sp_on_$1 | awk '{ print $2 "-" $3 }') us. The tc tracker (TCP-only selectors: evidence) keeps its hooks off sockperf's path until a watched flow waits half a threshold (tracker_hooks = on-wait, the default; hooks put on during an on run's measurement: at most $(stats sp_hooks_on | cut -d' ' -f3)); each daemon run starts measuring once no investigation runs and the tracker's hooks are off again (what they cost when on: the row below): $(cat "$WORK/series/perturb_settled" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }') of them began with an incident, $(cat "$WORK/series/perturb_hooked" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }') with the hooks on$( [ -s "$WORK/perturb_incidents" ] && echo " ($(head -3 "$WORK/perturb_incidents" | paste -sd';' -))") (on clsact the start's qdisc graft drops frames; on tcx links nothing the start does: bench/README.md); incidents by the end of an on run: at most $(stats sp_inc_on | cut -d' ' -f3); sock_diag and the engine tables alone move nothing measurable (bench/perturb_sources.sh); with sock_liveness = auto, the default, the 32 sessions' sockets are on the kernel-event watch, whose sockops program no unwatched socket reaches and whose receive tracepoint costs every receive of the host a socket-storage lookup (the not-selected row below)" ;;
	always) echo "tracker_hooks = always: the tracker's hooks on both veths, on sockperf's path; any program there, an empty one too, adds about 0.25 us one-way on this machine (bench/README.md); on runs $(stats sp_always_$1 | awk '{ print $2 "-" $3 }') us" ;;
	watched) echo "flows = tcp port 11111 too, sock_liveness = auto (the default): the measured flow's sockets are handed back by the kernel-event watch as busy and read by sock_diag on their pace (the tracker's hooks stay off while it progresses)" ;;
	events) echo "the port's sockets watched by the kernel-event source (sock_liveness = events, hooks: $(perturb_hooks events); sockperf's and the 32 sessions' sockets watched, a deadline wheel with one timer), sockperf's flow selected; each round's run over the off run beside it, the median of the rounds' ratios ($(stats sp_evpair_$1 | cut -d' ' -f4) pairs; on runs $(stats sp_events_$1 | awk '{ print $2 "-" $3 }') us)" ;;
	floor) echo "no daemon: bench_tpfloor (bench/tpfloor.bpf.c) attaches a tp_btf program to sock:sock_send_length and one to sock:sock_recv_length that look for a socket's storage, find none and leave, as two of the kernel-event watch's four hooks do for a socket they do not watch (tcp:tcp_probe, on every segment, is not among them); each round's run over the off run beside it, the median of the rounds' ratios ($(stats sp_floorpair_$1 | cut -d' ' -f4) pairs). What two hooks on the call paths cost a flow on this machine, about whatever their programs do: the events mode's pairs, with tcp_probe besides, cannot go below it" ;;
	evns) echo "sock_liveness = events with sockperf's flow not selected (flows = tcp port 12001: the 32 sessions), hooks: $(perturb_hooks evns); its socket has no slot: with sockops callbacks none runs for it but the receive tracepoint, which leaves at the storage lookup; with the tracepoints each of the four does, on every TCP segment and call on the host; each round's run over the off run beside it, the median of the rounds' ratios ($(stats sp_evnspair_$1 | cut -d' ' -f4) pairs; on runs $(stats sp_evns_$1 | awk '{ print $2 "-" $3 }') us). Two tp_btf programs on sock_send_length and sock_recv_length that only look for the storage measured about 1.03x p50 by hand (the floor row below: bench/README.md): mostly the tracepoints' dispatch, not what the programs do" ;;
	paced) echo "the on run's daemon (32 sessions watched, sockperf's flow not selected) with sock_liveness = paced: no sockops program and no receive tracepoint, every socket read on its pace; each round's run over the off run beside it, the median of the rounds' ratios ($(stats sp_pacedpair_$1 | cut -d' ' -f4) pairs; on runs $(stats sp_paced_$1 | awk '{ print $2 "-" $3 }') us). Beside the on pair above, in the same rounds: what auto, the default, costs a flow it does not watch" ;;
	auto) echo "sock_liveness = auto, sockperf's flow selected (flows = tcp port 11111) beside the 32 sessions, hooks: $(perturb_hooks auto): a socket whose callbacks come more than 1,000 times in a window of 1.07 s is handed back by the kernel (its callbacks and storage taken off) and read on its pace until idle; sockets handed back a run: $(stats sp_busy_auto | awk '{ print $2 "-" $3 }'); each round's run over the off run beside it, the median of the rounds' ratios ($(stats sp_autopair_$1 | cut -d' ' -f4) pairs; on runs $(stats sp_auto_$1 | awk '{ print $2 "-" $3 }') us)" ;;
	tw) echo "the watched runs (thread_watch = auto) over the runs beside them with thread_watch = off, same flows, as pairs in one round, the median of the pairs: sockperf's server is the owner of a watched flow, so its threads are in the thread watch's set and every switch of theirs is accounted (processes the watch held during the on runs: at most $(stats sp_tw_procs | cut -d' ' -f3)); on runs $(stats sp_watched_$1 | awk '{ print $2 "-" $3 }') us, off runs $(stats sp_watchednotw_$1 | awk '{ print $2 "-" $3 }') us" ;;
	esac
}

# settled: no incident open and no investigation running (on clsact the
# daemon's start makes the tracker's qdisc, and grafting it drops what the
# veths send in that moment, qdisc_graft -> dev_deactivate: a session or
# two then wait one RTO, the daemon rightly investigates, and that
# investigation is not the cost of watching; a healthy session may also
# wait by itself on a loaded machine). Counts the runs it waited on.
# The on-wait tracker's hooks stay on 5 s after such a wait: waited for
# too, as what the daemon does about a waiting flow is not what watching
# healthy ones costs (the hooks' own cost is the "always on" row); counted
# in perturb_hooked, and sp_hooks_on says whether they came on in the run.
# perturb_settle [PREFIX]: the counts go to PREFIXperturb_settled and
# PREFIXperturb_hooked (the engines' pairs count apart from sockperf's).
perturb_settle() {
	local st hooked=0 px=${1:-}
	sleep "$(pick 1 2)"
	for _ in $(seq 60); do
		st=$(ctl -j status) || return
		if echo "$st" | jq -e '[.flow_sources.cost[] | select(.source == "bpf") |
				select((.hooks_on // 0) != (.hooks_off // 0))] | length > 0' >/dev/null; then
			hooked=1
			sleep 0.25
			continue
		fi
		if echo "$st" | jq -e '[.incidents[] | select(.state == "open")] | length == 0' >/dev/null &&
		   ctl -j incident list | jq -e '[.investigations[] | select(.state != "complete")] | length == 0' >/dev/null; then
			sample ${px}perturb_hooked "$hooked"
			if [ "$(echo "$st" | jq '.incidents | length')" -gt 0 ]; then
				sample ${px}perturb_settled 1
				# what it was about, for the note
				echo "$st" | jq -r '.incidents[] | "\(.state) \(.duration_ms) ms, \(.flows | length) flow(s), the first " +
					(.flows[0] // {} | "\(.source) \(.tuple) stalled \(.stall_ms // "-") ms")' \
					>> "$WORK/${px}perturb_incidents"
			fi
			return 0
		fi
		sleep 0.25
	done
	# not settled in 15 s: counted as beginning with an incident only
	# when one was there
	[ "$(echo "$st" | jq '.incidents | length')" -gt 0 ] && sample ${px}perturb_settled 1
	sample ${px}perturb_hooked "$hooked"
}

# how often the on-wait tracker has put its hooks on, all ports
hooks_on() {
	ctl -j status | jq '[.flow_sources.cost[] | select(.source == "bpf") | .hooks_on // 0] | add // 0'
}

# perturb_run off|on|always|watched SECS
perturb_run() {
	local v=$1 secs=$2 out d0 d1 dpre h0=0 p50 p99
	dpre=$(drops)
	case $v in
	on) dstart "$WORK/perturb.conf" || return; perturb_settle ;;
	always) dstart "$WORK/perturb-always.conf" || return; perturb_settle ;;
	watched) dstart "$WORK/perturb-watched.conf" || return; perturb_settle ;;
	watchednotw) dstart "$WORK/perturb-watchednotw.conf" || return; perturb_settle ;;
	events) dstart "$WORK/perturb-events.conf" || return; perturb_settle ;;
	evns) dstart "$WORK/perturb-evns.conf" || return; perturb_settle ;;
	auto) dstart "$WORK/perturb-auto.conf" || return; perturb_settle ;;
	paced) dstart "$WORK/perturb-paced.conf" || return; perturb_settle ;;
	floor)
		spawn_bg "$BUILD/bench_tpfloor" > "$WORK/tpfloor.out"
		TF_PID=$LAST_PID
		wait_for 10 grep -q attached "$WORK/tpfloor.out" || { stop_pid "$TF_PID"; return; } ;;
	esac
	d0=$(drops)
	[ "$v" = on ] && h0=$(hooks_on)
	out=$(ip netns exec "$C" "${SPPIN[@]}" sockperf ping-pong --tcp -i $AS -p 11111 -t "$secs" 2>&1)
	d1=$(drops)
	# how often the on-wait tracker put its hooks on during the measurement
	[ "$v" = on ] && sample sp_hooks_on $(( $(hooks_on) - h0 ))
	# and how it hooks (tcx links or clsact filters)
	[ "$v" = on ] && ctl -j status | jq -r '.flow_sources.cost[] | select(.source == "bpf") |
		.attach // "?"' | sed 's/ /-/g' >> "$WORK/series/sp_attach"
	# an incident during the measured run: the daemon investigating
	[ "$v" = off ] || [ "$v" = floor ] || sample "sp_inc_$v" "$(ctl -j status | jq '.incidents | length')"
	[ "$v" = watched ] && sample sp_tw_procs "$(ctl -j status |
		jq '.flow_sources.thread_watch.processes // 0')"
	# which hooks the kernel-event source had (sockops callbacks or
	# tracepoints: status says)
	case $v in events|evns|auto) ctl -j status | jq -r '[.flow_sources.cost[] |
		select(.source == "sock") | .hooks // "none"] | unique | join("+")' \
		>> "$WORK/series/sp_hooks_$v" ;; esac
	# sockets the kernel handed back for their rate during the run
	[ "$v" = auto ] && sample sp_busy_auto "$(ctl -j status | jq '[.flow_sources.cost[] |
		select(.source == "sock") | .busy_handed_back // 0] | add')"

	case $v in off) ;; floor) stop_pid "$TF_PID" ;; *) dstop ;; esac
	# what the daemon's start and stop dropped, the measured run left out
	# (on clsact the tracker's qdisc made and removed: nicstalld(8) BUGS)
	[ "$v" = on ] && sample drops_startstop $(( $(drops) - dpre - (d1 - d0) ))
	p50=$(echo "$out" | sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p')
	p99=$(echo "$out" | sed -n 's/.*percentile 99.000 = *\([0-9.]*\).*/\1/p')
	sample "sp_${v}_p50" "$p50"
	sample "sp_${v}_p99" "$p99"
	case $v in off|on)
		echo "$p50" > "$WORK/round_${v}_p50"
		echo "$p99" > "$WORK/round_${v}_p99" ;;
	watched|watchednotw|events|evns|floor|auto|paced)
		echo "$p50" > "$WORK/round_${v}_p50"
		echo "$p99" > "$WORK/round_${v}_p99" ;;
	esac
	sample "sp_${v}_p999" "$(echo "$out" | sed -n 's/.*percentile 99.900 = *\([0-9.]*\).*/\1/p')"
	case $v in off|on) sample "drops_$v" $((d1 - d0)) ;; esac
}

# ---- detect: drop insertion -> incident opening, opening -> first snapshot ----

nft_drop() { ip netns exec "$S" nft add rule inet nb pre tcp sport "$1" drop; }
nft_clear() { ip netns exec "$S" nft flush chain inet nb pre 2>/dev/null; }

section_detect() {
	local stalls ports last=0 i
	env_up || return
	stalls=$(pick 2 22)
	mkconf "$WORK/detect.conf" "" "" "incident_cooldown = 0s
incidents_per_hour = 3600
incident_window = 10ms"
	ip netns exec "$S" nft add table inet nb
	ip netns exec "$S" nft add chain inet nb pre '{ type filter hook prerouting priority -300; }'
	dstart "$WORK/detect.conf" || return
	sleep 2
	mapfile -t ports < <(ip netns exec "$C" ss -tnH state established '( dport = :12001 )' |
			     awk '{ n = split($3, a, ":"); print a[n] }')
	for i in $(seq "$stalls"); do
		local p=${ports[$(( (i - 1) % ${#ports[@]} ))]} t0 inc id opened snap
		last=$(ctl -j status | jq '[.incidents[].id] | max // 0')
		nft_drop "$p"
		t0=$(date +%s%N)
		inc=""
		for _ in $(seq 100); do
			# the incident of this drop: opened after it, with the victim's flow
			inc=$(ctl -j status | jq -c --argjson last "$last" --arg p ":$p" \
				'[.incidents[] | select(.id > $last and any(.flows[]; .tuple | contains($p)))]
				 | min_by(.id) // empty')
			[ -n "$inc" ] && break
			sleep 0.05
		done
		nft_clear
		[ -n "$inc" ] || { echo "bench: stall $i (port $p) not detected within 5 s" >&2; continue; }
		id=$(echo "$inc" | jq .id)
		opened=$(echo "$inc" | jq .opened_real_ns)
		last=$id
		sample detect_ms "$(awk -v a="$opened" -v b="$t0" 'BEGIN { printf "%.3f", (a - b) / 1e6 }')"
		# the investigation ends (release watched, bundle written) before the
		# next; asked for by its id: a drop can open one incident a port
		# (both ports see the flow wait), and the newest is then the other's
		wait_for 15 sh -c "'$BUILD/nicstallctl' -s '$WORK/ctl.sock' -j incident show $id |
			jq -e --argjson id $id '.record.incident_id == \$id and .record.state == \"complete\"'"
		snap=$(ctl -j incident show "$id" | jq --argjson id "$id" --argjson om "$(echo "$inc" | jq .opened_mono_ns)" \
			'select(.record.incident_id == $id) | [.record.steps[] | select(.step == "snapshot") | .start_mono_ns][0] - $om')
		[ -n "$snap" ] && [ "$snap" != null ] && sample snapshot_ms "$(awk -v d="$snap" 'BEGIN { printf "%.4f", d / 1e6 }')"
	done
	DETECT_DAEMON=1
	section_bundle_in_detect
	dstop
	ip netns exec "$S" nft delete table inet nb 2>/dev/null
	row section=detect name="drop inserted -> incident open, $stalls stalls" unit=ms series=detect_ms \
		goal="median <= 250 (threshold + 1 poll)" check=max:250 \
		note="threshold 200 ms, flow_interval 50 ms; the next request after the drop is lost, so the wait starts within 2 ms of it; the polls are planned for each waiting flow's deadline by the engine's send time, so the call comes at the threshold unless the last poll was less than an interval before"
	sample detect_max "$(stats detect_ms | cut -d' ' -f3)"
	row section=detect name="  the slowest of them" unit=ms series=detect_max \
		goal="max <= 300 (threshold + 2 polls)" check=max:300
	row section=detect name="incident open -> first snapshot" unit=ms series=snapshot_ms \
		goal="median < 1 ms" check=below:1
}

# ---- scale: engine tables, the tracker's map, 1,000 sockets ----

# scale_take LINE SERIES=FILTER...: a sample of each series, FILTER (jq)
# applied to bench_scale's JSON line
scale_take() {
	local l=$1 kv
	shift
	for kv in "$@"; do
		sample "${kv%%=*}" "$(echo "$l" | jq "${kv#*=}")"
	done
}

section_scale() {
	local reps n
	reps=$(pick 2 10)
	for n in $(pick "32 1000" "32 1000 10000 100000"); do
		local max=""
		for r in $(seq 3); do
			local l
			l=$("$BUILD/bench_scale" engine "$n" "$reps") || continue
			max=$(echo "$l" | jq .detector_max_flows)
			scale_take "$l" "engine_${n}_ms=.poll_us / 1000" "engine_${n}_moved_ms=.moved_us / 1000" \
				"engine_${n}_table_b=.table_bytes_per_flow" "engine_${n}_det_b=.detector_bytes_per_flow"
		done
		local goal="" check=none
		[ "$n" = 100000 ] && goal="< 10 ms" check=below:10
		row section=scale name="engine flow tables, $n sessions: one scan" unit=ms \
			series="engine_${n}_ms" vs="engine_${n}_moved_ms" goal="$goal" check="$check" \
			note="flow_src_engine_ops poll, no record moved since the last: one copy of the table, each seq against its record's last stable copy, nothing emitted (an idle session is passed on once a second); ratio to the poll after every record moved, no detector"
		row section=scale name="  every record moved since the last poll" unit=ms \
			series="engine_${n}_moved_ms" \
			note="three copies of every record, seqlock checks, each emitted"
		row section=scale name="  memory per session: table / detector entry" unit=B \
			series="engine_${n}_table_b" vs="engine_${n}_det_b" \
			note="$( [ -n "$max" ] && [ "$n" -gt "$max" ] && echo "the detector keeps at most $max engine flows (LIVENESS_MAX_ENGINE_FLOWS, daemon/detect/liveness.h): past that, flows are read and dropped" || echo "ratio: table bytes to detector bytes")"
	done
	for n in $(pick "32 1000" "32 1000 10000"); do
		for r in $(seq 3); do
			local l
			l=$("$BUILD/bench_scale" vma "$n" "$reps") || continue
			scale_take "$l" "vma_${n}_ms=.poll_us / 1000" "vma_${n}_moved_ms=.moved_us / 1000" \
				"vma_${n}_verified=.verified"
		done
		row section=scale name="VMA/XLIO reader, $n sockets: one poll" unit=ms \
			series="vma_${n}_ms" vs="vma_${n}_moved_ms" \
			note="flow_src_vma_ops poll of libvma 9.8.84 statistics files written through the engine's header ($(( (n + 999) / 1000 )) file(s) of up to 1,000 sockets, each held by a process mapping the libvma stand-in: claims verified by then $(stats "vma_${n}_verified" | cut -d' ' -f1) of $n: the checks are rated, 64 a second a user and 256 in all, so in a run this short most wait for theirs, and a block waiting for its check is read the same), no block moved since the last; the reader polls every 100 ms (vma_interval), so a poll of X ms costs X% of a core; ratio to the poll after every block moved. The engine gives no generation or sequence to read by: every poll copies each file twice and compares the copies (a torn copy is read again) and passes each socket on, so the cost grows with the sockets however idle"
		row section=scale name="  every block moved since the last poll" unit=ms series="vma_${n}_moved_ms"
	done
	for n in $(pick "1000 10000" "32 1000 10000 100000"); do
		for r in $(seq 2); do
			local l
			l=$("$BUILD/bench_scale" tracker "$n" "$(pick 1 3)") || continue
			scale_take "$l" "tracker_${n}_ms=.poll_us / 1000" "tracker_${n}_b=.map_bytes_per_slot"
		done
		row section=scale name="tc tracker map, $n flows: one read (batches)" unit=ms \
			series="tracker_${n}_ms" \
			note="the daemon's map (16,384 flows; for more flows than fit in it with a quarter to spare, a map doubled until they do, which the daemon does not make: its LRU map drops the least recent) read in batches (what a poll of the tracker costs grows with the flows in the map); the tracker's TCP counts are evidence, read at every poll only while its hooks are on (tracker_hooks = on-wait)"
		row section=scale name="  memory per map slot (the map's memlock / its slots)" unit=B \
			series="tracker_${n}_b"
	done
	for r in $(seq "$(pick 1 3)"); do
		local l
		l=$("$BUILD/bench_scale" pkt 1) || continue
		scale_take "$l" pkt_watched=.watched_ns pkt_unwatched=.unwatched_ns pkt_empty=.empty_ns
	done
	row section=scale name="tc tracker per frame: a watched frame of a known flow" unit=ns \
		series=pkt_watched vs=pkt_empty note="in the kernel (BPF_PROG_TEST_RUN); ratio to an empty tc program: parse in place, one map lookup, two atomic adds"
	row section=scale name="  a frame no selector watches" unit=ns series=pkt_unwatched vs=pkt_empty
	row section=scale name="  an empty tc program (the floor)" unit=ns series=pkt_empty
	scale_sockets
}

# Idle kernel TCP sockets on a port, beside the 32 sessions: 1,000 not
# selected (the kernel filter leaves them out), and 32, 1,000 and 10,000
# selected, with the kernel-event watch (sock_liveness = events; auto, the
# default, takes it where the hooks are the sockops callbacks, as here,
# and idle sockets are never busy) and with paced reads, side by side:
# the growth is a row.
scale_sockets() {
	local n seg secs evsecs sizes
	env_up || return
	# the kernel-event runs four minutes long (one a round): their
	# periodic work (the backstop reads every 30 s, every 60 s for a
	# socket quiet that long, the dump every 4 minutes at least:
	# SD_REDISCOVER_NS) falls inside, so the row is what a period costs,
	# not a quiet window
	seg=$(pick 1 2) secs=$(pick 3 15) evsecs=$(pick 3 242) sizes=$(pick "32 1000" "32 1000 10000")
	mkconf "$WORK/conns-other.conf" "track = sock"
	mkconf "$WORK/conns-watched.conf" "track = sock" "flows = tcp port 13000
sock_liveness = events"
	mkconf "$WORK/conns-paced.conf" "track = sock" "flows = tcp port 13000
sock_liveness = paced"
	# the rounds go through every size in turn, so that the ratio of two
	# sizes is of medians of runs made minutes apart, not of one run each
	# (one 32-socket run alone moves the ratio by a third)
	for r in $(seq "$seg"); do
		for n in $sizes; do
			scale_conns_up "$n" || continue
			[ "$n" = 1000 ] && idle_run conns_other "$WORK/conns-other.conf" 3 "$secs"
			idle_run "conns_events_$n" "$WORK/conns-watched.conf" 3 "$evsecs"
			idle_run "conns_paced_$n" "$WORK/conns-paced.conf" 3 "$secs"
			scale_conns_down
		done
	done
	row section=scale name="sock_diag with 1000 idle sockets on each port, not selected" unit=% \
		series=idle_conns_other vs=idle_sock goal="< 0.5%" check=below:0.5 \
		note="track = sock; ratio to the sock-only idle run without them: the kernel filter keeps them out of every dump, and a dump is made only when the namespace opens a TCP connection"
	row section=scale name="32 idle sockets a port selected, kernel events" unit=% \
		series=idle_conns_events_32 vs=idle_sock goal="< 0.1%" check=below:0.1 \
		note="sock_liveness = events (what auto, the default, takes on this kernel for sockets that are not busy): no idle socket is read while it owes nothing (the kernel posts when a wait reaches a threshold less a poll; a backstop read every 30 s, every 60 s once quiet that long), and the detector polls about once a second (tests/system/test_cost_status.sh), the 32 sessions selected beside them (500 round trips a second each) too: a busy socket a read finds in a young wait the kernel holds is left to the kernel, not read at the wait's want (status kernel_held; bench/README.md, 6 December, evening); what is left is those polls, the counter sweep and the backstop reads$(wake_note conns_events_32)"
	for n in $sizes; do
		[ "$n" = 32 ] && continue
		row section=scale name="$n idle sockets a port selected, kernel events" unit=% \
			series="idle_conns_events_$n" vs=idle_conns_events_32 \
			goal="$( [ $n = 1000 ] && echo "< 0.1%" || echo "< 0.2%"), within 2x of 32" \
			check="$( [ $n = 1000 ] && echo below:0.1 || echo below:0.2) ratio_max:2" \
			note="ratio to 32 sockets in the same mode, medians of $seg run(s) of $evsecs s each, the sizes in turn: the backstop reads (every socket every 30 s, every 60 s once quiet that long: quiet_reads; the BPF reader 4096 a run) and the dumps (only when a connection opens or a socket comes or goes, every 4 minutes at least) are what grows$(wake_note "conns_events_$n")"
	done
	for n in $sizes; do
		row section=scale name="$n idle sockets a port selected, paced reads" unit=% \
			series="idle_conns_paced_$n" vs="idle_conns_events_$n" \
			note="sock_liveness = paced, the same sockets, ratio to kernel events: a socket that owes nothing is read once per threshold less a poll (150 ms), each read the BPF socket reader (4096 sockets a run) and an observation through the detector$(wake_note "conns_paced_$n")"
	done
}

# Hold n idle connections to the server namespace's port 13000.
scale_conns_up() {
	local n=$1
	spawn_bg ip netns exec "$S" "$BUILD/bench_conns" listen $AS 13000
	CONNS_LP=$LAST_PID
	wait_for 5 sh -c "ip netns exec $S ss -ltnH | grep -q ':13000 '" || return 1
	ip netns exec "$C" "$BUILD/bench_conns" connect $AS 13000 "$n" > "$WORK/conns.out" &
	CONNS_CP=$!
	PIDS+=("$CONNS_CP")
	wait_for 60 grep -q ready "$WORK/conns.out" ||
		{ echo "bench: $n connections did not come up" >&2; scale_conns_down; return 1; }
}

scale_conns_down() {
	stop_pid "$CONNS_CP"
	stop_pid "$CONNS_LP"
	# the next size's listener binds the same port: wait for the old to go
	wait_for 10 sh -c "! ip netns exec $S ss -ltnH | grep -q ':13000 '"
}

# ---- bundle: writing a typical bundle outside its configured windows ----

section_bundle() {
	[ -n "${DETECT_DAEMON:-}" ] && return     # measured within the detection run
	env_up || return
	mkconf "$WORK/bundle.conf"
	dstart "$WORK/bundle.conf" || return
	sleep 3
	section_bundle_in_detect
	dstop
}

# On the running daemon: `snapshot --bundle` round trips, less a status
# round trip (the client's start and the socket).
section_bundle_in_detect() {
	local n t0 t1
	n=$(pick 2 10)
	for i in $(seq "$n"); do
		t0=$(date +%s%N); ctl status > /dev/null; t1=$(date +%s%N)
		sample ctl_ms "$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e6 }')"
		t0=$(date +%s%N); ctl snapshot --bundle cli srv > /dev/null; t1=$(date +%s%N)
		sample bundle_ms "$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e6 }')"
	done
	local b c
	b=$(med bundle_ms) c=$(med ctl_ms)
	sample bundle_net_ms "$(awk -v b="$b" -v c="$c" 'BEGIN { printf "%.3f", b - c }')"
	row section=bundle name="write a typical bundle (snapshot --bundle), less a status round trip" \
		unit=ms series=bundle_net_ms goal="< 200 ms" check=below:200 \
		note="both ports' counters and recorders, the flow table, the rules' verdict, report.html, SHA256SUMS; no observation window or capture ($(med bundle_ms) ms round trip, $c ms for status)"
}

# ---- metrics: the Prometheus textfile beside the sampling (bench_metrics) ----

section_metrics() {
	local r out
	for r in $(seq "$(pick 1 3)"); do
		out=$("$BUILD/bench_metrics") || { echo "bench: bench_metrics failed" >&2; return; }
		sample met_sample_us "$(echo "$out" | awk '/^one sample of/ { print $(NF - 1) }')"
		sample met_write_us "$(echo "$out" | awk '/^one metrics_write/ { print $(NF - 1) }')"
		sample met_render_us "$(echo "$out" | awk '/of which fold \+ render/ { print $(NF - 1) }')"
		sample met_core_pct "$(echo "$out" | sed -n 's/^metrics, \([0-9.]*\) % of one core.*/\1/p')"
	done
	row section=metrics name="one sample of 8 mlx5 ports (751 counters each)" unit=us \
		series=met_sample_us note="ports_sample on the recorded ConnectX-4 Lx dump, the shipped rules"
	row section=metrics name="  one metrics_write after 5 samples / a sample" unit=us \
		series=met_write_us vs=met_sample_us \
		note="fold the samples through the rules' signals, render, write the work file, rename (metrics_interval = 5s at interval = 1s)"
	row section=metrics name="  of which fold + render / a sample" unit=us series=met_render_us \
		vs=met_sample_us
	row section=metrics name="the metrics file at the defaults" unit=% series=met_core_pct \
		note="of one core, beside the sampling it reports on"
}

# The application's metrics (collectors/counters/src_app.c): one scrape of a
# 2,000-series page from 127.0.0.1 on the daemon's loop (libcurl's multi
# interface, the parse, the layout), on the thread's CPU clock, and the
# parse of the same page alone.
section_app() {
	local r out
	for r in $(seq "$(pick 1 3)"); do
		out=$("$BUILD/bench_app" "$(pick 20 300)" 2000) ||
			{ echo "bench: bench_app failed" >&2; return; }
		sample app_scrape_us "$(echo "$out" | sed -n 's/^one scrape (.*): \([0-9.]*\) us CPU$/\1/p')"
		sample app_parse_us "$(echo "$out" | sed -n 's/^of which the parse alone: \([0-9.]*\) us CPU$/\1/p')"
	done
	row section=app name="a scrape of a 2,000-series endpoint / scrape" unit=us \
		series=app_scrape_us \
		note="app_metrics on 127.0.0.1: libcurl multi on the loop, parse, series names, layout (CPU)"
	row section=app name="  of which the parse / scrape" unit=us series=app_parse_us \
		vs=app_scrape_us note="promtext_parse.c and the series' names, 89 KB of text"
	# a window's deltas over such series when they come and go (a new
	# layout each sample), against the search by name it replaced
	for r in $(seq "$(pick 1 3)"); do
		out=$("$BUILD/bench_window" "$(pick 2 20)" 2000 60) ||
			{ echo "bench: bench_window failed" >&2; return; }
		sample win_churn_us "$(echo "$out" | sed -n 's/^deltas, churning series: \([0-9.]*\) us CPU$/\1/p')"
		sample win_search_us "$(echo "$out" | sed -n 's/^by search, churning series: \([0-9.]*\) us CPU$/\1/p')"
		sample win_steady_us "$(echo "$out" | sed -n 's/^deltas, one layout: \([0-9.]*\) us CPU$/\1/p')"
	done
	row section=app name="a 60-sample window of 2,000 churning series / window" unit=us \
		series=win_churn_us note="rec_deltas, a tenth of the series replaced each sample (CPU)"
	row section=app name="  the same by search per counter (before) / window" unit=us \
		series=win_search_us vs=win_churn_us note="a name search per counter and sample: quadratic"
	row section=app name="  the same window, one layout / window" unit=us \
		series=win_steady_us vs=win_churn_us note="series that stay"
}

# The thread watch's program on the scheduler's switch tracepoint: its cost
# per switch of the host, by the kernel's own accounting (bpf_stats; its
# two clock reads included, which is most of the "nothing watched" row).
section_threads() {
	local r out
	for r in $(seq "$(pick 1 3)"); do
		out=$("$BUILD/bench_threads" "$(pick 1 3)" 2>/dev/null) ||
			{ echo "bench: bench_threads failed (thread watch off here?)" >&2; return; }
		sample tw_none_ns "$(echo "$out" | sed -n 's/^nothing watched: \([0-9.]*\) ns.*/\1/p')"
		sample tw_unw_ns "$(echo "$out" | sed -n 's/^unwatched switch: \([0-9.]*\) ns.*/\1/p')"
		sample tw_unwb_ns "$(echo "$out" | sed -n 's/^unwatched switch, bitmap: \([0-9.]*\) ns.*/\1/p')"
		sample tw_w_ns "$(echo "$out" | sed -n 's/^watched switch: \([0-9.]*\) ns.*/\1/p')"
		sample tw_sysoff_ns "$(echo "$out" | sed -n 's/^system call: \([0-9.]*\) ns off.*/\1/p')"
		sample tw_syson_ns "$(echo "$out" | sed -n 's/^system call: .* off, \([0-9.]*\) ns on.*/\1/p')"
	done
	row section=threads name="thread watch, nothing watched / switch" unit=ns series=tw_none_ns \
		note="the accounting's own clock reads and one global; every switch of the host, two unwatched processes ping-ponging over pipes (the hot path, not an idle machine's few cold switches)"
	row section=threads name="  an unwatched switch, a process watched / switch" unit=ns \
		series=tw_unw_ns vs=tw_none_ns goal="<= 1.1x" check=ratio_max:1.1 \
		note="prev's and next's tgid compared with the watched list (up to 8 processes: one cache line of globals, no helper call); the goal: a few ns over nothing watched"
	row section=threads name="  the same, 9 processes watched (the bitmap) / switch" unit=ns \
		series=tw_unwb_ns vs=tw_none_ns \
		note="two bit tests in a 512 KiB array (inlined lookups): here the ping-pong's words stay cached; on a busy host each is a likely miss"
	row section=threads name="  a watched thread's switch / switch" unit=ns series=tw_w_ns \
		vs=tw_none_ns note="off-CPU accounting and a kernel stack walk per voluntary sleep"
	row section=threads name="an unwatched system call (getppid), thread_watch_syscalls off / call" \
		unit=ns series=tw_sysoff_ns note="the raw_syscalls programs detached, beside the row below in pairs"
	row section=threads name="  the same, thread_watch_syscalls on / call" unit=ns \
		series=tw_syson_ns vs=tw_sysoff_ns \
		note="attached, every call of the host takes the entry's slow path and the programs' tgid check: why the option is off by default; the watched threads' own calls pay a map update more"
}
