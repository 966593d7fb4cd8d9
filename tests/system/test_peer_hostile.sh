#!/bin/bash
# Hostile peers: what reaches a daemon's peer socket (nicstalld.conf(5)
# [peer]) from a wrong key, a replay, a flood, an oversized datagram and
# garbage. The sender is build/tests/test_peerproto --send, run in rank 1's
# namespace (so it speaks from rank 1's configured address) or from an
# address that is no peer. Nothing crashes, nothing blocks the loop (it
# keeps sampling, status answers during the flood), nothing changes on the
# receiver: no incident, no capture, no reprogram, no bundle but the one
# per authentic fresh notice within the rate limit; each refusal is counted
# and logged once per interval. Issue 34: what no signature proved (forged,
# replayed) changes nothing of the peer's state (last contact, key state,
# last error), only the counters of its address; a flood of forged
# datagrams costs a bounded number of signature checks; a notice for
# another host, a notice of this host's own reflected back and a version 1
# notice are refused; peer snapshots stay within peer_snapshots_per_hour
# and their own retention pool, never evicting this host's bundles.
# Review of that fix: a flood forged in the peer's name (500 a second)
# leaves its genuine notice acted on, replays cost no signature check; the
# recipient is a DNS name (RANK0 is rank0); one peer (rank1) gets its fair
# share of the hour's snapshots, never another's (rank2, a third rank
# whose daemon is not started: this test speaks in its name too), and
# its flood never cycles out rank2's snapshot.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fleet_lib.sh"
t_init
NET=10.$((240 + RANDOM % 8))
SEND=$BUILD/tests/test_peerproto
[ -x "$SEND" ] || { fail "$SEND missing (make $SEND)"; exit 1; }
fleet_up "$NET" 3 "peer_wait = 300ms
peer_window = 20ms
bundle_max_count = 2
peer_bundle_max_count = 2
peer_snapshots_per_hour = 6" || { fail "two ranks come up"; exit 1; }
# two bundles of this host's own incidents, older than anything to come
for b in 20200101T000001Z-rank0-rank0-producer-stall 20200101T000002Z-rank0-rank0-port-drop; do
	mkdir -p "$T_DIR/state0/bundles/$b" && echo '{"trigger":"stall","host":"rank0"}' > "$T_DIR/state0/bundles/$b/manifest.json"
done
nown() { find "$T_DIR/state0/bundles" -mindepth 1 -maxdepth 1 -type d -name '2020*' | wc -l; }
fleet_start 0 || exit 1
R1=$T_PREFIX-r1
TO=$NET.1.1:7499
st() { rctl 0 -j status; }
# a refusal of the peer's authentic datagrams, or of its address's unauthenticated ones
refused() { st | jq -r --arg k "$1" '.peers.peers[0] | .refused[$k] // .unauthenticated[$k]'; }
peer() { st | jq -r ".peers.peers[0]$1"; }
nbundles() { find "$T_DIR/state0/bundles" -mindepth 1 -maxdepth 1 -type d -name '*peer-snapshot*' 2>/dev/null | wc -l; }
nb_is() { [ "$(nbundles)" = "$1" ]; }
send() { ip netns exec "$R1" "$SEND" --send "$TO" --key "$FLEET_KEY" "$@"; }
send2() { ip netns exec "$T_PREFIX-r2" "$SEND" --send "$TO" --key "$FLEET_KEY" --origin rank2 "$@"; }
# the snapshot bundles of peer $1
snaps_of() { grep -l "\"origin_peer\": *\"$1\"" "$T_DIR"/state0/bundles/*peer-snapshot*/manifest.json 2>/dev/null | wc -l; }
snaps_are() { [ "$(snaps_of rank1)/$(snaps_of rank2)" = "$1" ]; }
acted_for() { grep -c "peer $1: snapshot notice for incident" "$T_DIR/rank0.log"; }
samples() { st | jq '[.ports[].samples] | add'; }

# 1. a wrong key (anyone's forgery): refused at the signature, counted
#    for the peer's address, and the peer's state unchanged by it
send --mode badkey --count 5 --incident 100
send --mode garbage --count 4
sleep 0.5
check "bad key: five datagrams refused at the signature" test "$(refused bad_signature)" = 5
check "forged: no last contact, the key state and last error untouched" bash -c \
	"'$NICSTALLCTL' -s '$T_DIR/rank0.sock' -j status | jqe '.peers.peers[0] | (has(\"last_contact_s\") | not) and (has(\"last_error\") | not) and (.key.state | startswith(\"loaded\"))' >/dev/null"
check "bad key: logged once, not five times" test "$(grep -c 'signature does not verify' "$T_DIR/rank0.log")" = 1
check "bad key: no snapshot, no bundle" test "$(nbundles)" = 0

# 2. an authentic notice is acted on once; its replays and a stale copy are not
send --mode notice --incident 7 --origin rank1 --save "$T_DIR/notice.bin"
wait_for 5 nb_is 1
check "good notice: one peer-snapshot bundle" test "$(nbundles)" = 1
# rank2's one snapshot, older than all of rank1's to come
send2 --mode notice --incident 70
check "rank2's notice: its snapshot, the peer named in its manifest" wait_for 5 snaps_are 1/1
R2SNAP=$(dirname "$(grep -l '"origin_peer": *"rank2"' "$T_DIR"/state0/bundles/*peer-snapshot*/manifest.json)")
send --raw "$T_DIR/notice.bin" --count 3
send --mode notice --incident 8 --skew-ms -60000
sleep 0.5
check "replay: three replays and one stale notice refused" test "$(refused replayed)" = 4
check "replay: still two bundles" test "$(nbundles)" = 2
check "replay: logged once per interval" test "$(grep -c 'refused before its signature check' "$T_DIR/rank0.log")" = 1
contact=$(peer .last_contact_real_ns)
check "good notice: the peer's last contact set by it" test "$contact" != null

# 2b. a notice for another host, this host's own notice reflected back, a
#     protocol version 1 notice: refused, nothing acted on
send --mode notice --incident 20 --to rank2
send --mode notice --incident 21 --origin rank0
send --mode notice --incident 24 --origin RANK0
send --mode old --incident 22
# the recipient is a DNS name: RANK0 is this host
send --mode notice --incident 23 --to RANK0
sleep 0.5
check "recipient: a notice for rank2 refused as wrong_recipient" test "$(refused wrong_recipient)" = 1
check "reflection: a notice whose origin is this host refused (RANK0 too)" test "$(refused origin_is_this_host)" = 2
check "recipient: a notice for RANK0 acted on (host names are case-insensitive)" \
	grep -q 'snapshot notice for incident rank1:23$' "$T_DIR/rank0.log"
check "old version: a version 1 notice refused as old_version" test "$(refused old_version)" = 1
check "old version: the log names the version" grep -q 'protocol version 1 (this daemon speaks 2 only' "$T_DIR/rank0.log"
check "recipient, reflection, old version: two bundles (the pool's limit)" wait_for 5 nb_is 2
check "rank1's second snapshot cycled out its own first, not rank2's" test -d "$R2SNAP"

# 2c. floods in the peer's name (a source address can be forged; the key
#     id and the recipient travel in clear): replays cost no signature
#     check at all; a forged flood at 500 a second leaves the peer's
#     genuine notice its signature check (it is acted on); a burst of
#     forged datagrams costs a bounded number of signature checks (100 at
#     once, then 1000 a second); the peer's state is unchanged by any
lasterr=$(peer .last_error)
contact=$(peer .last_contact_real_ns)
c0=$(refused signature_checks)
r0=$(refused replayed)
send --raw "$T_DIR/notice.bin" --count 3000
sleep 0.3
r1=$(refused replayed)
echo "replay flood: 3000 replays, $((r1 - r0)) refused as replayed (the rest lost in the socket buffer), $(( $(refused signature_checks) - c0 )) signature checks"
check "replay flood: no signature check for a replay" test "$(refused signature_checks)" = "$c0"
check "replay flood: refused as replayed" test $((r1 - r0)) -ge 100
check "replay flood: the peer's last contact unchanged" test "$(peer .last_contact_real_ns)" = "$contact"
( send --mode badkey --count 1500 --rate 500 --incident 5000 ) &
FORGE=$!
T_PIDS+=($FORGE)
sleep 1
send --mode notice --incident 60
wait $FORGE
sleep 0.3
echo "forged flood at 500/s: $(refused bad_signature) refused at the signature, $(refused verify_throttled) unverified"
check "forged flood at 500/s: the peer's genuine notice still acted on" \
	grep -q 'snapshot notice for incident rank1:60$' "$T_DIR/rank0.log"
check "forged flood at 500/s: its snapshot written" wait_for 5 nb_is 2
contact=$(peer .last_contact_real_ns)
lasterr=$(peer .last_error)
c0=$(refused signature_checks)
b0=$(refused bad_signature)
t0=$(date +%s%N)
send --mode badkey --count 3000 --incident 7000
t1=$(date +%s%N)
sleep 0.3
c1=$(refused signature_checks)
b1=$(refused bad_signature)
thr=$(refused verify_throttled)
ms=$(( (t1 - t0) / 1000000 + 300 ))
max=$(( 100 + 1000 * (ms + 999) / 1000 ))
echo "HMAC flood: 3000 forged datagrams in $ms ms: $((c1 - c0)) signature checks (at most $max), $thr refused unverified in all"
check "HMAC flood: at most $max signature checks for 3000 forged datagrams" test $((c1 - c0)) -le "$max"
# each bad_signature is one HMAC computed and failed: the same bound
check "HMAC flood: at most $max refused at the signature ($((b1 - b0)))" test $((b1 - b0)) -le "$max"
check "floods: the peer's last contact, key state and last error unchanged" bash -c \
	"'$NICSTALLCTL' -s '$T_DIR/rank0.sock' -j status | jqe --arg e '$lasterr' '.peers.peers[0] | .last_contact_real_ns == $contact and (.key.state | startswith(\"ok\")) and .last_error == \$e' >/dev/null"
sleep 0.2         # the signature budget refills

# 3. oversized and garbage, from the peer's address and from no peer's
#    (a socket buffer may drop some of a burst: the counts are lower bounds)
send --mode oversized
send --mode garbage --count 100
send --mode short --count 20
sleep 0.3
# from an address that is no peer's (authentically signed, even)
ip netns exec "$R1" ip addr add "$NET.1.77/24" dev "${T_PREFIX}m1"
send --mode notice --count 3 --incident 300 --from "$NET.1.77"
sleep 0.5
check "oversized: refused by its size" test "$(refused oversized)" = 1
g=$(refused garbage)
check "garbage: garbage and short datagrams refused ($g of 120 reached the socket)" test "$g" -ge 20
check "no peer's address: counted as unknown senders, not acted on" test "$(st | jq .peers.unknown_senders)" -ge 1
check "garbage: still two bundles" test "$(nbundles)" = 2
check "garbage: logged once per interval" test "$(grep -c 'a datagram from' "$T_DIR/rank0.log")" -le 3

# 4. a flood of authentic notices, each of another incident: the rate limit
#    holds (a burst of 4, then one per 10 s), so does the signature budget
#    and rank1's share of peer_snapshots_per_hour (6 among 2 peers: 3, all
#    spent in parts 2 to 2c); the loop keeps sampling and status answers
#    while it lasts; rank2's snapshot stays, and rank2 still gets its own
s0=$(samples)
( for _ in 1 2 3 4 5; do send --mode notice --count 2000 --incident $((1000 + RANDOM * 4)); done ) &
FLOOD=$!
T_PIDS+=($FLOOD)
ans=0
for _ in $(seq 10); do timeout 2 "$NICSTALLCTL" -s "$T_DIR/rank0.sock" status > /dev/null && ans=$((ans + 1)); sleep 0.1; done
wait $FLOOD
sleep 1.5
s1=$(samples)
lim=$(refused rate_limited)
bud=$(refused over_budget)
thr2=$(refused verify_throttled)
acted=$(acted_for rank1)
echo "flood: 10000 notices sent, $(peer .notices_received) read, $((acted - 3)) acted on, $lim refused by the rate limit, $bud over the hourly budget, $((thr2 - thr)) unverified (signature budget); samples $s0 -> $s1"
check "flood: status answered every time during the flood" test "$ans" = 10
check "flood: the loop kept sampling (samples $s0 -> $s1)" test "$s1" -gt $((s0 + 10))
check "flood: rank1's share of peer_snapshots_per_hour held (3 acted on in all)" test "$acted" = 3
check "flood: status says rank1's share, 3 an hour" test "$(st | jq .peers.snapshots_per_hour_per_peer)" = 3
check "flood: notices over the hourly budget refused as over_budget" test "$bud" -ge 1
check "flood: status counts them for all peers" test "$(st | jq .peers.snapshots_over_budget)" = "$bud"
check "flood: notices beyond the limits refused" test $((lim + bud + thr2 - thr)) -ge 50
check "flood: peer snapshots keep their own pool (peer_bundle_max_count 2)" wait_for 5 nb_is 2
check "flood: this host's two older bundles not evicted by peer snapshots" test "$(nown)" = 2
check "flood: rank2's snapshot, the oldest, not cycled out by rank1's" test -d "$R2SNAP"
send2 --mode notice --incident 71
check "rank2 after rank1's flood: its notice still acted on (its own share)" \
	wait_for 5 grep -q 'snapshot notice for incident rank2:71$' "$T_DIR/rank0.log"
check "rank2's second snapshot: the pool (2) keeps one of each peer's, its own first gave way" \
	wait_for 5 snaps_are 1/1
check "flood: rate limit logged once per interval" test "$(grep -c 'rate limit' "$T_DIR/rank0.log")" -le 3

# nothing changed on the receiver
check "receiver: alive" kill -0 "${FLEET_PIDS[0]}"
check "receiver: no incident of its own" bash -c "'$NICSTALLCTL' -s '$T_DIR/rank0.sock' -j status | jqe '.incidents | length == 0' >/dev/null"
check "receiver: no reprogram, no capture" bash -c "! grep -qE 'reprogram|capture on|promiscuous' '$T_DIR/rank0.log'"
check "receiver: its port never went promiscuous" bash -c "'$BUILD/emuport' ctl '$T_DIR/emu' rxmode rank0 | grep -q ' promisc_applied=off '"
check "receiver: no reload, the configuration unchanged" test "$(st | jq .reloads)" = 0

# the metrics textfile says the same, by reason, for the fleet's alerts
# (fleet/nicstalld-alerts.yml NicstallPeerBadSignature)
mref() { fleet_metric 0 "nicstalld_peer_refused_total{peer=\"rank1\",reason=\"$1\"}"; }
same_as_status() {
	local r
	for r in bad_signature replayed oversized garbage rate_limited over_budget wrong_recipient \
		origin_is_this_host old_version verify_throttled; do
		[ "$(mref "$r")" = "$(refused "$r")" ] || return 1
	done
}
wait_for 5 same_as_status
echo "metrics: $(grep '^nicstalld_peer_' "$T_DIR/metrics0.prom" | grep -v ' 0$' | tr '\n' ' ')"
check "metrics: bad key: nicstalld_peer_refused_total{reason=bad_signature} as the status counts" test "$(mref bad_signature)" = "$(refused bad_signature)"
check "metrics: replays: reason=replayed as the status counts ($(mref replayed))" test "$(mref replayed)" = "$(refused replayed)"
check "metrics: oversized is 1, garbage $(mref garbage), rate_limited $(mref rate_limited): as the status counts" same_as_status
check "metrics: no notice of the receiver's own went unanswered" \
	test "$(fleet_metric 0 'nicstalld_peer_notices_unanswered_total{peer="rank1"}')" = 0
check "metrics: HELP and TYPE of both peer families" bash -c \
	"grep -q '^# TYPE nicstalld_peer_refused_total counter' '$T_DIR/metrics0.prom' && grep -q '^# TYPE nicstalld_peer_notices_unanswered_total counter' '$T_DIR/metrics0.prom'"
cp "$T_DIR/metrics0.prom" "$T_DIR/copy.prom"
promtool check metrics < "$T_DIR/copy.prom" > "$T_DIR/promtool.out" 2>&1
prc=$?
check "metrics: promtool check metrics passes (exit $prc, no lint complaint)" test "$prc" = 0 -a ! -s "$T_DIR/promtool.out" ||
	cat "$T_DIR/promtool.out"
# the client's table: the refusals by reason, the key state
rctl 0 peers > "$T_DIR/peers.txt"
cat "$T_DIR/peers.txt"
check "peers: rank1's address's refusals shown apart from its state" bash -c \
	"grep -A3 -E '^rank1 ' '$T_DIR/peers.txt' | grep 'from its address, refused before' | grep -q 'replayed=$(refused replayed)'"
fleet_stop 0
check "receiver: no sanitizer report" fleet_sanitizers

# a key file others may read is no key: the daemon refuses to start, naming it
cp "$FLEET_KEY" "$T_DIR/open.keys"; chmod 0644 "$T_DIR/open.keys"
sed "s|$FLEET_KEY|$T_DIR/open.keys|" "$T_DIR/rank1.conf" > "$T_DIR/open.conf"
timeout 10 "$NICSTALLD" -c "$T_DIR/open.conf" --socket "$T_DIR/open.sock" > "$T_DIR/open.log" 2>&1
rc=$?
check "readable key file: the daemon refuses to start (exit $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "readable key file: the error names the file, its mode and the peer" \
	grep -qE "peer 'rank0'.*key_file $T_DIR/open.keys: mode 0644" "$T_DIR/open.log"
grep -m1 "open.keys" "$T_DIR/open.log"
