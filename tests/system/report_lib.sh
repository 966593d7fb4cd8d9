# Helpers for rendering bundle reports in headless Chromium (Debian's
# chromium, driven by tests/system/report_check.js over the DevTools pipe).
# Source after lib.sh.
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export CHROMIUM

# report_can_run: 0 when node and chromium are there and chromium starts;
# else 1 with the reason in REPORT_SKIP.
report_can_run() {
	local out prof
	REPORT_SKIP=""
	command -v node > /dev/null || { REPORT_SKIP="node is not installed (tools/deps.sh installs nodejs)"; return 1; }
	[ -x "$CHROMIUM" ] || { REPORT_SKIP="$CHROMIUM is not installed (tools/deps.sh installs the chromium package)"; return 1; }
	prof=$(mktemp -d)
	out=$(timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$prof" \
		--dump-dom 'data:text/html,<p>up</p>' 2>&1)
	rm -rf "$prof"
	case $out in
	*"<p>up</p>"*) return 0 ;;
	esac
	REPORT_SKIP="chromium cannot run here: $(printf '%s' "$out" | grep -v dbus | tail -3 | tr '\n' ' ')"
	return 1
}

# report_skip: end a test that cannot render (not a failure).
report_skip() {
	echo "skip - $REPORT_SKIP"
	trap - EXIT
	for c in "${T_CLEANUP[@]}"; do eval "$c" > /dev/null 2>&1; done
	rm -rf "$T_DIR"
	echo "0 passed, 0 failed"
	exit 0
}

# report_write LABEL BUNDLE OUTDIR: nicstallctl report of BUNDLE into
# OUTDIR/report.html (a failure is LABEL's)
report_write() {
	mkdir -p "$3"
	"$NICSTALLCTL" report "$2" -o "$3/report.html" > /dev/null && return 0
	fail "$1: nicstallctl report"
	return 1
}

# report_later LABEL BUNDLE OUTDIR [--full]: nicstallctl report of BUNDLE
# into OUTDIR/report.html now, from the bundle as it is now; its rendering
# and checks (screenshot OUTDIR/report.png) wait for report_flush, at the
# test's end with its daemon ended (Chromium, 3-15 s of CPU, a render
# taking both of a CI machine's cores at its start).
REPORT_QUEUE=()
report_later() {
	local label=$1 b=$2 dir=$3
	shift 3
	report_write "$label" "$b" "$dir" || return 1
	report_render_later "$label" "$dir/report.html" "$b/manifest.json" "$dir/report.png" "$@"
}

# report_render_later LABEL HTML MANIFEST PNG [--full]: HTML rendered and
# checked against MANIFEST at report_flush, one check per line
# report_check.js prints (prefixed with LABEL)
report_render_later() {
	REPORT_QUEUE+=("${*@Q}")
}

# report_flush: render every queued report in one browser (report_check.js
# --jobs: a tab each, one after another, not a browser each; two at once
# paused the side lane's healthy flows: test_stall_healthy), in queue order.
report_flush() {
	local r jobs line rc out nfail=0 n=${#REPORT_QUEUE[@]}
	[ "$n" -gt 0 ] || return 0
	jobs=$(mktemp) out=$(mktemp)
	for r in "${REPORT_QUEUE[@]}"; do
		eval "set -- $r"
		jq -n --arg lbl "$1" --arg report "$2" --arg manifest "$3" --arg shot "$4" \
			--arg flag "${5:-}" '{"label": $lbl, $report, $manifest, $shot, "full": ($flag == "--full")}'
	done | jq -s . > "$jobs"
	REPORT_QUEUE=()
	if [ "$(jq length "$jobs" 2>/dev/null)" != "$n" ]; then
		fail "reports: the $n queued renderings could not be listed for report_check.js"
		rm -f "$jobs" "$out"
		return 0
	fi
	timeout -k 5 $((60 + 60 * n)) node "$ROOT/tests/system/report_check.js" --jobs "$jobs" > "$out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"FAIL - "*) fail "${line#FAIL - }"; nfail=$((nfail + 1)) ;;
		*) echo "$line" ;;
		esac
	done < "$out"
	rm -f "$jobs" "$out"
	[ "$rc" -ne 0 ] && [ "$nfail" -eq 0 ] && fail "reports: report_check.js exited with status $rc"
	return 0
}
