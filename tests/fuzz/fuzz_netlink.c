/* libFuzzer target: netlink replies as the daemon receives them, through
 * each parser (all go through nl_msgs_check first): rtnetlink links, the
 * RDMA replies' check and GET, devlink info, sock_diag, devlink health
 * (reply framing, device, port, reporter, fmsg).
 *
 * Input: SEL, MUT, LEN, then the received bytes. SEL picks the parser;
 * when MUT has bit 7 set, the nlmsg_len of message MUT & 7 is replaced by
 * 0x80000000 | LEN (the lengths mnl_nlmsg_ok() lets through as negative
 * ints), else by LEN when MUT has bit 6 set. Seeds: the recorded devlink
 * replies (tests/fixtures/devlink/ *.nlhex) and tests/fuzz/seeds/netlink. */
#include "tests/fuzz/fuzz.h"

#include <arpa/inet.h>
#include <json-c/json.h>
#include <libmnl/libmnl.h>
#include <linux/devlink.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "collectors/counters/devlink_health.h"
#include "collectors/flows/flow_sockdiag.h"
#include "collectors/flows/flowsel.h"
#include "collectors/counters/ident.h"
#include "collectors/flows/rdma_nl_parse.h"
#include "lib/rtnl.h"

static struct flow_sel sel[2];

static void emit(const struct flow_obs *o, void *arg)
{
	(void)o;
	(void)arg;
}

/* ---- seeds: FUZZ_MKSEEDS=DIR writes them and exits ---- */

static void seed(const char *dir, const char *name, unsigned sel, const void *buf, size_t len)
{
	char path[512];
	unsigned char hdr[3] = { (unsigned char)sel, 0, 0 };
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(hdr, 1, 3, f) != 3 || fwrite(buf, 1, len, f) != len || fclose(f))
		abort();
}

/* A dump of the kernel's own, as received (blocking: a tool, not the
 * daemon). */
static size_t dump(int proto, struct nlmsghdr *req, unsigned char *out, size_t cap)
{
	struct mnl_socket *nl = mnl_socket_open(proto);
	size_t off = 0;

	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_sendto(nl, req, req->nlmsg_len) < 0)
		abort();
	while (off < cap) {
		ssize_t n = mnl_socket_recvfrom(nl, out + off, cap - off);
		const struct nlmsghdr *h = (const void *)(out + off);

		if (n <= 0)
			break;
		off += (size_t)n;
		if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR || off > cap / 2)
			break;
	}
	mnl_socket_close(nl);
	return off;
}

static void mkseeds(const char *dir)
{
	static unsigned char buf[65536], rx[1 << 20];
	struct nlmsghdr *nlh;
	struct nlattr *nest, *e;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int ls, cs;

	/* rtnetlink: the links of this namespace */
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg));
	seed(dir, "rtnl-link-dump", 0, rx, dump(NETLINK_ROUTE, nlh, rx, sizeof(rx)));
	/* sock_diag: a loopback TCP connection of our own */
	ls = socket(AF_INET, SOCK_STREAM, 0);
	cs = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || cs < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(ls, 1) < 0 || getsockname(ls, (struct sockaddr *)&sa, &sl) < 0 ||
	    connect(cs, (struct sockaddr *)&sa, sizeof(sa)) < 0 || write(cs, "ping", 4) != 4)
		abort();
	{
		struct inet_diag_req_v2 *r;

		memset(buf, 0, sizeof(buf));
		nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		r = mnl_nlmsg_put_extra_header(nlh, sizeof(*r));
		r->sdiag_family = AF_INET;
		r->sdiag_protocol = IPPROTO_TCP;
		r->idiag_states = ~0u;
		r->idiag_ext = (1 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_MEMINFO - 1));
		seed(dir, "sockdiag-tcp-dump", 4, rx, dump(NETLINK_SOCK_DIAG, nlh, rx, sizeof(rx)));
	}
	close(cs);
	close(ls);
	/* RDMA: a STAT_GET reply as the kernel builds it (nldev) */
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_STAT_GET;
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	nest = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	for (unsigned i = 0; i < 4; i++) {
		const char *names[4] = { "out_of_buffer", "out_of_sequence", "duplicate_request",
					 "rnr_nak_retry_err" };

		e = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, names[i]);
		mnl_attr_put(nlh, RDMA_NLDEV_ATTR_PAD, 0, "");
		mnl_attr_put_u64(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 1000u * i);
		mnl_attr_nest_end(nlh, e);
	}
	mnl_attr_nest_end(nlh, nest);
	seed(dir, "rdma-stat-get", 1, buf, nlh->nlmsg_len);
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_GET;
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
	seed(dir, "rdma-get", 2, buf, nlh->nlmsg_len);
	/* devlink info: driver name, fixed psid, running fw */
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = 0x14;
	mnl_nlmsg_put_extra_header(nlh, 4);
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_DRIVER_NAME, "mlx5_core");
	nest = mnl_attr_nest_start(nlh, DEVLINK_ATTR_INFO_VERSION_FIXED);
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_VERSION_NAME, "fw.psid");
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_VERSION_VALUE, "MT_0000000359");
	mnl_attr_nest_end(nlh, nest);
	nest = mnl_attr_nest_start(nlh, DEVLINK_ATTR_INFO_VERSION_RUNNING);
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_VERSION_NAME, "fw.version");
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_VERSION_VALUE, "22.36.1010");
	mnl_attr_nest_end(nlh, nest);
	seed(dir, "devlink-info", 3, buf, nlh->nlmsg_len);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[128];

	(void)argc;
	(void)argv;
	fz_quiet();
	if (getenv("FUZZ_MKSEEDS")) {
		mkseeds(getenv("FUZZ_MKSEEDS"));
		exit(0);
	}
	if (flow_sel_parse("tcp port 1-65535", &sel[0], err, sizeof(err)) < 0 ||
	    flow_sel_parse("udp 10.0.0.0/8", &sel[1], err, sizeof(err)) < 0)
		abort();
	return 0;
}

static void mutate(unsigned char *buf, size_t len, unsigned mut, unsigned val)
{
	size_t off = 0;

	for (unsigned k = 0; off + 16 <= len; k++) {
		uint32_t l;

		memcpy(&l, buf + off, 4);
		if (k == (mut & 7)) {
			l = (mut & 0x80) ? 0x80000000u | val : val;
			memcpy(buf + off, &l, 4);
			return;
		}
		if (l < 16)
			return;
		off += ((size_t)l + 3) & ~(size_t)3;
	}
}

static void devlink_health(const unsigned char *buf, size_t len)
{
	struct dlh_reply r;
	const struct nlmsghdr *nlh;
	char err[256];
	size_t off;

	dlh_reply_init(&r, 1);
	if (dlh_reply_feed(&r, buf, len, 0, 0, 0, err, sizeof(err)) >= 0) {
		dlh_reply_for_each(&r, nlh, off) {
			size_t left = r.len - off;
			struct dlh_dev d;
			struct dlh_port p;
			struct dlh_reporter rep;
			uint16_t fam;
			uint32_t grp;

			dlh_parse_family(nlh, left, &fam, &grp, err, sizeof(err));
			dlh_parse_dev(nlh, left, 0, &d, err, sizeof(err));
			dlh_parse_port(nlh, left, 0, &p, err, sizeof(err));
			dlh_parse_reporter(nlh, left, 0, &rep, err, sizeof(err));
			if (nlh->nlmsg_len < 16)
				break;
		}
		for (int cmd = 0; cmd < 2; cmd++) {
			struct dlh_diag d = { 0 };
			struct json_object *tree = NULL;

			dlh_parse_fmsg(&r, 0, cmd ? DEVLINK_CMD_HEALTH_REPORTER_DUMP_GET :
				       DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, "rx", &d, &tree, err,
				       sizeof(err));
			dlh_diag_free(&d);
			json_object_put(tree);
		}
	}
	dlh_reply_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256], name[64];
	struct nl_link links[16];
	struct ident id;
	unsigned char *buf;
	unsigned n;
	uint32_t idx;
	size_t len;

	if (size < 3)
		return 0;
	len = size - 3;
	buf = malloc(len ? len : 1);    /* aligned, exactly len bytes */
	if (!buf)
		abort();
	memcpy(buf, data + 3, len);
	if (data[1] & 0xc0)
		mutate(buf, len, data[1], data[2]);
	switch (data[0] % 6) {
	case 0:
		nl_link_parse_buf(buf, len, links, 16, &n);
		break;
	case 1:
		rdma_nl_msg_check(buf, len, err, sizeof(err));
		break;
	case 2:
		rdma_nl_parse_dev(buf, len, &idx, name, sizeof(name), err, sizeof(err));
		break;
	case 3:
		memset(&id, 0, sizeof(id));
		ident_parse_devlink_info(buf, len, &id);
		break;
	case 4:
		sockdiag_parse(buf, len, sel, data[1] & 1 ? 2 : 0, 1000000000ull, emit, NULL);
		break;
	case 5:
		devlink_health(buf, len);
		break;
	}
	free(buf);
	return 0;
}
