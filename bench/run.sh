#!/bin/bash
# make bench: what watching costs, measured against the ways people do it
# today, and brought to goals (bench/README.md has the method).
#
#   bench/run.sh BUILD [--smoke] [--only SECTION[,SECTION]] [--no-readme]
#
# As root. Sets up its own namespaces (removed on exit, also on failure),
# runs each benchmark several times with the compared variants interleaved,
# prints one table of medians and min-max with ratios, each row with its
# goal and whether it is met, and writes the same as JSON under
# BUILD/bench-results/ (--smoke: BUILD/bench-smoke/). A full run (not
# --smoke, --only or --no-readme) also becomes bench/results/latest.json
# and the table in bench/README.md.
# --smoke: tiny counts, every section, seconds.
set -u
BUILD=${1:-build}
shift || true
SMOKE=0 README=1 ONLY=""
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) SMOKE=1 README=0 ;;
	--no-readme) README=0 ;;
	--only) ONLY=$2; README=0; shift ;;   # a part is not the latest run
	*) echo "bench: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
BUILD=$(cd "$BUILD" && pwd) || { echo "bench: no build directory" >&2; exit 1; }
if [ "$(id -u)" != 0 ]; then
	echo "bench: needs root (namespaces, tc, BPF)" >&2
	exit 1
fi
. "$ROOT/bench/lib.sh"

make --no-print-directory -s -C "$ROOT" BUILD="$BUILD" bench-bins all || exit 1
tools/deps.sh || exit 1

bench_init
echo "bench: $(bench_machine_line)"
echo "bench: load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
for s in sweep idle rss perturb detect scale bundle metrics threads app; do
	want "$s" || continue
	echo "== $s"
	"section_$s"
done
bench_report
