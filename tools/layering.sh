#!/bin/sh
# Includes may only point down the layers (README "Layout"), folder by
# folder (a subsystem's folder is a layer of its own):
#   lib                -> lib
#   collectors/counters, collectors/flows, collectors/threads
#                      -> lib and their own folder (never one another)
#   probes -> lib, probes      rules -> lib, rules
#   bundle -> lib, rules, bundle
#   daemon/detect      -> every layer above, daemon, daemon/detect
#   daemon/peers       -> every layer above, daemon, daemon/peers
#   daemon/forensic    -> every layer above, daemon, daemon/detect,
#                         daemon/peers, daemon/forensic
#   daemon             -> everything above but client (its core, the
#                         ports and the configuration, is what the three
#                         subsystems share; its top ties them together)
#   client             -> lib, rules, bundle, client
#   examples           -> the public header <nicstall/...> only
# A project header is included with its folder ("lib/loop.h"); a bare name
# must be a file of the including file's own folder (or a generated BPF
# skeleton, or the generated syscall_names.h); "../" is never allowed.
# Every source file is named in its folder's README. Prints each offence
# as file:line and exits 1 when there is any.
cd "$(dirname "$0")/.." || exit 2
BELOW="lib collectors/counters collectors/flows collectors/threads probes rules bundle"
UNITS="$BELOW daemon daemon/detect daemon/peers daemon/forensic client"
allowed() {
	case $1 in
	lib) echo "lib" ;;
	collectors/*) echo "lib $1" ;;
	probes) echo "lib probes" ;;
	rules) echo "lib rules" ;;
	bundle) echo "lib rules bundle" ;;
	daemon/detect|daemon/peers) echo "$BELOW daemon $1" ;;
	daemon/forensic) echo "$BELOW daemon daemon/detect daemon/peers daemon/forensic" ;;
	daemon) echo "$BELOW daemon daemon/detect daemon/peers daemon/forensic" ;;
	client) echo "lib rules bundle client" ;;
	examples) echo "" ;;
	esac
}
bad=0

for layer in $UNITS examples; do
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
				dir=${inc%/*}
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
for u in $UNITS; do ls "$u"; done 2>/dev/null | grep '\.c$' | sort | uniq -d |
	sed 's/^/two library sources are named /' >> /tmp/layering.$$
# every source file is in its folder's README (by its name, its header's
# or its stem), so a newcomer's map of the tree cannot leave one out
for layer in $UNITS collectors; do
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
