#!/bin/sh
# Sum "PASS n FAIL m" lines written by the test runners into one closing line.
p=0; f=0; missing=
for r in "$@"; do
	[ -f "$r" ] || { f=$((f+1)); missing="$missing $r"; continue; }
	while read -r _ a _ b; do p=$((p+a)); f=$((f+b)); done < "$r"
done
# each runner also names what failed in a "failures" file beside its
# results: printed here, so the closing lines of a long log say which
seen=
for r in "$@"; do
	d=${r%/*}
	case " $seen " in *" $d "*) continue ;; esac
	seen="$seen $d"
	[ -f "$d/failures" ] && sed 's/^/check: failed: /' "$d/failures"
done
for r in $missing; do echo "check: failed: $r missing (a stage did not run)"; done
echo "check: $p passed, $f failed"
[ "$f" -eq 0 ] && [ "$p" -gt 0 ]
