#!/bin/bash
# nicstallctl's conventions (nicstallctl(1)): getopt_long parsing (a missing
# argument and an unknown option named, "--" ends the options, options
# before or after the command as ip(8) takes them), --version, text by
# default and JSON with -j for every command, errors on stderr with exit 1
# and nothing on stdout, usage errors with exit 2, a missing bundle
# directory is an error, and recover's result in words: "port X:
# reprogrammed (SEQ)[, confirmed by the kernel log]", or "no reprogram:
# REASON" on stderr with exit 1 (also with -j, whose JSON says why).
. "$(dirname "$0")/lib.sh"
t_init
pair_up 10.214.0 || exit 1
{
	conf_daemon "interval = 250ms" "reprogram_interval = 0s" "reprogram_hold = 50ms" \
		"capture_time = 100ms"
	conf_port cli "peer = srv"
	conf_port srv "peer = cli" "recover = reprogram"
} > "$T_DIR/n.conf"
mkdir -p "$T_DIR/state"
start_daemon "$T_DIR/n.conf" || exit 1
C=$NICSTALLCTL
# run NAME ARGS...: stdout, stderr and the exit status into $T_DIR/NAME.{out,err,rc}
run() { local n=$1; shift; "$C" "$@" > "$T_DIR/$n.out" 2> "$T_DIR/$n.err"; echo $? > "$T_DIR/$n.rc"; }
rc() { cat "$T_DIR/$1.rc"; }
# (jq 1.6 -e exits 0 on an empty input: "input" makes that an error)
isjson() { jq -en 'input | . != null' "$T_DIR/$1.out" > /dev/null 2>&1; }
# text: not empty and not a JSON document
istext() { [ -s "$T_DIR/$1.out" ] && ! isjson "$1"; }

# --version, --help
run ver --version
check "--version: 'nicstallctl VERSION' on stdout, exit 0" \
	bash -c "[ $(rc ver) = 0 ] && grep -qE '^nicstallctl [^ ]+$' '$T_DIR/ver.out' && [ ! -s '$T_DIR/ver.err' ]"
run ver2 -V
check "-V is the same" cmp -s "$T_DIR/ver.out" "$T_DIR/ver2.out"
run help --help
check "--help: usage on stdout, exit 0" bash -c "[ $(rc help) = 0 ] && grep -q '^usage: nicstallctl' '$T_DIR/help.out'"

# usage errors: exit 2, the message on stderr, nothing on stdout
usage() {
	local what=$1 msg=$2; shift 2
	run u "$@"
	check "usage error, exit 2: $what" bash -c "[ $(rc u) = 2 ] && [ ! -s '$T_DIR/u.out' ] &&
		grep -qF -- \"$msg\" '$T_DIR/u.err'" || cat "$T_DIR/u.err"
}
usage "no command" "usage: nicstallctl"
usage "-s without its argument" "option '-s' needs an argument" status -s
usage "--socket without its argument" "option '--socket' needs an argument" status --socket
usage "an unknown short option" "unknown option '-x'" -x status
usage "an unknown long option" "unknown option '--frobnicate'" status --frobnicate
usage "an unknown command" "unknown command 'frobnicate'" -s "$T_SOCK" frobnicate
usage "counters without a port" "counters: missing PORT" -s "$T_SOCK" counters
usage "--window that is no number" "--window: 'soon' is not a number" -s "$T_SOCK" counters srv --window soon
usage "an option of another command" "status: option --stalled does not apply" -s "$T_SOCK" status --stalled
usage "an extra argument" "status: unexpected argument 'now'" -s "$T_SOCK" status now
usage "incident with a bad subcommand" "incident: expected 'show [ID]' or 'list'" -s "$T_SOCK" incident frob
usage "after --, an option is a command" "unknown command '-j'" -s "$T_SOCK" -- -j status
usage "peers with an argument" "peers: unexpected argument 'rank1'" -s "$T_SOCK" peers rank1
usage "--incident without HOST:" "bundles: --incident: incident '12': write HOST:ID" -s "$T_SOCK" bundles --incident 12
usage "--incident with an ID that is no number" "bundles: --incident: incident 'rank0:x1': ID 'x1' is not a positive number" -s "$T_SOCK" bundles --incident rank0:x1
usage "--incident with an empty host" "incident ':3': write HOST:ID" -s "$T_SOCK" bundles --incident :3
usage "--incident without its argument" "option '--incident' needs an argument" -s "$T_SOCK" bundles --incident
usage "--incident on another command" "flows: option --incident does not apply" -s "$T_SOCK" flows --incident rank0:1

# options before, after and between, as ip(8) takes them; "--"
run o1 -j -s "$T_SOCK" status
run o2 status -s "$T_SOCK" -j
run o3 -s "$T_SOCK" status --json
run o4 --socket="$T_SOCK" -- status
same_status() { jq -S 'del(.uptime_s, .ports[].samples, .ports[].recorder, .recorder_bytes, .max_rss_kib, .memory)' "$T_DIR/$1.out"; }
check "options before and after the command give the same answer" \
	bash -c "$(declare -f same_status); T_DIR='$T_DIR'; [ $(rc o1) = 0 ] && [ $(rc o2) = 0 ] &&
		diff <(same_status o1 | jq -S '.ports | map(.name)') <(same_status o2 | jq -S '.ports | map(.name)') >/dev/null &&
		jq -en 'input | .config' '$T_DIR/o2.out' >/dev/null"
check "--json between the command and nothing, --socket=PATH, '--' before the command" \
	bash -c "[ $(rc o3) = 0 ] && jq -en 'input | .ports' '$T_DIR/o3.out' >/dev/null && [ $(rc o4) = 0 ] && grep -q '^srv ' '$T_DIR/o4.out'"
NICSTALL_SOCKET=$T_SOCK run o5 status
check "NICSTALL_SOCKET names the socket" bash -c "[ $(rc o5) = 0 ] && grep -q '^srv ' '$T_DIR/o5.out'"

# every command: text by default, JSON with -j
b=$(ctl snapshot --bundle srv | sed -n 's/^bundle //p')
check "a manual bundle to read ($b)" test -d "$b"
ctl investigate srv > /dev/null
wait_for 20 bash -c "'$C' -s '$T_SOCK' -j incident show | jq -en 'input | .record.state == \"complete\"' >/dev/null"
both() {
	local what=$1; shift
	run t "$@"
	run j -j "$@"
	check "$what: text by default (exit $(rc t))" bash -c "$(declare -f istext isjson); T_DIR='$T_DIR'; [ $(rc t) = 0 ] && istext t" ||
		head -5 "$T_DIR/t.out" "$T_DIR/t.err"
	check "$what -j: JSON (exit $(rc j))" bash -c "$(declare -f isjson); T_DIR='$T_DIR'; [ $(rc j) = 0 ] && isjson j" ||
		head -5 "$T_DIR/j.out" "$T_DIR/j.err"
}
both "status" -s "$T_SOCK" status
both "counters" -s "$T_SOCK" counters srv
both "counters --changed --window" -s "$T_SOCK" counters srv --changed --window 0.5
both "snapshot" -s "$T_SOCK" snapshot srv
both "flows" -s "$T_SOCK" flows
both "incident list" -s "$T_SOCK" incident list
both "incident show" -s "$T_SOCK" incident show
# investigate: one at a time, so the text run's investigation ends first
done_all() { "$C" -s "$T_SOCK" -j incident list | jq -en 'input | .investigations | all(.state == "complete")' >/dev/null; }
run t -s "$T_SOCK" investigate cli
check "investigate: text (exit $(rc t))" bash -c "[ $(rc t) = 0 ] && grep -qE '^investigation [0-9]+ started$' '$T_DIR/t.out'"
wait_for 20 done_all
run j -j -s "$T_SOCK" investigate cli
check "investigate -j: JSON with the id (exit $(rc j))" bash -c "[ $(rc j) = 0 ] && jq -en 'input | .id > 0' '$T_DIR/j.out' >/dev/null"
wait_for 20 done_all
both "reload" -s "$T_SOCK" reload
both "snapshot --bundle" -s "$T_SOCK" snapshot --bundle srv
both "bundles" -s "$T_SOCK" bundles
both "bundles --incident" -s "$T_SOCK" bundles --incident nosuchhost:1
check "bundles --incident: an incident without bundles lists none" grep -q '^(no bundle of incident nosuchhost:1 in ' "$T_DIR/t.out"
check "bundles --incident -j: its bundles and the peers' announced ones, empty" \
	jq -en 'input | .incident == "nosuchhost:1" and .bundles == [] and .peer_bundles == []' "$T_DIR/j.out"
both "peers" -s "$T_SOCK" peers
check "peers: a daemon without [peer] shows none" grep -q '^(no peers configured)$' "$T_DIR/t.out"
check "peers -j: an empty list" jq -en 'input | .peers == []' "$T_DIR/j.out"
both "show" -s "$T_SOCK" show "$b"
both "verify" -s "$T_SOCK" verify "$b"
both "classify" -s "$T_SOCK" classify "$b" --rules "$ROOT/rules"
both "report -o" -s "$T_SOCK" report "$b" -o "$T_DIR/r.html"
check "report -o wrote the HTML" grep -q '<html' "$T_DIR/r.html"

# recover: the result in words
both "recover" -s "$T_SOCK" recover srv
check "recover: 'port srv: reprogrammed (SEQUENCE)[, confirmed by the kernel log]'" \
	grep -qE '^port srv: reprogrammed \(promisc on, hold [0-9]+ ms, promisc off\)(, confirmed by the kernel log)?$' "$T_DIR/t.out" ||
	cat "$T_DIR/t.out"
check "recover -j: performed, with the sequence" jq -en 'input | .performed == true and (.sequence | length) > 0' "$T_DIR/j.out"
# a packet socket holding vB promiscuous: no crossing the driver would see
ip netns exec "$B" tcpdump -i vB -w /dev/null > /dev/null 2>&1 &
T_PIDS+=($!)
wait_for 5 bash -c "ip -n '$B' -d link show vB | grep -qE 'promiscuity [1-9]'"
run nr -s "$T_SOCK" recover srv
check "no reprogram: 'nicstallctl: port srv: no reprogram: REASON' on stderr, exit 1, stdout empty" \
	bash -c "[ $(rc nr) = 1 ] && [ ! -s '$T_DIR/nr.out' ] && grep -q '^nicstallctl: port srv: no reprogram: .' '$T_DIR/nr.err'" ||
	cat "$T_DIR/nr.out" "$T_DIR/nr.err"
run nrj -j -s "$T_SOCK" recover srv
check "no reprogram with -j: exit 1, the JSON says why" \
	bash -c "[ $(rc nrj) = 1 ] && jq -en 'input | .performed == false and (.refused | length) > 0' '$T_DIR/nrj.out' >/dev/null"

# errors: exit 1, "nicstallctl: ..." on stderr, nothing on stdout
err() {
	local what=$1 msg=$2; shift 2
	run e "$@"
	check "error, exit 1: $what" bash -c "[ $(rc e) = 1 ] && [ ! -s '$T_DIR/e.out' ] &&
		grep -q '^nicstallctl: ' '$T_DIR/e.err' && grep -qF -- \"$msg\" '$T_DIR/e.err'" || cat "$T_DIR/e.out" "$T_DIR/e.err"
}
err "an unknown port" "no port 'nosuch' (configured: cli, srv)" -s "$T_SOCK" counters nosuch
err "recover of a port without recover = reprogram" "recover = reprogram is not set" -s "$T_SOCK" recover cli
err "no daemon on the socket" "is nicstalld running?" -s "$T_DIR/none.sock" status
err "a missing bundle directory (-S /nonexistent bundles)" "state directory $T_DIR/nonexistent: No such file or directory" \
	-s "$T_SOCK" -S "$T_DIR/nonexistent" bundles
err "-j does not turn errors into stdout" "no port 'nosuch' (configured: cli, srv)" -j -s "$T_SOCK" counters nosuch
err "a bundle that is not there" "nosuch-bundle" -s "$T_SOCK" -S "$T_DIR/state" show nosuch-bundle
mkdir -p "$T_DIR/empty"
run none -S "$T_DIR/empty" -s "$T_DIR/none.sock" bundles
check "a state directory without bundles yet is no error (exit 0, says so)" \
	bash -c "[ $(rc none) = 0 ] && grep -q '(no bundles in $T_DIR/empty/bundles)' '$T_DIR/none.out'"
