#!/bin/bash
# Foundation: the control socket survives hostile clients and checks peer
# credentials (root: all; group nicstall: read-only; others refused).
. "$(dirname "$0")/lib.sh"
t_init
printf 'NIC statistics:\n     rx_packets: 1\n' > "$T_DIR/s.txt"
printf '[daemon]\ninterval = 100ms\n[port p]\nstats_file = %s\n' "$T_DIR/s.txt" > "$T_DIR/n.conf"
# the access group exists before the daemon starts (it is resolved at start
# and reload, never per client)
t_group_up || exit 1
gid=$(getent group nicstall | cut -d: -f3)
start_daemon "$T_DIR/n.conf" || exit 1
chmod 755 "$T_DIR"
# raw REQUEST: send bytes as they are, print the reply
raw() { printf '%b' "$1" | timeout 5 socat -t 3 - "UNIX-CONNECT:$T_SOCK" 2>/dev/null; }
check "garbage gets an error reply" bash -c "$(declare -f raw); T_SOCK='$T_SOCK'; raw 'hello there\n' | grep -q 'malformed request'"
check "non-object JSON refused" bash -c "$(declare -f raw); T_SOCK='$T_SOCK'; raw '[1,2]\n' | grep -q 'expected a JSON object'"
check "trailing data refused" bash -c "$(declare -f raw); T_SOCK='$T_SOCK'; raw '{\"cmd\":\"status\"} x\n' | grep -q 'malformed request'"
check "unknown command named" bash -c "$(declare -f raw); T_SOCK='$T_SOCK'; raw '{\"cmd\":\"format-disk\"}\n' | grep -q \"unknown command 'format-disk'\""
check "missing port argument" bash -c "$(declare -f raw); T_SOCK='$T_SOCK'; raw '{\"cmd\":\"counters\"}\n' | grep -q 'missing'"
check "wrong type for window" bash -c "$(declare -f raw); T_SOCK='$T_SOCK'; raw '{\"cmd\":\"counters\",\"port\":\"p\",\"window\":-5}\n' | grep -q 'window must be'"
head -c 70000 /dev/zero | tr '\0' a > "$T_DIR/big"
check "oversized request refused" bash -c "timeout 5 socat -t 3 - 'UNIX-CONNECT:$T_SOCK' < '$T_DIR/big' 2>/dev/null | grep -q 'longer than 65536'"
# disconnect mid-message, many times
for i in $(seq 1 50); do printf '{"cmd":"sta' | timeout 2 socat -u - "UNIX-CONNECT:$T_SOCK" 2>/dev/null; done
check "daemon alive after 50 half messages" kill -0 "$T_DPID"
check "still answers" bash -c "'$NICSTALLCTL' -s '$T_SOCK' status | grep -q '^p '"
# credentials
check "the socket is root:nicstall 0660" test "$(stat -c '%U:%G %a' "$T_SOCK")" = "root:nicstall 660"
check "non-root, non-member cannot even connect" \
	bash -c "setpriv --reuid=65534 --regid=65534 --clear-groups '$NICSTALLCTL' -s '$T_SOCK' status 2>&1 | grep -q 'Permission denied'"
check "group nicstall may read status" \
	bash -c "setpriv --reuid=65534 --regid=$gid --clear-groups '$NICSTALLCTL' -s '$T_SOCK' status | grep -q '^p '"
check "a supplementary group nicstall may read status" \
	bash -c "setpriv --reuid=65534 --regid=65534 --groups=$gid '$NICSTALLCTL' -s '$T_SOCK' status | grep -q '^p '"
check "group nicstall may not reload" \
	bash -c "setpriv --reuid=65534 --regid=$gid --clear-groups '$NICSTALLCTL' -s '$T_SOCK' reload 2>&1 | grep -q 'permission denied (root only)'"
# a mode loosened by hand: the daemon still refuses, with a clear message,
# and closes at once; a reload sets the mode back
chmod 666 "$T_SOCK"
check "non-root, non-member refused with a clear message" \
	bash -c "setpriv --reuid=65534 --regid=65534 --clear-groups '$NICSTALLCTL' -s '$T_SOCK' status 2>&1 | grep -q \"permission denied: uid 65534 is neither root nor a member of group 'nicstall'\""
ctl reload > /dev/null
check "a reload sets the socket's mode back" test "$(stat -c '%a' "$T_SOCK")" = 660
check "client usage error exits 2" bash -c "'$NICSTALLCTL' -s '$T_SOCK' counters; [ \$? -eq 2 ]"
check "client names a missing daemon" bash -c "'$NICSTALLCTL' -s '$T_DIR/none.sock' status 2>&1 | grep -q 'cannot connect to $T_DIR/none.sock'"
"$NICSTALLD" -c "$T_DIR/n.conf" --socket "$T_SOCK" 2> "$T_DIR/second.err"
check "a second daemon on the same socket refuses to start" grep -q "another nicstalld is running" "$T_DIR/second.err"
check "the first one still answers" bash -c "'$NICSTALLCTL' -s '$T_SOCK' status >/dev/null"
