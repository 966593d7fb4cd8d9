#!/bin/bash
# The bundle report in a real browser: a bundle written on the emulated
# ConnectX pair and the pre-report fixture bundle are rendered with
# `nicstallctl report` in headless Chromium; the DOM must show the verdict
# of the manifest, one port and one vport series per port, the stall band,
# every action and the release where the manifest's times put them (within
# 1.5 px), no request but the file itself and no console error. Skips (does
# not fail) only where Chromium cannot run. Screenshots stay in BUILD/report/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu_lib.sh"
. "$(dirname "$0")/report_lib.sh"
t_init
report_can_run || report_skip
SHOTS=$BUILD/report
rm -rf "$SHOTS/fixture" "$SHOTS/emu"   # test_emu_scenarios keeps its own in scenarios/
mkdir -p "$SHOTS"

# 1. a bundle of schema 1 written before report.html existed
FIX=$ROOT/tests/fixtures/bundles/20261201T093030Z-vm-server-port-drop
# (rendered at the end: report_flush)
report_later "fixture bundle (before report.html)" "$FIX" "$SHOTS/fixture" --full
check "fixture bundle: unchanged by the report (verify passes)" "$NICSTALLCTL" verify "$FIX"

# 2. a fresh bundle: port-drop on the server port, released by the reprogram
EMU_SRV_EXTRA="promisc_capture = no" emu_up 10.212.0 --fw-frames || { fail "emulated pair"; exit 1; }
start_daemon "$T_DIR/emu.conf" || exit 1
pingpong 11101; pingpong 11102
p=$(cport 11101)
sleep 1
emu wedge srv tcp "$CLI_ADDR" "$p" "$SRV_ADDR" 11101
if wait_for 25 bash -c "$(declare -f bundle_for); NICSTALLCTL='$NICSTALLCTL' T_SOCK='$T_SOCK' bundle_for 11101"; then
	B=$(bundle_for 11101)
	ok "a bundle was written: $(basename "$B")"
	check "it verifies" "$NICSTALLCTL" verify "$B"
	report_later "emulated pair" "$B" "$SHOTS/emu" --full
	size=$(stat -c %s "$SHOTS/emu/report.html")
	echo "report.html of $(basename "$B"): $size bytes"
	check "the report is under 2 MiB ($size bytes)" test "$size" -lt 2097152
	# when the daemon writes report.html into the bundle, it renders too
	if [ -f "$B/report.html" ]; then
		check "the bundle's own report.html is in SHA256SUMS" grep -q '  report.html$' "$B/SHA256SUMS"
		report_render_later "the bundle's own report.html" "$B/report.html" "$B/manifest.json" \
			"$SHOTS/emu/bundle-report.png" --full
	fi
	LANG=C.UTF-8 "$NICSTALLCTL" show "$B" > "$T_DIR/show.txt"
	check "show prints the timeline with the release" grep -q "released by reprogram" "$T_DIR/show.txt"
	check "show draws UTF-8 sparklines of port and vport" bash -c "grep -a 'vport ' '$T_DIR/show.txt' | grep -q \$'\\xe2\\x96'"
	LANG=C "$NICSTALLCTL" show "$B" > "$T_DIR/show-ascii.txt"
	check "show in the C locale is plain ASCII" bash -c "! LC_ALL=C grep -q '[^ -~]' '$T_DIR/show-ascii.txt'"
	sed -n '/^Timeline/,$p' "$T_DIR/show.txt"
else
	fail "a bundle was written"
fi
check "daemon alive" kill -0 "$T_DPID"
# the renders last, with the engines and the daemon ended
t_stop_pids
report_flush
