/* ident: who a port's hardware is (driver, firmware, PSID, bus, board).
 *
 * Live: ETHTOOL_GDRVINFO on a socket made in the port's namespace; then, when
 * bus_info is a PCI address, devlink `dev info` over generic netlink (fixed
 * "fw.psid", running "fw.version" or "fw"); then
 * <sysfs_root>/sys/class/infiniband/<rdma_dev>/{fw_ver,board_id}.
 * Every part is optional: what cannot be learned stays "". Recorded:
 * `ethtool -i` text.
 *
 * firmware-version "14.17.1010 (MT_2420110034)" is split into fw_version
 * "14.17.1010" and psid "MT_2420110034" (parenthesised, no blanks). */
#ifndef NICSTALL_IDENT_H
#define NICSTALL_IDENT_H

#include <stddef.h>

struct json_object;

struct ident {
	char driver[32], version[64], fw_version[64], psid[64], bus_info[64],
	     board_id[64], ib_fw_ver[64], fw_running[64];
	char source[32];         /* parts that answered: "ethtool+devlink+sysfs",
				  * or "text" */
	/* the driver's PFC storm prevention (ETHTOOL_GTUNABLE
	 * ETHTOOL_PFC_PREVENTION_TOUT, as ethtool --get-tunable
	 * pfc-prevention-tout): "100 ms", "disabled", "auto", or why not
	 * ("not supported by the driver"); "" not asked (a recorded ident) */
	char pfc_prevention[48];
};

#define IDENT_MAX_FILE (64u * 1024u)

/* nsfd: namespace fd from netns_open(), -1 for the daemon's own. rdma_dev
 * may be NULL; sysfs_root "" is the real /sys. Returns 0 (whatever parts
 * answered), -ENODEV when the interface does not exist in that namespace,
 * -EINVAL for a bad ifname, or -errno when no socket can be made; err
 * names the interface and namespace. */
int ident_query(int nsfd, const char *ifname, const char *sysfs_root,
		const char *rdma_dev, struct ident *out, char *err,
		size_t errlen);

/* Recorded `ethtool -i` output: "key: value" lines; blank lines, "#" lines
 * and shell prompt lines ("user@host:~$ sudo ethtool -i p3p1") are skipped;
 * each "driver:" line starts a new block and the last block wins. Unknown
 * keys are ignored. A line that is none of these, or a value too long for
 * its field, is an error "line N: ..." (the first one, with a count of the
 * rest). No "driver:" line at all is an error. 0 or -EINVAL. */
int ident_parse_text(const char *buf, size_t len, struct ident *out, char *err,
		     size_t errlen);

/* ident_parse_text on a file of at most IDENT_MAX_FILE bytes; errors are
 * prefixed with the path. 0 or -errno. */
int ident_load_file(const char *path, struct ident *out, char *err,
		    size_t errlen);

/* Add the non-empty fields to obj ("driver", "version", "fw_version",
 * "psid", "bus_info", "board_id", "ib_fw_ver", "fw_running", "source").
 * 0 or -ENOMEM / -EINVAL. */
int ident_to_json(const struct ident *id, struct json_object *obj);

/* For tests: fill psid / fw_running (and driver when empty) from one
 * DEVLINK_CMD_INFO_GET reply (netlink + genl header, len bytes).
 * 0 or -EINVAL. */
int ident_parse_devlink_info(const void *buf, size_t len, struct ident *out);

#endif
