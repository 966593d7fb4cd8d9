#!/bin/bash
# The hardened unit under a real systemd (make check-systemd; not part of
# make check: it boots a container, about 30 s, and needs systemd-nspawn,
# overlayfs over the host's root and /dev/kmsg). There is no systemd PID 1
# on the machine, so the test boots one in a container (systemd-nspawn,
# private network, the host's root as the read-only lower layer of an
# overlay on tmpfs, its own /etc copy holding the unit, sysusers and
# tmpfiles; CAP_BPF, CAP_PERFMON and CAP_SYSLOG, bpf and perf_event_open
# through nspawn's own seccomp filter, /dev/kmsg bound in), starts
# nicstalld.service from this build and checks from inside: the service is
# active under its sandbox (exactly the unit's capabilities, no new
# privileges, a seccomp filter, a member of nicstall), systemctl reload
# succeeds and fails as the file does, bundles get the group, the metrics
# file is written, events reach the journal with MESSAGE_IDs; every feature
# works inside the sandbox: ports whose namespaces appear after the start,
# sock_diag and the tc eBPF tracker, a stall investigated with pings,
# captures, thread readings and a reprogram confirmed through /dev/kmsg,
# nothing denied; MemoryMax= and TasksMax= in force, and the peaks of the
# unit's cgroup while it investigates well inside them, OOMPolicy=continue;
# the hook (as nicstall-hook) and a probe (as nobody) run without any
# capability; a stand-in for Onload's orm_json runs as uid 0 without one,
# in a view where the daemon's state and runtime directories are empty and
# read-only, and a uid 0 client without capabilities is refused root's
# commands while ExecReload= still reloads; IPAddressAllow= lets a
# datagram from a port's namespace to a private address through and
# refuses one to a public address; engine-readers.conf makes the VMA
# reader work with no capability added; and with WatchdogSec=3s a loop
# blocked on purpose (debug-block) is killed by the watchdog and restarted.
. "$(dirname "$0")/lib.sh"
t_init
. "$(dirname "$0")/boot_lib.sh"
boot_etc 150
# /usr/local of the container: this build, where the unit expects it
L=$T_DIR/local
mkdir -p "$L/sbin" "$L/bin" "$L/share/nicstalld/rules"
cp "$NICSTALLD" "$L/sbin/nicstalld" && cp "$NICSTALLCTL" "$L/bin/nicstallctl"
cp "$BUILD/vmaengine" "$L/bin/vmaengine" && cp "$ROOT/systemd/engine-readers.conf" "$T_DIR/nst/"
cp "$ROOT"/rules/*.rules "$L/share/nicstalld/rules/"
check "the build's daemon reads rules from /usr/local/share/nicstalld/rules" \
	bash -c "strings '$NICSTALLD' | grep -qx /usr/local/share/nicstalld/rules"
# the unit, sysusers and tmpfiles from the source tree
cp "$ROOT/systemd/nicstalld.service" "$E/systemd/system/"
cp "$ROOT/systemd/nicstalld.sysusers" "$E/sysusers.d/nicstalld.conf"
cp "$ROOT/systemd/nicstalld.tmpfiles" "$E/tmpfiles.d/nicstalld.conf"
mkdir -p "$E/nicstalld"
cat > "$T_DIR/nst/run.sh" <<'EOF'
# inside the container: "R key value" lines for the test to check
. /opt/nst/lib.sh
systemd-sysusers
systemd-tmpfiles --create nicstalld.conf
conf_nic '[port gone]' 'interface = nosuch0'
systemctl daemon-reload
systemctl start nicstalld; r start_rc $?
r active "$(systemctl is-active nicstalld)"
r watchdog "$(systemctl show -p WatchdogUSec --value nicstalld)"
r status "$(systemctl show -p StatusText --value nicstalld | tr ' ' _)"
pid=$(systemctl show -p MainPID --value nicstalld)
r capeff "$(awk '/^CapEff/ { print $2 }' /proc/$pid/status)"
r memmax "$(systemctl show -p MemoryMax --value nicstalld)"
r tasksmax "$(systemctl show -p TasksMax --value nicstalld)"
r oompolicy "$(systemctl show -p OOMPolicy --value nicstalld)"
r hook_uid "$(id -u nicstall-hook)"
r ipdeny "$(systemctl show -p IPAddressDeny --value nicstalld)"
r capbnd "$(awk '/^CapBnd/ { print $2 }' /proc/$pid/status)"
r nonewprivs "$(awk '/^NoNewPrivs/ { print $2 }' /proc/$pid/status)"
r seccomp "$(awk '/^Seccomp:/ { print $2 }' /proc/$pid/status)"
r groups "$(awk '/^Groups/ { $1 = ""; print }' /proc/$pid/status | tr -d ' ')"
r nicstall_gid "$(getent group nicstall | cut -d: -f3)"
r ctl_status "$(nicstallctl status >/dev/null 2>&1; echo $?)"
b=$(nicstallctl snapshot --bundle nic | sed -n 's/^bundle //p')
r bundle_group "$(stat -c %G "$b")"
r bundles_mode "$(stat -c '%a:%G' /var/lib/nicstalld/bundles)"
sleep 2
r metrics_mode "$(stat -c %a /var/lib/prometheus/node-exporter/nicstalld.prom 2>&1)"
systemctl reload nicstalld; r good_reload $?
sed -i 's/interval = 200ms/interval = soon/' /etc/nicstalld/nicstalld.conf
systemctl reload nicstalld; r bad_reload $?
r bad_status "$(systemctl show -p StatusText --value nicstalld | tr ' ' _)"
r still_active "$(systemctl is-active nicstalld)"
sed -i 's/interval = soon/interval = 200ms/' /etc/nicstalld/nicstalld.conf
r port_down_event "$(journalctl -u nicstalld -o json NICSTALL_EVENT=port-down | head -1 | jq -r '.MESSAGE_ID + ":" + .NICSTALL_PORT + ":" + ._TRANSPORT')"
r reload_failed_event "$(journalctl -u nicstalld -o json NICSTALL_EVENT=reload-failed | head -1 | jq -r .MESSAGE_ID)"
# the features under the sandbox: the ports' namespaces are made after
# the daemon started (as a benchmark harness does), a stall on the pair is
# investigated (setns, rtnetlink, sock_diag, the tc eBPF tracker, pings,
# captures, thread readings, /dev/kmsg, the reprogram) and bundled; its
# hook and probe print what they run with, and the probe sends a datagram
# to a private and to a public address (IPAddressAllow=)
cat > /etc/nicstalld/hook.sh <<'H'
#!/bin/sh
{ grep -E '^(Uid|Gid|Groups|Cap[A-Za-z]+|NoNewPrivs):' /proc/self/status
  head -c 1 "$1/manifest.json" > /dev/null && echo "Bundle: readable"; } > /dev/shm/hook.status 2>&1
H
chmod 755 /etc/nicstalld/hook.sh
# a stand-in for Onload's orm_json (uid 0, no capability): what it sees of
# the daemon's directories and socket
mkdir -p /etc/nicstalld/onload
cat > /etc/nicstalld/onload/orm_json <<'O'
#!/bin/sh
{ grep -E '^(Uid|Cap[A-Za-z]+|NoNewPrivs):' /proc/self/status
  echo "StateEntries: $(ls -A /var/lib/nicstalld | wc -l)"
  echo "RunEntries: $(ls -A /run/nicstalld | wc -l)"
  touch /var/lib/nicstalld/planted 2>/dev/null && echo "Planted: yes" || echo "Planted: no"
  [ -S /run/nicstalld/nicstalld.sock ] && echo "Socket: yes" || echo "Socket: no"
} > /dev/shm/orm.tmp && mv /dev/shm/orm.tmp /dev/shm/orm.status
exit 1
O
chmod 755 /etc/nicstalld/onload/orm_json
cat > /etc/nicstalld/nicstalld.conf <<C
[daemon]
bundle_hook = /etc/nicstalld/hook.sh
onload_tools = /etc/nicstalld/onload
onload_interval = 500ms
interval = 200ms
incident_cooldown = 0s
reprogram_interval = 0s
reprogram_hold = 50ms
capture_time = 100ms
[port cli]
netns = ubA
interface = vA
flows = tcp port 11111-11112
tracker_hooks = always
peer = srv
peer_address = 10.9.0.2
probe = /bin/bash -c "grep -E '^(Uid|Gid|Groups|Cap[A-Za-z]+|NoNewPrivs):' /proc/self/status; (echo x > /dev/udp/10.9.0.2/9) && echo private:sent; (echo x > /dev/udp/198.51.100.2/9) && echo public:sent; true"
[port srv]
netns = ubB
interface = vB
flows = tcp port 11111-11112
tracker_hooks = always
peer = cli
peer_address = 10.9.0.1
recover = reprogram
track = engine sock bpf onload
C
systemctl restart nicstalld
r ns_before "$(nicstallctl -j status | jq -r '[.ports[].state] | join(",")')"
ip netns add ubA && ip netns add ubB
ip link add vA netns ubA type veth peer name vB netns ubB
ip -n ubA addr add 10.9.0.1/24 dev vA && ip -n ubB addr add 10.9.0.2/24 dev vB
ip -n ubA addr add 198.51.100.1/24 dev vA && ip -n ubB addr add 198.51.100.2/24 dev vB
for n in ubA ubB; do ip -n $n link set lo up; done
ip -n ubA link set vA up && ip -n ubB link set vB up
for i in $(seq 1 50); do
	[ "$(nicstallctl -j status | jq -r '[.ports[].state] | join(",")')" = up,up ] && break
	sleep 0.2
done
r ns_after "$(nicstallctl -j status | jq -r '[.ports[].state] | join(",")')"
for p in 11111 11112; do ip netns exec ubB sockperf server --tcp -i 10.9.0.2 -p $p >/dev/null 2>&1 & done
sleep 1
for p in 11111 11112; do
	ip netns exec ubA sockperf ping-pong --tcp -i 10.9.0.2 -p $p -t 40 --mps 500 >/dev/null 2>&1 &
done
sleep 2.5
nicstallctl -j flows > /opt/out/flows.json
ip netns exec ubB nft add table inet t
ip netns exec ubB nft add chain inet t pre '{ type filter hook prerouting priority -300; }'
ip netns exec ubB nft add rule inet t pre tcp dport 11111 drop
# the unit's peaks while it investigates, from its cgroup (the container
# may have no memory or pids controller of its own: the resident memory of
# its processes, summed, and its threads, counted)
cg=$(systemctl show -p ControlGroup --value nicstalld)
for d in /sys/fs/cgroup/unified /sys/fs/cgroup; do [ -e "$d$cg/cgroup.procs" ] && cg=$d$cg && break; done
( mm=0 tm=0; while [ ! -e /opt/out/stop-sampling ]; do
	m=0; for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do
		k=$(awk '/^VmRSS/ { print $2 }' /proc/$p/status 2>/dev/null); m=$((m + ${k:-0})); done
	t=$(wc -l < "$cg/cgroup.threads" 2>/dev/null)
	[ "$m" -gt "$mm" ] && mm=$m; [ "${t:-0}" -gt "$tm" ] && tm=$t
	echo "$mm $tm" > /opt/out/peaks; sleep 0.05; done ) &
for i in $(seq 1 100); do
	# jq 1.6 -e exits 0 on no input at all: "input" makes that an error
	nicstallctl -j incident show 2>/dev/null | jq -en 'input | .record.state == "complete"' >/dev/null && break
	sleep 0.3
done
nicstallctl -j incident show > /opt/out/rec.json 2>&1
for i in $(seq 1 50); do [ -s /dev/shm/hook.status ] && break; sleep 0.2; done
cp /dev/shm/hook.status /opt/out/hook.status 2>/dev/null
cp /dev/shm/orm.status /opt/out/orm.status 2>/dev/null
r state_entries "$(ls -A /var/lib/nicstalld | wc -l)"
r nocaps_recover "$(setpriv --inh-caps=-all --bounding-set=-all -- nicstallctl recover srv 2>&1 | tr ' ' _)"
r nocaps_reload "$(setpriv --inh-caps=-all --bounding-set=-all -- nicstallctl reload > /dev/null 2>&1; echo $?)"
touch /opt/out/stop-sampling
r peak_mem "$(cut -d' ' -f1 /opt/out/peaks)"
r peak_tasks "$(cut -d' ' -f2 /opt/out/peaks)"
r peak_rss_kib "$(awk '/^VmHWM/ { print $2 }' /proc/$(systemctl show -p MainPID --value nicstalld)/status)"
ip netns exec ubB nft delete table inet t
r inv_bundle_group "$(stat -c %G "$(jq -r .record.bundle /opt/out/rec.json)" 2>&1)"
journalctl -u nicstalld -o json --no-pager > /opt/out/journal.json
pkill -x sockperf
# the readers of unmodified engines: an emulated libvma process of user
# nobody on each side publishes /tmp/vmastat.PID (libvma's own directory,
# mode 0644) once a reader bumps it; under the unit alone the daemon's
# /tmp is private, with engine-readers.conf it reads and bumps the files
sed -i 's/^peer = \(.*\)/peer = \1\ntrack = sock vma/' /etc/nicstalld/nicstalld.conf
vma_round() {
	systemctl restart nicstalld
	as_nobody() { ip netns exec "$1" setpriv --reuid=65534 --regid=65534 --clear-groups "${@:2}"; }
	as_nobody ubB /usr/local/bin/vmaengine --role server --bind 10.9.0.2:11111 --duration 9 \
		> /opt/out/vma-srv-$1.log 2>&1 & local s=$!
	sleep 0.5
	as_nobody ubA /usr/local/bin/vmaengine --role client --bind 10.9.0.1:0 --peer 10.9.0.2:11111 \
		--interval-us 2000 --duration 8 --publish-log > /opt/out/vma-cli-$1.log 2>&1 & local c=$!
	sleep 4
	nicstallctl -j status | jq -c '.flow_sources.readers.vma' > /opt/out/vma-$1.json
	r vma_bumped_$1 "$(nicstallctl -j status | jq '[.flow_sources.readers.vma.files[]? | select(.sockets == 1 and .bumps > 0)] | length')"
	r vma_flows_$1 "$(nicstallctl -j flows | jq '[.flows[] | select(.source == "vma")] | length')"
	r vma_published_$1 "$(grep -c '^publish' /opt/out/vma-cli-$1.log)"
	wait $s $c
}
vma_round unit
mkdir -p /etc/systemd/system/nicstalld.service.d
cp /opt/nst/engine-readers.conf /etc/systemd/system/nicstalld.service.d/
systemctl daemon-reload
since=$(date '+%Y-%m-%d %H:%M:%S')
vma_round dropin
r dropin_capbnd "$(awk '/^CapBnd/ { print $2 }' /proc/$(systemctl show -p MainPID --value nicstalld)/status)"
journalctl -u nicstalld -o json --no-pager --since "$since" > /opt/out/journal-vma.json
# the watchdog, end to end: a short WatchdogSec and --debug for debug-block
mkdir -p /etc/systemd/system/nicstalld.service.d
printf '[Service]\nExecStart=\nExecStart=/usr/local/sbin/nicstalld --debug\nWatchdogSec=3s\nRestartSec=1s\n' \
	> /etc/systemd/system/nicstalld.service.d/watchdog.conf
systemctl daemon-reload
systemctl restart nicstalld
sleep 7
r restarts_before "$(systemctl show -p NRestarts --value nicstalld)"
pid1=$(systemctl show -p MainPID --value nicstalld)
printf '{"cmd":"debug-block","ms":20000}\n' | timeout 25 socat -t 22 - UNIX-CONNECT:/run/nicstalld/nicstalld.sock >/dev/null 2>&1 &
for i in $(seq 1 40); do
	[ "$(systemctl show -p NRestarts --value nicstalld)" != 0 ] && break
	sleep 0.5
done
r restarts_after "$(systemctl show -p NRestarts --value nicstalld)"
sleep 3
r active_after "$(systemctl is-active nicstalld)"
r new_pid "$([ "$(systemctl show -p MainPID --value nicstalld)" != "$pid1" ] && echo yes || echo no)"
r watchdog_logged "$(journalctl -u nicstalld --no-pager | grep -c 'Watchdog timeout')"
systemctl stop nicstalld
r stop_result "$(systemctl show -p Result --value nicstalld)"
EOF
# CAP_BPF, CAP_PERFMON and CAP_SYSLOG, bpf and perf_event_open through
# nspawn's own seccomp filter, /dev/kmsg bound in
boot_run 200 --capability=CAP_BPF,CAP_PERFMON,CAP_SYSLOG --system-call-filter="bpf perf_event_open" \
	--bind-ro=/dev/kmsg --bind-ro="$L:/usr/local"
check "the container booted and ran the checks" test -n "$(R stop_result)" || { tail -30 "$T_DIR/boot.log"; cat "$T_DIR/out/log"; }
check "systemctl start nicstalld succeeds" test "$(R start_rc)" = 0
check "the service is active (READY reached)" test "$(R active)" = active
check "WatchdogSec is 30 s" test "$(R watchdog)" = 30s
check "StatusText is the daemon's STATUS" bash -c "[[ '$(R status)' == 1/2_port\\(s\\)_up,* ]]"
# capabilities: nspawn gives the container CAP_BPF, CAP_PERFMON and
# CAP_SYSLOG too (and lets bpf/perf_event_open through its own seccomp
# filter), so the daemon holds exactly the unit's bounding set
unit=$(( (1<<5) | (1<<6) | (1<<7) | (1<<8) | (1<<12) | (1<<13) | (1<<19) | (1<<21) | (1<<34) | (1<<38) | (1<<39) ))
eff=$(( 16#$(R capeff) )) bnd=$(( 16#$(R capbnd) ))
check "effective capabilities are the unit's set ($(R capeff))" test "$eff" -eq "$unit"
check "and so is the bounding set ($(R capbnd))" test "$bnd" -eq "$unit"
check "NoNewPrivileges" test "$(R nonewprivs)" = 1
check "a seccomp filter is on" test "$(R seccomp)" = 2
check "the daemon is a member of nicstall (SupplementaryGroups)" bash -c "echo ',$(R groups),' | grep -q ',$(R nicstall_gid),'"
check "nicstallctl status answers" test "$(R ctl_status)" = 0
check "MemoryMax=1G and TasksMax=128 are in force ($(R memmax), $(R tasksmax))" \
	test "$(R memmax) $(R tasksmax)" = "1073741824 128"
check "OOMPolicy=continue: a child the OOM killer takes fails alone ($(R oompolicy))" test "$(R oompolicy)" = continue
check "IPAddressDeny=any is in force ($(R ipdeny))" \
	bash -c "echo ' $(R ipdeny) ' | grep -q ' 0.0.0.0/0 ' && echo ' $(R ipdeny) ' | grep -q ' ::/0 '"
check "a bundle gets the group nicstall; bundles/ is 2750" test "$(R bundle_group) $(R bundles_mode)" = "nicstall 2750:nicstall"
check "the metrics file is written 0644 under ProtectSystem=strict" test "$(R metrics_mode)" = 644
check "systemctl reload of a good file succeeds" test "$(R good_reload)" = 0
check "systemctl reload of a bad file fails" test "$(R bad_reload)" = 1
check "StatusText says the reload failed, the service stays active" \
	bash -c "echo '$(R bad_status)' | grep -q 'last_reload_failed' && [ '$(R still_active)' = active ]"
check "events reach the journal natively with their MESSAGE_ID" test "$(R port_down_event)" = "471fb4bc2332423293f6a9a727587cec:gone:journal"
check "reload-failed is an event too" test "$(R reload_failed_event)" = 1236334ab55444e29197acc48c786ee7
# the features, under the sandbox
check "ports whose namespaces came later: down, then up ($(R ns_before) -> $(R ns_after))" \
	test "$(R ns_before),$(R ns_after)" = "down,down,up,up"
check "flows watched by sock_diag and the tc eBPF tracker" \
	jq -en 'input | [.flows[].source] | index("sock") != null and index("bpf") != null' "$T_DIR/out/flows.json"
check "the investigation completed, with a bundle" jq -en 'input | .record.state == "complete" and .record.bundle != null' "$T_DIR/out/rec.json" ||
	{ head -c 2000 "$T_DIR/out/rec.json"; jq -c '.flows[] | [.port, .source, .tuple, .state]' "$T_DIR/out/flows.json";
	  jq -r .MESSAGE "$T_DIR/out/journal.json" | tail -40; tail -20 "$T_DIR/out/err"; cat "$T_DIR/out/dbg"; }
check "its pings passed both ways" jq -en 'input | [.record.pings[] | .received > 0] | length == 2 and all' "$T_DIR/out/rec.json"
check "its captures were taken (AF_PACKET, libpcap)" jq -en 'input | [.record.captures[] | select(.packets > 0)] | length >= 1' "$T_DIR/out/rec.json"
check "its thread readings came back" jq -en 'input | .record.threads | length > 0' "$T_DIR/out/rec.json"
check "the reprogram was performed, and the kernel log (/dev/kmsg) read" \
	jq -en 'input | .record.reprograms | any(.performed == true and .kernel_log.readable == true)' "$T_DIR/out/rec.json" ||
	jq -c '.record.reprograms' "$T_DIR/out/rec.json"
check "no step of it failed" jq -en 'input | [.record.steps[] | select(.outcome == "failed")] | length == 0' "$T_DIR/out/rec.json" ||
	jq -c '.record.steps[] | select(.outcome != "ok")' "$T_DIR/out/rec.json"
check "the bundle of the investigation is in group nicstall" test "$(R inv_bundle_group)" = nicstall
echo "note: under the unit, investigating: the cgroup's peak resident memory $(( $(R peak_mem) / 1024 )) MiB and $(R peak_tasks) tasks; the daemon's VmHWM $(( $(R peak_rss_kib) / 1024 )) MiB"
check "its peaks were measured and stay well inside MemoryMax and TasksMax ($(R peak_mem) KiB, $(R peak_tasks) tasks)" \
	test "$(R peak_mem)" -gt 0 -a "$(R peak_mem)" -lt 524288 -a "$(R peak_tasks)" -gt 0 -a "$(R peak_tasks)" -lt 64
# the children under the unit: probe_exec's privilege drop works inside
# the sandbox (seccomp, the bounding set), and the IP allow list applies in
# the port's namespace
jq -r '.record.probes[] | select(.argv[0] == "/bin/bash") | .output' "$T_DIR/out/rec.json" > "$T_DIR/probe.out"
field() { awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$1"; }
for who in probe hook onload; do
	f=$T_DIR/probe.out u=65534
	[ $who = hook ] && f=$T_DIR/out/hook.status u=$(R hook_uid)
	[ $who = onload ] && f=$T_DIR/out/orm.status u=0
	caps=$(for s in CapInh CapPrm CapEff CapBnd CapAmb; do field "$f" $s; done | sort -u | tr '\n' ' ')
	check "$who: uid $u, no capability in any set, no new privileges ($(field "$f" Uid) / $caps/ $(field "$f" NoNewPrivs))" \
		test "$(field "$f" Uid)|$caps|$(field "$f" NoNewPrivs)" = "$u $u $u $u|0000000000000000 |1"
done
O=$T_DIR/out/orm.status
check "onload tool: state_dir and run_dir empty in its view, nothing planted, no socket ($(field "$O" StateEntries)/$(field "$O" RunEntries)/$(field "$O" Planted)/$(field "$O" Socket); the daemon's state_dir: $(R state_entries))" \
	test "$(field "$O" StateEntries)/$(field "$O" RunEntries)/$(field "$O" Planted)/$(field "$O" Socket)" = "0/0/no/no" -a "$(R state_entries)" -gt 0
check "uid 0 without capabilities: recover refused ($(R nocaps_recover))" \
	bash -c "grep -q 'neither_root_with_CAP_NET_ADMIN' <<< '$(R nocaps_recover)'"
check "uid 0 without capabilities: reload refused; ExecReload= reloads (above)" test "$(R nocaps_reload)" != 0
check "hook: group nicstall, reads the bundle ($(field "$T_DIR/out/hook.status" Gid))" \
	test "$(field "$T_DIR/out/hook.status" Gid | cut -d' ' -f1):$(field "$T_DIR/out/hook.status" Bundle)" = "$(R nicstall_gid):readable"
check "IPAddressAllow: a datagram to a private address leaves the port's namespace" grep -qx 'private:sent' "$T_DIR/probe.out"
check "a datagram to a public one is refused by the filter (EPERM)" \
	bash -c "grep -q 'write error: Operation not permitted' '$T_DIR/probe.out' && ! grep -q public:sent '$T_DIR/probe.out'" || cat "$T_DIR/probe.out"
denied=$(jq -r 'select(.MESSAGE | test("not permitted|Permission denied|seccomp|EPERM|EACCES"; "i")) | .MESSAGE' "$T_DIR/out/journal.json" 2>/dev/null | head -5)
check "nothing of the daemon was denied by its sandbox${denied:+: $denied}" test -z "$denied"
# engine-readers.conf: the VMA reader under the sandbox
check "under the unit alone, libvma's files in the host's /tmp are out of reach (bumped $(R vma_bumped_unit), published $(R vma_published_unit))" \
	test "$(R vma_bumped_unit)" = 0 -a "$(R vma_published_unit)" = 0
check "with engine-readers.conf the daemon reads and bumps both engines' files ($(R vma_bumped_dropin))" \
	test "$(R vma_bumped_dropin)" = 2 || cat "$T_DIR/out/vma-dropin.json"
check "so the engine publishes ($(R vma_published_dropin) copies) and its flows are watched ($(R vma_flows_dropin))" \
	test "$(R vma_published_dropin)" -gt 0 -a "$(R vma_flows_dropin)" -ge 2
check "the drop-in adds no capability: the bump opens as the file's owner ($(R dropin_capbnd))" \
	test "$(( 16#$(R dropin_capbnd) ))" -eq "$unit"
denied=$(jq -r 'select(.MESSAGE | test("not permitted|Permission denied|Read-only|EPERM|EACCES|EROFS"; "i")) | .MESSAGE' "$T_DIR/out/journal-vma.json" 2>/dev/null | head -3)
check "and nothing of the daemon was denied with it${denied:+: $denied}" test -z "$denied" -a -s "$T_DIR/out/journal-vma.json"
check "with WatchdogSec=3s the service runs" test "$(R restarts_before)" = 0
check "a blocked loop is killed by the watchdog and restarted" test "$(R restarts_after)" -ge 1 -a "$(R new_pid)" = yes
check "systemd logged the watchdog timeout" test "$(R watchdog_logged)" -ge 1
check "the restarted daemon is active" test "$(R active_after)" = active
check "it stops cleanly" test "$(R stop_result)" = success
