#!/bin/bash
# make rpm on Debian (tools/rpm-macros.el9): strip the ELF programs of the
# build root as EL9's find-debuginfo leaves them (Debian's rpm has none).
set -e
[ -n "$RPM_BUILD_ROOT" ] && [ "$RPM_BUILD_ROOT" != / ] || exit 0
find "$RPM_BUILD_ROOT" -type f -perm -u+x -print0 |
	while IFS= read -r -d '' f; do
		if file -b "$f" | grep -q '^ELF.*not stripped'; then
			strip --strip-unneeded "$f"
		fi
	done
