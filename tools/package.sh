#!/bin/bash
# make deb / make rpm: build the packages out of the tree. The source (what
# `git ls-files` names, with this checkout's edits and new files not yet
# ignored: what a clean clone would hold) is copied under OUT and built there,
# so nothing of a package build is left in the tree.
#   tools/package.sh deb OUT [VERSION]   dpkg-buildpackage -us -uc -b, lintian
#   tools/package.sh rpm OUT [VERSION]   rpmbuild -bb nicstalld.spec, rpmlint
# VERSION (optional) replaces the packaged version in the copy only (make
# check-package upgrades to such a rebuild). Exit status 1 when the build
# fails or lintian/rpmlint say anything.
set -e -o pipefail
kind=$1 out=$2 version=$3
[ -n "$kind" ] && [ -n "$out" ] || { echo "usage: $0 deb|rpm OUT [VERSION]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out" && out=$(cd "$out" && pwd)
jobs=$(nproc 2>/dev/null || echo 2)

# copy the source tree to $1
srccopy() {
	mkdir -p "$1"
	if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$root" ls-files -z --cached --others --exclude-standard |
			(cd "$root" && xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
			tar -C "$root" --null -T - -cf - | tar -C "$1" -xf -
	else
		tar -C "$root" --exclude=./build --exclude=./build-asan -cf - . | tar -C "$1" -xf -
	fi
}

case $kind in
deb)
	d=$out/deb
	rm -rf "$d" && mkdir -p "$d/src"
	srccopy "$d/src/nicstalld"
	if [ -n "$version" ]; then
		{ printf 'nicstalld (%s) unstable; urgency=medium\n\n  * Rebuilt as %s (make check-package: the upgrade).\n\n -- %s  %s\n\n' \
			"$version" "$version" "nicstalld developers <dev@nicstalld.invalid>" "$(date -R)"
		  cat "$d/src/nicstalld/debian/changelog"; } > "$d/changelog.new"
		mv "$d/changelog.new" "$d/src/nicstalld/debian/changelog"
	fi
	echo "deb: building in $d/src/nicstalld (log: $d/build.log)"
	if ! (cd "$d/src/nicstalld" && DEB_BUILD_OPTIONS="parallel=$jobs ${DEB_BUILD_OPTIONS:-}" \
		dpkg-buildpackage -us -uc -b) > "$d/build.log" 2>&1; then
		tail -40 "$d/build.log"; echo "deb: dpkg-buildpackage failed (log: $d/build.log)" >&2; exit 1
	fi
	mv "$d"/src/*.deb "$d"/src/*.changes "$d"/src/*.buildinfo "$d/"
	rm -rf "$d/src"
	ls "$d"/*.deb
	# as root lintian says that it runs as root: not a finding, left out
	lintian --fail-on error,warning "$d"/*.changes > "$d/lintian.raw" 2>&1 && rc=0 || rc=$?
	grep -vx 'running with root privileges is not recommended!' "$d/lintian.raw" > "$d/lintian.log" || true
	rm -f "$d/lintian.raw"
	cat "$d/lintian.log"
	[ "$rc" -eq 0 ] && [ ! -s "$d/lintian.log" ] || { echo "deb: lintian is not clean" >&2; exit 1; }
	echo "deb: lintian clean"
	;;
rpm)
	t=$out/rpm
	rm -rf "$t" && mkdir -p "$t/SOURCES" "$t/SPECS"
	v=$(sed -n 's/^Version: *//p' "$root/nicstalld.spec")
	srccopy "$t/nicstalld-$v"
	spec=$t/SPECS/nicstalld.spec
	cp "$root/nicstalld.spec" "$spec"
	[ -z "$version" ] || sed -i "s/^Release: .*/Release:        $version%{?dist}/" "$spec"
	tar -C "$t" -czf "$t/SOURCES/nicstalld-$v.tar.gz" "nicstalld-$v"
	rm -rf "$t/nicstalld-$v"
	cp "$root/systemd/nicstalld.sysusers" "$root/systemd/nicstalld.tmpfiles" "$t/SOURCES/"
	load=()
	[ "$(rpm --eval '%{?_unitdir}')" ] ||
		load=(--load "$root/tools/rpm-macros.el9" --define "_nicstall_tools $root/tools")
	echo "rpm: building in $t (log: $t/build.log)"
	# --nodeps: BuildRequires name EL9's packages, which Debian's rpm database
	# does not hold; bash: EL9's /bin/sh (Debian's dash cannot run rpm's
	# brp-compress, which gzips the pages)
	if ! rpmbuild "${load[@]}" --define "_topdir $t" --define "_smp_mflags -j$jobs" --nodeps \
		--define "_buildshell /bin/bash" \
		-bb "$spec" > "$t/build.log" 2>&1; then
		tail -40 "$t/build.log"; echo "rpm: rpmbuild failed (log: $t/build.log)" >&2; exit 1
	fi
	rm -rf "$t/BUILD" "$t/BUILDROOT"
	ls "$t"/RPMS/*/*.rpm
	if command -v rpmlint >/dev/null; then
		rpmlint -c "$root/tools/rpmlint-el9.toml" "$spec" "$t"/RPMS/*/*.rpm > "$t/rpmlint.log" 2>&1 && rc=0 || rc=$?
		cat "$t/rpmlint.log"
		[ "$rc" -eq 0 ] && grep -q ' 0 errors, 0 warnings' "$t/rpmlint.log" ||
			{ echo "rpm: rpmlint is not clean" >&2; exit 1; }
		echo "rpm: rpmlint clean"
	fi
	;;
*) echo "usage: $0 deb|rpm OUT [VERSION]" >&2; exit 2 ;;
esac
