#!/bin/bash
# emu-pair.sh: a back-to-back "ConnectX" pair in two network namespaces,
# emulated by build/emuport.  Test bed only.
#
#   emu-pair.sh up   PREFIX OUTDIR   namespaces PREFIX-cli / PREFIX-srv, veth
#                                    PREFIXc (10.77.0.1/24) <-> PREFIXs
#                                    (10.77.0.2/24), emuport ports "cli" and
#                                    "srv", files under OUTDIR
#   emu-pair.sh down PREFIX OUTDIR   stop emuport, delete the namespaces and
#                                    emuport's files (idempotent)
#
# Environment: EMUPORT (default: build/emuport next to this tree),
# EMU_ARGS (extra `emuport run` options, e.g. --fw-frames),
# EMU_NET (first three octets, default 10.77.0),
# EMU_RX_MODE_DELAY (MS or "instant": `emuport --rx-mode-delay`, the mlx5
# deferred receive-filter model; given before EMU_ARGS, so a test that
# passes --rx-mode-delay itself keeps its own value; unset: 5 ms, the
# deferred model, as on a quiet card).
set -u

usage() { echo "usage: $0 up|down PREFIX OUTDIR" >&2; exit 2; }
[ $# -eq 3 ] || usage
cmd=$1 prefix=$2 outdir=$3
case "$prefix" in
	*[!a-z0-9]* | "") echo "$0: PREFIX must be 1-12 of [a-z0-9]" >&2; exit 2 ;;
esac
[ ${#prefix} -le 12 ] || { echo "$0: PREFIX longer than 12" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
emuport=${EMUPORT:-$here/../../build/emuport}
net=${EMU_NET:-10.77.0}
ns_c=$prefix-cli ns_s=$prefix-srv if_c=${prefix}c if_s=${prefix}s
pidf=$outdir/emuport.pid

stop_emuport() {
	local pid i
	[ -f "$pidf" ] || return 0
	pid=$(cat "$pidf" 2>/dev/null)
	case "$pid" in '' | *[!0-9]*) rm -f "$pidf"; return 0 ;; esac
	if grep -qa emuport "/proc/$pid/cmdline" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		for i in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	fi
	rm -f "$pidf"
}

down() {
	stop_emuport
	ip netns del "$ns_c" 2>/dev/null
	ip netns del "$ns_s" 2>/dev/null
	if [ -d "$outdir" ]; then
		rm -rf "$outdir/sysfs"
		rm -f "$outdir"/cli.ethtool "$outdir"/srv.ethtool "$outdir"/cli.info \
			"$outdir"/srv.info "$outdir"/.*.tmp "$outdir"/ctl.sock "$outdir"/emuport.log
		rmdir "$outdir" 2>/dev/null
	fi
	return 0
}

up() {
	local i pid
	[ -x "$emuport" ] || { echo "$0: $emuport not built (make)" >&2; return 1; }
	if ip netns list | grep -qE "^($ns_c|$ns_s)( |\$)"; then
		echo "$0: namespace $ns_c or $ns_s exists already (run down first)" >&2
		return 1
	fi
	mkdir -p "$outdir" || return 1
	ip netns add "$ns_c" && ip netns add "$ns_s" &&
	ip link add "$if_c" netns "$ns_c" type veth peer name "$if_s" netns "$ns_s" &&
	ip -n "$ns_c" addr add "$net.1/24" dev "$if_c" &&
	ip -n "$ns_s" addr add "$net.2/24" dev "$if_s" &&
	ip -n "$ns_c" link set lo up && ip -n "$ns_s" link set lo up &&
	ip -n "$ns_c" link set "$if_c" up && ip -n "$ns_s" link set "$if_s" up || {
		echo "$0: cannot set up namespaces $ns_c/$ns_s" >&2; return 1; }
	# shellcheck disable=SC2086
	"$emuport" run --dir "$outdir" --port "cli:$ns_c:$if_c" --port "srv:$ns_s:$if_s" \
		--rx-mode-delay "${EMU_RX_MODE_DELAY:-5}" \
		${EMU_ARGS:-} >"$outdir/emuport.log" 2>&1 </dev/null &
	pid=$!
	echo "$pid" >"$pidf"
	for i in $(seq 100); do
		if [ -S "$outdir/ctl.sock" ] && [ -f "$outdir/cli.ethtool" ] &&
			[ -f "$outdir/srv.ethtool" ]; then
			echo "EMU_CLI_NS=$ns_c EMU_CLI_IF=$if_c EMU_CLI_ADDR=$net.1" \
				"EMU_SRV_NS=$ns_s EMU_SRV_IF=$if_s EMU_SRV_ADDR=$net.2 EMU_PID=$pid"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "$0: emuport did not start; its log:" >&2
	cat "$outdir/emuport.log" >&2
	return 1
}

case "$cmd" in
up) up || { down; exit 1; } ;;
down) down ;;
*) usage ;;
esac
