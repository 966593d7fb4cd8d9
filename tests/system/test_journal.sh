#!/bin/bash
# The journal, for real: in a private mount namespace the test runs its own
# systemd-journald (volatile, on tmpfs over /run/systemd, /run/log and
# /var/log/journal, so the host's journal is never touched) and starts the
# daemon as systemd does, standard error connected to journald's stream and
# JOURNAL_STREAM naming it. A stall, a joined flow, a suppressed stall, the
# release, a reprogram performed and one refused, bundles written and one
# that fails (a full state directory), bundle_hook runs in order with the
# queue overflowing, reloads good and bad: every event kind is then read
# back from the journal files (journalctl -D) as a structured entry with
# its MESSAGE_ID and fields, every MESSAGE_ID is in the compiled catalog,
# and journalctl -x explains them. On a terminal the daemon writes plain
# lines without <N>.
if [ -z "${NICSTALL_JOURNAL_NS:-}" ]; then
	NICSTALL_JOURNAL_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
t_init
# the hook runs as nicstall-hook (hook_user's default), without
# capabilities: it reaches its log through a directory it may search, a
# file it may write
hook_user_up
chmod 711 "$T_DIR" && install -m 666 /dev/null "$T_DIR/hook.log"
J=/run/log/journal
for m in /run/systemd /run/log /var/log/journal /var/lib/systemd/catalog; do
	mkdir -p "$m" 2>/dev/null
	mount -t tmpfs tmpfs "$m" || { fail "tmpfs over $m in the test's mount namespace"; exit 1; }
done
mkdir -p /run/systemd/journald.conf.d
printf '[Journal]\nStorage=volatile\nReadKMsg=no\nRateLimitBurst=0\nForwardToSyslog=no\nForwardToWall=no\nForwardToConsole=no\nForwardToKMsg=no\n' \
	> /run/systemd/journald.conf.d/test.conf
/lib/systemd/systemd-journald > "$T_DIR/journald.log" 2>&1 &
T_PIDS+=($!)
check "a journald of the test's own listens" wait_for 5 test -S /run/systemd/journal/socket -a -S /run/systemd/journal/stdout
jctl() { journalctl -D "$J" --no-pager "$@"; }
jqs() { jq -se "$@" > /dev/null; }

A=${T_PREFIX}a B=${T_PREFIX}b
netns_pair "$A" "$B" vA vB 10.212.0.1 10.212.0.2 || { fail "namespace pair"; exit 1; }
# a state directory that can be filled: the bundle write that fails
mkdir -p "$T_DIR/state" && mount -t tmpfs -o size=48m,mode=0750 tmpfs "$T_DIR/state" && T_CLEANUP+=("umount -l $T_DIR/state")
cat > "$T_DIR/n.conf" <<CONF
[daemon]
interval = 250ms
state_dir = $T_DIR/state
flows_dir = $T_DIR/flows
rules_dir = $ROOT/rules
journal_dir = $J
incident_window = 2s
incident_cooldown = 60s
reprogram_interval = 0s
capture_time = 100ms
bundle_max_count = 200
bundle_hook = /bin/sh -c "sleep 1; echo \$0 >> $T_DIR/hook.log"
[port cli]
netns = $A
interface = vA
flows = tcp port 11111-11113
peer = srv
peer_address = 10.212.0.2
[port srv]
netns = $B
interface = vB
flows = tcp port 11111-11113
peer = cli
peer_address = 10.212.0.1
recover = reprogram
[port gone]
netns = $A
interface = nosuch0
CONF
T_SOCK=$T_DIR/ctl.sock
# as systemd does for StandardError=journal: the stream, and its dev:ino
systemd-cat -t nicstalld bash -c 'export JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2); exec "$@"' - \
	"$NICSTALLD" -c "$T_DIR/n.conf" --socket "$T_SOCK" &
T_DPID=$!
T_PIDS+=("$T_DPID")
wait_for 10 ctl status || { fail "the daemon starts under the journal"; jctl | tail; exit 1; }
ev() { jctl -o json NICSTALL_EVENT="$1" 2>/dev/null; }
has_ev() { [ -n "$(ev "$1")" ]; }

# a stall, a flow that joins, a stall suppressed by the cooldown, the release
sockperf_pair "$A" "$B" 10.212.0.2 11111 3 60
sleep 2
nft_drop "$B" tcp dport 11111
T_CLEANUP+=("nft_clear $B")
check "incident opened" wait_for 10 has_ev incident-opened
nft_drop "$B" tcp dport 11112
check "a second flow joins it (flow-stalled)" wait_for 5 has_ev flow-stalled
sleep 2.5
nft_drop "$B" tcp dport 11113
check "a later stall is suppressed by the cooldown" wait_for 5 has_ev incident-suppressed
check "the investigation ends in a bundle" wait_for 20 has_ev bundle-written
nft_clear "$B"
check "the flows are released" wait_for 10 has_ev flow-released
check "the incident ends" wait_for 60 has_ev incident-ended
check "the first hook runs (hook-result)" wait_for 10 has_ev hook-result
# a refused reprogram, reloads, a queue of hooks that overflows, a full disk
ctl recover cli > /dev/null 2>&1
ctl reload > /dev/null
cp "$T_DIR/n.conf" "$T_DIR/n.good"
sed -i 's/^interval = 250ms/interval = soon/' "$T_DIR/n.conf"
ctl reload > /dev/null 2>&1
cp "$T_DIR/n.good" "$T_DIR/n.conf"
for i in $(seq 1 40); do ctl snapshot --bundle srv > /dev/null || break; done
check "40 manual bundles overflow the hook's queue (hook-dropped)" wait_for 5 has_ev hook-dropped
check "queued hooks run, one a second" wait_for 10 bash -c "[ \$(wc -l < '$T_DIR/hook.log') -ge 5 ]"
dd if=/dev/zero of="$T_DIR/state/fill" bs=1M 2>/dev/null
ctl snapshot --bundle srv > "$T_DIR/full.out" 2>&1
check "a full state directory: snapshot --bundle fails (exit 1)" test $? -eq 1
check "the write that failed is a bundle-failed event" wait_for 5 has_ev bundle-failed
rm -f "$T_DIR/state/fill"
kill -TERM "$T_DPID"
for _ in $(seq 50); do kill -0 "$T_DPID" 2>/dev/null || break; sleep 0.2; done
check "the daemon stops" bash -c "! kill -0 $T_DPID 2>/dev/null"

# every kind, structured, with its MESSAGE_ID
jctl -o json SYSLOG_IDENTIFIER=nicstalld > "$T_DIR/all.json"
echo "journal: $(wc -l < "$T_DIR/all.json") entries of nicstalld"
kinds="port-up port-down flow-stalled incident-opened incident-suppressed incident-ended flow-released
reprogram-performed reprogram-refused bundle-written bundle-failed hook-result hook-dropped reload-ok reload-failed"
for k in $kinds; do
	id=$(sed -n "s/.*{ \"$k\", \"\([0-9a-f]\{32\}\)\" }.*/\1/p" "$ROOT/lib/log.c")
	check "$k: in the journal with MESSAGE_ID $id" \
		jqs --arg k "$k" --arg id "$id" 'map(select(.NICSTALL_EVENT == $k)) | length > 0 and all(.MESSAGE_ID == $id and ._TRANSPORT == "journal")' "$T_DIR/all.json"
done
sel() { jq -s --arg k "$1" 'map(select(.NICSTALL_EVENT == $k))' "$T_DIR/all.json"; }
check "port-down: NICSTALL_PORT=gone, the reason, priority warning" \
	bash -c "$(declare -f sel); T_DIR='$T_DIR' sel port-down | jqe 'any(.NICSTALL_PORT == \"gone\" and (.NICSTALL_REASON | test(\"nosuch0\")) and .PRIORITY == \"4\")' >/dev/null"
check "incident-opened: port, incident, flows" \
	bash -c "$(declare -f sel); T_DIR='$T_DIR' sel incident-opened | jqe '.[0] | .NICSTALL_INCIDENT == \"1\" and (.NICSTALL_PORT == \"srv\" or .NICSTALL_PORT == \"cli\") and (.NICSTALL_FLOWS | tonumber) >= 1' >/dev/null"
check "flow-stalled joins incident 1 with its flow's tuple" \
	bash -c "$(declare -f sel); T_DIR='$T_DIR' sel flow-stalled | jqe 'any(.NICSTALL_INCIDENT == \"1\" and (.NICSTALL_FLOW | test(\":1111[23]\")))' >/dev/null"
check "incident-suppressed: the reason is the cooldown" \
	bash -c "$(declare -f sel); T_DIR='$T_DIR' sel incident-suppressed | jqe 'any(.NICSTALL_REASON == \"cooldown\")' >/dev/null"
check "reprogram-performed: srv, action reprogram, asked by the investigation" \
	bash -c "$(declare -f sel); T_DIR='$T_DIR' sel reprogram-performed | jqe 'any(.NICSTALL_PORT == \"srv\" and .NICSTALL_ACTION == \"reprogram\" and .NICSTALL_REASON == \"investigation\")' >/dev/null"
check "reprogram-refused: cli, with the reason" \
	bash -c "$(declare -f sel); T_DIR='$T_DIR' sel reprogram-refused | jqe 'any(.NICSTALL_PORT == \"cli\" and (.NICSTALL_REASON | test(\"recover = reprogram\")))' >/dev/null"
sel bundle-written | jq -r '.[] | select(.NICSTALL_INCIDENT == "1") | .NICSTALL_BUNDLE' > "$T_DIR/b1"
check "bundle-written of incident 1: verdict, investigation, the bundle's path, the releasing action" \
	bash -c "$(declare -f sel); T_DIR='$T_DIR' sel bundle-written | jqe 'any(.NICSTALL_INCIDENT == \"1\" and (.NICSTALL_VERDICT | length) > 0 and (.NICSTALL_INVESTIGATION | length) > 0 and (.NICSTALL_ACTION | length) > 0)' >/dev/null && [ -f \"\$(head -1 '$T_DIR/b1')/SHA256SUMS\" ]"
check "bundle-failed: the error says the disk is full" \
	bash -c "$(declare -f sel); T_DIR='$T_DIR' sel bundle-failed | jqe 'any(.NICSTALL_ERROR | test(\"No space left\"))' >/dev/null"
check "reload-failed: the file and line of the error" \
	bash -c "$(declare -f sel); T_DIR='$T_DIR' sel reload-failed | jqe 'any(.NICSTALL_ERROR | test(\"n.conf:2: interval\"))' >/dev/null"
check "hook-dropped: the queue was full" \
	bash -c "$(declare -f sel); T_DIR='$T_DIR' sel hook-dropped | jqe 'any(.NICSTALL_REASON | test(\"queue is full\"))' >/dev/null"
# every bundle written got its hook run or a hook-dropped naming it, in order
sel bundle-written | jq -r '.[].NICSTALL_BUNDLE' > "$T_DIR/written"
sel hook-dropped | jq -r '.[].NICSTALL_BUNDLE' | sort > "$T_DIR/dropped"
sort "$T_DIR/hook.log" > "$T_DIR/ran"
check "every bundle's hook ran or was reported dropped ($(wc -l < "$T_DIR/written") written, $(wc -l < "$T_DIR/ran") ran, $(wc -l < "$T_DIR/dropped") dropped)" \
	bash -c "[ -z \"\$(sort '$T_DIR/written' | comm -23 - <(sort -m '$T_DIR/ran' '$T_DIR/dropped'))\" ] && [ -z \"\$(comm -12 '$T_DIR/ran' '$T_DIR/dropped')\" ]"
check "hooks ran one at a time, in the order of the bundles" \
	bash -c "grep -vxFf '$T_DIR/dropped' '$T_DIR/written' | head -n \$(wc -l < '$T_DIR/hook.log') | cmp -s - '$T_DIR/hook.log'"
check "no <N> prefix in any message" jqs 'length > 0 and all(.MESSAGE | test("^<[0-7]>") | not)' "$T_DIR/all.json"
check "every line of the daemon went to the journal natively (none through the stream)" \
	jqs 'length > 0 and all(._TRANSPORT == "journal")' "$T_DIR/all.json"

# the catalog: every MESSAGE_ID seen is explained
S=$T_DIR/catroot
mkdir -p "$S/usr/lib/systemd/catalog" && cp "$ROOT/systemd/nicstalld.catalog" "$S/usr/lib/systemd/catalog/"
journalctl --root="$S" --update-catalog && journalctl --root="$S" --list-catalog > "$T_DIR/catalog.list"
missing=""
for id in $(jq -r 'select(.MESSAGE_ID != null) | .MESSAGE_ID' "$T_DIR/all.json" | sort -u); do
	grep -q "^$id " "$T_DIR/catalog.list" || missing="$missing $id"
done
check "every MESSAGE_ID in the journal is in the catalog${missing:+ (missing:$missing)}" test -z "$missing"
cp "$S/var/lib/systemd/catalog/database" /var/lib/systemd/catalog/
jctl -x NICSTALL_EVENT=port-down > "$T_DIR/x.txt"
check "journalctl -x explains an event from the catalog" grep -q "Subject: Port gone is down: interface nosuch0" "$T_DIR/x.txt"

# on a terminal: plain lines, no <N>
printf '[daemon]\nrules_dir = %s/none\nrules_local_dir = %s/none\n[port p]\ninterface = eth0\n' "$T_DIR" "$T_DIR" > "$T_DIR/norules.conf"
script -qec "'$NICSTALLD' --check-config -c '$T_DIR/norules.conf'" /dev/null > "$T_DIR/tty.out" 2>&1
cat "$T_DIR/tty.out"
check "on a terminal: 'nicstalld: ...' without <N>" bash -c "grep -q '^nicstalld: no rule files' '$T_DIR/tty.out' && ! grep -q '<4>' '$T_DIR/tty.out'"
"$NICSTALLD" --check-config -c "$T_DIR/norules.conf" 2> "$T_DIR/pipe.err" > /dev/null
check "to a pipe or file: <N> prefixes" grep -q '^<4>no rule files' "$T_DIR/pipe.err"
