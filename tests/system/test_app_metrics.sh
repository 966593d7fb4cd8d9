#!/bin/bash
# The application's own metrics (issue 29, item 2): a port's app_metrics
# endpoint on 127.0.0.1 (tests/tools/promserve.py) is scraped into the
# port's recorder as the "app" source, its series usable by the rules'
# signals and in the fast window, its last page in the investigation's
# snapshot; producers' endpoints that are down, slow beyond their timeout,
# gigantic, malformed or redirecting each give a clear line in the log and
# in `nicstallctl status`, and the sampling keeps its interval while the
# slow one hangs. Bounded: the server's slow page answers after 20 s, the
# daemon gives up after 4 s; everything is killed in the EXIT trap.
. "$(dirname "$0")/lib.sh"
t_init
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 0; }

pair_up 10.214.0 || exit 1
python3 "$ROOT/tests/tools/promserve.py" "$T_DIR/port" 20 &
T_PIDS+=("$!")
wait_for 10 test -s "$T_DIR/port" || { fail "the test HTTP server starts"; exit 1; }
P=$(cat "$T_DIR/port")
# a port nothing listens on: bind one, note it, close it
DOWN=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
U=http://127.0.0.1:$P

# a site's local rules: a signal over the app's counter and a rule on it
mkdir -p "$T_DIR/rules"
cat > "$T_DIR/rules/60-app.rules" <<'EOF2'
signal disk_wait generic = "app.cli.flare_engram_disk_wait_nanoseconds_total"
rule app-disk-wait {
    verdict app-disk-wait
    require any(port.window.disk_wait > 0)
    explain "the engine waited on its disk for {maxof(port.window.disk_wait)} ns"
    action "look at the engine's disk"
}
EOF2

{ conf_daemon "interval = 200ms" "observe_window = 1s"
  conf_port cli "app_metrics = $U/good"
  printf '[producer slow]\ncomm = nosuchproc1\napp_metrics = %s/slow\napp_metrics_timeout = 4s\n' "$U"
  printf '[producer huge]\ncomm = nosuchproc2\napp_metrics = %s/huge\napp_metrics_max_bytes = 1M\n' "$U"
  printf '[producer bad]\ncomm = nosuchproc3\napp_metrics = %s/bad\n' "$U"
  printf '[producer down]\ncomm = nosuchproc4\napp_metrics = http://127.0.0.1:%s/metrics\n' "$DOWN"
  printf '[producer moved]\ncomm = nosuchproc5\napp_metrics = %s/redirect\n' "$U"
} | sed "s|^rules_dir = .*|rules_dir = $T_DIR/rules|" > "$T_DIR/n.conf"
start_daemon "$T_DIR/n.conf" || exit 1
# libcurl is not linked (collectors/counters/curl_dl.h): loaded because
# this configuration names endpoints
check "nicstalld does not link libcurl" bash -c "! readelf -d '$BUILD/nicstalld' | grep -q 'NEEDED.*libcurl'"
check "libcurl loaded for the endpoints" grep -q /libcurl "/proc/$T_DPID/maps"

# every endpoint has answered or failed once (the slow one after 2 s)
wait_for 20 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status |
	jqe '[.ports[0].sources[] | select(.name == \"app\") | .endpoints[] |
	      select(.scrapes > 0)] | length == 6'"
check "every endpoint was scraped or failed" test $? -eq 0
ctl -j status > "$T_DIR/st.json"
ctl status > "$T_DIR/st.txt"
ep() { jq -r --arg n "$1" '.ports[0].sources[] | select(.name == "app") | .endpoints[] |
	select(.name == $n) | "\(.state) \(.error // "")"' "$T_DIR/st.json"; }
echo "# status:"; grep '    app ' "$T_DIR/st.txt"
is() { local s; s=$(ep "$1"); echo "# $1: $s"; [[ $s == $2 ]]; }
check "the good endpoint is ok" is cli "ok "
check "the slow endpoint: no answer within its timeout" \
	is slow "error no whole answer within 4s (app_metrics_timeout)"
check "the huge endpoint: larger than its cap" \
	is huge "error the page is larger than 1048576 bytes (app_metrics_max_bytes)"
check "the malformed endpoint: the line and what is wrong" \
	is bad "error malformed page: line 2: label a: its value has no closing*"
check "the endpoint that is down: refused" is down "error Couldn't connect to server*"
check "the redirect is not followed" \
	is moved "error HTTP status 302 (redirects are not followed)"
check "a failing endpoint is logged once, not at every scrape" \
	test "$(grep -c 'app metrics down' "$T_DIR/daemon.log")" -eq 1
for n in slow huge bad down moved; do
	check "the log says why $n fails" \
		grep -q "port cli: app metrics $n (http://127.0.0.1:[0-9]*/[a-z]*): " "$T_DIR/daemon.log"
done
check "status text shows each endpoint's line" \
	bash -c "[ \$(grep -c '^    app ' '$T_DIR/st.txt') -eq 6 ] &&
		 grep -q '^    app bad .*malformed page' '$T_DIR/st.txt'"

# the good page's series: the counter, labels with their escapes, the
# histogram's and summary's lines; the NaN gauge left out
ctl -j counters cli > "$T_DIR/c.json"
check "the counter is in the app source" \
	jqe '.sources.app["app.cli.flare_engram_disk_wait_nanoseconds_total"] >= 1000' "$T_DIR/c.json"
check "labels are kept with their escapes" \
	jqe '.sources.app | has("app.cli.flare_prefill_tokens_total{rank=\"dgx4\",path=\"C:\\\\DIR\",note=\"say \\\"hi\\\"\\n\"}")' "$T_DIR/c.json"
check "a histogram's +Inf bucket, a summary's count" \
	jqe '.sources.app["app.cli.rpc_seconds_bucket{le=\"+Inf\"}"] == 12 and
	     .sources.app["app.cli.lat_count"] == 4' "$T_DIR/c.json"
check "a NaN value is left out, a fraction rounded" \
	jqe '(.sources.app | has("app.cli.flare_broken_gauge") | not) and
	     .sources.app["app.cli.flare_row_cache_fill"] == 1' "$T_DIR/c.json"

# the sampling keeps its interval while the slow endpoint hangs: the
# recorder's samples over 6 s have no gap near the 4 s timeout
# (the first gap, the daemon's start, aside)
sleep 6
ctl -j counters cli --window 4 > "$T_DIR/w.json"
ctl -j snapshot --bundle cli > "$T_DIR/b.json"
BD=$(jq -r '.bundle' "$T_DIR/b.json")
gap=$(jq '[.samples | map(.mono_ns) | . as $t | range(2; length) | ($t[.] - $t[. - 1])] | max / 1e6 | floor' \
	"$BD/recorder/cli.json")
n=$(jq '.samples | length' "$BD/recorder/cli.json")
echo "# recorder: $n samples, the longest gap ${gap} ms (interval 200 ms, slow endpoint's timeout 4 s)"
# under 3.5 s: a sample that waited for the 4 s timeout would be longer (a
# loaded machine delays a 200 ms tick by hundreds of ms, never seconds)
check "no sample waited for the slow endpoint (longest gap ${gap} ms)" test "$gap" -lt 3500
d=$(jq -r '.sources.app["app.cli.flare_engram_disk_wait_nanoseconds_total"].delta' "$T_DIR/w.json")
check "the counter's window delta grows with the scrapes ($d)" test "${d:-0}" -ge 10000
check "the bundle's recorder holds the app series" \
	jqe '[.samples[] | (.values // .changed).app["app.cli.flare_engram_disk_wait_nanoseconds_total"] // empty] | length >= 4' \
	"$BD/recorder/cli.json"

# an investigation: the fast window scrapes too, the facts carry the
# series and the local signal, the record's snapshot the last page
ctl investigate cli > /dev/null
wait_for 30 bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j incident show | jqe '.record.state == \"complete\"'"
ctl -j incident show > "$T_DIR/inv.json"
check "the fast window's deltas hold the app counter" \
	jqe '.record.window.cli.deltas.app["app.cli.flare_engram_disk_wait_nanoseconds_total"] > 0' "$T_DIR/inv.json"
check "the facts hold the app counter" \
	jqe '.record.facts.ports.cli.window.counters["app.cli.flare_engram_disk_wait_nanoseconds_total"] > 0' "$T_DIR/inv.json"
check "a local rule on the app's counter gives the verdict" \
	jqe '.record.verdict.verdict == "app-disk-wait" and
	     (.record.verdict.explanation | test("disk for [0-9]+ ns"))' "$T_DIR/inv.json"
check "the record's snapshot holds the last page's text" \
	jqe '.record.snapshot.cli.app_metrics | map(select(.name == "cli")) | .[0].text |
	     test("flare_engram_disk_wait_nanoseconds_total [0-9]+")' "$T_DIR/inv.json"
check "and each failing endpoint's error" \
	jqe '.record.snapshot.cli.app_metrics | map(select(.name == "bad")) | .[0].error |
	     startswith("malformed page")' "$T_DIR/inv.json"
