#!/bin/sh
# No circle of calls between source files (issue 33): from the objects of
# a build (BUILD, default "build"), an edge a -> b for every function or
# object of b's that a uses; tsort(1) names each loop. The rules
# interpreter's evaluator (eval*.c, signal.c: an expression evaluates its
# terms, a signal's definition is an expression) is the one circle allowed.
# Prints each loop and exits 1 when there is any; 2 when the build is not
# there.
cd "$(dirname "$0")/.." || exit 2
B=${1:-build}
objs=$(for d in lib collectors probes rules bundle daemon client; do ls "$B/$d"/*.o "$B/$d"/*/*.o 2>/dev/null; done)
[ -n "$objs" ] || { echo "callcircles: no objects under $B (build first)"; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
for o in $objs; do
	n=${o#"$B"/}; n=${n%.o}
	[ -f "$n.c" ] || continue       # an object whose source is gone
	nm "$o" | awk -v n="$n" '$1 == "U" { print n, "U", $2 } NF == 3 && $2 ~ /^[TDBR]$/ { print n, "D", $3 }'
done > "$tmp/syms"
awk '$2 == "D" { def[$3] = $1 } $2 == "U" { use[NR] = $1 " " $3 }
     END { for (i in use) { split(use[i], u, " "); if ((u[2] in def) && def[u[2]] != u[1]) print u[1], def[u[2]] } }' \
	"$tmp/syms" | sort -u |
	awk '!($1 ~ /^rules\/(eval|eval_facts|eval_peers|signal)$/ && $2 ~ /^rules\/(eval|eval_facts|eval_peers|signal)$/)' \
	> "$tmp/edges"
tsort "$tmp/edges" > /dev/null 2> "$tmp/loops"
if [ -s "$tmp/loops" ]; then
	sed -e 's/^tsort: .*: input contains a loop:$/callcircles: a loop of calls:/' \
	    -e 's/^tsort: /callcircles:   /' "$tmp/loops"
	echo "callcircles: calls go round between files (move what both use into a file both call)"
	exit 1
fi
echo "callcircles: no circle of calls between files ($(wc -l < "$tmp/edges") edges)"
