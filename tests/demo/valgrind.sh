#!/bin/bash
# One full demo scenario with the daemon under valgrind (memcheck):
#   tests/demo/valgrind.sh [BUILD] [SCENARIO]      (root; wrap in the
#   system-test lock on a shared machine)
# Passes when the demo writes its bundle and valgrind reports no invalid
# access, no use of uninitialised memory and no leak ("definitely" or
# "indirectly" lost) when the daemon exits (valgrind.supp: reports that
# are not nicstalld's, each explained). The report is kept in
# BUILD/valgrind-demo.log.
set -u
build=${1:-build}
scenario=${2:-port-drop}
here=$(cd "$(dirname "$0")" && pwd)
log=$(cd "$build" && pwd)/valgrind-demo.log
rm -f "$log"
NICSTALL_WRAP="valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect \
--errors-for-leak-kinds=definite,indirect --track-fds=no --num-callers=30 --suppressions=$here/valgrind.supp --log-file=$log" \
NICSTALL_START_WAIT=60 NICSTALL_BUNDLE_WAIT=120 "$here/demo.sh" "$build" "$scenario"
rc=$?
[ -s "$log" ] || { echo "valgrind-demo: no valgrind report ($log)"; exit 1; }
errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$log" | tail -1)
def=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$log" | tail -1 | tr -d ,)
ind=$(sed -n 's/.*indirectly lost: \([0-9,]*\) bytes.*/\1/p' "$log" | tail -1 | tr -d ,)
grep -E "ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|All heap blocks" "$log" | sed 's/^==[0-9]*== */valgrind: /'
if [ "$rc" -ne 0 ]; then echo "valgrind-demo: FAIL (the demo failed, rc $rc)"; exit 1; fi
if [ "${errs:-x}" != 0 ] || [ "${def:-0}" != 0 ] || [ "${ind:-0}" != 0 ]; then
	echo "valgrind-demo: FAIL ($errs errors, $def bytes definitely and $ind indirectly lost; see $log)"
	exit 1
fi
echo "valgrind-demo: ok (0 errors, no leak)"
