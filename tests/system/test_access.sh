#!/bin/bash
# Access a team can use, with real users the test makes (and removes): root
# may do everything; a member of group nicstall reads status, flows,
# counters, snapshots, incident records and bundles (written 2750/0640 with
# the group), and is refused reload, recover, investigate and manual
# bundles; a user outside the group is refused everything with a message
# saying why, on the socket and on the bundles. A reprogram through the
# client needs root. debug-block is refused by a daemon without --debug.
. "$(dirname "$0")/lib.sh"
t_init
A=${T_PREFIX}a B=${T_PREFIX}b
netns_pair "$A" "$B" vA vB 10.211.0.1 10.211.0.2 || { fail "namespace pair"; exit 1; }
t_group_up || exit 1
M=nsm$$ O=nso$$
M=${M:0:12} O=${O:0:12}
useradd -M -N -g nogroup -G nicstall -s /bin/sh "$M" && T_CLEANUP+=("userdel $M")
useradd -M -N -g nogroup -s /bin/sh "$O" && T_CLEANUP+=("userdel $O")
check "test users made: $M in nicstall, $O not" bash -c "id -nG $M | grep -qw nicstall && ! id -nG $O | grep -qw nicstall"
chmod 755 "$T_DIR"
mkdir -m 755 "$T_DIR/state"
# the users run a copy: the checkout may be in a 0700 directory
NICSTALLCTL=$(t_public_copy "$NICSTALLCTL") || { fail "a copy of nicstallctl the users may run"; exit 1; }
RULES=$(t_public_copy "$ROOT/rules") || { fail "a copy of the rules the users may read"; exit 1; }
cat > "$T_DIR/n.conf" <<CONF
[daemon]
interval = 200ms
state_dir = $T_DIR/state
rules_dir = $ROOT/rules
flows_dir = $T_DIR/flows
reprogram_interval = 0s
[port cli]
netns = $A
interface = vA
[port srv]
netns = $B
interface = vB
recover = reprogram
CONF
start_daemon "$T_DIR/n.conf" || exit 1
as() { local u=$1; shift; runuser -u "$u" -- "$NICSTALLCTL" -s "$T_SOCK" "$@"; }
b=$(ctl snapshot --bundle srv | sed -n 's/^bundle //p')
check "root writes a manual bundle" test -d "$b"
gid=$(getent group nicstall | cut -d: -f3)
check "bundles/ is 2750 root:nicstall" test "$(stat -c '%a %u %g' "$T_DIR/state/bundles")" = "2750 0 $gid"
check "the bundle's directories are 2750 (the setgid of bundles/) and group nicstall" \
	bash -c "[ -z \"\$(find '$b' -type d \\( ! -perm 2750 -o ! -group nicstall \\))\" ]"
check "its files are 0640 and group nicstall" \
	bash -c "[ -z \"\$(find '$b' -type f \\( ! -perm 0640 -o ! -group nicstall \\))\" ] && [ -n \"\$(find '$b' -type f)\" ]"

# a member of nicstall
check "member: status" bash -c "$(declare -f as); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' as $M status | grep -q '^srv '"
check "member: counters" bash -c "$(declare -f as); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' as $M counters srv | grep -q rx_packets"
check "member: flows" bash -c "$(declare -f as); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' as $M -j flows | jq -en 'input | .flows' >/dev/null"
check "member: snapshot" bash -c "$(declare -f as); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' as $M snapshot srv | grep -q '^port srv'"
check "member: incident list" bash -c "$(declare -f as); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' as $M incident list >/dev/null"
check "member: bundles lists the bundle" bash -c "$(declare -f as); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' as $M bundles | grep -q '$(basename "$b")'"
check "member: show" bash -c "$(declare -f as); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' as $M show '$(basename "$b")' | grep -q 'bundle: '"
check "member: verify" bash -c "$(declare -f as); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' as $M verify '$b' | grep -q ': OK'"
check "member: classify" bash -c "$(declare -f as); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' as $M -j classify '$b' --rules '$RULES' | jq -en 'input | .classification' >/dev/null"
mkdir -m 777 "$T_DIR/out"
check "member: report" bash -c "$(declare -f as); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' as $M report '$b' -o '$T_DIR/out/r.html' && grep -q '<html' '$T_DIR/out/r.html'"
for c in "reload" "recover srv" "investigate srv" "snapshot --bundle srv"; do
	out=$(as "$M" $c 2>&1); rc=$?
	check "member: $c refused, root only (exit $rc)" bash -c "[ $rc -eq 1 ] && echo '$out' | grep -q 'permission denied (root only)'"
done
check "member's refused reprogram changed nothing (no reprogram logged)" bash -c "! grep -q 'receive filter reprogrammed' '$T_DIR/daemon.log'"

# anyone else: the socket's mode (root:nicstall 0660) stops them at connect
as "$O" status > "$T_DIR/other.out" 2>&1; rc=$?
uid=$(id -u "$O")
check "other: cannot connect, told who may (exit $rc)" \
	bash -c "[ $rc -eq 1 ] && grep -q \"Permission denied: the control socket is for root and members of group 'nicstall'\" '$T_DIR/other.out'"
# and with the mode loosened by hand the daemon still says no
chmod 666 "$T_SOCK"
as "$O" status > "$T_DIR/other.out" 2>&1; rc=$?
check "other: status refused with a clear message (exit $rc)" \
	bash -c "[ $rc -eq 1 ] && grep -q \"permission denied: uid $uid is neither root nor a member of group 'nicstall'\" '$T_DIR/other.out'"
for c in "counters srv" "flows" "snapshot" "incident list"; do
	out=$(as "$O" $c 2>&1); rc=$?
	check "other: $c refused (exit $rc)" bash -c "[ $rc -eq 1 ] && echo '$out' | grep -q 'permission denied'"
done
as "$O" -S "$T_DIR/state" bundles > "$T_DIR/other.out" 2>&1; rc=$?
cat "$T_DIR/other.out"
check "other: bundles refused, saying who may read them (exit $rc)" \
	bash -c "[ $rc -eq 1 ] && grep -q \"Permission denied (bundles are readable by root and members of group 'nicstall')\" '$T_DIR/other.out'"
out=$(as "$O" verify "$b" 2>&1); rc=$?
check "other: verify of the bundle refused (exit $rc)" bash -c "[ $rc -eq 1 ] && echo '$out' | grep -q 'Permission denied'"
out=$(as "$O" show "$b" 2>&1); rc=$?
check "other: show refused (exit $rc)" bash -c "[ $rc -eq 1 ] && echo '$out' | grep -q 'Permission denied'"

# root
flags() { ip -n "$B" -o link show vB | sed 's/.*<\([^>]*\)>.*/\1/'; }
before=$(flags)
check "root: recover reprograms" bash -c "'$NICSTALLCTL' -s '$T_SOCK' recover srv | grep -q '^port srv: reprogrammed'"
check "root: the port's flags are back as they were" test "$(flags)" = "$before"
check "root: recover of a port without recover = reprogram is refused (exit 1)" \
	bash -c "'$NICSTALLCTL' -s '$T_SOCK' recover cli 2>&1 | grep -q 'recover = reprogram is not set'; [ \${PIPESTATUS[0]} -eq 1 ]"
check "root: reload" bash -c "'$NICSTALLCTL' -s '$T_SOCK' reload | grep -q reloaded"
out=$(printf '{"cmd":"debug-block","ms":100}\n' | timeout 5 socat -t 3 - "UNIX-CONNECT:$T_SOCK")
check "debug-block is refused without --debug" bash -c "echo '$out' | grep -q 'does not run with --debug'"
