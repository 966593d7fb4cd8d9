#!/bin/bash
# The fleet on engines people already run: the shipped Prometheus alerting
# rules pass `promtool check rules` and their unit tests (each alert fires on
# its series and not on a healthy fleet), and the example bundle_hook
# (fleet/nicstall-upload) ships a bundle to an HTTP server on loopback
# (an incident tracker's attachment endpoint taking PUT): the daemon runs it
# when the bundle is written, the upload arrives whole, named after the
# bundle, with its checksum; an unreachable endpoint is logged, not fatal.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fleet_lib.sh"
t_init
# the hook runs as nicstall-hook with the bundles' group nicstall (hook_user
# and hook_group's defaults), without capabilities: it reads rank 0's
# bundles through that group, as under the unit (StateDirectory 0755,
# bundles/ 2750)
hook_user_up
chmod 711 "$T_DIR" && mkdir -m 755 "$T_DIR/state0"
command -v promtool > /dev/null || { fail "promtool missing (tools/deps.sh installs prometheus)"; exit 1; }
check "promtool check rules: fleet/nicstalld-alerts.yml" promtool check rules "$ROOT/fleet/nicstalld-alerts.yml"
check "promtool test rules: every alert fires on its series, none on a healthy fleet" \
	promtool test rules "$ROOT/fleet/nicstalld-alerts.test.yml"

# a PUT endpoint on loopback: stores each upload under its path, with the
# checksum header it came with
UP=$T_DIR/uploads
mkdir -p "$UP"
cat > "$T_DIR/put.py" <<'PY'
import http.server, os, sys
root = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_PUT(self):
        n = int(self.headers.get("Content-Length", "0"))
        name = os.path.basename(self.path)
        data = self.rfile.read(n)
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)
        with open(os.path.join(root, name + ".sum"), "w") as f:
            f.write(self.headers.get("X-Checksum-Sha256", ""))
        self.send_response(201)
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$T_DIR/put.py" "$UP" > "$T_DIR/put.port" 2> "$T_DIR/put.log" &
T_PIDS+=($!)
wait_for 5 test -s "$T_DIR/put.port" || { fail "the loopback HTTP server starts"; cat "$T_DIR/put.log"; exit 1; }
PORT=$(cat "$T_DIR/put.port")

NET=10.$((248 + RANDOM % 4))
# the hook runs as nicstall-hook: a copy it may execute (the checkout may
# be in a 0700 directory)
UPLOAD=$(t_public_copy "$ROOT/fleet/nicstall-upload") || { fail "a copy of the hook"; exit 1; }
fleet_up "$NET" 2 "bundle_hook = $UPLOAD http://127.0.0.1:$PORT/attach/
hook_timeout = 20s
peer_window = 20ms" || { fail "two ranks come up"; exit 1; }
fleet_start 0 || exit 1
# a bundle: rank 1 (here the test's sender) asks rank 0 for a snapshot
ip netns exec "$T_PREFIX-r1" "$BUILD/tests/test_peerproto" --send "$NET.1.1:7499" --key "$FLEET_KEY" \
	--mode notice --incident 42
B=$(fleet_bundle 0 10) || { fail "rank 0 writes a bundle"; exit 1; }
N=$(basename "$B")
wait_for 15 test -s "$UP/$N.tar.gz.sum"
check "hook: the bundle arrived as $N.tar.gz" test -s "$UP/$N.tar.gz"
check "hook: its checksum header is the upload's SHA-256" \
	test "$(cat "$UP/$N.tar.gz.sum")" = "$(sha256sum "$UP/$N.tar.gz" | cut -d' ' -f1)"
mkdir -p "$T_DIR/x"
tar -C "$T_DIR/x" -xzf "$UP/$N.tar.gz"
check "hook: the unpacked upload verifies (every file, its SHA256SUMS)" "$NICSTALLCTL" verify "$T_DIR/x/$N"
check "hook: the daemon logged the hook's success" wait_for 5 grep -q "bundle_hook: done (exit 0)" "$T_DIR/rank0.log"

# the endpoint gone: the hook fails, the daemon says so and goes on
for p in "${T_PIDS[@]}"; do grep -qa put.py "/proc/$p/cmdline" 2>/dev/null && kill "$p"; done
sleep 0.3
ip netns exec "$T_PREFIX-r1" "$BUILD/tests/test_peerproto" --send "$NET.1.1:7499" --key "$FLEET_KEY" \
	--mode notice --incident 43
# (the first hook's "done (exit 0)" must not count: only a failure)
failed_hook() { grep -qE 'bundle_hook: (failed \((exit [1-9]|signal)|timed out)' "$T_DIR/rank0.log"; }
wait_for 20 failed_hook
check "hook: an unreachable endpoint is logged as the hook's failure" failed_hook
check "hook: the daemon still answers" rctl 0 status

# the daemon stopped while the hook waits on an endpoint that never
# answers: the hook gets SIGTERM and its second, and removes its packed
# copy (nicstall-upload's trap); SIGKILL alone left it in /tmp
cat > "$T_DIR/mute.py" <<'PY'
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
open(sys.argv[2] + ".listening", "w").close()
c, _ = s.accept()
open(sys.argv[2], "w").close()
time.sleep(60)
PY
python3 "$T_DIR/mute.py" "$PORT" "$T_DIR/mute.accepted" > "$T_DIR/mute.log" 2>&1 &
T_PIDS+=($!)
wait_for 5 test -e "$T_DIR/mute.accepted.listening" ||
	{ fail "the mute endpoint listens on $PORT"; cat "$T_DIR/mute.log"; }
ls -d /tmp/nicstall-upload.* 2> /dev/null | sort > "$T_DIR/tmp.before"
ip netns exec "$T_PREFIX-r1" "$BUILD/tests/test_peerproto" --send "$NET.1.1:7499" --key "$FLEET_KEY" \
	--mode notice --incident 44
check "hook: the next one is sending to the mute endpoint" wait_for 20 test -e "$T_DIR/mute.accepted"
fleet_stop 0
check "stop: the bundle whose hook was stopped is named" \
	grep -q "the daemon stopped while its hook ran (it ended on SIGTERM)" "$T_DIR/rank0.log"
ls -d /tmp/nicstall-upload.* 2> /dev/null | sort > "$T_DIR/tmp.after"
check "stop: the stopped hook left no temporary file in /tmp" \
	bash -c "[ -z \"\$(comm -13 '$T_DIR/tmp.before' '$T_DIR/tmp.after')\" ]"
check "no sanitizer report" fleet_sanitizers
