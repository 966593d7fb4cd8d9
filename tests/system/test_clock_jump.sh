#!/bin/bash
# CLOCK_REALTIME jumps during an incident (issue #12): ten years forward,
# then back to before the daemon started, while a forensic sequence runs.
# Only the daemon's wall clock jumps (libfaketime, with the monotonic clock
# left alone), never the machine's. Timers, windows, step times and
# durations are CLOCK_MONOTONIC: the sequence completes with sane times,
# its bundle is written and verifies, and the next stall is detected and
# investigated as usual.
. "$(dirname "$0")/lib.sh"
t_init
FT=$(ls /usr/lib/*-linux-gnu/faketime/libfaketime.so.1 2>/dev/null | head -1)
if [ -z "$FT" ]; then fail "libfaketime is not installed (tools/deps.sh)"; exit 1; fi
pair_up 10.217.0 || exit 1
STATE=$T_DIR/state
mkdir -p "$T_DIR/flows"
echo "+0" > "$T_DIR/clock"
{
	conf_daemon "incident_cooldown = 0s" "observe_window = 300ms" "capture_time = 2s" \
		"release_wait = 200ms"
	conf_port cli "flows = tcp port 12701" "track = engine" "promisc_capture = no"
} > "$T_DIR/n.conf"
cat > "$T_DIR/nicstalld-ft" <<SH
#!/bin/sh
LD_PRELOAD=$FT FAKETIME_TIMESTAMP_FILE=$T_DIR/clock FAKETIME_CACHE_DURATION=0 \
FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1 DONT_FAKE_MONOTONIC=1 exec $NICSTALLD "\$@"
SH
chmod +x "$T_DIR/nicstalld-ft"
NICSTALLD=$T_DIR/nicstalld-ft
start_daemon "$T_DIR/n.conf" || exit 1
inv() { ctl -j incident list | jq -r "[.investigations[]] | .[$1] | .$2 // empty"; }
storm() {
	ip netns exec "$A" "$BUILD/flowstorm" --dir "$T_DIR/flows" --name "c$1" --sessions 2 --local 10.217.0.1 \
		--remote 10.217.0.2 --port 12701 --healthy-ms 600 --stall-ms "$2" --release-ms 300 \
		> "$T_DIR/storm$1.out" 2>&1 &
	T_PIDS+=($!)
}

storm 1 5000
check "an investigation starts" wait_for 20 bash -c "[ -n \"\$('$NICSTALLCTL' -s '$T_SOCK' -j incident list | jq -r '.investigations[0].state // empty')\" ]"
echo "+3650d" > "$T_DIR/clock"          # ten years on
sleep 0.7
# the daemon's own wall clock, as a snapshot reports it: the jump reached it
y=$(ctl -j snapshot | jq '.real_ns / 1e9 | floor')
check "the daemon's wall clock jumped ten years on ($(date -u -d "@${y:-0}" +%Y 2>/dev/null))" \
	test "${y:-0}" -gt $(( $(date +%s) + 86400 * 3600 ))
echo "-400d" > "$T_DIR/clock"           # before the daemon started
check "the investigation completes" wait_for 30 bash -c "[ \"\$('$NICSTALLCTL' -s '$T_SOCK' -j incident list | jq -r '.investigations[0].state')\" = complete ]"
ctl -j incident show "$(inv 0 id)" > "$T_DIR/rec1.json"
check "step times are monotonic and sane (0 to 60 s, each end after its start)" \
	jqe '[.record.steps[] | select(.end_ms != null) | (.start_ms >= 0 and .end_ms >= .start_ms and .end_ms < 60000)] | length > 0 and all' "$T_DIR/rec1.json"
check "the observation window spans what it should (not years)" \
	jqe '.record.window.span_s > 0.2 and .record.window.span_s < 5' "$T_DIR/rec1.json"
check "the first bundle is written" wait_for 15 bash -c "compgen -G '$STATE/bundles/2*' >/dev/null"
check "its name is the wall clock of the incident's opening, before the jumps" \
	bash -c "ls '$STATE/bundles' | grep -q '^$(date -u +%Y%m)'"
wait_for 15 grep -q released "$T_DIR/storm1.out"
check "the incident's duration is monotonic (0 to 60 s)" \
	bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.incidents[]? | .duration_ms] | all(. >= 0 and . < 60000)'"
echo "+0" > "$T_DIR/clock"
storm 2 3000
check "the next stall is detected and investigated" \
	wait_for 30 bash -c "[ \"\$('$NICSTALLCTL' -s '$T_SOCK' -j incident list | jq -r '[.investigations[] | select(.state == \"complete\")] | length')\" -ge 2 ]"
check "a second bundle" wait_for 15 bash -c "[ \$(ls -d '$STATE'/bundles/2* | wc -l) -ge 2 ]"
bad=0
for b in "$STATE"/bundles/2*; do "$NICSTALLCTL" verify "$b" >/dev/null 2>&1 || bad=$((bad+1)); done
check "every bundle verifies ($bad bad)" test "$bad" = 0
check "the daemon still runs" kill -0 "$T_DPID"
