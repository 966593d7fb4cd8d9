#!/bin/bash
# Authority, with real users this test makes: an outsider reads and
# triggers nothing, a member of group nicstall reads and never changes; no
# reprogram where the policy says no, whatever a rule or a client asks;
# names from tables cannot steer file paths; `show NAME` never takes a
# look-alike from the working directory (finding 6); a state_dir or
# run_dir another user could write is refused (finding 7).
. "$(dirname "$0")/lib.sh"
t_init
pair_up 10.213.0 || exit 1
chmod 755 "$T_DIR"              # the users reach the socket; state_dir stays 0750
t_group_up || exit 1
OUT=nso$$ MEM=nsm$$
OUT=${OUT:0:16} MEM=${MEM:0:16}
useradd -M -N -g nogroup -s /usr/sbin/nologin "$OUT" && T_CLEANUP+=("userdel $OUT")
useradd -M -N -g nogroup -G nicstall -s /usr/sbin/nologin "$MEM" && T_CLEANUP+=("userdel $MEM")
ouid=$(id -u "$OUT") muid=$(id -u "$MEM")
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups "$@"; }
STATE=$T_DIR/state
mkdir -p "$T_DIR/flows" "$T_DIR/rules.d"
# a local rule that matches everything with the verdict whose action is
# the reprogram: a rule may say so, it cannot make one happen
cat > "$T_DIR/rules.d/00-wants-reprogram.rules" <<'RULES'
rule wants-reprogram {
    verdict port-drop
    require 1 == 1
    explain "a local rule that asks for the receive-filter reprogram"
    action  "reprogram now"
}
RULES
{
	conf_daemon "rules_local_dir = $T_DIR/rules.d" "incident_cooldown = 0s" \
		"observe_window = 100ms" "capture_time = 100ms" "release_wait = 100ms"
	conf_port cli "flows = tcp port 12301" "track = engine" "promisc_capture = no"
} > "$T_DIR/n.conf"
start_daemon "$T_DIR/n.conf" || exit 1
check "the socket is root:nicstall 0660" test "$(stat -c '%U:%G %a' "$T_SOCK")" = "root:nicstall 660"

# ---- an outsider ----
check "an outsider cannot connect" \
	bash -c "$(declare -f as); as $OUT '$NICSTALLCTL' -s '$T_SOCK' status 2>&1 | grep -q 'Permission denied'"
chmod 666 "$T_SOCK"             # loosened by hand: the daemon still says no
for c in "status" "flows" "incident show" "investigate cli" "recover cli" "reload" "snapshot --bundle"; do
	check "an outsider is refused: $c" bash -c "$(declare -f as); as $OUT '$NICSTALLCTL' -s '$T_SOCK' $c 2>&1 |
		grep -q 'permission denied: uid $ouid is neither root nor a member'"
done
ctl reload > /dev/null
check "a reload puts the socket's mode back" test "$(stat -c '%a' "$T_SOCK")" = 660

# ---- a member: reads, never changes ----
check "a member reads status" bash -c "$(declare -f as); as $MEM '$NICSTALLCTL' -s '$T_SOCK' status | grep -q '^cli '"
check "a member reads flows" bash -c "$(declare -f as); as $MEM '$NICSTALLCTL' -s '$T_SOCK' flows | grep -q '^PORT'"
for c in "investigate cli" "recover cli" "reload" "snapshot --bundle"; do
	check "a member may not: $c" bash -c "$(declare -f as); as $MEM '$NICSTALLCTL' -s '$T_SOCK' $c 2>&1 |
		grep -q 'permission denied (root only)'"
done
check "nothing ran for them: no investigation, no bundle" \
	bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j incident list | jqe '.investigations | length == 0' >/dev/null &&
		! compgen -G '$STATE/bundles/2*' >/dev/null"

# ---- the policy says no: a root client, a rule ----
promisc() { ip -n "$A" -d link show vA | grep -o 'promiscuity [0-9]*' | cut -d' ' -f2; }
flag() { ip -n "$A" link show vA | grep -c PROMISC; }
check "root's recover is refused by the policy" \
	bash -c "'$NICSTALLCTL' -s '$T_SOCK' recover cli 2>&1 | grep -q 'recover = reprogram is not set for port cli'"
# a stalled engine whose table's engine name is a path and a terminal escape
touch "$T_DIR/mark"
( while :; do echo "$(promisc) $(flag)"; sleep 0.05; done ) > "$T_DIR/promisc.log" 2>/dev/null &
T_PIDS+=($!)
ip netns exec "$A" "$BUILD/flowstorm" --dir "$T_DIR/flows" --sessions 3 --local 10.213.0.1 --remote 10.213.0.2 \
	--port 12301 --healthy-ms 800 --stall-ms 6000 --release-ms 300 \
	--engine-name $'../../../../tmp/nsauth-pwn\e[2J' > "$T_DIR/storm.out" 2>&1 &
T_PIDS+=($!)
check "the stall becomes a bundle" wait_for 25 bash -c "compgen -G '$STATE/bundles/2*' >/dev/null"
b=$(ls -d "$STATE"/bundles/2* 2>/dev/null | head -1)
name=$(basename "$b")
check "its verdict is the rule's (port-drop)" bash -c "jqe '.verdict.verdict == \"port-drop\"' '$b/manifest.json' >/dev/null"
check "no reprogram was made" bash -c "! grep -q 'receive filter reprogrammed' '$T_DIR/daemon.log'"
check "the promiscuity and the flag never moved" bash -c "[ -s '$T_DIR/promisc.log' ] && ! grep -qv '^0 0$' '$T_DIR/promisc.log'"
# names from tables steer no path: every new file is inside the bundle
check "the engine's name made no file" bash -c "! compgen -G '/tmp/nsauth-pwn*' >/dev/null"
check "the bundle's name is the daemon's own" bash -c "[[ '$name' =~ ^[0-9]{8}T[0-9]{6}Z-[A-Za-z0-9._-]+-cli-port-drop$ ]]"
stray=$(find "$STATE" -newer "$T_DIR/mark" -type f ! -path "$STATE/bundles/$name/*" | head -3)
check "every file written is inside the bundle (${stray:-none outside})" test -z "$stray"
check "the name is kept as data" bash -c "grep -q 'nsauth-pwn' '$b/flows.json'"
check "and a client prints no escape from it" bash -c "! '$NICSTALLCTL' -s '$T_SOCK' incident show | grep -q $'\e'"
check "an outsider cannot list or read bundles" bash -c "$(declare -f as)
	! as $OUT '$NICSTALLCTL' -S '$STATE' bundles >/dev/null 2>&1 && ! as $OUT cat '$b/summary.txt' >/dev/null 2>&1"
check "a member reads the record through the socket" \
	bash -c "$(declare -f as); as $MEM '$NICSTALLCTL' -s '$T_SOCK' -j incident show | jqe '.record' >/dev/null"

# ---- finding 6: show NAME looks in STATE_DIR/bundles, ./NAME only as a path ----
mkdir -p "$T_DIR/cwd/$name"
echo '{"schema":1,"verdict":{"verdict":"planted"}}' > "$T_DIR/cwd/$name/manifest.json"
echo "FAKE SUMMARY planted in the working directory" > "$T_DIR/cwd/$name/summary.txt"
check "show NAME prints the daemon's bundle, not ./NAME" \
	bash -c "cd '$T_DIR/cwd' && '$NICSTALLCTL' -S '$STATE' show '$name' > '$T_DIR/show.out' 2>&1;
		grep -q 'port-drop' '$T_DIR/show.out' && ! grep -q 'FAKE' '$T_DIR/show.out'"
check "verify NAME too" bash -c "cd '$T_DIR/cwd' && '$NICSTALLCTL' -S '$STATE' verify '$name'"
check "./NAME is the path it says" bash -c "cd '$T_DIR/cwd' && '$NICSTALLCTL' -S '$STATE' show './$name' 2>&1 | grep -q 'FAKE'"
check "a name that is not there is named" bash -c "cd '$T_DIR/cwd' && '$NICSTALLCTL' -S '$STATE' show nosuch 2>&1 |
	grep -q 'no bundle nosuch in $STATE/bundles'"
mkdir -p "$T_DIR/cwd/evil" "$T_DIR/cwd/fifo"
cp "$b/manifest.json" "$T_DIR/cwd/evil/"; cp "$b/manifest.json" "$T_DIR/cwd/fifo/"
ln -s /etc/shadow "$T_DIR/cwd/evil/summary.txt"
mkfifo "$T_DIR/cwd/fifo/summary.txt"
check "a summary that is a symbolic link to /etc/shadow is not printed" \
	bash -c "'$NICSTALLCTL' show '$T_DIR/cwd/evil' 2>&1 | grep -q 'summary.txt: a symbolic link' &&
		! '$NICSTALLCTL' show '$T_DIR/cwd/evil' 2>&1 | grep -q '^root:'"
check "a summary that is a FIFO does not hang the client" \
	bash -c "timeout 5 '$NICSTALLCTL' show '$T_DIR/cwd/fifo' 2>&1 | grep -q 'summary.txt: not a regular file'"

# ---- finding 7: state_dir and run_dir nobody else may write ----
mkdir -p "$T_DIR/evil-state/work" "$T_DIR/run"
echo "root's own" > "$T_DIR/victim"; chmod 600 "$T_DIR/victim"
ln -s "$T_DIR/victim" "$T_DIR/evil-state/work/inv1-cli-plain.pcap"
chown -R "$OUT" "$T_DIR/evil-state"
sed "s|^state_dir = .*|state_dir = $T_DIR/evil-state|" "$T_DIR/n.conf" > "$T_DIR/evil.conf"
timeout 10 "$NICSTALLD" -c "$T_DIR/evil.conf" --socket "$T_DIR/evil.sock" > "$T_DIR/evil.log" 2>&1
rc=$?
check "a state_dir of another user's is refused (rc $rc)" \
	bash -c "[ $rc = 1 ] && grep -q 'state_dir $T_DIR/evil-state: $T_DIR/evil-state is owned by uid $ouid, not root' '$T_DIR/evil.log'"
check "and the root file its link pointed to is untouched" test "$(cat "$T_DIR/victim")" = "root's own"
chmod 775 "$T_DIR/run"
printf '[daemon]\nrun_dir = %s/run\nstate_dir = %s/state2\n[port p]\nstats_file = /dev/null\n' \
	"$T_DIR" "$T_DIR" > "$T_DIR/run.conf"
timeout 10 "$NICSTALLD" -c "$T_DIR/run.conf" > "$T_DIR/run.log" 2>&1
rc=$?
check "a group-writable run_dir is refused (rc $rc)" \
	bash -c "[ $rc = 1 ] && grep -q 'run_dir $T_DIR/run: $T_DIR/run is writable by its group (mode 0775)' '$T_DIR/run.log'"
check "the running daemon never stopped" kill -0 "$T_DPID"
