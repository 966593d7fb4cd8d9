#!/bin/bash
# Foundation: --check-config reports every error with file and line.
. "$(dirname "$0")/lib.sh"
t_init
cat > "$T_DIR/bad.conf" <<'CONF'
[daemon]
interval = 1ms
horizon = 2m
[port a]
interface = eth0
speed = 100G
[port b]
interface = eth1
profile = mellanox
tracker_hooks = sometimes
CONF
"$NICSTALLD" --check-config -c "$T_DIR/bad.conf" > "$T_DIR/out" 2> "$T_DIR/err"
rc=$?
cat "$T_DIR/err"
check "exit status non-zero" test "$rc" -ne 0
check "error 1: interval range at line 2" grep -q "^$T_DIR/bad.conf:2: interval: 1ms is out of range" "$T_DIR/err"
check "error 2: unknown key at line 6" grep -q "^$T_DIR/bad.conf:6: unknown key 'speed' in \[port a\]" "$T_DIR/err"
check "error 3: bad profile at line 9" grep -q "^$T_DIR/bad.conf:9: profile: 'mellanox' is not one of" "$T_DIR/err"
check "error 4: bad tracker_hooks at line 10" grep -q "^$T_DIR/bad.conf:10: tracker_hooks: 'sometimes' is not one of on-wait, always" "$T_DIR/err"
check "no 'configuration OK' on failure" test ! -s "$T_DIR/out"
cat > "$T_DIR/good.conf" <<'CONF'
[daemon]
interval = 500ms
[port a]
interface = eth0
netns = bench-a
CONF
out=$("$NICSTALLD" --check-config -c "$T_DIR/good.conf")
check "valid file: configuration OK, status 0" test "$?" -eq 0 -a "$out" = "configuration OK"
"$NICSTALLD" --check-config -c "$T_DIR/missing.conf" 2> "$T_DIR/err2"
check "missing file named" grep -q "missing.conf: cannot open: No such file" "$T_DIR/err2"
"$NICSTALLD" --bogus 2>/dev/null
check "unknown option exits 2" test $? -eq 2
"$NICSTALLD" -c "$T_DIR/bad.conf" --socket "$T_DIR/s.sock" 2> "$T_DIR/err3"
check "daemon refuses to start on a bad file" test $? -ne 0
check "and says why" grep -q "invalid configuration, not starting" "$T_DIR/err3"
# rule files: errors at --check-config and at start name file:line:col
mkdir -p "$T_DIR/rules.d"
printf 'rule broken {\n    verdict\n    require held >\n}\n' > "$T_DIR/rules.d/90-local.rules"
cat > "$T_DIR/rules.conf" <<CONF
[daemon]
rules_dir = $ROOT/rules
rules_local_dir = $T_DIR/rules.d
[port a]
interface = eth0
CONF
"$NICSTALLD" --check-config -c "$T_DIR/rules.conf" 2> "$T_DIR/rerr"
check "a rule error fails --check-config" test $? -ne 0
cat "$T_DIR/rerr"
check "and names file:line:col" grep -q "^$T_DIR/rules.d/90-local.rules:2:[0-9]*: " "$T_DIR/rerr"
"$NICSTALLD" -c "$T_DIR/rules.conf" --socket "$T_DIR/r.sock" 2> "$T_DIR/rerr2"
check "the daemon refuses to start on bad rules" grep -q "invalid rules, not starting" "$T_DIR/rerr2"
printf 'rule local-extra {\n    verdict port-drop\n    require held == 0 and held > 0\n    explain "never"\n    action "none"\n}\n' > "$T_DIR/rules.d/90-local.rules"
out=$("$NICSTALLD" --check-config -c "$T_DIR/rules.conf")
check "a valid local rule file passes" test "$out" = "configuration OK"
