# Helpers for tests (and the demo) that drive the real daemon against the
# emulated ConnectX pair. Source after lib.sh.
EMU_PAIR=$ROOT/tests/emu/emu-pair.sh

# emu_up NET [EMU_ARGS]: the pair PREFIX-cli/PREFIX-srv on NET.1/NET.2, and a
# daemon configuration for it in $T_DIR/emu.conf
emu_up() {
	EMU_NET=$1 EMU_ARGS=${2:-} EMUPORT=$BUILD/emuport "$EMU_PAIR" up "$T_PREFIX" "$T_DIR/emu" > "$T_DIR/emu.env" || return 1
	T_CLEANUP+=("EMUPORT=$BUILD/emuport $EMU_PAIR down $T_PREFIX $T_DIR/emu")
	CLI_NS=$T_PREFIX-cli SRV_NS=$T_PREFIX-srv CLI_IF=${T_PREFIX}c SRV_IF=${T_PREFIX}s
	CLI_ADDR=$1.1 SRV_ADDR=$1.2
	mkdir -p "$T_DIR/flows" "$T_DIR/state"
	EMU_DAEMON_EXTRA="flows_dir = $T_DIR/flows
state_dir = $T_DIR/state
rules_local_dir = $T_DIR/rules.d
journal_dir = $T_DIR/journal
incident_cooldown = 0s
reprogram_interval = 0s" \
	"$ROOT/tests/emu/emu-conf.sh" "$T_PREFIX" "$T_DIR/emu" "$1" "tcp port 11100-11199" cli srv \
		> "$T_DIR/emu.conf"
}

emu() { "$BUILD/emuport" ctl "$T_DIR/emu" "$@"; }

# classify_without BUNDLE RULE...: the first line of `nicstallctl classify`
# of BUNDLE with the shipped rules less the named ones (what the verdict
# was before they came)
classify_without() {
	local b=$1 r sedargs=() d=$T_DIR/rules-without
	shift
	for r in "$@"; do sedargs+=(-e "/^rule $r /,/^}/d"); done
	mkdir -p "$d"
	sed "${sedargs[@]}" "$ROOT/rules/50-verdicts.rules" > "$d/50-verdicts.rules"
	cp "$ROOT/rules/00-signals.rules" "$d/"
	"$NICSTALLCTL" classify "$b" --rules "$d" 2>&1 | head -1
}

# pingpong PORT [SECONDS]: a sockperf server on SRV_ADDR:PORT and a client
pingpong() {
	ip netns exec "$SRV_NS" sockperf server --tcp -i "$SRV_ADDR" -p "$1" > /dev/null 2>&1 &
	T_PIDS+=($!)
	PP_SRV=$!
	wait_for 5 bash -c "ip netns exec $SRV_NS ss -ltn | grep -q ':$1 '"
	ip netns exec "$CLI_NS" sockperf ping-pong --tcp -i "$SRV_ADDR" -p "$1" -t "${2:-30}" --mps 500 > /dev/null 2>&1 &
	T_PIDS+=($!)
	PP_CLI=$!
	wait_for 5 bash -c "ip netns exec $CLI_NS ss -tn | grep -q ':$1 '"
}

# cport PORT: the client's source port of the session to PORT
cport() { ip netns exec "$CLI_NS" ss -Htn "dport = :$1" | awk '{print $4}' | sed 's/.*://' | head -1; }

# bundle_for PORT: the bundle whose incident holds a flow to/from PORT
bundle_for() {
	local id
	for id in $("$NICSTALLCTL" -s "$T_SOCK" -j incident list | jq -r '.investigations[].id'); do
		"$NICSTALLCTL" -s "$T_SOCK" -j incident show "$id" | jq -r --arg p ":$1" \
			'select(.record.state == "complete" and (.record.incident.flows | any(.tuple | contains($p)))) | .record.bundle // empty' \
			2>/dev/null | grep . && return 0
	done
	return 1
}
