#!/bin/sh
# Includes may only point down the layers (README "Layout"):
#   lib        -> lib
#   collectors -> lib, collectors          probes -> lib, probes
#   rules      -> lib, rules               bundle -> lib, rules, bundle
#   daemon     -> everything above but client
#   client     -> lib, rules, bundle, client
#   examples   -> the public header <nicstall/...> only
# A project header is included with its folder ("lib/loop.h"); a bare name
# must be a file of the including file's own folder (or a generated BPF
# skeleton, or the generated syscall_names.h); "../" is never allowed.
# Every source file is named in its folder's README. Prints each offence
# as file:line and exits 1 when there is any.
cd "$(dirname "$0")/.." || exit 2
allowed() {
	case $1 in
	lib) echo "lib" ;;
	collectors) echo "lib collectors" ;;
	probes) echo "lib probes" ;;
	rules) echo "lib rules" ;;
	bundle) echo "lib rules bundle" ;;
	daemon) echo "lib collectors probes rules bundle daemon" ;;
	client) echo "lib rules bundle client" ;;
	examples) echo "" ;;
	esac
}
bad=0

for layer in lib collectors probes rules bundle daemon client examples; do
	ok=$(allowed "$layer")
	for f in "$layer"/*.c "$layer"/*.h; do
		[ -f "$f" ] || continue

		grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
		while IFS= read -r line; do
			n=${line%%:*}
			inc=$(printf '%s' "$line" | sed 's/.*include[[:space:]]*"\([^"]*\)".*/\1/')
			case $inc in
			../*|*/../*) echo "$f:$n: \"$inc\": relative include"; continue ;;
			*.skel.h|syscall_names.h) continue ;;   # generated in $(BUILD)
			*/*)
				dir=${inc%%/*}
				case " $ok " in
				*" $dir "*) [ -f "$inc" ] || echo "$f:$n: \"$inc\": no such file" ;;
				*) echo "$f:$n: \"$inc\": $layer may not include $dir (it is not below it)" ;;
				esac ;;
			*)
				[ -f "$layer/$inc" ] || echo "$f:$n: \"$inc\": not in $layer/; include it with its folder" ;;
			esac
		done
	done
done > /tmp/layering.$$
# ar keeps one member per file name: two library sources with one name
# would leave one of them out of libnicstall.a
ls lib collectors probes rules bundle daemon client 2>/dev/null | grep '\.c$' | sort | uniq -d |
	sed 's/^/two library sources are named /' >> /tmp/layering.$$
# every source file is in its folder's README (by its name, its header's
# or its stem), so a newcomer's map of the tree cannot leave one out
for layer in lib collectors probes rules bundle daemon client; do
	[ -f "$layer/README" ] || { echo "$layer/README: missing"; continue; }
	for f in "$layer"/*.c; do
		[ -f "$f" ] || continue
		b=$(basename "$f" .c)
		case $b in *.bpf) b=${b%.bpf} ;; esac
		grep -qE "(^|[^A-Za-z0-9_])$b(\.c|\.h|\.bpf\.c)?([^A-Za-z0-9_]|\$)" "$layer/README" ||
			echo "$f: not in $layer/README (say in a line what it holds)"
	done
done >> /tmp/layering.$$
if [ -s /tmp/layering.$$ ]; then
	cat /tmp/layering.$$
	bad=$(wc -l < /tmp/layering.$$)
fi
rm -f /tmp/layering.$$
if [ "$bad" -ne 0 ]; then
	echo "layering: $bad offence(s): includes that point up or sideways, sources no README names"
	exit 1
fi
echo "layering: every include points down"
