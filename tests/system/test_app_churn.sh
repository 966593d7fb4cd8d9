#!/bin/bash
# An application endpoint whose series set changes at every scrape (issue
# 29: a local user who binds an endpoint's port while the application is
# down can serve pages whose every label is new): each recorder sample
# would keep a layout of its own, up to 10,000 names each. The app source
# takes a series set's changes up to a budget (8 in 60 s, and two for each
# endpoint's first pages), then keeps its names: the page's values are
# read onto them by name, new series are left out, status and the log say
# so once; the steady counter on the same page is still read. Bounded: 15
# s of scrapes every 100 ms.
. "$(dirname "$0")/lib.sh"
t_init
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 0; }
pair_up 10.217.0 || exit 1
python3 "$ROOT/tests/tools/promserve.py" "$T_DIR/port" 20 &
T_PIDS+=("$!")
wait_for 10 test -s "$T_DIR/port" || { fail "the test HTTP server starts"; exit 1; }
U=http://127.0.0.1:$(cat "$T_DIR/port")
{ conf_daemon "interval = 100ms"
  conf_port cli "app_metrics = $U/churn" "app_metrics_min_gap = 100ms"
} > "$T_DIR/n.conf"
start_daemon "$T_DIR/n.conf" || exit 1
names() { ctl -j counters cli | jq -r '.sources.app // {} | keys[]' | sort | md5sum; }
wait_for 10 grep -q "app metrics: the series set changed .* times in" "$T_DIR/daemon.log"
check "the log says the series set is kept, once" \
	test "$(grep -c 'app metrics: the series set changed' "$T_DIR/daemon.log")" = 1
a=$(names); sleep 1; b=$(names)
check "its names stay while the page churns" test "$a" = "$b"
check "status says the names are kept and new series left out" bash -c \
	"'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.ports[0].sources[] | select(.name == \"app\") | .endpoints[0].series_set_kept] == [true]' &&
	 '$NICSTALLCTL' -s '$T_SOCK' status | grep -q 'new series left out'"
s1=$(ctl -j counters cli | jq '.sources.app["app.cli.steady_total"] // 0'); sleep 1
s2=$(ctl -j counters cli | jq '.sources.app["app.cli.steady_total"] // 0')
check "the steady counter on the page is still read ($s1 -> $s2)" test "$s2" -gt "$s1"
n=$(ctl -j counters cli | jq '.sources.app | keys | length')
check "the kept names are one page's, not the pages' sum ($n)" test "$n" -le 150
check "the daemon still runs" kill -0 "$T_DPID"
