#!/bin/bash
# Benchmark runs on the emulated ConnectX pair (issue 30): ten short
# sockperf runs bracketed by nicstallctl run, a seed-000 wedge into run 4.
# run_policy = observe (the default): runs 1-3 and 5-10 clean, run 4
# anomalous naming its incident and bundle, and no promiscuous transition
# inside any run (the kernel's promiscuity count and /dev/kmsg). Then
# run_policy = recover: run 4 tainted, naming the intervention that
# released the flow at its time. Then run -- false, runs never ended (a
# second begin, the daemon's stop, its kill), and bad requests.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu_lib.sh"
t_init
emu_up 10.213.0 || { fail "emulated pair"; exit 1; }
# a loaded CI machine pauses healthy sessions for a few hundred ms: those
# would be real incidents of the runs, not the ones this test makes
sed -i 's/^incident_cooldown = 0s$/incident_cooldown = 0s\nstall_threshold = 1500ms/' "$T_DIR/emu.conf"
start_daemon "$T_DIR/emu.conf" || exit 1
PORT=11150
ip netns exec "$SRV_NS" sockperf server --tcp -i "$SRV_ADDR" -p $PORT > /dev/null 2>&1 &
T_PIDS+=($!)
wait_for 5 bash -c "ip netns exec $SRV_NS ss -ltn | grep -q ':$PORT '"
# the kernel's log from here on: each "entered promiscuous mode" line with
# its CLOCK_MONOTONIC time (the /dev/kmsg record's microseconds)
KMSG=$T_DIR/kmsg
( exec cat /dev/kmsg ) > "$KMSG" 2>/dev/null &
T_PIDS+=($!)
promiscuity() { ip -n "$1" -d -j link show "$2" | jq '.[0].promiscuity'; }
# the kernel's promiscuity count of both ports every 50 ms, with the time
# (CLOCK_REALTIME ns, as the certificates give it)
( while sleep 0.05; do echo "$(date +%s%N) $(promiscuity "$SRV_NS" "$SRV_IF") $(promiscuity "$CLI_NS" "$CLI_IF")"; done ) > "$T_DIR/promiscuity" 2>/dev/null &
T_PIDS+=($!)
cert() { ctl -j run show "$1"; }
written() { [ "$(ctl -j run show "$1" | jq -r .state)" = written ]; }

# wedged_run NAME: a run whose session is wedged at the server's port; the
# run is held open until the incident opened, or (recover) the flow was
# released inside it
wedged_run() {
	local name=$1 until=$2 p pid last
	# the incidents before this run's (r4's, released or not, stays in
	# status): only one opened after them is this run's
	last=$(ctl -j status | jq '[.incidents[].id] | max // 0')
	[ -n "$last" ] || { fail "run $name: the daemon's status before it"; return 1; }
	ctl run begin "$name" --label run=4 --label wedge=seed-000 > /dev/null || return 1
	ip netns exec "$CLI_NS" sockperf ping-pong --tcp -i "$SRV_ADDR" -p $PORT -t 30 --mps 500 > /dev/null 2>&1 &
	pid=$!
	wait_for 5 bash -c "ip netns exec $CLI_NS ss -tn | grep -q ':$PORT '"
	sleep 0.3
	p=$(cport $PORT)
	emu wedge srv tcp "$CLI_ADDR" "$p" "$SRV_ADDR" $PORT
	# (recover: each port's promiscuous capture and reprogram in turn, each
	# watched up to release_wait, until one releases the flow)
	wait_for 25 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '.incidents | map(select(.id > $last and .state $until)) | length >= 1' >/dev/null" ||
		fail "run $name: no incident after $last whose state $until within 25 s"
	# the investigation reaches its promiscuous capture and reprogram
	# (observe 400 ms, capture 300 ms) while the run is still open
	sleep "${3:-0}"
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	ctl run end "$name" > /dev/null
}

# ---- 1. run_policy = observe ----
for i in $(seq 1 10); do
	if [ "$i" = 4 ]; then
		wedged_run r4 '!= "none"' 4 || fail "run 4 bracketed"
		# the investigation held back its promiscuous steps: the flow stays
		# wedged until the run's bundle is written; then, between runs, the
		# wedge is cleared (an operator's fix) so run 5 starts healthy
		check "run 4: its certificate is written once its bundle is" wait_for 60 written r4
		emu unwedge srv > /dev/null
		wait_for 20 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.incidents[] | select(.state == \"open\")] | length == 0' >/dev/null"
		sleep 0.5
	else
		ctl run "r$i" --label run="$i" -- ip netns exec "$CLI_NS" sockperf ping-pong --tcp \
			-i "$SRV_ADDR" -p $PORT -t 1 --mps 500 > /dev/null 2>&1
		echo "run $i: $(cert "r$i" | jq -r '.word + ": " + .reason')"
	fi
done
for i in 1 2 3 5 6 7 8 9 10; do
	cert "r$i" > "$T_DIR/r$i.json"
	check "run $i: clean" jqe '.word == "clean" and .run_policy == "observe" and (.interventions | map(select(.changed_system)) | length == 0)' "$T_DIR/r$i.json"
done
cert r4 > "$T_DIR/r4.json"
jq '{word, reason, incidents, interventions, ports}' "$T_DIR/r4.json"
check "run 4: anomalous" jqe '.word == "anomalous"' "$T_DIR/r4.json"
check "run 4: names its incident and bundle (reason and list)" jqe '(.incidents | length >= 1) and (.incidents[0].bundle | length > 0) and (.reason | test("^incident [0-9]+ opened on port .* bundle [^ ]+"))' "$T_DIR/r4.json"
check "run 4: the daemon changed nothing during it" jqe '.interventions | map(select(.changed_system)) | length == 0' "$T_DIR/r4.json"
check "run 4: the wedged session's frames show as the port-vport gap" jqe '.ports.srv.signals.gap > 0' "$T_DIR/r4.json"
B=$(jq -r '.incidents[0].bundle' "$T_DIR/r4.json")
check "run 4's bundle names the run in its manifest" jqe --arg c "$(jq -r .certificate "$T_DIR/r4.json")" '.run.name == "r4" and (.run.certificates | index($c)) != null and .run.run_policy == "observe"' "$B/manifest.json"
check "run 4's bundle: its promiscuous capture and reprogram skipped, naming the run" \
	jqe '[.steps[] | select((.step == "capture-promisc" or .step == "reprogram") and .outcome == "skipped" and .note == "run r4 is open and run_policy = observe")] | length >= 2' "$B/manifest.json"
check "run 4's bundle: no promiscuous capture or reprogram ran" \
	jqe '[.steps[] | select((.step == "capture-promisc" or .step == "reprogram") and .outcome != "skipped")] | length == 0' "$B/manifest.json"
"$NICSTALLCTL" report "$B" -o "$T_DIR/r4.html" > /dev/null
check "run 4's report marks the run on its timeline" bash -c "grep -q 'data-kind=\"run\"' '$T_DIR/r4.html' && grep -q '<title>benchmark run r4: ' '$T_DIR/r4.html'"
# the kernel's own word: no "entered promiscuous mode" inside a run
sleep 0.2
for i in $(seq 1 10); do cert "r$i" | jq -r '"\(.start.mono_ns / 1000 | floor) \(.end.mono_ns / 1000 | floor) \(.run)"'; done > "$T_DIR/windows"
grep -a -E "(^|[ ;])($CLI_IF|$SRV_IF)(: | entered)" "$KMSG" | grep -a 'entered promiscuous mode' | sed -E 's/^[0-9]+,[0-9]+,([0-9]+),[^;]*;(.*)/\1 \2/' > "$T_DIR/promisc"
echo "promiscuous transitions in the kernel log: $(wc -l < "$T_DIR/promisc")"
cat "$T_DIR/promisc"
inside=$(awk 'NR == FNR { s[NR] = $1; e[NR] = $2; n[NR] = $3; k = NR; next }
	{ for (i = 1; i <= k; i++) if ($1 >= s[i] && $1 <= e[i]) print n[i] ": " $0 }' "$T_DIR/windows" "$T_DIR/promisc")
check "kmsg: no promiscuous transition inside any run${inside:+ ($inside)}" test -z "$inside"
for i in $(seq 1 10); do cert "r$i" | jq -r '"\(.start.real_ns) \(.end.real_ns) \(.run)"'; done > "$T_DIR/rwindows"
inside=$(awk 'NR == FNR { s[NR] = $1; e[NR] = $2; n[NR] = $3; k = NR; next }
	{ for (i = 1; i <= k; i++) if ($1 >= s[i] && $1 <= e[i]) { c[i]++; if ($2 != 0 || $3 != 0) print n[i] ": " $0 } }
	END { for (i = 1; i <= k; i++) if (c[i] < 5) print n[i] ": only " c[i] + 0 " samples" }' "$T_DIR/rwindows" "$T_DIR/promiscuity")
echo "promiscuity samples: $(wc -l < "$T_DIR/promiscuity")"
check "promiscuity count 0 on both ports in every sample inside a run${inside:+ ($inside)}" test -z "$inside"
ctl run list
check "run list: ten certificates" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j run list | jqe '[.ended[] | select(.run | test(\"^r[0-9]+$\"))] | length == 10'"
cf=$T_DIR/state/runs/$(jq -r .certificate "$T_DIR/r4.json").cert
check "the certificate file: first line one word" test "$(head -1 "$cf")" = anomalous
check "the certificate file: sha256sum -c passes" bash -c "cd '$T_DIR/state/runs' && sha256sum -c --quiet '$(basename "$cf").sha256'"
check "the certificate file: the rest is the JSON shown" bash -c "tail -n +2 '$cf' | jqe '.word == \"anomalous\" and .run == \"r4\"'"

# ---- 2. run_policy = recover ----
printf 'run_policy = recover\n' > "$T_DIR/policy"
sed -i "/^\[daemon\]/r $T_DIR/policy" "$T_DIR/emu.conf"
ctl reload > /dev/null || fail "reload with run_policy = recover"
ctl run s3 -- ip netns exec "$CLI_NS" sockperf ping-pong --tcp -i "$SRV_ADDR" -p $PORT -t 2 --mps 500 > /dev/null 2>&1
cert s3 > "$T_DIR/s3.json"
check "recover: run 3 clean" jqe '.word == "clean" and .run_policy == "recover"' "$T_DIR/s3.json"
wedged_run s4 '== "released"' || fail "recover: run 4 bracketed"
check "recover: run 4's certificate is written" wait_for 60 written s4
emu unwedge srv > /dev/null
cert s4 > "$T_DIR/s4.json"
jq '{word, reason, interventions}' "$T_DIR/s4.json"
check "recover: run 4 tainted" jqe '.word == "tainted" and .run_policy == "recover"' "$T_DIR/s4.json"
check "recover: the reason names the intervention and its time" jqe '.reason | test("^the daemon changed the system: (promisc-capture|reprogram) of port (srv|cli) at [0-9T:.-]+Z \\(\\+[0-9.]+ s\\)")' "$T_DIR/s4.json"
B=$(jq -r '.incidents[0].bundle' "$T_DIR/s4.json")
act=$(jq -r '.release.action' "$B/manifest.json")
echo "recover: released by $act"
check "recover: the intervention that released the flow is in the certificate, inside the run" \
	jqe --arg a "$act" '. as $c | [.interventions[] | select(.kind == $a and .changed_system and .at.mono_ns >= $c.start.mono_ns and .at.mono_ns <= $c.end.mono_ns)] | length >= 1' "$T_DIR/s4.json"
sed -i '/^run_policy = recover$/d' "$T_DIR/emu.conf"
ctl reload > /dev/null

# ---- 3. the harness's view: exit status, runs never ended ----
ctl run f1 -- false; rc=$?
check "run -- false exits 1" test "$rc" = 1
cert f1 > "$T_DIR/f1.json"
check "run -- false: its certificate says the command's status" jqe '.command_status.exit == 1 and .word == "clean"' "$T_DIR/f1.json"
check "run -- false: the file is written" wait_for 3 bash -c "ls '$T_DIR/state/runs/' | grep -q '^f1@.*\.cert$'"
ctl run f2 -- sh -c 'exit 7'; rc=$?
check "run -- sh -c 'exit 7' exits 7" test "$rc" = 7
ctl run begin twice > /dev/null
ctl -j run begin twice > "$T_DIR/twice.json"
check "a second begin closes the first incomplete" jqe '.closed_incomplete | startswith("twice@")' "$T_DIR/twice.json"
check "and its certificate says so" bash -c "grep -l '^incomplete' '$T_DIR'/state/runs/twice@*.cert | xargs grep -q 'a new run named twice began'"
ctl run end twice > /dev/null
# one line on the control socket, as a harness without nicstallctl sends it
echo '{"cmd":"run","op":"begin","name":"raw1","labels":{"node":"warm"}}' | socat - "UNIX-CONNECT:$T_SOCK" > "$T_DIR/raw.json"
check "the one-line request begins a run" jqe '.ok and .run == "raw1"' "$T_DIR/raw.json"
echo '{"cmd":"run","op":"end","name":"raw1"}' | socat - "UNIX-CONNECT:$T_SOCK" > "$T_DIR/raw2.json"
check "and one line ends it, with the certificate" jqe '.ok and .certificate.word == "clean" and .certificate.labels.node == "warm"' "$T_DIR/raw2.json"
# how long the daemon took is bench_runs' row (< 10 ms, eight mlx5
# ports); here, loaded by make check, it is said, not judged
echo "begin took $(jq -r .took_ms "$T_DIR/raw.json") ms, end $(jq -r .took_ms "$T_DIR/raw2.json") ms (the daemon's own time)"
check "begin and end each say the daemon's own time" \
	bash -c "jqe '.took_ms | type == \"number\" and . >= 0' '$T_DIR/raw.json' && jqe '.took_ms | type == \"number\" and . >= 0' '$T_DIR/raw2.json'"
# bad requests
refused() { local rc=$1 out=$2 want=$3; [ "$rc" = 1 ] && [[ $out == *"$want"* ]]; }
out=$(ctl run end nosuch 2>&1); rc=$?
check "end of an unknown run: a clear error ($out)" refused $rc "$out" "no open run 'nosuch'"
out=$(ctl run begin a/b 2>&1); rc=$?
check "a name with a slash: refused ($out)" refused $rc "$out" "has a '/'"
out=$(ctl run begin "$(printf 'x%.0s' $(seq 300))" 2>&1); rc=$?
check "a name of 300 characters: refused ($out)" refused $rc "$out" "300 characters, at most 64"
# 10,000 begins from one group member: at most 8 open, clear errors
M=nsrun$$
t_group_up || exit 1
useradd -M -N -g nogroup -G nicstall -s /bin/sh "$M" && T_CLEANUP+=("userdel $M")
ctl reload > /dev/null     # the group is resolved at start and reload
chmod o+x "$T_DIR"
ctl run begin rootrun > /dev/null
rss0=$(awk '/VmRSS/ {print $2}' /proc/$T_DPID/status)
runuser -u "$M" -- python3 - "$T_SOCK" > "$T_DIR/flood.txt" <<'PY'
import json, socket, sys
def req(o):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
    s.sendall((json.dumps(o) + "\n").encode())
    r = json.loads(s.makefile().readline()); s.close()
    return r
ok = 0; errs = {}
for i in range(10000):
    r = req({"cmd": "run", "op": "begin", "name": "flood%d" % i})
    if r.get("ok"): ok += 1
    else:
        k = r["error"].split(" (open")[0]; errs[k] = errs.get(k, 0) + 1
print(ok); print(json.dumps(errs))
print(json.dumps(req({"cmd": "run", "op": "end", "name": "flood0"})["certificate"]["word"]))
print(json.dumps(req({"cmd": "run", "op": "end", "name": "rootrun"})))
PY
cat "$T_DIR/flood.txt"
check "10,000 begins from one uid: 8 open" test "$(sed -n 1p "$T_DIR/flood.txt")" = 8
check "the others refused with a clear error" bash -c "sed -n 2p '$T_DIR/flood.txt' | jqe 'to_entries | length == 1 and (.[0].key | test(\"uid [0-9]+ has 8 runs open, at most 8\")) and .[0].value == 9992'"
check "the member ends its own run" test "$(sed -n 3p "$T_DIR/flood.txt")" = '"clean"'
check "but not root's" bash -c "sed -n 4p '$T_DIR/flood.txt' | jqe '.ok == false and .error == \"run end: run '\"'\"'rootrun'\"'\"' belongs to uid 0\"'"
rss1=$(awk '/VmRSS/ {print $2}' /proc/$T_DPID/status)
# (ASan's quarantine keeps freed memory: only the plain build is measured)
if ldd "$NICSTALLD" | grep -q libasan; then
	echo "skip - memory through the flood under ASan (VmRSS $rss0 -> $rss1 kB)"
else
	check "the daemon's memory stays bounded through the flood (VmRSS $rss0 -> $rss1 kB)" test $((rss1 - rss0)) -lt 8192
fi
ctl -j status > /dev/null
# the daemon stops during a run: incomplete; killed during one: incomplete
# at its next start, with the reason
ctl run begin atstop > /dev/null
kill -TERM "$T_DPID"; wait "$T_DPID" 2>/dev/null
check "stop during a run: incomplete" bash -c "head -1 '$T_DIR'/state/runs/atstop@*.cert | grep -qx incomplete && grep -q 'the daemon stopped during the run' '$T_DIR'/state/runs/atstop@*.cert"
start_daemon "$T_DIR/emu.conf" || exit 1
ctl run begin killed > /dev/null
sleep 0.3
kill -KILL "$T_DPID"; wait "$T_DPID" 2>/dev/null
check "killed during a run: its .open file is left" bash -c "ls '$T_DIR/state/runs/' | grep -q '^killed@.*\.open$'"
start_daemon "$T_DIR/emu.conf" || exit 1
check "restarted: the run is closed incomplete, with the reason" wait_for 3 bash -c "head -1 '$T_DIR'/state/runs/killed@*.cert | grep -qx incomplete && grep -q 'stopped during the run without ending it; closed when the daemon started again' '$T_DIR'/state/runs/killed@*.cert"
check "and run show has it" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j run show killed | jqe '.word == \"incomplete\"'"
check "the journal event of a flagged run" grep -q 'run killed: incomplete' "$T_DIR/daemon.log"

