#!/bin/bash
# The Debian package as a host installs it (make check-package; not part of
# make check: it builds the package twice and boots a container). In a
# systemd booted in a container (boot_lib.sh, as make check-systemd) it
# installs the .deb built by make deb, sees the unit enabled, started and
# READY, the group, user and directories made by the maintainer scripts,
# edits the configuration and restarts, reads the catalog's text for the
# port-up event in journalctl -x, scrapes the metrics file (promtool), runs
# nicstallctl status as a member of group nicstall (and as a user who is
# not), completes words with the installed bash completion, then upgrades
# to a rebuild with a changed version (the edited configuration and the
# bundles kept, the daemon restarted, running the new version), upgrades
# again with a broken configuration (the upgrade fails loudly, the daemon
# keeps running, dpkg --configure -a finishes once it is fixed), removes
# (bundles and configuration kept) and purges (what is removed is said).
#   boot_package.sh BUILD DEBDIR DEBDIR_NEXT
. "$(dirname "$0")/lib.sh"
t_init
V1=$(cd "${2:?the directory of the .deb}" && pwd)
V2=$(cd "${3:?the directory of the rebuilt .deb}" && pwd)
v1=$(dpkg-deb -f "$V1"/nicstalld_*.deb Version) v2=$(dpkg-deb -f "$V2"/nicstalld_*.deb Version)
check "the rebuild has a newer version ($v1 -> $v2)" dpkg --compare-versions "$v2" gt "$v1"
. "$(dirname "$0")/boot_lib.sh"
boot_etc 300
cat > "$T_DIR/nst/run.sh" <<'EOF'
# inside the container: "R key value" lines for the test to check
. /opt/nst/lib.sh
t0=$(date +%s)
# The host this runs on is a container image whose /usr/sbin/policy-rc.d
# (Docker's) forbids maintainer scripts to start services; a host as
# installed has none.
rm -f /usr/sbin/policy-rc.d
# and the host's own test runs left their state and runtime directories in
# the root the container's is an overlay of: a new host has neither
rm -rf /var/lib/nicstalld /run/nicstalld /var/lib/prometheus/node-exporter/nicstalld.prom
dpkg -i /opt/v1/nicstalld_*.deb /opt/v1/nicstalld-dev_*.deb > /opt/out/install.log 2>&1; r install_rc $?
r enabled "$(systemctl is-enabled nicstalld)"
r started "$(systemctl is-active nicstalld)"
r group "$(getent group nicstall | cut -d: -f1)"
r hook_groups "$(id -nG nicstall-hook | tr ' ' ,)"
r bundles_mode "$(stat -c '%a:%U:%G' /var/lib/nicstalld/bundles)"
r flows_mode "$(stat -c '%a:%U:%G' /run/nicstalld/flows)"
r conffiles "$(dpkg-query -W -f='${Conffiles}' nicstalld | awk 'NF { print $1 }' | paste -sd,)"
r rules_d "$(test -d /etc/nicstalld/rules.d && echo yes)"
# the site's configuration (edited on this host)
conf_nic
sum=$(md5sum < /etc/nicstalld/nicstalld.conf)
sleep 1
since=$(date '+%Y-%m-%d %H:%M:%S')
# Type=notify: systemctl returns once the daemon sent READY=1
systemctl restart nicstalld; r restart_rc $?
r ready "$(systemctl show -p ActiveState --value nicstalld)/$(systemctl show -p SubState --value nicstalld)"
r status_text "$(systemctl show -p StatusText --value nicstalld | tr ' ' _)"
for i in $(seq 1 50); do
	journalctl -u nicstalld --since "$since" NICSTALL_EVENT=port-up -o cat 2>/dev/null | grep -q . && break
	sleep 0.2
done
journalctl -x -u nicstalld --since "$since" --no-pager > /opt/out/journal-x.txt 2>&1
for i in $(seq 1 50); do [ -s /var/lib/prometheus/node-exporter/nicstalld.prom ] && break; sleep 0.2; done
cp /var/lib/prometheus/node-exporter/nicstalld.prom /opt/out/metrics.prom 2>/dev/null
r promtool "$(promtool check metrics < /opt/out/metrics.prom > /opt/out/promtool.txt 2>&1; echo $?)"
# a member of nicstall reads the status; a user outside it is refused
useradd -m -s /bin/bash alice && usermod -aG nicstall alice
useradd -m -s /bin/bash bob
runuser -u alice -- nicstallctl status > /opt/out/alice-status.txt 2>&1; r alice_status $?
runuser -u bob -- nicstallctl status > /opt/out/bob-status.txt 2>&1; r bob_status $?
b=$(nicstallctl snapshot --bundle nic | sed -n 's/^bundle //p')
r bundle "${b##*/}"
# bash completion, as installed: loaded on demand by bash-completion
comp() {
	runuser -u alice -- bash -c '. /usr/share/bash-completion/bash_completion
		_completion_loader nicstallctl
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _nicstallctl; echo "${COMPREPLY[*]}"' bash "$@"
}
r comp_loaded "$(runuser -u alice -- bash -c '. /usr/share/bash-completion/bash_completion; _completion_loader nicstallctl; complete -p nicstallctl' | tr ' ' _)"
r comp_commands "$(comp nicstallctl re | tr ' ' ,)"
r comp_ports "$(comp nicstallctl counters '' | tr ' ' ,)"
r comp_bundles "$(comp nicstallctl show '' | tr ' ' ,)"
r comp_incident "$(comp nicstallctl incident '' | tr ' ' ,)"
# the upgrade to the rebuild
pid1=$(systemctl show -p MainPID --value nicstalld)
dpkg -i /opt/v2/nicstalld_*.deb /opt/v2/nicstalld-dev_*.deb > /opt/out/upgrade.log 2>&1; r upgrade_rc $?
r conf_kept "$([ "$(md5sum < /etc/nicstalld/nicstalld.conf)" = "$sum" ] && echo yes)"
r bundle_kept "$(test -f "$b/manifest.json" && echo yes)"
pid2=$(systemctl show -p MainPID --value nicstalld)
r restarted "$([ "$pid2" != "$pid1" ] && [ "$pid2" != 0 ] && echo yes)/$(systemctl is-active nicstalld)"
r running_version "$(nicstallctl status | awk 'NR == 1 { print $2 }')"
# an upgrade that meets a configuration the new daemon refuses
sed -i 's/^interval = 200ms/interval = soon/' /etc/nicstalld/nicstalld.conf
dpkg -i /opt/v2/nicstalld_*.deb > /opt/out/broken.log 2>&1; r broken_rc $?
r broken_kept_running "$([ "$(systemctl show -p MainPID --value nicstalld)" = "$pid2" ] && echo yes)/$(systemctl is-active nicstalld)"
r broken_state "$(dpkg-query -W -f='${Status}' nicstalld | tr ' ' _)"
sed -i 's/^interval = soon/interval = 200ms/' /etc/nicstalld/nicstalld.conf
dpkg --configure -a > /opt/out/configure.log 2>&1; r configure_rc $?
r fixed "$([ "$(systemctl show -p MainPID --value nicstalld)" != "$pid2" ] && echo restarted)/$(systemctl is-active nicstalld)/$(dpkg-query -W -f='${Status}' nicstalld | tr ' ' _)"
# removal keeps the bundles and the configuration; purge removes them
dpkg -r nicstalld-dev nicstalld > /opt/out/remove.log 2>&1; r remove_rc $?
r removed "$(systemctl is-active nicstalld)/$(test -e /usr/sbin/nicstalld && echo binary || echo nobinary)"
r removed_kept "$(test -f "$b/manifest.json" && echo bundle)/$(test -f /etc/nicstalld/nicstalld.conf && echo conf)"
dpkg -P nicstalld > /opt/out/purge.log 2>&1; r purge_rc $?
r purged "$(test -e /var/lib/nicstalld && echo state)/$(test -e /etc/nicstalld && echo etc)/$(test -e /var/lib/prometheus/node-exporter/nicstalld.prom && echo metrics)/$(dpkg-query -W -f='${Status}' nicstalld 2>/dev/null | tr ' ' _)"
r seconds $(( $(date +%s) - t0 ))
r done yes
EOF
start=$(date +%s)
boot_run 360 --bind-ro="$V1:/opt/v1" --bind-ro="$V2:/opt/v2"
O=$T_DIR/out
check "the container booted and ran the steps ($(R seconds) s inside)" test "$(R done)" = yes ||
	{ tail -30 "$T_DIR/boot.log"; cat "$O/log" "$O/err"; }
check "dpkg -i installs nicstalld and nicstalld-dev" test "$(R install_rc)" = 0 || cat "$O/install.log"
check "the unit is enabled and started by the package ($(R enabled), $(R started))" \
	test "$(R enabled)/$(R started)" = enabled/active
check "the group nicstall and the hook's user (a member) exist ($(R hook_groups))" \
	test "$(R group)" = nicstall -a "$(R hook_groups)" = nicstall-hook,nicstall
check "bundles/ and flows/ are made with their modes ($(R bundles_mode), $(R flows_mode))" \
	test "$(R bundles_mode) $(R flows_mode)" = "2750:root:nicstall 3775:root:nicstall"
check "the configuration is a conffile, rules.d is there ($(R conffiles))" \
	test "$(R conffiles)" = /etc/nicstalld/nicstalld.conf -a "$(R rules_d)" = yes
check "restarted with the site's configuration, READY ($(R ready), $(R status_text))" \
	test "$(R restart_rc) $(R ready)" = "0 active/running" -a -n "$(R status_text)"
check "journalctl -x shows the catalog's text for the port-up event" \
	bash -c "grep -q 'Subject: Port nic is up' '$O/journal-x.txt' && grep -q 'nicstalld found the interface of port nic' '$O/journal-x.txt'" ||
	tail -20 "$O/journal-x.txt"
check "the metrics file is valid (promtool check metrics) and names the port" \
	bash -c "[ '$(R promtool)' = 0 ] && grep -q '^nicstalld_.*port=\"nic\"' '$O/metrics.prom'" ||
	{ cat "$O/promtool.txt"; head -20 "$O/metrics.prom"; }
check "nicstallctl status as a member of nicstall" \
	bash -c "[ '$(R alice_status)' = 0 ] && grep -q '^nic ' '$O/alice-status.txt'" || cat "$O/alice-status.txt"
check "and refused to a user outside it" test "$(R bob_status)" != 0
check "bash-completion loads the installed completion ($(R comp_loaded))" \
	test "$(R comp_loaded)" = "complete_-F__nicstallctl_nicstallctl"
check "it completes commands ($(R comp_commands))" test "$(R comp_commands)" = recover,reload,report
check "port names from the running daemon ($(R comp_ports))" test "$(R comp_ports)" = nic
check "bundle names ($(R comp_bundles))" test -n "$(R bundle)" -a "$(R comp_bundles)" = "$(R bundle)"
check "subcommands ($(R comp_incident))" test "$(R comp_incident)" = show,list
check "the upgrade to $v2 succeeds" test "$(R upgrade_rc)" = 0 || cat "$O/upgrade.log"
check "the edited configuration and the bundle are kept" test "$(R conf_kept)/$(R bundle_kept)" = yes/yes
check "the daemon was restarted, running $v2 ($(R restarted), $(R running_version))" \
	test "$(R restarted)/$(R running_version)" = "yes/active/$v2"
check "an upgrade that meets a broken configuration fails" test "$(R broken_rc)" != 0
check "loudly, saying what to do" \
	bash -c "grep -q 'nicstalld.conf has errors' '$O/broken.log' && grep -q 'dpkg --configure -a' '$O/broken.log'" || cat "$O/broken.log"
check "the daemon kept running, not restarted ($(R broken_kept_running), $(R broken_state))" \
	test "$(R broken_kept_running)" = yes/active -a "$(R broken_state)" = install_ok_half-configured
check "once fixed, dpkg --configure -a finishes and restarts it ($(R fixed))" \
	test "$(R configure_rc)/$(R fixed)" = "0/restarted/active/install_ok_installed" || cat "$O/configure.log"
check "dpkg -r stops the daemon and removes the programs ($(R removed))" \
	test "$(R remove_rc)/$(R removed)" = "0/inactive/nobinary" || cat "$O/remove.log"
check "and keeps the bundles and the configuration ($(R removed_kept))" test "$(R removed_kept)" = bundle/conf
# (the daemon removes its metrics file when it stops: purge removes one a
# crash left)
check "dpkg -P removes the state and the configuration, no metrics file is left ($(R purged))" \
	test "$(R purge_rc)/$(R purged)" = "0////" || cat "$O/purge.log"
check "and says what it removes and keeps" \
	bash -c "grep -q 'purge removes /var/lib/nicstalld (1 bundle(s)' '$O/purge.log' &&
		grep -q 'purge keeps the group nicstall' '$O/purge.log'" || cat "$O/purge.log"
echo "note: check-package: the container's steps took $(R seconds) s, the test $(( $(date +%s) - start )) s"
