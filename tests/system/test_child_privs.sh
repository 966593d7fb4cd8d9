#!/bin/bash
# What the daemon's children run with (nicstalld(8) SECURITY, issue 34
# finding 6): each kind of child prints its own /proc/self/status and the
# test reads Uid, Gid, Groups, the five capability sets and NoNewPrivs.
#   - bundle_hook: nicstall-hook (nicstalld.sysusers), group nicstall (it
#     reads the bundle through it), no supplementary group, no capability
#     in any set, no new privileges, its limits (RLIMIT_DATA);
#   - a configured probe: nobody with its own group, the same emptiness;
#     with probe_user = root, the daemon's own uid and capabilities;
#   - Onload's tools (a stand-in orm_json): uid 0, no capability in any
#     set, no new privileges; in their view the daemon's state_dir is empty
#     and read-only and its control socket is not there, and the socket
#     refuses root's commands to a uid 0 client without capabilities (the
#     test's own setpriv client, which can reach it).
# The daemon itself runs as root with every capability here, so a child
# that kept anything would show it.
. "$(dirname "$0")/lib.sh"
t_init
hook_user_up
NGID=$(getent group nicstall | cut -d: -f3)
NOGID=$(id -g nobody)
# nobody reaches its output directory and the bundles (group nicstall)
chmod 711 "$T_DIR" && mkdir -m 755 "$T_DIR/state" && mkdir -m 777 "$T_DIR/out"
# something of the daemon's in state_dir, for the Onload tool not to see
touch "$T_DIR/state/evidence"
cat > "$T_DIR/hook.sh" <<EOF
#!/bin/sh
{ cat /proc/self/status; head -c 1 "\$1/manifest.json" > /dev/null && echo "Bundle:	readable"
  echo "DataMax:	\$(awk '/^Max data size/ { print \$4 }' /proc/self/limits)"; } \
	> "$T_DIR/out/hook.status" 2>&1
EOF
# a stand-in for Onload's orm_json: the source runs it every poll
mkdir -m 755 "$T_DIR/onload"
cat > "$T_DIR/onload/orm_json" <<EOF
#!/bin/sh
{ cat /proc/self/status
  echo "StateEntries:	\$(ls -A "$T_DIR/state" | wc -l)"
  touch "$T_DIR/state/planted" 2>/dev/null && echo "Planted:	yes" || echo "Planted:	no"
  [ -S "$T_DIR/ctl.sock" ] && echo "Socket:	yes" || echo "Socket:	no"
  "$NICSTALLCTL" -s "$T_DIR/ctl.sock" reload > /dev/null 2>&1 && echo "Reload:	yes" || echo "Reload:	no"
} > "$T_DIR/onload/orm.status.tmp" && mv "$T_DIR/onload/orm.status.tmp" "$T_DIR/onload/orm.status"
exit 1
EOF
chmod 755 "$T_DIR/hook.sh" "$T_DIR/onload/orm_json"
pair_up 10.219.0 || exit 1
{
	conf_daemon "bundle_hook = $T_DIR/hook.sh" "onload_tools = $T_DIR/onload" "onload_interval = 200ms"
	conf_port cli
	conf_port srv "track = sock onload" "probe = cat /proc/self/status"
} > "$T_DIR/n.conf"
start_daemon "$T_DIR/n.conf" || exit 1
DCAP=$(awk '/^CapEff/ { print $2 }' "/proc/$T_DPID/status")
check "the daemon itself holds capabilities here ($DCAP)" test "$DCAP" != 0000000000000000

# field FILE NAME: the value of "NAME:" in a status file, blanks squeezed
field() { awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$1"; }
Z=0000000000000000
# nocaps WHO FILE: every capability set empty, no new privileges
nocaps() {
	local f=$2 s
	for s in CapInh CapPrm CapEff CapBnd CapAmb; do
		check "$1: $s is empty ($(field "$f" $s))" test "$(field "$f" $s)" = $Z
	done
	check "$1: NoNewPrivs ($(field "$f" NoNewPrivs))" test "$(field "$f" NoNewPrivs)" = 1
}

# the Onload tool, polled by the source
check "the Onload tool ran" wait_for 10 test -s "$T_DIR/onload/orm.status"
O=$T_DIR/onload/orm.status
check "onload tool: uid 0 ($(field "$O" Uid))" test "$(field "$O" Uid)" = "0 0 0 0"
check "onload tool: gid 0, no supplementary group ($(field "$O" Gid) / $(field "$O" Groups))" \
	test "$(field "$O" Gid)/$(field "$O" Groups)" = "0 0 0 0/"
nocaps "onload tool" "$O"
check "onload tool: the daemon's state_dir is empty in its view ($(field "$O" StateEntries) entries; the daemon's: $(ls -A "$T_DIR/state" | wc -l))" \
	test "$(field "$O" StateEntries)" = 0 -a "$(ls -A "$T_DIR/state" | wc -l)" -gt 0
check "onload tool: it plants nothing there" test "$(field "$O" Planted)" = no -a ! -e "$T_DIR/state/planted"
check "onload tool: the control socket is not there for it, and reload is not run" \
	test "$(field "$O" Socket)/$(field "$O" Reload)" = "no/no"
# uid 0 without a capability, reaching the socket: root's commands refused
nocaps_ctl() { setpriv --inh-caps=-all --bounding-set=-all -- "$NICSTALLCTL" -s "$T_SOCK" "$@"; }
out=$(nocaps_ctl recover srv 2>&1); rc=$?
check "uid 0 without capabilities: recover is refused ($rc: $out)" \
	bash -c "[ $rc -ne 0 ] && grep -q 'neither root with CAP_NET_ADMIN and CAP_NET_RAW' <<< '$out'"
out=$(nocaps_ctl reload 2>&1); rc=$?
check "uid 0 without capabilities: reload is refused ($rc)" test "$rc" -ne 0
check "the daemon logged why" grep -q "uid 0 client without root's capabilities" "$T_DIR/daemon.log"
check "root with its capabilities still reloads" ctl reload

# an investigation: the probe, then a bundle and its hook
ctl investigate srv > /dev/null || fail "investigate srv"
done_all() { ctl -j incident list | jq -en 'input | .investigations | length > 0 and all(.state == "complete")' >/dev/null; }
check "the investigation completes" wait_for 20 done_all
ID=$(ctl -j incident list | jq -r '.investigations[-1].id')
ctl -j incident show "$ID" | jq -r '.record.probes[0].output // empty' > "$T_DIR/probe.status"
P=$T_DIR/probe.status
check "probe: its output is recorded" test -s "$P"
check "probe: nobody ($(field "$P" Uid))" test "$(field "$P" Uid)" = "65534 65534 65534 65534"
check "probe: nobody's own group, no supplementary group ($(field "$P" Gid) / $(field "$P" Groups))" \
	test "$(field "$P" Gid)/$(field "$P" Groups)" = "$NOGID $NOGID $NOGID $NOGID/"
nocaps "probe" "$P"
check "probe: the record says who it ran as" \
	bash -c "ctl() { '$NICSTALLCTL' -s '$T_SOCK' \"\$@\"; }; ctl -j incident show $ID | jq -en 'input | .record.probes[0] | .uid == 65534 and .capabilities == \"none\"' > /dev/null"

check "the hook ran" wait_for 15 test -s "$T_DIR/out/hook.status"
H=$T_DIR/out/hook.status
check "hook: nicstall-hook ($(field "$H" Uid))" test "$(field "$H" Uid)" = "$HOOK_UID $HOOK_UID $HOOK_UID $HOOK_UID"
check "hook: group nicstall, no supplementary group ($(field "$H" Gid) / $(field "$H" Groups))" \
	test "$(field "$H" Gid)/$(field "$H" Groups)" = "$NGID $NGID $NGID $NGID/"
check "hook: it reads the bundle through the group" test "$(field "$H" Bundle)" = readable
nocaps "hook" "$H"
check "hook: RLIMIT_DATA is child_memory_max's default ($(field "$H" DataMax))" test "$(field "$H" DataMax)" = 268435456

# probe_user = root: the administrator's explicit choice of the daemon's own
sed -i 's|^\[daemon\]|[daemon]\nprobe_user = root|' "$T_DIR/n.conf"
ctl reload > /dev/null || fail "reload with probe_user = root"
ctl investigate srv > /dev/null || fail "investigate srv (2)"
check "the second investigation completes" wait_for 20 bash -c "$(declare -f done_all); ctl() { '$NICSTALLCTL' -s '$T_SOCK' \"\$@\"; }; done_all && [ \$(ctl -j incident list | jq '.investigations | length') -ge 2 ]"
ID2=$(ctl -j incident list | jq -r '.investigations[-1].id')
ctl -j incident show "$ID2" | jq -r '.record.probes[0].output // empty' > "$T_DIR/probe2.status"
check "probe_user = root: uid 0 and the daemon's capabilities ($(field "$T_DIR/probe2.status" CapEff))" \
	test "$ID2" != "$ID" -a "$(field "$T_DIR/probe2.status" Uid)" = "0 0 0 0" -a \
	"$(field "$T_DIR/probe2.status" CapEff)" = "$DCAP"

# a child whose privileges cannot be given up never runs, and the log says
# which step failed: a daemon without CAP_SETPCAP cannot empty a child's
# bounding set
kill -TERM "$T_DPID"
wait_for 5 bash -c "! kill -0 $T_DPID"
rm -f "$T_DIR/out/hook.status"
setpriv --bounding-set -setpcap "$NICSTALLD" -c "$T_DIR/n.conf" --socket "$T_SOCK" >> "$T_DIR/daemon2.log" 2>&1 &
T_PIDS+=($!)
check "a daemon without CAP_SETPCAP starts" wait_for 10 "$NICSTALLCTL" -s "$T_SOCK" status
ctl snapshot --bundle srv > /dev/null || fail "snapshot --bundle srv"
check "its hook is not run; the log names the step" wait_for 10 grep -q \
	"bundle_hook: .*not run: dropping privileges to uid $HOOK_UID gid $NGID failed at PR_CAPBSET_DROP" "$T_DIR/daemon2.log" ||
	tail -5 "$T_DIR/daemon2.log"
check "and nothing of it ran" test ! -e "$T_DIR/out/hook.status"
