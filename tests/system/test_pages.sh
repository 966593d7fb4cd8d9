#!/bin/bash
# Man pages: every page is mandoc -Tlint clean; every option --help lists
# (nicstalld, nicstallctl) and every command of nicstallctl is in its page;
# every key the configuration parser accepts is in nicstalld.conf(5); every
# page that SEE ALSO names exists; FILES of nicstalld(8) names every
# directory the daemon uses.
. "$(dirname "$0")/lib.sh"
t_init
for p in "$ROOT"/man/*.[1-8]; do
	out=$(mandoc -Tlint "$p" 2>&1)
	check "$(basename "$p"): mandoc -Tlint is clean${out:+: $out}" test -z "$out"
done
# text renderings, as a reader sees them
render() { mandoc -Tascii "$ROOT/man/$1" | col -bx; }
for p in nicstalld.8 nicstallctl.1 nicstalld.conf.5; do render "$p" > "$T_DIR/$p.txt"; done
# options of a --help: every --long and -s at the start of an option line
opts_of() { "$1" --help | grep -E '^ +-' | grep -oE '(^| )--?[A-Za-z][A-Za-z-]*' | tr -d ' ' | sort -u; }
for prog in nicstalld:nicstalld.8 nicstallctl:nicstallctl.1; do
	bin=${prog%%:*} page=${prog##*:}
	opts=$(opts_of "$BUILD/$bin")
	check "$bin --help lists options ($(echo $opts | wc -w))" test "$(echo $opts | wc -w)" -ge 5
	missing=""
	for o in $opts; do grep -qE -- "(^|[][ ,(])$o([][ ,=)]|$)" "$T_DIR/$page.txt" || missing="$missing $o"; done
	check "every option of $bin --help is in $page${missing:+ (missing:$missing)}" test -z "$missing"
done
# nicstallctl's commands
cmds=$("$NICSTALLCTL" --help | sed -n '/^commands/,/^options/p' | grep -E '^  [a-z]' | awk '{print $1}' | sort -u)
check "nicstallctl --help lists commands ($(echo $cmds | wc -w))" test "$(echo $cmds | wc -w)" -ge 12
missing=""
for c in $cmds; do grep -qE "^ {7}$c( |$)" "$T_DIR/nicstallctl.1.txt" || missing="$missing $c"; done
check "every command of nicstallctl is described in nicstallctl(1)${missing:+ (missing:$missing)}" test -z "$missing"
# the parser's keys, from the parser itself (conf.c, and conf_keys.c for
# the keys of [daemon] and [port])
keys=$(cat "$ROOT/daemon/conf.c" "$ROOT/daemon/conf_keys.c" | grep -oE 'strcmp\(key, "[a-z_]+"\)' | sed 's/.*"\(.*\)".*/\1/' | sort -u)
check "the parser accepts keys ($(echo $keys | wc -w))" test "$(echo $keys | wc -w)" -ge 40
missing=""
for k in $keys; do grep -qE "^ {7}$k = " "$T_DIR/nicstalld.conf.5.txt" || missing="$missing $k"; done
check "every key the parser accepts is in nicstalld.conf(5)${missing:+ (missing:$missing)}" test -z "$missing"
# SEE ALSO: our own pages that are named exist
missing=""
for p in "$ROOT"/man/*.[1-8]; do
	for ref in $(sed -n '/^\.SH SEE ALSO/,$p' "$p" | grep -oE '^\.BR (nicstall[a-z.\\-]*) \([0-9]\)' | sed -E 's/^\.BR ([^ ]*) \(([0-9])\)/\1.\2/; s/\\-/-/g'); do
		[ -f "$ROOT/man/$ref" ] || missing="$missing $(basename "$p"):$ref"
	done
done
check "every nicstall page named in SEE ALSO exists${missing:+ (missing:$missing)}" test -z "$missing"
for ref in nicstall-bundle.5 nicstall.rules.5 nicstall-flowtab.7 nicstallctl.1 nicstalld.conf.5; do
	check "nicstalld(8) SEE ALSO names ${ref%.*}(${ref##*.})" bash -c "sed -n '/^.SH SEE ALSO/,\$p' '$ROOT/man/nicstalld.8' | sed 's/\\\\-/-/g' | grep -q '^.BR ${ref%.*} (${ref##*.})'"
done
# FILES of nicstalld(8): the directories of the daemon's defaults
sed -n '/^FILES/,/^SEE ALSO/p' "$T_DIR/nicstalld.8.txt" > "$T_DIR/files.txt"
for f in /etc/nicstalld/nicstalld.conf /run/nicstalld/nicstalld.sock /run/nicstalld/flows/ \
	 /var/lib/nicstalld/bundles/ /usr/local/share/nicstalld/rules/ /etc/nicstalld/rules.d/ \
	 /usr/lib/systemd/catalog/nicstalld.catalog nicstalld.service; do
	check "nicstalld(8) FILES names $f" grep -q -- "$f" "$T_DIR/files.txt"
done
