#!/bin/bash
# A packager's install: make install DESTDIR=... PREFIX=/usr into a fresh
# tree (its own build directory, so the tests' build is untouched), the tree
# checked file by file, the unit verified (systemd-analyze verify, with the
# installed pages for its Documentation=) and its sandbox scored
# (systemd-analyze security --offline, at most 4.0), sysusers, tmpfiles and
# the catalog applied to a scratch root, an engine compiled against the
# installed header through pkg-config, then make uninstall leaves nothing.
. "$(dirname "$0")/lib.sh"
t_init
D=$T_DIR/root
# built with a user's CFLAGS=-O0 (a debug build: the tests' own build is
# -O2 -g, and -O0 compiles in half its time; gcc warns differently at each
# level and the build has -Werror, so -O0 must build too)
mk() { make -s -C "$ROOT" -j2 BUILD="$T_DIR/build" PREFIX=/usr DESTDIR="$D" CFLAGS=-O0 "$@"; }
mk install > "$T_DIR/install.log" 2>&1
rc=$?
check "make install DESTDIR PREFIX=/usr succeeds" test "$rc" -eq 0 || cat "$T_DIR/install.log"
UNITDIR=$(pkg-config --variable=systemdsystemunitdir systemd)
( cd "$D" && find . \( -type f -o -type l \) | sed 's|^\./|/|' | sort ) > "$T_DIR/tree"
{
	echo /etc/nicstalld/nicstalld.conf
	echo "$UNITDIR/nicstalld.service"
	echo /usr/bin/nicstallctl
	echo /usr/include/nicstall/flowtab.h
	echo /usr/lib/systemd/catalog/nicstalld.catalog
	echo /usr/lib/sysusers.d/nicstalld.conf
	echo /usr/lib/tmpfiles.d/nicstalld.conf
	echo /usr/sbin/nicstalld
	for f in BSD-2-Clause.txt GPL-2.0-only.txt LICENSE README.md engine-readers.conf nicstalld.conf.example; do
		echo "/usr/share/doc/nicstalld/$f"; done
	for p in "$ROOT"/man/*.[1-8]; do n=$(basename "$p"); echo "/usr/share/man/man${n##*.}/$n"; done
	for r in "$ROOT"/rules/*.rules; do echo "/usr/share/nicstalld/rules/$(basename "$r")"; done
	echo /usr/share/bash-completion/completions/nicstallctl
	echo /usr/share/nicstalld/fleet/nicstall-upload
	echo /usr/share/nicstalld/fleet/nicstalld-alerts.yml
	echo /usr/share/pkgconfig/nicstall-flowtab.pc
} | sort > "$T_DIR/expected"
diff "$T_DIR/expected" "$T_DIR/tree" > "$T_DIR/tree.diff"
check "the installed tree is exactly the expected files" test ! -s "$T_DIR/tree.diff" || cat "$T_DIR/tree.diff"
check "programs (and the upload hook) are 0755, the rest 0644" bash -c "cd '$D' && [ \"\$(stat -c %a usr/sbin/nicstalld usr/bin/nicstallctl usr/share/nicstalld/fleet/nicstall-upload | sort -u)\" = 755 ] &&
	[ -z \"\$(find . -type f ! -name nicstalld ! -name nicstallctl ! -name nicstall-upload ! -perm 0644)\" ]"
check "the configuration directory for local rules exists" test -d "$D/etc/nicstalld/rules.d"
# paths of this build, not of /usr/local
check "no /usr/local left in the installed pages, unit and pkg-config file" \
	bash -c "! grep -rl /usr/local '$D/usr/share/man' '$D$UNITDIR' '$D/usr/share/pkgconfig'"
check "the daemon reads rules from /usr/share/nicstalld/rules" bash -c "strings '$D/usr/sbin/nicstalld' | grep -qx /usr/share/nicstalld/rules"
check "nicstalld.conf(5) names the installed rules path" grep -q '^\.IR /usr/share/nicstalld/rules )' "$D/usr/share/man/man5/nicstalld.conf.5"
check "the unit runs /usr/sbin/nicstalld and reloads through /usr/bin/nicstallctl" \
	bash -c "grep -qx 'ExecStart=/usr/sbin/nicstalld' '$D$UNITDIR/nicstalld.service' && grep -qx 'ExecReload=/usr/bin/nicstallctl reload' '$D$UNITDIR/nicstalld.service'"
for p in "$D"/usr/share/man/man*/*; do
	out=$(mandoc -Tlint "$p" 2>&1)
	check "installed $(basename "$p") is mandoc -Tlint clean${out:+: $out}" test -z "$out"
done
check "the example configuration passes --check-config" "$D/usr/sbin/nicstalld" --check-config -c "$D/etc/nicstalld/nicstalld.conf"
check "nicstallctl --version" bash -c "'$D/usr/bin/nicstallctl' --version | grep -q '^nicstallctl '"

# The packages ship what make install installs (make deb and make rpm
# build from it): every file of the tree is in exactly one of the Debian
# lists (debian/nicstalld.install, nicstalld-dev.install, not-installed) and
# in nicstalld.spec's %files (or removed by its %install), and no entry of
# them names a file the tree lacks (directories aside). The spec's macros as EL9 expands them,
# but for %{_unitdir}: the spec passes UNITDIR=%{_unitdir} to make install.
declare -A debpat=() rpmpat=()
for l in nicstalld nicstalld-dev not-installed; do
	f=$ROOT/debian/$l.install
	[ $l = not-installed ] && f=$ROOT/debian/not-installed
	while read -r p _; do
		[ -n "$p" ] && [ "${p#\#}" = "$p" ] && debpat["/$p"]=$l
	done < "$f"
done
spec_path() {
	sed -e 's|%{_sbindir}|/usr/sbin|g; s|%{_bindir}|/usr/bin|g; s|%{_mandir}|/usr/share/man|g' \
	    -e 's|%{_docdir}|/usr/share/doc|g; s|%{_datadir}|/usr/share|g; s|%{_includedir}|/usr/include|g' \
	    -e 's|%{_sysconfdir}|/etc|g; s|%{_sysusersdir}|/usr/lib/sysusers.d|g; s|%{_tmpfilesdir}|/usr/lib/tmpfiles.d|g' \
	    -e "s|%{_unitdir}|$UNITDIR|g; s|%{_journalcatalogdir}|/usr/lib/systemd/catalog|g; s|%{name}|nicstalld|g" \
	    -e 's|%{buildroot}||g'
}
while read -r p; do rpmpat["$p"]=files; done < <(awk '/^%files/ { f = 1; next } /^%[a-z]+( |$)/ && !/^%(doc|license|dir|config|attr|ghost)/ { f = 0 }
	f && NF && $1 != "%dir" { sub(/^(%(doc|license|ghost)|%config\([a-z]*\)|%attr\([^)]*\)) +/, ""); print $1 }' "$ROOT/nicstalld.spec" | spec_path | grep '^/')
while read -r p; do rpmpat["$p"]=removed; done < <(sed -n 's/^rm \(%{buildroot}.*\)/\1/p' "$ROOT/nicstalld.spec" | spec_path | tr ' ' '\n' | grep '^/')
missing="" twice="" unused=""
declare -A used=()
while read -r f; do
	n=0 m=0
	for p in "${!debpat[@]}"; do [[ $f == $p ]] && n=$((n + 1)) && used["deb $p"]=1; done
	for p in "${!rpmpat[@]}"; do [[ $f == $p ]] && m=$((m + 1)) && used["rpm $p"]=1; done
	[ $n -eq 0 ] && missing="$missing debian:$f"
	[ $n -gt 1 ] && twice="$twice $f"
	[ $m -eq 0 ] && missing="$missing spec:$f"
done < "$T_DIR/tree"
for p in "${!debpat[@]}"; do [ -n "${used["deb $p"]:-}" ] || unused="$unused debian:$p"; done
for p in "${!rpmpat[@]}"; do [ -n "${used["rpm $p"]:-}" ] || unused="$unused spec:$p"; done
check "every installed file is in the Debian lists and the spec (${#debpat[@]} and ${#rpmpat[@]} entries)${missing:+; not in:$missing}" \
	test -z "$missing" -a "${#debpat[@]}" -gt 10 -a "${#rpmpat[@]}" -gt 10
check "in one Debian package only${twice:+: $twice}" test -z "$twice"
check "and no entry names a file make install does not install${unused:+:$unused}" test -z "$unused"

# systemd-analyze verify: a root holding the installed tree and the host's
# own units (the targets it refers to); man: links resolved in its pages
V=$T_DIR/vroot
cp -a "$D" "$V" && mkdir -p "$V$UNITDIR" && cp -rn "$UNITDIR"/. "$V$UNITDIR"/ 2>/dev/null
MANPATH=$D/usr/share/man systemd-analyze verify --root="$V" "$UNITDIR/nicstalld.service" > "$T_DIR/verify.out" 2>&1
rc=$?
cat "$T_DIR/verify.out"
check "systemd-analyze verify passes, silent" test "$rc" -eq 0 -a ! -s "$T_DIR/verify.out"
systemd-analyze security --offline=true "$D$UNITDIR/nicstalld.service" > "$T_DIR/sec.out" 2>&1
score=$(sed -n 's/.*Overall exposure level for nicstalld.service: \([0-9.]*\).*/\1/p' "$T_DIR/sec.out")
cmp=""
for u in chrony.service systemd-networkd.service; do
	[ -f "$UNITDIR/$u" ] && cmp="$cmp, $u $(systemd-analyze security --offline=true "$UNITDIR/$u" 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')"
done
# "note: " lines are shown by run.sh in make check's output
echo "note: systemd-analyze security --offline=true: nicstalld.service ${score:-?}${cmp:+ (same run$cmp)}"
check "security exposure of the unit is at most 4.0 (${score:-none})" awk -v s="${score:-99}" 'BEGIN { exit !(s <= 4.0) }'
# with the drop-in for the readers of unmodified engines (track = vma,
# xlio, onload), installed where the admin puts it
mkdir -p "$V/etc/systemd/system/nicstalld.service.d"
cp "$D/usr/share/doc/nicstalld/engine-readers.conf" "$V/etc/systemd/system/nicstalld.service.d/"
MANPATH=$D/usr/share/man systemd-analyze verify --root="$V" "$UNITDIR/nicstalld.service" > "$T_DIR/verify2.out" 2>&1
rc=$?
cat "$T_DIR/verify2.out"
check "systemd-analyze verify passes with engine-readers.conf, silent" test "$rc" -eq 0 -a ! -s "$T_DIR/verify2.out"
score2=$(systemd-analyze security --offline=true --root="$V" nicstalld.service 2>&1 | sed -n 's/.*Overall exposure level for nicstalld.service: \([0-9.]*\).*/\1/p')
echo "note: with engine-readers.conf (track = vma, xlio, onload): ${score2:-?}"
check "and the drop-in is applied: the score moves (${score:-?} -> ${score2:-?}), at most 4.0" \
	awk -v a="${score:-0}" -v b="${score2:-99}" 'BEGIN { exit !(b > a && b <= 4.0) }'

# sysusers, tmpfiles and the catalog, applied to a scratch root
S=$T_DIR/sysroot
mkdir -p "$S/etc" "$S/run" "$S/var/lib" "$S/usr/lib/systemd/catalog"
: > "$S/etc/passwd"; : > "$S/etc/group"
systemd-sysusers --root="$S" "$D/usr/lib/sysusers.d/nicstalld.conf" 2> "$T_DIR/sysusers.err"
check "sysusers creates group nicstall" grep -q '^nicstall:' "$S/etc/group"
systemd-tmpfiles --root="$S" --create "$D/usr/lib/tmpfiles.d/nicstalld.conf" 2> "$T_DIR/tmpfiles.err"
cat "$T_DIR/sysusers.err" "$T_DIR/tmpfiles.err"
gid=$(awk -F: '$1 == "nicstall" { print $3 }' "$S/etc/group")
check "tmpfiles: /run/nicstalld/flows 3775 root:nicstall (engines of the group write, sticky)" \
	test "$(stat -c '%a %u %g' "$S/run/nicstalld/flows")" = "3775 0 $gid"
check "tmpfiles: /var/lib/nicstalld/bundles 2750 root:nicstall" \
	test "$(stat -c '%a %u %g' "$S/var/lib/nicstalld/bundles")" = "2750 0 $gid"
check "tmpfiles: /var/lib/nicstalld is searchable by the group" test "$(stat -c %a "$S/var/lib/nicstalld")" = 755
cp "$D/usr/lib/systemd/catalog/nicstalld.catalog" "$S/usr/lib/systemd/catalog/"
journalctl --root="$S" --update-catalog 2> "$T_DIR/catalog.err"
check "journalctl --update-catalog takes the catalog without a complaint" test ! -s "$T_DIR/catalog.err" || cat "$T_DIR/catalog.err"
journalctl --root="$S" --list-catalog > "$T_DIR/catalog.list" 2>&1
n=$(grep -c 'nicstalld\|Port\|Flow\|Incident\|Reprogram\|Evidence\|bundle_hook\|Configuration' "$T_DIR/catalog.list")
ids=$(grep -oE '"[0-9a-f]{32}"' "$ROOT/lib/log.c" | tr -d '"')
missing=""
for id in $ids; do grep -q "^$id " "$T_DIR/catalog.list" || missing="$missing $id"; done
check "every MESSAGE_ID of lib/log.c is in the compiled catalog ($(echo $ids | wc -w) ids)" test -z "$missing" -a "$(echo $ids | wc -w)" -ge 15

# an engine built against the installed header through pkg-config (a copy
# of the example engine, away from the source tree's include/)
mkdir -p "$T_DIR/engine" && cp "$ROOT"/examples/nsengine*.[ch] "$T_DIR/engine/"
pc() { PKG_CONFIG_PATH=$D/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 pkg-config "$@"; }
check "pkg-config knows nicstall-flowtab (version $(pc --modversion nicstall-flowtab))" pc --exists nicstall-flowtab
check "its cflags point at the installed header" test "$(pc --cflags nicstall-flowtab | tr -d ' ')" = "-I$D/usr/include"
( cd "$T_DIR/engine" && cc -std=gnu17 -D_GNU_SOURCE -Wall -Wextra -Werror $(pc --cflags nicstall-flowtab) \
	-pthread -o nsengine nsengine.c nsengine_io.c ) > "$T_DIR/cc.log" 2>&1
check "an engine compiles against the installed header" test -x "$T_DIR/engine/nsengine" || cat "$T_DIR/cc.log"
check "and without pkg-config it does not (the header is not found elsewhere)" \
	bash -c "cd '$T_DIR/engine' && ! cc -std=gnu17 -D_GNU_SOURCE -c -o /dev/null nsengine.c 2>/dev/null"

# the installed bash completion (with the running daemon's ports: make
# check-package); bundle names from the state directory -S names
comp() {
	PATH=$D/usr/bin:$PATH bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_nicstallctl; echo "${COMPREPLY[*]}"' bash "$D/usr/share/bash-completion/completions/nicstallctl" "$@"
}
check "the bash completion completes commands ($(comp nicstallctl re))" test "$(comp nicstallctl re)" = "recover reload report"
check "and bundle names, from the state directory -S names ($(comp nicstallctl -S "$ROOT/tests/fixtures" verify 2026))" \
	test "$(comp nicstallctl -S "$ROOT/tests/fixtures" verify 2026)" = 20261201T093030Z-vm-server-port-drop

# uninstall: nothing of ours left, an edited configuration kept
mk uninstall > "$T_DIR/uninstall.log" 2>&1
left=$(cd "$D" && find . \( -type f -o -type l \) | sort)
check "make uninstall leaves no file${left:+ (left: $left)}" test -z "$left"
ours=$(cd "$D" && find . -type d \( -name 'nicstall*' \) | sort)
check "nor any directory of nicstalld${ours:+ ($ours)}" test -z "$ours"
mk install > /dev/null 2>&1
echo "# edited" >> "$D/etc/nicstalld/nicstalld.conf"
mk uninstall > "$T_DIR/uninstall.log" 2>&1
check "an edited configuration survives make uninstall, and it says so" \
	bash -c "[ -f '$D/etc/nicstalld/nicstalld.conf' ] && grep -q 'kept $D/etc/nicstalld/nicstalld.conf' '$T_DIR/uninstall.log'"
left=$(cd "$D" && find . \( -type f -o -type l \) | sort)
check "and only it" test "$left" = "./etc/nicstalld/nicstalld.conf"
