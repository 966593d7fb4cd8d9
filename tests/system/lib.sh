# Shared helpers for system tests (bash). Source it, then call t_init.
# Every test makes its own namespaces with a unique prefix, runs bounded in
# time and cleans up in an EXIT trap even when it fails.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=$(cd "$ROOT" && cd "$BUILD" && pwd)
NICSTALLD=$BUILD/nicstalld
NICSTALLCTL=$BUILD/nicstallctl
export PATH="$ROOT/tests/tools:$PATH"
T_PASS=0
T_FAIL=0
T_PIDS=()
T_NETNS=()
T_CLEANUP=()

t_init() {
	T_PREFIX=ns$$$RANDOM
	T_PREFIX=${T_PREFIX:0:9}
	T_DIR=$(mktemp -d /tmp/nicstall-test.XXXXXX)
	trap t_cleanup EXIT
	trap 'exit 130' INT TERM
}

# t_shared NAME UP DOWN: host-wide state (a sysctl, a group, a user) that
# tests in make check's two lanes may need at the same time. The first
# holder runs UP, which succeeds only when it changed something; the last
# holder to leave runs DOWN then. A test that made the state while another
# used it must not undo it under that one (seen in CI: test_seed004 turned
# kernel.task_delayacct off in the middle of test_host_io's window, whose
# block I/O delay then read 135% of it; a group removed under a test whose
# daemon's socket was that group's). Holders are files named by their
# test's pid under $T_SHARED/NAME, read and changed under a lock; a holder
# whose test is gone (killed past its time limit) does not count.
T_SHARED=${T_SHARED:-/run/nicstall-tests}
t_shared() {
	local d=$T_SHARED/$1
	mkdir -p "$d" || return 1
	(
		flock -w 120 9 || exit 1
		_t_shared_prune "$d"
		# no holder and no undo: nobody made it yet (an undo without a
		# holder is a killed holder's, whose state is still made)
		if ! compgen -G "$d/holder.*" >/dev/null && [ ! -f "$d/undo" ]; then
			if eval "$2"; then printf '%s\n' "$3" > "$d/undo"; fi
		fi
		: > "$d/holder.$$"
	) 9> "$d.lock" || { fail "t_shared $1: no lock on $d.lock in 120 s"; return 1; }
	T_CLEANUP=("t_unshare $1" "${T_CLEANUP[@]}")
}

t_unshare() {
	local d=$T_SHARED/$1
	(
		flock -w 120 9 || exit 1
		rm -f "$d/holder.$$"
		_t_shared_prune "$d"
		# the undo kept until it worked (a user still running a hook
		# is busy: the next holder to leave tries again)
		if ! compgen -G "$d/holder.*" >/dev/null && [ -f "$d/undo" ] &&
		   eval "$(cat "$d/undo")"; then
			rm -f "$d/undo"
		fi
	) 9> "$d.lock"
}

_t_shared_prune() {
	local h
	for h in "$1"/holder.*; do
		[ -e "$h" ] || continue
		kill -0 "${h##*.}" 2>/dev/null || rm -f "$h"
	done
}

# t_group_up: group nicstall (the control socket's), made for the test where
# the host has none and removed after the last test that needed it.
t_group_up() {
	t_shared group-nicstall '! getent group nicstall >/dev/null && groupadd -r nicstall' \
		'groupdel nicstall'
}

# t_delayacct_up: kernel.task_delayacct on for the test (block I/O delays
# read 0 without it), restored after the last test that needed it.
t_delayacct_up() {
	t_shared delayacct '[ "$(cat /proc/sys/kernel/task_delayacct 2>/dev/null)" = 0 ] &&
		echo 1 > /proc/sys/kernel/task_delayacct' 'echo 0 > /proc/sys/kernel/task_delayacct'
}

# hook_user_up: the bundle hook's default user, as systemd/nicstalld.sysusers
# makes it (nicstall-hook, a member of group nicstall), created for the test
# where the host has none and removed after it; HOOK_UID is its uid.
hook_user_up() {
	t_group_up || return 1
	t_shared user-nicstall-hook '! getent passwd nicstall-hook >/dev/null &&
		useradd -r -M -U -G nicstall -s /usr/sbin/nologin -c "nicstalld bundle hook" nicstall-hook' \
		'pkill -KILL -u nicstall-hook; userdel nicstall-hook' || return 1
	HOOK_UID=$(id -u nicstall-hook)
}

# t_public_copy PATH: a copy of the file PATH (mode 755) or of the
# directory PATH (readable by all) under $T_DIR/pub, for a test user or an
# unprivileged child to run or read; its path is printed. The checkout
# itself may be unreachable to them (a clone in /root or another 0700
# directory); $T_DIR is opened to 711 for it.
t_public_copy() {
	chmod o+x "$T_DIR" && mkdir -p -m 755 "$T_DIR/pub" || return 1
	if [ -d "$1" ]; then
		cp -r "$1" "$T_DIR/pub/" && chmod -R a+rX "$T_DIR/pub/$(basename "$1")" || return 1
	else
		install -m 755 "$1" "$T_DIR/pub/" || return 1
	fi
	echo "$T_DIR/pub/$(basename "$1")"
}

# t_stop_pids: end the test's background processes (T_PIDS, the daemon's
# among them): SIGTERM, 2 s, SIGKILL.
t_stop_pids() {
	local p
	for p in "${T_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${T_PIDS[@]}"; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$p" 2>/dev/null
	done
}

# The EXIT trap.  A test ends by falling off its end (the status of its
# last command, a check's), by `exit N` after a fail or a skip, or by an
# error of its own: an unbound variable under set -u ends bash with status
# 1, a signal with 128+N.  A non-zero status that no fail accounts for is
# an exit the test did not intend: counted as a failure, with the command
# it died at, so that its earlier passes cannot make it green.
t_cleanup() {
	local rc=$? at=$BASH_COMMAND p ns c
	if [ "$rc" -ne 0 ] && [ "$T_FAIL" -eq 0 ]; then
		fail "the test ended with status $rc at: $at"
	fi
	for c in "${T_CLEANUP[@]}"; do eval "$c" >/dev/null 2>&1; done
	t_stop_pids
	# a sanitizer build of the daemon reports here (also leaks, at exit)
	if [ -f "$T_DIR/daemon.log" ] &&
	   grep -qE "runtime error|AddressSanitizer|LeakSanitizer" "$T_DIR/daemon.log"; then
		fail "sanitizer report in the daemon's log"
		grep -E -A12 "runtime error|AddressSanitizer|LeakSanitizer" "$T_DIR/daemon.log" | head -40
	fi
	for ns in "${T_NETNS[@]}"; do ip netns del "$ns" 2>/dev/null; done
	if [ "$T_FAIL" -ne 0 ] && [ -f "$T_DIR/daemon.log" ]; then
		echo "---- daemon log (last 30 lines) ----"
		tail -30 "$T_DIR/daemon.log"
	fi
	# a test that checked nothing has failed
	[ "$T_PASS" -eq 0 ] && [ "$T_FAIL" -eq 0 ] && T_FAIL=1 && echo "FAIL - no check ran"
	# NICSTALL_KEEP=DIR: a failed test's directory (the daemon's log, its
	# state and bundles) moved there to be read
	if [ "$T_FAIL" -ne 0 ] && [ -n "${NICSTALL_KEEP:-}" ]; then
		mkdir -p "$NICSTALL_KEEP" && mv "$T_DIR" "$NICSTALL_KEEP/" &&
			echo "kept: $NICSTALL_KEEP/$(basename "$T_DIR")"
	fi
	rm -rf "$T_DIR"
	echo "$T_PASS passed, $T_FAIL failed"
	[ "$T_FAIL" -eq 0 ]
	exit $?
}

ok() { T_PASS=$((T_PASS+1)); echo "ok - $*"; }
fail() { T_FAIL=$((T_FAIL+1)); echo "FAIL - $*"; }
# check WHAT CMD...: ok or FAIL; returns CMD's success, so "check ... || show-why" works
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; return 1; fi; }

# netns_pair A B IFA IFB ADDRA ADDRB: two namespaces joined by a veth pair.
netns_pair() {
	ip netns add "$1" && T_NETNS+=("$1") || fail "ip netns add $1"
	ip netns add "$2" && T_NETNS+=("$2")
	ip link add "$3" netns "$1" type veth peer name "$4" netns "$2"
	ip -n "$1" addr add "$5/24" dev "$3"
	ip -n "$2" addr add "$6/24" dev "$4"
	ip -n "$1" link set "$3" up
	ip -n "$2" link set "$4" up
	ip -n "$1" link set lo up
	ip -n "$2" link set lo up
}

# pair_up NET: the namespaces A (PREFIXa) and B (PREFIXb) joined by the
# veth vA (NET.1) / vB (NET.2), for conf_port.
pair_up() {
	A=${T_PREFIX}a B=${T_PREFIX}b PAIR_NET=$1
	netns_pair "$A" "$B" vA vB "$1.1" "$1.2" || { fail "namespace pair"; return 1; }
}

# conf_daemon [LINE...]: a [daemon] section with the test's own flows and
# state directories and the shipped rules, then the LINEs ("key = value").
conf_daemon() {
	printf '[daemon]\nflows_dir = %s\nstate_dir = %s\nrules_dir = %s\n' \
		"$T_DIR/flows" "$T_DIR/state" "$ROOT/rules"
	[ $# -eq 0 ] || printf '%s\n' "$@"
}

# conf_port cli|srv [LINE...]: the [port] section of pair_up's side A (cli)
# or B (srv): its namespace, its interface, the other side's address, then
# the LINEs.
conf_port() {
	case $1 in
	cli) printf '[port cli]\nnetns = %s\ninterface = vA\npeer_address = %s.2\n' "$A" "$PAIR_NET" ;;
	srv) printf '[port srv]\nnetns = %s\ninterface = vB\npeer_address = %s.1\n' "$B" "$PAIR_NET" ;;
	*) fail "conf_port: no side $1"; return 1 ;;
	esac
	shift
	[ $# -eq 0 ] || printf '%s\n' "$@"
}

# start_daemon CONF [args...]: starts nicstalld with socket $T_DIR/ctl.sock
start_daemon() {
	local conf=$1; shift
	T_SOCK=$T_DIR/ctl.sock
	rm -f "$T_SOCK"         # a killed daemon leaves its socket behind
	"$NICSTALLD" -c "$conf" --socket "$T_SOCK" "$@" >> "$T_DIR/daemon.log" 2>&1 &
	T_DPID=$!
	T_PIDS+=("$T_DPID")
	wait_for 10 "$NICSTALLCTL" -s "$T_SOCK" status || {
		fail "the daemon starts with $conf"
		cat "$T_DIR/daemon.log"
		return 1
	}
}

ctl() { "$NICSTALLCTL" -s "$T_SOCK" "$@"; }

# wait_for SECONDS CMD...: poll every 0.1 s until CMD succeeds.
wait_for() {
	local n=$(( $1 * 10 )); shift
	while [ "$n" -gt 0 ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; n=$((n-1)); done
	return 1
}

# sockperf_pair A B ADDR PORT N SECONDS: N sockperf TCP ping-pong sessions
# from A to B, each with its own server (ports PORT..PORT+N-1), so a stuck
# session cannot hold its siblings' server.
sockperf_pair() {
	local a=$1 b=$2 addr=$3 port=$4 n=$5 secs=$6 i
	for i in $(seq 0 $((n - 1))); do
		ip netns exec "$b" sockperf server --tcp -i "$addr" -p $((port + i)) \
			> "$T_DIR/sockperf-srv$i.log" 2>&1 &
		T_PIDS+=($!)
	done
	for i in $(seq 0 $((n - 1))); do
		wait_for 5 bash -c "ip netns exec $b ss -ltn | grep -q ':$((port + i)) '"
		ip netns exec "$a" sockperf ping-pong --tcp -i "$addr" -p $((port + i)) -t "$secs" --mps 500 \
			> "$T_DIR/sockperf-cli$i.log" 2>&1 &
		T_PIDS+=($!)
	done
}

# jflows PORT: the daemon's flow table for PORT as JSON lines
jflows() { ctl -j flows "$@" | jq -c '.flows[]'; }

# tracker_progs NS IF: the flow tracker's programs on IF, one line each
# (ft_ingress, ft_egress), however hooked: tcx links (build/tcxq) or clsact
# filters (tc filter show)
tracker_progs() {
	{ ip netns exec "$1" "$BUILD/tcxq" "$2" | awk '{ print $2 }'
	  for d in ingress egress; do
		ip netns exec "$1" tc filter show dev "$2" $d | sed -n 's/.* name \([^ ]*\) .*/\1/p'
	  done; } 2>/dev/null | grep -x 'ft_\(ingress\|egress\)'
}

# nft_drop NS RULE...: drop frames in NS before the stack sees them
nft_drop() {
	local ns=$1; shift
	ip netns exec "$ns" nft add table inet nstest 2>/dev/null
	ip netns exec "$ns" nft add chain inet nstest pre '{ type filter hook prerouting priority -300; }' 2>/dev/null
	ip netns exec "$ns" nft add rule inet nstest pre "$@" drop
}
nft_clear() { ip netns exec "$1" nft delete table inet nstest 2>/dev/null; }
