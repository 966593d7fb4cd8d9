#!/bin/bash
# Engine flow tables are untrusted: malformed headers, a table truncated
# while in use, a dead owner's table and thousands of tables must neither
# crash, hang nor stall the daemon, and each is reported.
. "$(dirname "$0")/lib.sh"
t_init
F=$T_DIR/flows
mkdir -p "$F"
printf 'NIC statistics:\n     rx_packets: 1\n' > "$T_DIR/s.txt"
cat > "$T_DIR/n.conf" <<CONF
[daemon]
flow_interval = 50ms
flows_dir = $F
[port p]
stats_file = $T_DIR/s.txt
track = engine
CONF
start_daemon "$T_DIR/n.conf" || exit 1
le32() { printf "\\x$(printf %02x $(( $1 & 255 )))\\x$(printf %02x $(( ($1 >> 8) & 255 )))\\x$(printf %02x $(( ($1 >> 16) & 255 )))\\x$(printf %02x $(( ($1 >> 24) & 255 )))"; }
# header MAGIC VERSION HDRSIZE RECSIZE CAPACITY COUNT PID: a 128-byte header
header() {
	printf '%s' "$1"; le32 "$2"; le32 "$3"; le32 "$4"; le32 "$5"; le32 "$6"; le32 "$7"
	printf 'hostile\0'; head -c 24 /dev/zero; head -c 64 /dev/zero
}
me=$$
{ header NOTMAGIC 1 128 256 4 0 $me; head -c 1024 /dev/zero; } > "$F/badmagic.$me.flows"
{ header NSFLOWT1 99 128 256 4 0 $me; head -c 1024 /dev/zero; } > "$F/badversion.$me.flows"
{ header NSFLOWT1 1 128 256 100000 0 $me; head -c 1024 /dev/zero; } > "$F/toobig.$me.flows"
{ header NSFLOWT1 1 128 256 4 999 $me; head -c 1024 /dev/zero; } > "$F/overcount.$me.flows"
head -c 7 /dev/urandom > "$F/tiny.$me.flows"
sleep 1
check "daemon alive after malformed tables" kill -0 "$T_DPID"
for w in badmagic badversion toobig overcount tiny; do
	check "$w reported with its file name" grep -q "$w.$me.flows" "$T_DIR/daemon.log"
done
check "status lists the problems" bash -c "'$NICSTALLCTL' -s '$T_SOCK' -j status | jqe '[.flow_sources.tables[] | select(.problem != null)] | length >= 5'"
n1=$(grep -c "badmagic.$me" "$T_DIR/daemon.log")
sleep 1
n2=$(grep -c "badmagic.$me" "$T_DIR/daemon.log")
check "each problem logged once, not every poll ($n1 -> $n2)" test "$n1" = "$n2"

# a live engine's table truncated under the daemon
"$BUILD/nsengine" server --listen 127.0.0.1:12777 --table-dir "$F" --name victim > "$T_DIR/srv.log" 2>&1 &
T_PIDS+=($!); spid=$!
wait_for 5 bash -c "ss -ltn | grep -q ':12777 '"
"$BUILD/nsengine" client --connect 127.0.0.1:12777 --sessions 2 --duration 10 --table-dir "$F" --name victimc > "$T_DIR/cli.log" 2>&1 &
T_PIDS+=($!); cpid=$!
wait_for 5 bash -c "ls $F/victimc.$cpid.flows"
sleep 0.5
truncate -s 100 "$F/victimc.$cpid.flows"
sleep 0.5
check "daemon survives a table truncated while in use" kill -0 "$T_DPID"
check "the truncation is reported" grep -q "victimc.$cpid.flows" "$T_DIR/daemon.log"

# a dead engine's table is dropped with a log line
kill -KILL "$spid"
check "a dead owner's table is dropped and logged" wait_for 5 grep -Eq "victim.$spid.flows.*(dead|gone|exited|no longer)" "$T_DIR/daemon.log"

# thousands of tables
for i in $(seq 1 3000); do cp "$F/badmagic.$me.flows" "$F/many$i.$me.flows"; done
sleep 2
t0=$(date +%s%N)
ctl status > /dev/null
t1=$(date +%s%N)
check "daemon alive with 3000 tables" kill -0 "$T_DPID"
check "still answering (status in $(( (t1 - t0) / 1000000 )) ms)" test $(( (t1 - t0) / 1000000 )) -lt 5000
check "the table cap is reported" grep -Eqi "tables|limit|too many" "$T_DIR/daemon.log"
