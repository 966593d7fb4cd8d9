/* ident: driver, firmware and board identity of a port. See ident.h. */
#include "collectors/counters/ident.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libmnl/libmnl.h>
#include <linux/devlink.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sockios.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/netns.h"
#include "lib/nl.h"
#include "lib/util.h"

#define LINE_MAX_BYTES 4096

/* Copy at most slen bytes of src (stopping at NUL), blanks trimmed at both
 * ends, control characters replaced by '?'. Returns -1 when it does not
 * fit (dst is then ""), else 0. */
static int put_field(char *dst, size_t dlen, const char *src, size_t slen)
{
	size_t a = 0, b = strnlen(src, slen);

	while (a < b && (src[a] == ' ' || src[a] == '\t'))
		a++;
	while (b > a && (src[b - 1] == ' ' || src[b - 1] == '\t' ||
			 src[b - 1] == '\r' || src[b - 1] == '\n'))
		b--;
	if (b - a >= dlen) {
		dst[0] = '\0';
		return -1;
	}
	for (size_t i = a; i < b; i++) {
		unsigned char c = (unsigned char)src[i];

		dst[i - a] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	dst[b - a] = '\0';
	return 0;
}

/* "14.17.1010 (MT_2420110034)" -> fw_version + psid; else all fw_version.
 * -1 when a part does not fit. */
static int set_fw(struct ident *id, const char *fw, size_t len)
{
	const char *open, *end;
	size_t n = strnlen(fw, len);

	while (n && (fw[n - 1] == ' ' || fw[n - 1] == '\n' || fw[n - 1] == '\r'))
		n--;
	end = fw + n;
	if (n > 2 && end[-1] == ')') {
		open = memrchr(fw, '(', n);
		if (open && open > fw && open[-1] == ' ' && end - open > 2 &&
		    !memchr(open + 1, ' ', (size_t)(end - 1 - (open + 1)))) {
			if (put_field(id->psid, sizeof(id->psid), open + 1,
				      (size_t)(end - 1 - (open + 1))) < 0)
				return -1;
			return put_field(id->fw_version, sizeof(id->fw_version), fw,
					 (size_t)(open - fw));
		}
	}
	return put_field(id->fw_version, sizeof(id->fw_version), fw, n);
}

static void add_source(struct ident *id, const char *part)
{
	size_t l = strlen(id->source);

	snprintf(id->source + l, sizeof(id->source) - l, "%s%s", l ? "+" : "", part);
}

/* ------------------------------------------------------------- devlink */

/* Match 0000:af:00.0 (domain 4 to 8 hex digits). */
static int is_pci_addr(const char *s)
{
	size_t n = strlen(s), d = 0;

	while (d < n && d < 9 && ((s[d] >= '0' && s[d] <= '9') ||
				  (s[d] >= 'a' && s[d] <= 'f') ||
				  (s[d] >= 'A' && s[d] <= 'F')))
		d++;
	if (d < 4 || d > 8 || n != d + 8)
		return 0;
	s += d;
	for (int i = 0; i < 8; i++) {
		char c = s[i];
		int hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
			  (c >= 'A' && c <= 'F');

		if ((i == 0 || i == 3) ? c != ':' : i == 6 ? c != '.' :
		    i == 7 ? !(c >= '0' && c <= '7') : !hex)
			return 0;
	}
	return 1;
}

static int ver_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	uint16_t t = mnl_attr_get_type(a);

	if (t != DEVLINK_ATTR_INFO_VERSION_NAME && t != DEVLINK_ATTR_INFO_VERSION_VALUE)
		return MNL_CB_OK;
	if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
		return MNL_CB_ERROR;
	tb[t] = a;
	return MNL_CB_OK;
}

int ident_parse_devlink_info(const void *buf, size_t len, struct ident *out)
{
	const struct nlmsghdr *nlh = buf;
	const struct nlattr *a;
	int got_fw_version = 0;

	/* Lengths first, as unsigned: mnl_nlmsg_ok() let 0x80000001 through. */
	if (nl_msgs_check(buf, len) < 0 ||
	    nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(struct genlmsghdr))
		return -EINVAL;
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		uint16_t t = mnl_attr_get_type(a);
		const struct nlattr *tb[DEVLINK_ATTR_INFO_VERSION_VALUE + 1] = { 0 };
		const char *name, *val;

		if (t == DEVLINK_ATTR_INFO_DRIVER_NAME) {
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
				return -EINVAL;
			if (!out->driver[0])
				put_field(out->driver, sizeof(out->driver),
					  mnl_attr_get_str(a), SIZE_MAX);
			continue;
		}
		if (t != DEVLINK_ATTR_INFO_VERSION_FIXED &&
		    t != DEVLINK_ATTR_INFO_VERSION_RUNNING)
			continue;
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0 ||
		    mnl_attr_parse_nested(a, ver_cb, tb) != MNL_CB_OK)
			return -EINVAL;
		if (!tb[DEVLINK_ATTR_INFO_VERSION_NAME] ||
		    !tb[DEVLINK_ATTR_INFO_VERSION_VALUE])
			continue;
		name = mnl_attr_get_str(tb[DEVLINK_ATTR_INFO_VERSION_NAME]);
		val = mnl_attr_get_str(tb[DEVLINK_ATTR_INFO_VERSION_VALUE]);
		if (t == DEVLINK_ATTR_INFO_VERSION_FIXED && !strcmp(name, "fw.psid")) {
			put_field(out->psid, sizeof(out->psid), val, SIZE_MAX);
		} else if (t == DEVLINK_ATTR_INFO_VERSION_RUNNING &&
			   !strcmp(name, "fw.version")) {
			put_field(out->fw_running, sizeof(out->fw_running), val, SIZE_MAX);
			got_fw_version = 1;
		} else if (t == DEVLINK_ATTR_INFO_VERSION_RUNNING &&
			   !strcmp(name, "fw") && !got_fw_version) {
			put_field(out->fw_running, sizeof(out->fw_running), val, SIZE_MAX);
		}
	}
	return 0;
}

struct dl_req {
	struct ident *out;
	int got;
};

static int info_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dl_req *r = data;

	if (ident_parse_devlink_info(nlh, nlh->nlmsg_len, r->out) == 0)
		r->got = 1;
	return MNL_CB_OK;
}

/* devlink dev info pci/<bus_info>, on lib/nl's request path (no receive
 * waits). Quietly does nothing when devlink or the device is not there. */
static void query_devlink(int nsfd, const char *ifname, struct ident *out)
{
	char req[512] __attribute__((aligned(8)));
	struct dl_req r = { .out = out };
	struct nlmsghdr *nlh;
	struct nl_sock *ns;
	char err[256];
	int fam, rc;

	ns = nl_sock_open(nsfd, NETLINK_GENERIC, 0, err, sizeof(err));
	if (!ns) {
		log_debug("ident %s: devlink: %s", ifname, err);
		return;
	}
	fam = nl_genl_family(ns, DEVLINK_GENL_NAME, err, sizeof(err));
	if (fam < 0) {
		log_debug("ident %s: %s", ifname, err);
		goto out;
	}
	nlh = nl_genl_put(req, (uint16_t)fam, DEVLINK_CMD_INFO_GET, DEVLINK_GENL_VERSION);
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_BUS_NAME, "pci");
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_DEV_NAME, out->bus_info);
	rc = nl_sock_request(ns, nlh, info_cb, &r, "devlink dev info", err, sizeof(err));
	if (rc < 0)
		log_debug("ident %s: pci/%s: %s", ifname, out->bus_info, err);
	else if (r.got)
		add_source(out, "devlink");
out:
	nl_sock_close(ns);
}

/* --------------------------------------------------------------- sysfs */

static int read_small(const char *path, char *buf, size_t len)
{
	char tmp[256];

	/* O_NONBLOCK there: a FIFO planted in a recorded tree cannot block */
	if (util_read_buf(path, tmp, sizeof(tmp)) < 0)
		return -errno;
	tmp[strcspn(tmp, "\n")] = '\0';
	return put_field(buf, len, tmp, sizeof(tmp)) < 0 ? -E2BIG : 0;
}

static void query_ib_sysfs(const char *root, const char *dev, struct ident *out)
{
	char path[PATH_MAX];
	int got = 0;

	if (!dev || !*dev || strchr(dev, '/') || !strcmp(dev, ".") ||
	    !strcmp(dev, ".."))
		return;
	if ((size_t)snprintf(path, sizeof(path), "%s/sys/class/infiniband/%s/fw_ver",
			     root, dev) < sizeof(path) &&
	    read_small(path, out->ib_fw_ver, sizeof(out->ib_fw_ver)) == 0)
		got = 1;
	if ((size_t)snprintf(path, sizeof(path), "%s/sys/class/infiniband/%s/board_id",
			     root, dev) < sizeof(path) &&
	    read_small(path, out->board_id, sizeof(out->board_id)) == 0)
		got = 1;
	if (got)
		add_source(out, "sysfs");
}

/* The driver's PFC storm prevention timeout (mlx5e_get_pfc_prevention_tout:
 * the firmware's PFCC device_stall_critical_watermark, in ms; 0 disabled,
 * PFC_STORM_PREVENTION_AUTO the driver's default). Read once, when the
 * port is identified: it is configuration, and a firmware command. */
static void pfc_prevention(int fd, const char *ifname, struct ident *out)
{
	/* struct ethtool_tunable and its u16 value after it (its data[]) */
	union {
		struct ethtool_tunable t;
		unsigned char b[sizeof(struct ethtool_tunable) + sizeof(uint16_t)];
	} tun;
	struct ifreq ifr;
	uint16_t v;

	memset(&tun, 0, sizeof(tun));
	memset(&ifr, 0, sizeof(ifr));
	tun.t.cmd = ETHTOOL_GTUNABLE;
	tun.t.id = ETHTOOL_PFC_PREVENTION_TOUT;
	tun.t.type_id = ETHTOOL_TUNABLE_U16;
	tun.t.len = sizeof(v);
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	ifr.ifr_data = (void *)&tun;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		snprintf(out->pfc_prevention, sizeof(out->pfc_prevention), "%s",
			 errno == EOPNOTSUPP ? "not supported by the driver" : strerror(errno));
	else if (memcpy(&v, tun.b + sizeof(tun.t), sizeof(v)), v == PFC_STORM_PREVENTION_DISABLE)
		snprintf(out->pfc_prevention, sizeof(out->pfc_prevention), "disabled");
	else if (v == PFC_STORM_PREVENTION_AUTO)
		snprintf(out->pfc_prevention, sizeof(out->pfc_prevention), "auto");
	else
		snprintf(out->pfc_prevention, sizeof(out->pfc_prevention), "%u ms", v);
}

int ident_query(int nsfd, const char *ifname, const char *sysfs_root,
		const char *rdma_dev, struct ident *out, char *err,
		size_t errlen)
{
	struct ethtool_drvinfo drv;
	struct ifreq ifr;
	char nsb[64];
	int fd, rc;

	memset(out, 0, sizeof(*out));
	if (!ifname || !*ifname || strlen(ifname) >= IFNAMSIZ || strchr(ifname, '/')) {
		util_errf(err, errlen, "ident: bad interface name \"%s\"", ifname ? ifname : "");
		return -EINVAL;
	}
	fd = netns_socket(nsfd, AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		fd = netns_socket(nsfd, AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0) {
		rc = -errno;
		util_errf(err, errlen, "ident %s (%s): socket: %s", ifname,
			  nl_ns_desc(nsfd, nsb, sizeof(nsb)), strerror(-rc));
		return rc;
	}
	memset(&drv, 0, sizeof(drv));
	memset(&ifr, 0, sizeof(ifr));
	drv.cmd = ETHTOOL_GDRVINFO;
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	ifr.ifr_data = (void *)&drv;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0) {
		rc = -errno;
		close(fd);
		if (rc == -ENODEV) {
			util_errf(err, errlen, "ident %s (%s): no such interface: %s",
				  ifname, nl_ns_desc(nsfd, nsb, sizeof(nsb)), strerror(-rc));
			return rc;
		}
		log_debug("ident %s (%s): ETHTOOL_GDRVINFO: %s", ifname,
			  nl_ns_desc(nsfd, nsb, sizeof(nsb)), strerror(-rc));
	} else {
		pfc_prevention(fd, ifname, out);
		close(fd);
		put_field(out->driver, sizeof(out->driver), drv.driver, sizeof(drv.driver));
		put_field(out->version, sizeof(out->version), drv.version,
			  sizeof(drv.version));
		set_fw(out, drv.fw_version, sizeof(drv.fw_version));
		put_field(out->bus_info, sizeof(out->bus_info), drv.bus_info,
			  sizeof(drv.bus_info));
		add_source(out, "ethtool");
	}
	if (is_pci_addr(out->bus_info))
		query_devlink(nsfd, ifname, out);
	query_ib_sysfs(sysfs_root ? sysfs_root : "", rdma_dev, out);
	return 0;
}

/* ---------------------------------------------------------------- text */

static int is_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* One line (no newline). 0 ok/skipped, -1 with err filled. */
static int text_line(struct ident *id, int *have_driver, unsigned lineno,
		     const char *l, size_t n, char *err, size_t errlen)
{
	size_t k = 0, v;
	char *fld = NULL;
	size_t fldlen = 0;
	const char *key;

	while (n && (l[n - 1] == '\r' || l[n - 1] == ' ' || l[n - 1] == '\t'))
		n--;
	while (k < n && (l[k] == ' ' || l[k] == '\t'))
		k++;
	if (k == n || l[k] == '#')
		return 0;
	key = l + k;
	while (k < n && is_key_char(l[k]))
		k++;
	if (k == n || l[k] != ':' || k == (size_t)(key - l) ||
	    (k + 1 < n && l[k + 1] != ' ' && l[k + 1] != '\t')) {
		if (memmem(l, n, "$ ", 2) || memmem(l, n, "# ", 2))
			return 0;     /* shell prompt with a command */
		util_errf(err, errlen, "line %u: not \"key: value\": \"%.*s\"", lineno,
			  (int)(n > 60 ? 60 : n), l);
		return -1;
	}
	v = k + 1;
	k = (size_t)(l + k - key);
#define KEY(s) (k == sizeof(s) - 1 && !memcmp(key, s, k))
	if (KEY("driver")) {
		memset(id, 0, sizeof(*id));
		*have_driver = 1;
		fld = id->driver;
		fldlen = sizeof(id->driver);
	} else if (KEY("version")) {
		fld = id->version;
		fldlen = sizeof(id->version);
	} else if (KEY("bus-info")) {
		fld = id->bus_info;
		fldlen = sizeof(id->bus_info);
	} else if (KEY("firmware-version")) {
		if (set_fw(id, l + v, n - v) < 0) {
			util_errf(err, errlen, "line %u: firmware-version too long (%zu bytes)",
				  lineno, n - v);
			return -1;
		}
		return 0;
	}
#undef KEY
	if (!fld)
		return 0;             /* other ethtool -i keys */
	if (put_field(fld, fldlen, l + v, n - v) < 0) {
		util_errf(err, errlen, "line %u: value of \"%.*s\" too long (%zu bytes, max %zu)",
			  lineno, (int)k, key, n - v, fldlen - 1);
		return -1;
	}
	return 0;
}

int ident_parse_text(const char *buf, size_t len, struct ident *out, char *err,
		     size_t errlen)
{
	struct ident id;
	unsigned lineno = 0, nerr = 0;
	char first[200] = "";
	int have_driver = 0;
	size_t pos = 0;

	memset(&id, 0, sizeof(id));
	if (!buf)
		len = 0;
	while (pos < len) {
		const char *l = buf + pos, *nl = memchr(l, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - l) : len - pos;
		char e[200];

		pos += n + (nl ? 1 : 0);
		lineno++;
		if (memchr(l, '\0', n)) {
			util_errf(e, sizeof(e), "line %u: NUL byte", lineno);
		} else if (n > LINE_MAX_BYTES) {
			util_errf(e, sizeof(e), "line %u: longer than %d bytes", lineno,
				  LINE_MAX_BYTES);
		} else if (text_line(&id, &have_driver, lineno, l, n, e, sizeof(e)) == 0) {
			continue;
		}
		if (!nerr++)
			snprintf(first, sizeof(first), "%s", e);
	}
	if (nerr) {
		if (nerr > 1)
			util_errf(err, errlen, "%s (and %u more bad lines)", first, nerr - 1);
		else
			util_errf(err, errlen, "%s", first);
		return -EINVAL;
	}
	if (!have_driver) {
		util_errf(err, errlen, "no \"driver:\" line");
		return -EINVAL;
	}
	snprintf(id.source, sizeof(id.source), "text");
	*out = id;
	return 0;
}

int ident_load_file(const char *path, struct ident *out, char *err,
		    size_t errlen)
{
	char *buf, e[200];
	size_t len = 0;
	int rc, fe = 0;

	/* the one safe path (fsutil.h): a FIFO never blocks the loop, a
	 * symbolic link is not followed, regular files only, bounded */
	buf = fsu_read_file(path, IDENT_MAX_FILE, &len, &fe);
	if (!buf) {
		if (fe == EFBIG)
			util_errf(err, errlen, "%s: larger than %u bytes", path, IDENT_MAX_FILE);
		else if (fe == EINVAL || fe == ELOOP)
			util_errf(err, errlen, "%s: %s, not read", path, fsu_strerror(fe));
		else
			util_errf(err, errlen, "%s: %s", path, strerror(fe));
		return -fe;
	}
	rc = ident_parse_text(buf, len, out, e, sizeof(e));
	if (rc < 0)
		util_errf(err, errlen, "%s: %s", path, e);
	free(buf);
	return rc;
}

static int to_json(const struct ident *id, struct json_object *obj)
{
	const struct {
		const char *key;
		const char *val;
	} f[] = {
		{ "driver", id->driver }, { "version", id->version },
		{ "fw_version", id->fw_version }, { "psid", id->psid },
		{ "bus_info", id->bus_info }, { "board_id", id->board_id },
		{ "ib_fw_ver", id->ib_fw_ver }, { "fw_running", id->fw_running },
		{ "source", id->source }, { "pfc_prevention_tout", id->pfc_prevention },
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		struct json_object *s;

		if (!f[i].val[0])
			continue;
		s = json_object_new_string(f[i].val);
		if (!s)
			return -ENOMEM;
		if (json_object_object_add(obj, f[i].key, s) < 0) {
			json_object_put(s);
			return -ENOMEM;
		}
	}
	return 0;
}

int ident_to_json(const struct ident *id, struct json_object *obj)
{
	if (!id || !obj || !json_object_is_type(obj, json_type_object))
		return -EINVAL;
	return to_json(id, obj);
}
