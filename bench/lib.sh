# bench/lib.sh: what bench/run.sh's sections share: counts, samples and
# rows, the namespaces with their 32 sessions, the daemon, the report.
# Sourced by run.sh (bash); the sections are in sections.sh.
. "$ROOT/bench/sections.sh"

# ---- counts, samples, rows ----

want() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }
# pick SMOKE_COUNT FULL_COUNT
pick() { if [ "$SMOKE" = 1 ]; then echo "$1"; else echo "$2"; fi; }

# sample SERIES VALUE: one measurement of a series (a file of numbers)
sample() { echo "$2" >> "$WORK/series/$1"; }
# stats SERIES: "median min max n" of a series (empty when none)
stats() {
	[ -s "$WORK/series/$1" ] || return 0
	sort -g "$WORK/series/$1" | awk '{ a[NR] = $1 } END {
		n = NR; m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		printf "%.6g %.6g %.6g %d\n", m, a[1], a[n], n }'
}
med() { stats "$1" | cut -d' ' -f1; }

# row KEY=VALUE...: one line of the table.
#   section, name, unit        what it is
#   series                     the measured series (median, min-max shown)
#   vs                         a series to divide by: ratio = median / median(vs)
#   goal                       text; check: how it is judged:
#     max:X (value <= X), below:X (value < X), min:X (value >= X),
#     every_max:X (every sample <= X),
#     ratio_max:X, ratio_min:X, ratio_above:X (ratio > X), none;
#     several, space-separated: met when every one is
#   note                       why it misses and what would close it, or a remark
row() {
	local section="" name="" unit="" series="" vs="" goal="" check="none" note="" kv
	for kv in "$@"; do
		case $kv in
		section=*) section=${kv#*=} ;; name=*) name=${kv#*=} ;;
		unit=*) unit=${kv#*=} ;; series=*) series=${kv#*=} ;;
		vs=*) vs=${kv#*=} ;; goal=*) goal=${kv#*=} ;;
		check=*) check=${kv#*=} ;; note=*) note=${kv#*=} ;;
		esac
	done
	local s v m lo hi n ratio="" met="null"
	s=$(stats "$series")
	if [ -z "$s" ]; then
		jq -nc --arg section "$section" --arg name "$name" --arg unit "$unit" \
			--arg goal "$goal" --arg note "no samples${note:+; $note}" \
			'{section:$section,name:$name,unit:$unit,goal:$goal,met:false,note:$note}' \
			>> "$WORK/rows.jsonl"
		return
	fi
	read -r m lo hi n <<< "$s"
	if [ -n "$vs" ] && [ -n "$(stats "$vs")" ]; then
		v=$(med "$vs")
		ratio=$(awk -v a="$m" -v b="$v" 'BEGIN { if (b > 0) printf "%.4g", a / b }')
	fi
	local c one
	for c in $check; do
		one=null
		case $c in
		max:*) one=$(awk -v a="$m" -v g="${c#*:}" 'BEGIN { print (a <= g) ? "true" : "false" }') ;;
		every_max:*) one=$(awk -v a="$hi" -v g="${c#*:}" 'BEGIN { print (a <= g) ? "true" : "false" }') ;;
		below:*) one=$(awk -v a="$m" -v g="${c#*:}" 'BEGIN { print (a < g) ? "true" : "false" }') ;;
		min:*) one=$(awk -v a="$m" -v g="${c#*:}" 'BEGIN { print (a >= g) ? "true" : "false" }') ;;
		ratio_max:*) one=$(awk -v a="${ratio:-inf}" -v g="${c#*:}" 'BEGIN { print (a != "" && a <= g) ? "true" : "false" }') ;;
		ratio_min:*) one=$(awk -v a="${ratio:-0}" -v g="${c#*:}" 'BEGIN { print (a >= g) ? "true" : "false" }') ;;
		ratio_above:*) one=$(awk -v a="${ratio:-0}" -v g="${c#*:}" 'BEGIN { print (a > g) ? "true" : "false" }') ;;
		none) ;;
		*) echo "bench: row \"$name\": no such check: $c" >&2 ;;
		esac
		# several checks: met when every one is
		[ "$one" = null ] && continue
		[ "$met" = false ] || met=$one
	done
	jq -nc --arg section "$section" --arg name "$name" --arg unit "$unit" \
		--argjson median "$m" --argjson min "$lo" --argjson max "$hi" --argjson n "$n" \
		--arg ratio "$ratio" --arg vs "$vs" --arg goal "$goal" --argjson met "$met" \
		--arg note "$note" \
		'{section:$section,name:$name,unit:$unit,median:$median,min:$min,max:$max,n:$n,
		  ratio:(if $ratio == "" then null else ($ratio|tonumber) end),
		  vs:(if $vs == "" then null else $vs end),goal:$goal,met:$met,note:$note}' \
		>> "$WORK/rows.jsonl"
}

# ---- set-up and clean-up ----

bench_init() {
	WORK=$(mktemp -d /tmp/nicstall-bench.XXXXXX)
	PFX=nb$(printf %04d $(( $$ % 10000 )))
	mkdir -p "$WORK/series" "$WORK/flows" "$WORK/state" "$WORK/run"
	: > "$WORK/rows.jsonl"
	PIDS=() NETNS=() ENV_UP=0
	T_START=$(date +%s)
	LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
}

bench_cleanup() {
	local p ns
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	for ns in "${NETNS[@]}"; do ip netns del "$ns" 2>/dev/null; done
	[ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}

spawn_bg() {    # spawn_bg CMD...: run in the background, remembered for clean-up
	"$@" &
	LAST_PID=$!
	PIDS+=("$LAST_PID")
}

stop_pid() {    # stop_pid PID: TERM, then KILL after 2 s
	local p=$1
	kill -TERM "$p" 2>/dev/null
	for _ in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$p" 2>/dev/null
	wait "$p" 2>/dev/null
}

bench_machine_line() {
	local cpu cores mem
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	cores=$(nproc)
	mem=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
	echo "$cores x ${cpu:-unknown CPU}, $mem, Linux $(uname -r)"
}

# The two-namespace veth pair with 32 kernel TCP request/response sessions
# at 500/s each (the example engine: kernel sockets, and engine flow tables
# the engine source reads). C = client side, S = server side.
env_up() {
	[ "$ENV_UP" = 1 ] && return 0
	C=${PFX}c S=${PFX}s VC=${PFX}vc VS=${PFX}vs AC=10.253.0.1 AS=10.253.0.2
	ip netns add "$C" && NETNS+=("$C") || return 1
	ip netns add "$S" && NETNS+=("$S") || return 1
	ip link add "$VC" netns "$C" type veth peer name "$VS" netns "$S" || return 1
	ip -n "$C" addr add $AC/24 dev "$VC"
	ip -n "$S" addr add $AS/24 dev "$VS"
	for ns in "$C" "$S"; do ip -n "$ns" link set lo up; done
	ip -n "$C" link set "$VC" up
	ip -n "$S" link set "$VS" up
	spawn_bg ip netns exec "$S" "$BUILD/nsengine" server --listen $AS:12001 \
		--table-dir "$WORK/flows" > "$WORK/engine-srv.log" 2>&1
	wait_for 5 sh -c "ip netns exec $S ss -ltnH | grep -q ':12001 '" || return 1
	spawn_bg ip netns exec "$C" "$BUILD/nsengine" client --connect $AS:12001 --sessions 32 \
		--interval-us 2000 --duration 3600 --table-dir "$WORK/flows" > "$WORK/engine-cli.log" 2>&1
	wait_for 10 sh -c "[ \$(ip netns exec $C ss -tnH state established '( dport = :12001 )' | wc -l) -ge 32 ]" ||
		{ echo "bench: the 32 sessions did not come up" >&2; return 1; }
	ENV_UP=1
}

wait_for() {    # wait_for SECONDS CMD...
	local n=$(( $1 * 10 )); shift
	while [ "$n" -gt 0 ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; n=$((n - 1)); done
	return 1
}

# mkconf FILE [track = ...] [extra flows line]: the default configuration
# for the two ports, watching the 32 sessions (tcp port 12001).
mkconf() {
	local f=$1 track=${2:-} extra=${3:-} daemon_extra=${4:-}
	cat > "$f" <<CONF
[daemon]
state_dir = $WORK/state
run_dir = $WORK/run
flows_dir = $WORK/flows
rules_dir = $ROOT/rules
rules_local_dir = $WORK/rules.d
$daemon_extra
[port cli]
netns = $C
interface = $VC
flows = tcp port 12001
$extra
$track
peer = srv
[port srv]
netns = $S
interface = $VS
flows = tcp port 12001
$extra
$track
peer = cli
CONF
}

# dstart CONF: the daemon, up and answering; DPID. DPIN: a command it
# runs under (taskset -c N), empty for none.
DPIN=()
dstart() {
	rm -f "$WORK/ctl.sock"
	"${DPIN[@]}" "$BUILD/nicstalld" -c "$1" --socket "$WORK/ctl.sock" >> "$WORK/daemon.log" 2>&1 &
	DPID=$!
	PIDS+=("$DPID")
	wait_for 10 "$BUILD/nicstallctl" -s "$WORK/ctl.sock" status || {
		echo "bench: the daemon did not start with $1" >&2
		tail -20 "$WORK/daemon.log" >&2
		return 1
	}
}
dstop() { stop_pid "$DPID"; }
ctl() { "$BUILD/nicstallctl" -s "$WORK/ctl.sock" "$@"; }

# The daemon's CPU time (its one thread, sum_exec_runtime), ns.
cpu_ns() { cut -d' ' -f1 "/proc/$1/schedstat"; }
mono_ns() { awk '{ printf "%.0f\n", $1 * 1e9 }' /proc/uptime; }
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }

# ---- the report ----

bench_report() {
	local stamp out host
	stamp=$(date -u +%Y%m%dT%H%M%SZ)
	host=$(hostname -s 2>/dev/null || echo host)
	# every run's JSON stays in the build directory; the repository keeps
	# only the run whose table is in bench/README.md (latest.json)
	local dir=${BENCH_RESULTS:-$BUILD/bench-results}
	[ "$SMOKE" = 1 ] && dir=${BENCH_RESULTS:-$BUILD/bench-smoke}
	mkdir -p "$dir"
	out=$dir/$stamp-$host$( [ "$SMOKE" = 1 ] && echo -smoke ).json
	# every series as measured, in order (rounds alternate: a reader can
	# pair an on run with the off run beside it)
	local f
	for f in "$WORK"/series/*; do
		[ -f "$f" ] || continue
		jq -R -s --arg k "${f##*/}" \
			'{($k): [split("\n")[] | select(length > 0) | (tonumber? // .)]}' "$f"
	done | jq -s 'add // {}' > "$WORK/series.json"
	jq -s --arg machine "$(bench_machine_line)" --arg load_start "$LOAD_START" \
		--arg load_end "$(cut -d' ' -f1-3 /proc/loadavg)" --arg when "$stamp" \
		--arg commit "$(git -C "$ROOT" describe --always --dirty 2>/dev/null)" \
		--argjson smoke "$SMOKE" --argjson seconds $(( $(date +%s) - T_START )) \
		--slurpfile series "$WORK/series.json" \
		'{when:$when,commit:$commit,machine:$machine,load_start:$load_start,
		  load_end:$load_end,smoke:($smoke == 1),seconds:$seconds,rows:.,
		  series:$series[0]}' \
		"$WORK/rows.jsonl" > "$out"
	echo
	bench_table "$out"
	echo
	echo "bench: $(jq '[.rows[] | select(.met == true)] | length' "$out") goals met," \
	     "$(jq '[.rows[] | select(.met == false)] | length' "$out") missed;" \
	     "$(jq -r .seconds "$out") s; load $(jq -r .load_start "$out") -> $(jq -r .load_end "$out")"
	echo "bench: $out"
	if [ "$README" = 1 ]; then
		mkdir -p "$ROOT/bench/results"
		cp "$out" "$ROOT/bench/results/latest.json"
		bench_readme "$out"
	fi
	return 0
}

# The table as text (stdout) or Markdown (md).
bench_table() {
	local f=$1 fmt=${2:-text}
	jq -r --arg fmt "$fmt" '
	  def num: if . == null then "" elif (. | fabs) >= 1000 then (. | round | tostring)
	           elif (. | fabs) >= 10 then ((. * 10 | round) / 10 | tostring)
	           else ((. * 1000 | round) / 1000 | tostring) end;
	  .rows[] | [ .section, .name,
	    (if .median == null then "-" else (.median | num) end),
	    (if .min == null then "" else "\(.min | num)-\(.max | num)" end),
	    .unit, (if .ratio == null then "" else "\(.ratio | num)x" end), .goal,
	    (if .met == true then "met" elif .met == false then "MISSED" else "" end),
	    .note ] | @tsv' "$f" |
	if [ "$fmt" = md ]; then
		echo "| section | row | median | min-max | unit | ratio | goal | met | note |"
		echo "| --- | --- | ---: | ---: | --- | ---: | --- | --- | --- |"
		awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }'
	else
		awk -F'\t' '{ printf "%-8s %-58s %10s %17s %-6s %9s %-22s %s\n", $1, $2, $3, $4, $5, $6, $7, $8
			      if ($8 == "MISSED" && $9 != "") printf "%8s   -> %s\n", "", $9 }'
	fi
}

# bench/README.md between its markers: the machine, the load, the table.
bench_readme() {
	local f=$1 md=$ROOT/bench/README.md tmp
	grep -q '^<!-- bench:begin -->' "$md" 2>/dev/null || return 0
	tmp=$(mktemp)
	{
		sed '/^<!-- bench:begin -->/q' "$md"
		echo
		echo "Run $(jq -r .when "$f") at $(jq -r .commit "$f") on $(jq -r .machine "$f");"
		echo "load average $(jq -r .load_start "$f") at the start, $(jq -r .load_end "$f") at the end;"
		echo "$(jq -r .seconds "$f") s. Full figures: \`bench/results/latest.json\`."
		echo
		bench_table "$f" md
		echo
		sed -n '/^<!-- bench:end -->/,$p' "$md"
	} > "$tmp" && mv "$tmp" "$md"
}
