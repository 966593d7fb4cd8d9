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
CONF
"$NICSTALLD" --check-config -c "$T_DIR/bad.conf" > "$T_DIR/out" 2> "$T_DIR/err"
rc=$?
cat "$T_DIR/err"
check "exit status non-zero" test "$rc" -ne 0
check "error 1: interval range at line 2" grep -q "^$T_DIR/bad.conf:2: interval: 1ms is out of range" "$T_DIR/err"
check "error 2: unknown key at line 6" grep -q "^$T_DIR/bad.conf:6: unknown key 'speed' in \[port a\]" "$T_DIR/err"
check "error 3: bad profile at line 9" grep -q "^$T_DIR/bad.conf:9: profile: 'mellanox' is not one of" "$T_DIR/err"
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
