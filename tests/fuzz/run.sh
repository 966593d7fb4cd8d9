#!/bin/bash
# Run the libFuzzer targets: tests/fuzz/run.sh BUILD long|check SECONDS [NAME...]
# Each target first runs every kept input of tests/fuzz/crashes/NAME once
# (regressions), then fuzzes for SECONDS on BUILD/fuzz/corpus/NAME, which
# starts from its seeds (tests/fuzz/seeds/NAME and the fixtures below) and
# keeps what it finds between runs. A crash found in a long run is written
# to tests/fuzz/crashes/NAME/ (commit it with the fix); in a check run to
# BUILD/fuzz/artifacts/NAME/. tests/fuzz/NAME.dict, when there is one, is
# the target's libFuzzer dictionary, and tests/fuzz/NAME.flags (one line)
# its own libFuzzer options. Prints one line per target with its
# executions; check mode appends "PASS n FAIL m" to BUILD/results.
set -u
build=$1 mode=$2 secs=$3; shift 3
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
targets=("$@")
p=0 f=0

# seeds NAME DIR: fill the corpus directory DIR of target NAME
seeds() {
	local name=$1 dir=$2 x
	mkdir -p "$dir"
	[ -d "tests/fuzz/seeds/$name" ] && cp -n tests/fuzz/seeds/"$name"/* "$dir"/ 2>/dev/null
	case $name in
	conf) cp -n systemd/nicstalld.conf.example "$dir"/ ;;
	rules)
		for x in rules/*.rules; do cp -n "$x" "$dir/$(basename "$x")"; done
		for x in tests/fixtures/facts/*.json; do
			[ -e "$dir/facts-$(basename "$x")" ] || { printf '%%\n'; cat "$x"; } > "$dir/facts-$(basename "$x")"
		done ;;
	ethtool) cp -n tests/fixtures/real/ethtool-* "$dir"/ ;;
	bundle)
		for x in tests/fixtures/bundles/*/; do
			local out
			out="$dir/fixture-$(basename "$x")"
			[ -e "$out" ] && continue
			(cd "$x" && first=1 && for g in $(find . -type f | sed 's|^\./||' | sort); do
				[ "$first" = 1 ] || printf '\n'; first=0
				printf '==> %s\n' "$g"; cat "$g"; done) > "$out"
		done ;;
	netlink)
		[ -e "$dir/rtnl-link-dump" ] || FUZZ_MKSEEDS="$dir" "$build/fuzz/fuzz_netlink" >/dev/null 2>&1
		for x in tests/fixtures/devlink/*/*.nlhex; do
			local out
			out="$dir/devlink-$(basename "$(dirname "$x")")-$(basename "$x" .nlhex)"
			[ -e "$out" ] || { printf '\005\000\000'; sed 's/#.*//' "$x" | tr -d ' \t\n' |
				perl -ne 'print pack("H*", $_)'; } > "$out"
		done ;;
	esac
}

# one NAME INDEX: run target NAME, its line and counts kept in OUT_DIR/INDEX
# (its failure, for make check's closing lines, in OUT_DIR/INDEX.fail)
one() {
	local name=$1 i=$2 bin corpus log art ok why kept dict flags rc execs
	bin=$build/fuzz/fuzz_$name
	corpus=$build/fuzz/corpus/$name
	log=$build/fuzz/$name.log
	if [ "$mode" = long ]; then art=tests/fuzz/crashes/$name/; else art=$build/fuzz/artifacts/$name/; fi
	mkdir -p "$art"
	seeds "$name" "$corpus"
	ok=1 why=""
	kept=(tests/fuzz/crashes/"$name"/*)
	if [ -e "${kept[0]}" ]; then
		if ! "$bin" -rss_limit_mb=4096 -timeout=20 "${kept[@]}" > "$log.regress" 2>&1; then
			ok=0 why="a kept input fails again (see $log.regress)"
		fi
	fi
	dict=()
	[ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
	[ -f "tests/fuzz/$name.flags" ] && read -r -a flags < "tests/fuzz/$name.flags" && dict+=("${flags[@]}")
	"$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
		"${dict[@]}" -artifact_prefix="$art" "$corpus" > "$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	if [ ! -x "$bin" ]; then
		ok=0 why="no program $bin (not built)"
	elif [ "$rc" -ne 0 ]; then
		ok=0 why="crashed: $(grep -m1 -E '^==[0-9]+==ERROR|^SUMMARY|runtime error' "$log"); input in $art"
	fi
	if [ "$ok" = 1 ]; then
		echo "fuzz_$name: ok, ${execs:-0} executions in ${secs}s" > "$out_dir/$i.tmp"
		echo "1 0" > "$out_dir/$i.sum"
	else
		echo "fuzz_$name: FAIL after ${execs:-?} executions: $why" > "$out_dir/$i.tmp"
		echo "0 1" > "$out_dir/$i.sum"
		echo "fuzz fuzz_$name: $why" > "$out_dir/$i.fail"
	fi
	mv "$out_dir/$i.tmp" "$out_dir/$i"
}

# NICSTALL_FUZZ_JOBS targets at a time (default: two a core): each has
# its own corpus, log and artifacts, so they share nothing, and each
# fuzzes for SECONDS of the clock, so more of them at once take no
# longer, each running fewer inputs. Their lines are printed in the
# order given.
jobs=${NICSTALL_FUZZ_JOBS:-$(( $(nproc) * 2 ))}
case $jobs in
[1-9] | [1-9][0-9]) ;;
*) echo "run.sh: NICSTALL_FUZZ_JOBS='$jobs' is not a number from 1 to 99" >&2; exit 2 ;;
esac
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT
i=0
for name in "${targets[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	one "$name" "$i" &
	i=$((i + 1))
done
wait
for ((i = 0; i < ${#targets[@]}; i++)); do
	if [ ! -f "$out_dir/$i" ]; then
		echo "fuzz_${targets[i]}: FAIL: no result (its runner died)"; f=$((f + 1))
		[ "$mode" = check ] && echo "fuzz fuzz_${targets[i]}: no result (its runner died)" >> "$build/failures"
		continue
	fi
	cat "$out_dir/$i"
	read -r a b < "$out_dir/$i.sum"
	p=$((p + a)); f=$((f + b))
	[ "$mode" = check ] && [ -f "$out_dir/$i.fail" ] && cat "$out_dir/$i.fail" >> "$build/failures"
done
[ "$mode" = check ] && echo "PASS $p FAIL $f" >> "$build/results"
echo "fuzz: $p passed, $f failed"
[ "$f" -eq 0 ]
