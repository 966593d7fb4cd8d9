/* rdma_disc: RDMA devices and ports from sysfs, refined by libibverbs on the
 * real root. See rdma_disc.h. */
#include "collectors/counters/rdma_disc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "lib/util.h"

#define ATTR_MAX 256         /* bytes read from one sysfs attribute */

/* Read a small attribute at dirfd/rel into buf, first line only, trailing
 * blanks cut, control characters refused. 0 or -errno. */
static int read_attr(int dirfd, const char *rel, char *buf, size_t len)
{
	char tmp[ATTR_MAX];
	ssize_t r;
	size_t n;
	int fd;

	/* O_NONBLOCK: a FIFO planted in a recorded tree cannot block */
	fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	r = read(fd, tmp, sizeof(tmp) - 1);
	close(fd);
	if (r < 0)
		return -errno;
	tmp[r] = '\0';
	n = strcspn(tmp, "\n");
	while (n && (tmp[n - 1] == ' ' || tmp[n - 1] == '\t' || tmp[n - 1] == '\r'))
		n--;
	tmp[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)tmp[i] < 0x20 || tmp[i] == 0x7f)
			return -EINVAL;
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(buf, tmp, n + 1);
	return 0;
}

/* "4: ACTIVE" -> 4, "ACTIVE". */
static void parse_state(const char *s, int *num, char *name, size_t namelen)
{
	char *end;
	long v;

	*num = -1;
	name[0] = '\0';
	v = strtol(s, &end, 10);
	if (end == s || v < 0 || v > 255)
		return;
	*num = (int)v;
	if (*end == ':')
		end++;
	while (*end == ' ')
		end++;
	if (strlen(end) < namelen)
		memcpy(name, end, strlen(end) + 1);
}

static int valid_ifname(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < 16 && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

/* Names in a directory (no dot entries), sorted; at most max. Returns count
 * (0 when absent) or -errno. */
static int list_dir(int dirfd, const char *rel, char ***out, unsigned max)
{
	int fd, n, k = 0;
	DIR *d;
	char **names;
	struct dirent *de;

	*out = NULL;
	fd = openat(dirfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return (errno == ENOENT || errno == ENOTDIR) ? 0 : -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	names = calloc(max ? max : 1, sizeof(*names));
	if (!names) {
		closedir(d);
		return -ENOMEM;
	}
	while ((de = readdir(d)) && (unsigned)k < max) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= 64)
			continue;
		names[k] = strdup(de->d_name);
		if (!names[k]) {
			for (int i = 0; i < k; i++)
				free(names[i]);
			free(names);
			closedir(d);
			return -ENOMEM;
		}
		k++;
	}
	closedir(d);
	n = k;
	/* Natural order for numbers ("2" before "10"), else by name. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && strverscmp(names[j - 1], names[j]) > 0; j--) {
			char *t = names[j];

			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	*out = names;
	return n;
}

static void free_names(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The netdev of port N of the device at devfd. */
static void find_netdev(int devfd, unsigned port, char *out, size_t outlen)
{
	char rel[128], name[64];
	char **nets;
	int n;

	out[0] = '\0';
	/* RoCE: GID 0 of the port is bound to the port's netdev. */
	snprintf(rel, sizeof(rel), "ports/%u/gid_attrs/ndevs/0", port);
	if (read_attr(devfd, rel, name, sizeof(name)) == 0 && valid_ifname(name) &&
	    strlen(name) < outlen) {
		memcpy(out, name, strlen(name) + 1);
		return;
	}
	/* The PCI function's netdevs; pick by dev_port when there are several. */
	n = list_dir(devfd, "device/net", &nets, 64);
	if (n <= 0)
		return;
	for (int i = 0; i < n; i++) {
		char v[32];

		if (!valid_ifname(nets[i]) || strlen(nets[i]) >= outlen)
			continue;
		snprintf(rel, sizeof(rel), "device/net/%s/dev_port", nets[i]);
		if (n == 1 || (read_attr(devfd, rel, v, sizeof(v)) == 0 &&
			       strtoul(v, NULL, 10) + 1 == port)) {
			memcpy(out, nets[i], strlen(nets[i]) + 1);
			break;
		}
	}
	free_names(nets, n);
}

static int port_cmp(const void *a, const void *b)
{
	const struct rdma_port_info *x = a, *y = b;
	int c = strverscmp(x->dev, y->dev);

	if (c)
		return c;
	return (x->port > y->port) - (x->port < y->port);
}

static const char *const state_names[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
};
static const char *const phys_names[] = {
	"", "Sleep", "Polling", "Disabled", "PortConfigurationTraining",
	"LinkUp", "LinkErrorRecovery", "Phy Test",
};

/* Real root only: ask the verbs provider for state and link layer. Devices
 * without a provider keep their sysfs values. */
static void refine_with_verbs(struct rdma_port_info *v, size_t n)
{
	struct ibv_device **list;
	int nd = 0;

	list = ibv_get_device_list(&nd);
	if (!list)
		return;
	for (int d = 0; d < nd; d++) {
		const char *name = ibv_get_device_name(list[d]);
		struct ibv_context *ctx;
		int have = 0;

		if (!name)
			continue;
		for (size_t i = 0; i < n; i++)
			have |= !strcmp(v[i].dev, name);
		if (!have)
			continue;
		ctx = ibv_open_device(list[d]);
		if (!ctx)
			continue;
		for (size_t i = 0; i < n; i++) {
			struct ibv_port_attr pa;

			if (strcmp(v[i].dev, name) || v[i].port > 255)
				continue;
			memset(&pa, 0, sizeof(pa));
			if (ibv_query_port(ctx, (uint8_t)v[i].port, &pa))
				continue;
			v[i].state = (int)pa.state;
			snprintf(v[i].state_name, sizeof(v[i].state_name), "%s",
				 (unsigned)pa.state < sizeof(state_names) / sizeof(state_names[0]) ?
				 state_names[pa.state] : "");
			v[i].phys_state = pa.phys_state;
			snprintf(v[i].phys_state_name, sizeof(v[i].phys_state_name), "%s",
				 pa.phys_state < sizeof(phys_names) / sizeof(phys_names[0]) ?
				 phys_names[pa.phys_state] : "");
			if (pa.link_layer == IBV_LINK_LAYER_ETHERNET)
				snprintf(v[i].link_layer, sizeof(v[i].link_layer), "Ethernet");
			else if (pa.link_layer == IBV_LINK_LAYER_INFINIBAND ||
				 pa.link_layer == IBV_LINK_LAYER_UNSPECIFIED)
				snprintf(v[i].link_layer, sizeof(v[i].link_layer), "InfiniBand");
			snprintf(v[i].source, sizeof(v[i].source), "verbs");
		}
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
}

int rdma_disc_list(const char *sysfs_root, struct rdma_port_info **out,
		   size_t *n, char *err, size_t errlen)
{
	const char *root = sysfs_root ? sysfs_root : "";
	struct rdma_port_info *v = NULL;
	size_t nv = 0, cap = 0;
	char path[PATH_MAX];
	char **devs;
	int classfd, nd, rc = 0;

	*out = NULL;
	*n = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/sys/class/infiniband", root) >=
	    sizeof(path)) {
		util_errf(err, errlen, "rdma discovery: sysfs root too long");
		return -ENAMETOOLONG;
	}
	classfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (classfd < 0) {
		if (errno == ENOENT)
			return 0;       /* no RDMA on this host */
		rc = -errno;
		util_errf(err, errlen, "rdma discovery: %s: %s", path, strerror(-rc));
		return rc;
	}
	nd = list_dir(classfd, ".", &devs, 256);
	if (nd < 0) {
		util_errf(err, errlen, "rdma discovery: %s: %s", path, strerror(-nd));
		close(classfd);
		return nd;
	}
	for (int d = 0; d < nd && rc == 0; d++) {
		char **ports;
		int devfd, np;

		devfd = openat(classfd, devs[d], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (devfd < 0)
			continue;   /* vanished or not a directory */
		np = list_dir(devfd, "ports", &ports, 64);
		for (int p = 0; p < np; p++) {
			struct rdma_port_info *pi;
			char rel[128], buf[64];
			unsigned long pn;
			char *end;

			pn = strtoul(ports[p], &end, 10);
			if (*end || pn < 1 || pn > 65535)
				continue;
			if (nv == RDMA_DISC_MAX_PORTS)
				break;
			if (nv == cap) {
				size_t nc = cap ? cap * 2 : 8;
				struct rdma_port_info *nvp = realloc(v, nc * sizeof(*v));

				if (!nvp) {
					rc = -ENOMEM;
					util_errf(err, errlen, "rdma discovery: out of memory");
					break;
				}
				v = nvp;
				cap = nc;
			}
			pi = &v[nv++];
			memset(pi, 0, sizeof(*pi));
			snprintf(pi->dev, sizeof(pi->dev), "%s", devs[d]);
			pi->port = (unsigned)pn;
			snprintf(pi->source, sizeof(pi->source), "sysfs");
			snprintf(rel, sizeof(rel), "ports/%u/state", pi->port);
			pi->state = -1;
			if (read_attr(devfd, rel, buf, sizeof(buf)) == 0)
				parse_state(buf, &pi->state, pi->state_name,
					    sizeof(pi->state_name));
			snprintf(rel, sizeof(rel), "ports/%u/phys_state", pi->port);
			pi->phys_state = -1;
			if (read_attr(devfd, rel, buf, sizeof(buf)) == 0)
				parse_state(buf, &pi->phys_state, pi->phys_state_name,
					    sizeof(pi->phys_state_name));
			snprintf(rel, sizeof(rel), "ports/%u/link_layer", pi->port);
			if (read_attr(devfd, rel, pi->link_layer, sizeof(pi->link_layer)) < 0)
				pi->link_layer[0] = '\0';
			snprintf(rel, sizeof(rel), "ports/%u/rate", pi->port);
			if (read_attr(devfd, rel, pi->rate, sizeof(pi->rate)) < 0)
				pi->rate[0] = '\0';
			find_netdev(devfd, pi->port, pi->netdev, sizeof(pi->netdev));
		}
		if (np > 0)
			free_names(ports, np);
		close(devfd);
	}
	if (nd > 0)
		free_names(devs, nd);
	close(classfd);
	if (rc < 0) {
		free(v);
		return rc;
	}
	if (nv && !*root)
		refine_with_verbs(v, nv);
	if (nv)
		qsort(v, nv, sizeof(*v), port_cmp);
	if (!nv) {
		free(v);
		v = NULL;
	}
	*out = v;
	*n = nv;
	return 0;
}

void rdma_disc_free(struct rdma_port_info *list)
{
	free(list);
}

int rdma_disc_for_netdev(const char *sysfs_root, const char *ifname,
			 char *dev, size_t devlen, unsigned *port)
{
	struct rdma_port_info *v;
	char err[256];
	size_t n;
	int rc;

	if (!ifname || !*ifname)
		return -EINVAL;
	rc = rdma_disc_list(sysfs_root, &v, &n, err, sizeof(err));
	if (rc < 0)
		return rc;
	rc = -ENOENT;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].netdev, ifname))
			continue;
		if (strlen(v[i].dev) >= devlen) {
			rc = -ENAMETOOLONG;
			break;
		}
		memcpy(dev, v[i].dev, strlen(v[i].dev) + 1);
		*port = v[i].port;
		rc = 0;
		break;
	}
	rdma_disc_free(v);
	return rc;
}
