# A systemd booted in a container, for the tests that need one (source it
# after lib.sh and t_init): boot_unit.sh (make check-systemd) and
# boot_package.sh (make check-package). There is no systemd PID 1 on the
# machine: systemd-nspawn boots one with a private network, the host's root
# as the read-only lower layer of an overlay on tmpfs (what the container
# writes, dpkg's database among it, stays there) and its own copy of /etc.
# It runs the test's script /opt/nst/run.sh as nstest.service, whose output
# goes to /opt/out (log, err), and powers off.

# boot_etc TIMEOUT: the container's /etc in $E (the host's, with only
# nstest.target and nstest.service to start, no /etc/nicstalld), the
# script's directory $T_DIR/nst and the output directory $T_DIR/out;
# nstest.service may run TIMEOUT seconds
boot_etc() {
	command -v systemd-nspawn >/dev/null ||
		{ fail "systemd-nspawn is missing (tools/deps.sh installs systemd-container)"; exit 1; }
	E=$T_DIR/etc
	mkdir -p "$T_DIR/nst" "$T_DIR/out"
	cp -a /etc "$E" 2>/dev/null
	rm -rf "$E/systemd/system" "$E/nicstalld"
	mkdir -p "$E/systemd/system" "$E/sysusers.d" "$E/tmpfiles.d"
	cat > "$E/systemd/system/nstest.target" <<'U'
[Unit]
Description=nicstalld unit test
Requires=basic.target nstest.service
After=basic.target
AllowIsolate=yes
U
	cat > "$E/systemd/system/nstest.service" <<U
[Unit]
After=basic.target
[Service]
Type=oneshot
ExecStart=/bin/bash /opt/nst/run.sh
StandardOutput=append:/opt/out/log
StandardError=append:/opt/out/err
TimeoutStartSec=$1
ExecStopPost=/bin/systemctl --no-block poweroff
U
	# for run.sh: r KEY VALUE reports a result; conf_nic [LINES...] writes
	# a configuration with one port, nic, read from a recorded ethtool -S
	# (/var/lib/nicstalld/s.txt), metrics on, LINES after it
	cat > "$T_DIR/nst/lib.sh" <<'L'
r() { echo "R $1 $2"; }
conf_nic() {
	mkdir -p /var/lib/prometheus/node-exporter /var/lib/nicstalld /etc/nicstalld
	printf 'NIC statistics:\n     rx_packets_phy: 10\n     rx_vport_unicast_packets: 9\n' > /var/lib/nicstalld/s.txt
	printf '%s\n' '[daemon]' 'interval = 200ms' \
		'metrics_file = /var/lib/prometheus/node-exporter/nicstalld.prom' 'metrics_interval = 1s' \
		'[port nic]' 'stats_file = /var/lib/nicstalld/s.txt' 'profile = mlx5' "$@" \
		> /etc/nicstalld/nicstalld.conf
}
L
}

# boot_run TIMEOUT [NSPAWN-OPTIONS...]: boot the container (in a mount
# namespace of the test's own), at most TIMEOUT seconds; nspawn's last
# lines are in $T_DIR/boot.log
boot_run() {
	local timeout=$1 a
	shift
	{
		echo "set -e"
		echo "# nspawn's own state (/run/systemd/nspawn) stays in this namespace too"
		echo "mount -t tmpfs tmpfs /run/systemd"
		echo "mount -t tmpfs tmpfs '$T_DIR/ovl'"
		echo "mkdir -p '$T_DIR/ovl/upper' '$T_DIR/ovl/work' '$T_DIR/ovl/root'"
		echo "mount -t overlay overlay -o lowerdir=/,upperdir=$T_DIR/ovl/upper,workdir=$T_DIR/ovl/work '$T_DIR/ovl/root'"
		echo "# its /dev is left to nspawn"
		echo "rm -rf '$T_DIR/ovl/root/dev/'* 2>/dev/null || true"
		echo "mkdir -p '$T_DIR/ovl/root/opt/nst' '$T_DIR/ovl/root/opt/out'"
		echo "set +e"
		printf 'timeout %s systemd-nspawn -q -D %q --register=no --keep-unit --link-journal=no' \
			"$timeout" "$T_DIR/ovl/root"
		printf ' --private-network --bind=%q --bind-ro=%q --bind=%q' \
			"$E:/etc" "$T_DIR/nst:/opt/nst" "$T_DIR/out:/opt/out"
		for a; do printf ' %q' "$a"; done
		echo ' -b -- systemd.unit=nstest.target'
		echo 'echo "nspawn rc=$?"'
	} > "$T_DIR/boot.sh"
	mkdir -p "$T_DIR/ovl"
	unshare -m --propagation private bash "$T_DIR/boot.sh" > "$T_DIR/boot.log" 2>&1
	tail -3 "$T_DIR/boot.log"
}

# R KEY: the value the script reported with `r KEY VALUE` (a line "R KEY
# VALUE" in /opt/out/log)
R() { awk -v k="$1" '$1 == "R" && $2 == k { $1 = ""; $2 = ""; sub(/^  /, ""); print; exit }' "$T_DIR/out/log" 2>/dev/null; }
