#!/bin/bash
# emu-conf.sh PREFIX EMUDIR NET FLOWS CLI_NAME SRV_NAME: print a nicstalld
# configuration for the pair `emu-pair.sh up PREFIX EMUDIR` made on NET.
# Lines in EMU_DAEMON_EXTRA, EMU_CLI_EXTRA and EMU_SRV_EXTRA are added to
# the [daemon] section and to each port's section.
set -u
[ $# -eq 6 ] || { echo "usage: $0 PREFIX EMUDIR NET FLOWS CLI_NAME SRV_NAME" >&2; exit 2; }
prefix=$1 emu=$2 net=$3 flows=$4 cli=$5 srv=$6
root=$(cd "$(dirname "$0")/../.." && pwd)
port() {        # port NAME PEER NS IF FILES PEER_ADDR EXTRA
	cat <<CONF
[port $1]
netns = $3
interface = $4
stats_file = $emu/$5.ethtool
info_file = $emu/$5.info
flows = $flows
peer = $2
peer_address = $6
recover = reprogram
$7
CONF
}
cat <<CONF
[daemon]
interval = 100ms
sysfs_root = $emu/sysfs
rules_dir = $root/rules
release_wait = 1500ms
${EMU_DAEMON_EXTRA:-}
CONF
port "$cli" "$srv" "$prefix-cli" "${prefix}c" cli "$net.2" "${EMU_CLI_EXTRA:-}"
port "$srv" "$cli" "$prefix-srv" "${prefix}s" srv "$net.1" "${EMU_SRV_EXTRA:-}"
