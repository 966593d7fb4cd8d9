/* Unit tests for collectors/devlink_health.c on replies built byte for byte
 * the way the kernel builds them (net/devlink/health.c), for a ConnectX-6
 * Dx: the recorded fixtures under tests/fixtures/devlink/ are written by
 * this file (`test_devlink_health --write-fixtures DIR`) and a test checks
 * that the committed ones are still exactly what it builds.
 *
 * The model of the kernel, in the order the kernel does it:
 *  - devlink_fmsg_*_put/_pair_put/_nest_start/_end append items to a list;
 *  - devlink_fmsg_snd sends parts: genlmsg_put(NLM_F_MULTI), then
 *    devlink_fmsg_prepare_skb puts one DEVLINK_ATTR_FMSG nest with as many
 *    items as fit (flags for the nests, OBJ_NAME strings, OBJ_VALUE_TYPE u8
 *    then OBJ_VALUE_DATA; when the data does not fit the type stays at the
 *    end of the part and the item is sent again in the next one); then
 *    NLMSG_DONE (no payload), then netlink_ack's ack (NLM_F_CAPPED);
 *  - a part holds at most NLMSG_GOODSIZE bytes: SKB_WITH_OVERHEAD(4096) =
 *    4096 - 320 (x86_64 skb_shared_info), 3776;
 *  - devlink_nl_health_reporter_fill for HEALTH_REPORTER_GET, one message
 *    per reporter in a dump (NLM_F_MULTI) closed by NLMSG_DONE carrying
 *    an int 0;
 *  - u64 attributes with nla_put_u64_64bit: no DEVLINK_ATTR_PAD on x86_64
 *    (efficient unaligned access); the "pad64" variant adds the pads an
 *    architecture without it would. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libmnl/libmnl.h>
#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "collectors/counters.h"
#include "collectors/devlink_health.h"
#include "lib/log.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define FIXDIR "tests/fixtures/devlink"
#define FAMILY 0x14              /* the id the ctrl reply gives "devlink" */
#define PORTID 4242u
#define GOODSIZE 3776u
#define BURST_ATTR 181           /* DEVLINK_ATTR_HEALTH_REPORTER_BURST_PERIOD */

/* ================================================================ buffers */

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void *bput(struct buf *b, size_t n)
{
	void *at;

	if (!b->p || b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 8192;

		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		assert_non_null(b->p);
		b->cap = cap;
	}
	at = b->p + b->len;
	memset(at, 0, n);
	b->len += n;
	return at;
}

static void bfree(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* Room for one message at the end of b: libmnl writes into it. */
static struct nlmsghdr *msg_begin(struct buf *b, uint16_t type, uint16_t flags,
				  uint32_t seq)
{
	struct nlmsghdr *nlh;

	bput(b, 65536);
	b->len -= 65536;
	nlh = mnl_nlmsg_put_header(b->p + b->len);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = PORTID;
	return nlh;
}

static void msg_end(struct buf *b, struct nlmsghdr *nlh)
{
	b->len += NLMSG_ALIGN(nlh->nlmsg_len);
}

static struct nlmsghdr *genl_begin(struct buf *b, uint16_t type, uint16_t flags,
				   uint32_t seq, uint8_t cmd)
{
	struct nlmsghdr *nlh = msg_begin(b, type, flags, seq);
	struct genlmsghdr *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));

	g->cmd = cmd;
	g->version = type == GENL_ID_CTRL ? 2 : DEVLINK_GENL_VERSION;
	return nlh;
}

static void put_done(struct buf *b, uint32_t seq, int with_int)
{
	struct nlmsghdr *nlh = msg_begin(b, NLMSG_DONE, NLM_F_MULTI, seq);

	if (with_int) {
		int *v = mnl_nlmsg_put_extra_header(nlh, sizeof(int));

		*v = 0;
	}
	msg_end(b, nlh);
}

/* netlink_ack: the error, the request's header (capped), extack TLVs. */
static void put_ack(struct buf *b, uint32_t seq, int error, const char *extack)
{
	struct nlmsghdr *nlh = msg_begin(b, NLMSG_ERROR, NLM_F_CAPPED, seq);
	struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));

	e->error = error;
	e->msg.nlmsg_len = 64;
	e->msg.nlmsg_type = FAMILY;
	e->msg.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	e->msg.nlmsg_seq = seq;
	e->msg.nlmsg_pid = PORTID;
	if (extack) {
		nlh->nlmsg_flags |= NLM_F_ACK_TLVS;
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, extack);
	}
	msg_end(b, nlh);
}

/* nla_nest_start_noflag: the kernel opens DEVLINK_ATTR_FMSG,
 * DEVLINK_ATTR_HEALTH_REPORTER and the ctrl family's groups without
 * NLA_F_NESTED (libmnl always sets it). */
static struct nlattr *nest_noflag(struct nlmsghdr *nlh, uint16_t type)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, type);

	n->nla_type = type;
	return n;
}

/* ================================================================ fmsg model */

struct kitem {
	uint16_t attr;
	uint8_t type;
	uint16_t len;
	uint8_t val[300];
};

struct kf {
	struct kitem *it;
	unsigned n;
};

static void kinit(struct kf *k)
{
	k->it = calloc(8192, sizeof(*k->it));
	assert_non_null(k->it);
	k->n = 0;
}

static void kfree(struct kf *k)
{
	free(k->it);
	k->it = NULL;
}

static struct kitem *kadd(struct kf *k, uint16_t attr)
{
	assert_true(k->n < 8192);
	memset(&k->it[k->n], 0, sizeof(k->it[0]));
	k->it[k->n].attr = attr;
	return &k->it[k->n++];
}

static void obj_start(struct kf *k) { kadd(k, DEVLINK_ATTR_FMSG_OBJ_NEST_START); }
static void nest_end(struct kf *k) { kadd(k, DEVLINK_ATTR_FMSG_NEST_END); }

static void pair_start(struct kf *k, const char *name)
{
	struct kitem *i;

	kadd(k, DEVLINK_ATTR_FMSG_PAIR_NEST_START);
	i = kadd(k, DEVLINK_ATTR_FMSG_OBJ_NAME);
	i->type = 10;
	i->len = (uint16_t)(strlen(name) + 1);
	memcpy(i->val, name, i->len);
}

static void arr_pair_start(struct kf *k, const char *name)
{
	pair_start(k, name);
	kadd(k, DEVLINK_ATTR_FMSG_ARR_NEST_START);
}

static void arr_pair_end(struct kf *k)
{
	nest_end(k);
	nest_end(k);
}

/* mlx5e_health_fmsg_named_obj_nest_start/_end */
static void named_obj_start(struct kf *k, const char *name)
{
	pair_start(k, name);
	obj_start(k);
}

static void named_obj_end(struct kf *k)
{
	nest_end(k);
	nest_end(k);
}

static void put_value(struct kf *k, uint8_t type, const void *v, uint16_t len)
{
	struct kitem *i = kadd(k, DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA);

	assert_true(len <= sizeof(i->val));
	i->type = type;
	i->len = len;
	memcpy(i->val, v, len);
}

static void u8_pair(struct kf *k, const char *name, uint8_t v)
{
	pair_start(k, name);
	put_value(k, 1, &v, 1);
	nest_end(k);
}

static void u32_pair(struct kf *k, const char *name, uint32_t v)
{
	pair_start(k, name);
	put_value(k, 3, &v, 4);
	nest_end(k);
}

static void u64_pair(struct kf *k, const char *name, uint64_t v)
{
	pair_start(k, name);
	put_value(k, 4, &v, 8);
	nest_end(k);
}

static void bool_pair(struct kf *k, const char *name, int v)
{
	uint8_t b = !!v;

	pair_start(k, name);
	put_value(k, 6, &b, 1);
	nest_end(k);
}

static void string_pair(struct kf *k, const char *name, const char *v)
{
	pair_start(k, name);
	put_value(k, 10, v, (uint16_t)(strlen(v) + 1));
	nest_end(k);
}

/* devlink_fmsg_snd over devlink_fmsg_prepare_skb. */
static void kf_send(const struct kf *k, struct buf *b, uint8_t cmd, uint32_t seq,
		    size_t part_max, int pad64, int dump)
{
	unsigned idx = 0;

	for (;;) {
		struct nlmsghdr *nlh = genl_begin(b, FAMILY,
						  dump ? NLM_F_ACK | NLM_F_MULTI : NLM_F_MULTI,
						  seq, cmd);
		struct nlattr *nest = nest_noflag(nlh, DEVLINK_ATTR_FMSG);
		unsigned start = idx;

		for (unsigned i = idx; i < k->n; i++) {
			const struct kitem *it = &k->it[i];
			size_t room = part_max - nlh->nlmsg_len;

			if (it->attr == DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA) {
				size_t need;

				if (room < 8)
					break;
				mnl_attr_put_u8(nlh, DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE, it->type);
				room -= 8;
				need = (size_t)MNL_ALIGN(4 + it->len);
				if (pad64 && it->type == 4 &&
				    ((nlh->nlmsg_len + 4) & 7))
					need += 4;
				if (room < need)
					break;    /* the type stays: kernel behaviour */
				if (pad64 && it->type == 4 && ((nlh->nlmsg_len + 4) & 7))
					mnl_attr_put(nlh, DEVLINK_ATTR_PAD, 0, NULL);
				mnl_attr_put(nlh, DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA, it->len, it->val);
			} else if (it->attr == DEVLINK_ATTR_FMSG_OBJ_NAME) {
				if (room < (size_t)MNL_ALIGN(4 + it->len))
					break;
				mnl_attr_put(nlh, it->attr, it->len, it->val);
			} else {
				if (room < 4)
					break;
				mnl_attr_put(nlh, it->attr, 0, NULL);
			}
			idx = i + 1;
		}
		mnl_attr_nest_end(nlh, nest);
		msg_end(b, nlh);
		assert_true(idx > start);         /* the kernel gives up: -EMSGSIZE */
		if (idx == k->n)
			break;
	}
	if (dump) {
		put_done(b, seq, 1);
	} else {
		put_done(b, seq, 0);
		put_ack(b, seq, 0, NULL);
	}
}

/* ================================================================ the card */

/* A ConnectX-6 Dx, two ports, kernel 6.8 layout: fw, fw_fatal, vnic on the
 * PCI instance; tx, rx on the auxiliary mlx5e instance's port. The "k5.15"
 * variant has no vnic reporter and the netdev port on the PCI instance. */
struct card {
	int k515;                 /* kernel 5.15 layout, no vnic */
	int pad64;
	int rx_errors;            /* the rx reporter recovered this often */
	uint64_t steer;           /* nic_receive_steering_discard */
	unsigned channels;
};

static const struct card cx6dx = { 0, 0, 2, 1843, 8 };
static const char *netdev0 = "enp8s0f0np0";     /* --write-set --netdev */
static const struct card cx6dx_k515 = { 1, 0, 0, 0, 8 };

static void family_reply(struct buf *b)
{
	struct nlmsghdr *nlh = genl_begin(b, GENL_ID_CTRL, 0, 1001, CTRL_CMD_NEWFAMILY);
	struct nlattr *g, *g1;

	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, DEVLINK_GENL_NAME);
	mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, FAMILY);
	mnl_attr_put_u32(nlh, CTRL_ATTR_VERSION, DEVLINK_GENL_VERSION);
	mnl_attr_put_u32(nlh, CTRL_ATTR_HDRSIZE, 0);
	mnl_attr_put_u32(nlh, CTRL_ATTR_MAXATTR, 180);
	g = nest_noflag(nlh, CTRL_ATTR_MCAST_GROUPS);
	g1 = nest_noflag(nlh, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_MCAST_GRP_NAME, "config");
	mnl_attr_put_u32(nlh, CTRL_ATTR_MCAST_GRP_ID, 7);
	mnl_attr_nest_end(nlh, g1);
	mnl_attr_nest_end(nlh, g);
	msg_end(b, nlh);
	put_ack(b, 1001, 0, NULL);
}

static void dev_reply(struct buf *b, const struct card *c)
{
	for (int pf = 0; pf < 2; pf++) {
		struct nlmsghdr *nlh = genl_begin(b, FAMILY, NLM_F_MULTI, 1002, DEVLINK_CMD_NEW);
		char dev[32];

		snprintf(dev, sizeof(dev), "0000:08:00.%d", pf);
		mnl_attr_put_strz(nlh, DEVLINK_ATTR_BUS_NAME, "pci");
		mnl_attr_put_strz(nlh, DEVLINK_ATTR_DEV_NAME, dev);
		mnl_attr_put_u8(nlh, DEVLINK_ATTR_RELOAD_FAILED, 0);
		if (!c->k515) {
			struct nlattr *n = mnl_attr_nest_start(nlh, DEVLINK_ATTR_NESTED_DEVLINK);

			snprintf(dev, sizeof(dev), "mlx5_core.eth.%d", pf);
			mnl_attr_put_strz(nlh, DEVLINK_ATTR_BUS_NAME, "auxiliary");
			mnl_attr_put_strz(nlh, DEVLINK_ATTR_DEV_NAME, dev);
			mnl_attr_nest_end(nlh, n);
		}
		msg_end(b, nlh);
	}
	for (int pf = 0; !c->k515 && pf < 2; pf++) {
		struct nlmsghdr *nlh = genl_begin(b, FAMILY, NLM_F_MULTI, 1002, DEVLINK_CMD_NEW);
		char dev[32];

		snprintf(dev, sizeof(dev), "mlx5_core.eth.%d", pf);
		mnl_attr_put_strz(nlh, DEVLINK_ATTR_BUS_NAME, "auxiliary");
		mnl_attr_put_strz(nlh, DEVLINK_ATTR_DEV_NAME, dev);
		mnl_attr_put_u8(nlh, DEVLINK_ATTR_RELOAD_FAILED, 0);
		msg_end(b, nlh);
	}
	put_done(b, 1002, 1);
}

static void port_reply(struct buf *b, const struct card *c)
{
	for (int pf = 0; pf < 2; pf++) {
		struct nlmsghdr *nlh = genl_begin(b, FAMILY, NLM_F_MULTI, 1003,
						  DEVLINK_CMD_PORT_NEW);
		char dev[32], nd[16];

		snprintf(dev, sizeof(dev), c->k515 ? "0000:08:00.%d" : "mlx5_core.eth.%d", pf);
		snprintf(nd, sizeof(nd), "enp8s0f%dnp%d", pf, pf);
		if (!pf)
			snprintf(nd, sizeof(nd), "%s", netdev0);
		mnl_attr_put_strz(nlh, DEVLINK_ATTR_BUS_NAME, c->k515 ? "pci" : "auxiliary");
		mnl_attr_put_strz(nlh, DEVLINK_ATTR_DEV_NAME, dev);
		mnl_attr_put_u32(nlh, DEVLINK_ATTR_PORT_INDEX, pf ? 131071 : 65535);
		mnl_attr_put_u16(nlh, DEVLINK_ATTR_PORT_TYPE, DEVLINK_PORT_TYPE_ETH);
		mnl_attr_put_u32(nlh, DEVLINK_ATTR_PORT_NETDEV_IFINDEX, (uint32_t)(4 + pf));
		mnl_attr_put_strz(nlh, DEVLINK_ATTR_PORT_NETDEV_NAME, nd);
		mnl_attr_put_u16(nlh, DEVLINK_ATTR_PORT_FLAVOUR, DEVLINK_PORT_FLAVOUR_PHYSICAL);
		mnl_attr_put_u32(nlh, DEVLINK_ATTR_PORT_NUMBER, (uint32_t)pf);
		mnl_attr_put_u8(nlh, DEVLINK_ATTR_PORT_SPLITTABLE, 0);
		msg_end(b, nlh);
	}
	put_done(b, 1003, 1);
}

struct krep {
	const char *name;
	int port;                 /* a port reporter */
	int recover, dump;        /* ops->recover, ops->dump */
	uint64_t grace, errors, recovers;
	int stored_dump;
	int burst;                /* add BURST_PERIOD (newer kernels) */
};

/* devlink_nl_health_reporter_fill */
static void reporter_msg(struct buf *b, const char *bus, const char *dev,
			 uint32_t port, const struct krep *r, uint8_t state,
			 int pad64)
{
	struct nlmsghdr *nlh = genl_begin(b, FAMILY, NLM_F_MULTI, 1004,
					  DEVLINK_CMD_HEALTH_REPORTER_GET);
	struct nlattr *n;

#define U64(t, v) do { \
	if (pad64 && ((nlh->nlmsg_len + 4) & 7)) \
		mnl_attr_put(nlh, DEVLINK_ATTR_PAD, 0, NULL); \
	mnl_attr_put_u64(nlh, t, v); } while (0)
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_BUS_NAME, bus);
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_DEV_NAME, dev);
	if (r->port)
		mnl_attr_put_u32(nlh, DEVLINK_ATTR_PORT_INDEX, port);
	n = nest_noflag(nlh, DEVLINK_ATTR_HEALTH_REPORTER);
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_HEALTH_REPORTER_NAME, r->name);
	mnl_attr_put_u8(nlh, DEVLINK_ATTR_HEALTH_REPORTER_STATE, state);
	U64(DEVLINK_ATTR_HEALTH_REPORTER_ERR_COUNT, r->errors);
	U64(DEVLINK_ATTR_HEALTH_REPORTER_RECOVER_COUNT, r->recovers);
	if (r->recover)
		U64(DEVLINK_ATTR_HEALTH_REPORTER_GRACEFUL_PERIOD, r->grace);
	if (r->recover && r->burst)
		U64(BURST_ATTR, 0);
	if (r->recover)
		mnl_attr_put_u8(nlh, DEVLINK_ATTR_HEALTH_REPORTER_AUTO_RECOVER, 1);
	if (r->stored_dump) {
		U64(DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS, 86412345);
		U64(DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS_NS, 1764576000123456789ull);
	}
	if (r->dump)
		mnl_attr_put_u8(nlh, DEVLINK_ATTR_HEALTH_REPORTER_AUTO_DUMP, 1);
#undef U64
	mnl_attr_nest_end(nlh, n);
	msg_end(b, nlh);
}

/* A dump of every instance, the way kernels before 6.4 answer even a
 * request with a handle: the parser has to filter. */
static void health_reply(struct buf *b, const struct card *c)
{
	for (int pf = 0; pf < 2; pf++) {
		char pci[32], aux[32];
		uint32_t port = pf ? 131071 : 65535;
		struct krep dev_reps[] = {
			{ "fw", 0, 0, 1, 0, 0, 0, 0, 0 },
			{ "fw_fatal", 0, 1, 1, 1200000, 0, 0, 0, 0 },
			{ "vnic", 0, 0, 0, 0, 0, 0, 0, 0 },
		};
		struct krep port_reps[] = {
			{ "tx", 1, 1, 1, 500, 0, 0, 0, 0 },
			{ "rx", 1, 1, 1, 500, pf ? 0 : (uint64_t)c->rx_errors,
			  pf ? 0 : (uint64_t)c->rx_errors, !pf && c->rx_errors, 0 },
		};

		snprintf(pci, sizeof(pci), "0000:08:00.%d", pf);
		snprintf(aux, sizeof(aux), "mlx5_core.eth.%d", pf);
		for (unsigned i = 0; i < 3; i++)
			if (!(c->k515 && !strcmp(dev_reps[i].name, "vnic")))
				reporter_msg(b, "pci", pci, 0, &dev_reps[i], 0, c->pad64);
		for (unsigned i = 0; i < 2; i++)
			reporter_msg(b, c->k515 ? "pci" : "auxiliary", c->k515 ? pci : aux, port,
				     &port_reps[i], 0, c->pad64);
	}
	put_done(b, 1004, 1);
}

/* mlx5_reporter_vnic_diagnose_counters, CX6 Dx capabilities */
static void vnic_fmsg(struct kf *k, const struct card *c)
{
	obj_start(k);                 /* devlink_nl_health_reporter_diagnose_doit */
	pair_start(k, "vNIC env counters");
	obj_start(k);
	u32_pair(k, "total_error_queues", 0);
	u32_pair(k, "send_queue_priority_update_flow", 0);
	u32_pair(k, "comp_eq_overrun", 0);
	u32_pair(k, "async_eq_overrun", 0);
	u32_pair(k, "cq_overrun", 0);
	u32_pair(k, "invalid_command", 0);
	u32_pair(k, "quota_exceeded_command", 0);
	u64_pair(k, "nic_receive_steering_discard", c->steer);
	u64_pair(k, "generated_pkt_steering_fail", 0);
	u64_pair(k, "handled_pkt_steering_fail", 0);
	nest_end(k);
	nest_end(k);
	nest_end(k);
}

/* mlx5e_rx_reporter_diagnose */
static void rx_fmsg(struct kf *k, const struct card *c)
{
	obj_start(k);
	named_obj_start(k, "Common config");
	named_obj_start(k, "RQ");
	u8_pair(k, "type", 1);
	u64_pair(k, "stride size", 2048);
	u32_pair(k, "size", 8);
	string_pair(k, "ts_format", "FRC");
	named_obj_start(k, "CQ");
	u64_pair(k, "stride size", 64);
	u32_pair(k, "size", 1024);
	named_obj_end(k);
	named_obj_end(k);
	named_obj_end(k);
	arr_pair_start(k, "RQs");
	for (unsigned i = 0; i < c->channels; i++) {
		obj_start(k);
		u32_pair(k, "channel ix", i);
		u32_pair(k, "rqn", 0x10c9 + i * 6);
		u8_pair(k, "HW state", 1);            /* MLX5_RQC_STATE_RDY */
		u8_pair(k, "SW state", 0x11);
		u32_pair(k, "WQE counter", 4660 + i);
		u32_pair(k, "posted WQEs", 7);
		u32_pair(k, "cc", 3 + i);
		named_obj_start(k, "CQ");
		u32_pair(k, "cqn", 0x4a3 + i * 4);
		u8_pair(k, "HW status", 0);
		u32_pair(k, "ci", 29781 + i);
		u32_pair(k, "size", 1024);
		named_obj_end(k);
		named_obj_start(k, "EQ");
		u8_pair(k, "eqn", (uint8_t)(7 + i));
		u32_pair(k, "irqn", 76 + i);
		u32_pair(k, "vecidx", 1 + i);
		u32_pair(k, "ci", 31 + i);
		u32_pair(k, "size", 1024);
		named_obj_end(k);
		named_obj_start(k, "ICOSQ");
		u32_pair(k, "sqn", 0x10ca + i * 6);
		u8_pair(k, "HW state", 1);
		u32_pair(k, "cc", 91 + i);
		u32_pair(k, "pc", 91 + i);
		u32_pair(k, "WQE size", 128);
		named_obj_start(k, "CQ");
		u32_pair(k, "cqn", 0x4a4 + i * 4);
		u32_pair(k, "cc", 91 + i);
		u32_pair(k, "size", 128);
		named_obj_end(k);
		named_obj_end(k);
		nest_end(k);
	}
	arr_pair_end(k);
	nest_end(k);
}

/* mlx5_fw_reporter_diagnose, healthy */
static void fw_fmsg(struct kf *k)
{
	obj_start(k);
	u8_pair(k, "Syndrome", 0);
	nest_end(k);
}

/* mlx5e_rx_reporter_dump_all_rqs, shortened: binary resource dumps */
static void rx_dump_fmsg(struct kf *k)
{
	uint8_t blob[256];

	for (unsigned i = 0; i < sizeof(blob); i++)
		blob[i] = (uint8_t)(i * 7 + 1);
	obj_start(k);
	named_obj_start(k, "RX Slice");
	arr_pair_start(k, "data");                  /* binary_pair_nest_start */
	put_value(k, 11, blob, sizeof(blob));
	arr_pair_end(k);
	named_obj_end(k);
	arr_pair_start(k, "RQs");
	obj_start(k);
	named_obj_start(k, "RQ");
	u32_pair(k, "index", 0x10c9);
	arr_pair_start(k, "data");
	put_value(k, 11, blob, 64);
	arr_pair_end(k);
	named_obj_end(k);
	nest_end(k);
	arr_pair_end(k);
	nest_end(k);
}

static void fmsg_reply(struct buf *b, void (*fill)(struct kf *, const struct card *),
		       const struct card *c, size_t part_max, int pad64)
{
	struct kf k;

	kinit(&k);
	fill(&k, c);
	kf_send(&k, b, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, 1005, part_max, pad64, 0);
	kfree(&k);
}

static void fw_fill(struct kf *k, const struct card *c)
{
	(void)c;
	fw_fmsg(k);
}

/* ================================================================ fixtures */

struct fixfile {
	const char *name, *comment;
	void (*make)(struct buf *b, const struct card *c);
};

static void mk_family(struct buf *b, const struct card *c) { (void)c; family_reply(b); }
static void mk_dev(struct buf *b, const struct card *c) { dev_reply(b, c); }
static void mk_port(struct buf *b, const struct card *c) { port_reply(b, c); }
static void mk_health(struct buf *b, const struct card *c) { health_reply(b, c); }
static void mk_vnic(struct buf *b, const struct card *c)
{
	fmsg_reply(b, vnic_fmsg, c, GOODSIZE, c->pad64);
}
static void mk_rx(struct buf *b, const struct card *c)
{
	fmsg_reply(b, rx_fmsg, c, GOODSIZE, c->pad64);
}
static void mk_fw(struct buf *b, const struct card *c)
{
	fmsg_reply(b, fw_fill, c, GOODSIZE, c->pad64);
}
/* fw_fatal has no diagnose op: devlink_nl_health_reporter_diagnose_doit
 * returns -EOPNOTSUPP, netlink_ack sends it */
static void mk_fw_fatal(struct buf *b, const struct card *c)
{
	(void)c;
	put_ack(b, 1005, -EOPNOTSUPP, NULL);
}
static void mk_rx_dump(struct buf *b, const struct card *c)
{
	struct kf k;

	(void)c;
	kinit(&k);
	rx_dump_fmsg(&k);
	kf_send(&k, b, DEVLINK_CMD_HEALTH_REPORTER_DUMP_GET, 1006, GOODSIZE, 0, 1);
	kfree(&k);
}

static const struct fixfile files_k68[] = {
	{ "family.nlhex", "genl ctrl getfamily devlink (CTRL_CMD_NEWFAMILY, ack)", mk_family },
	{ "dev-get.nlhex", "devlink dev show: 2 PCI instances nesting auxiliary/mlx5_core.eth.N", mk_dev },
	{ "port-get.nlhex", "devlink port show: auxiliary/mlx5_core.eth.0/65535 enp8s0f0np0, .1/131071 enp8s0f1np1", mk_port },
	{ "health-get.nlhex", "devlink health show (every instance): fw fw_fatal vnic tx rx per PF; rx of PF0 recovered twice, dump stored", mk_health },
	{ "diagnose-vnic.nlhex", "devlink health diagnose pci/0000:08:00.0 reporter vnic (mlx5_reporter_vnic_diagnose_counters)", mk_vnic },
	{ "diagnose-rx.nlhex", "devlink health diagnose auxiliary/mlx5_core.eth.0/65535 reporter rx: 8 channels, 3 NLM_F_MULTI parts", mk_rx },
	{ "diagnose-fw.nlhex", "devlink health diagnose pci/0000:08:00.0 reporter fw (Syndrome 0)", mk_fw },
	{ "diagnose-fw_fatal.nlhex", "devlink health diagnose reporter fw_fatal: no diagnose op, -EOPNOTSUPP", mk_fw_fatal },
	{ "dump-rx.nlhex", "devlink health dump show auxiliary/mlx5_core.eth.0/65535 reporter rx (dump, binary data)", mk_rx_dump },
	{ NULL, NULL, NULL },
};

static const struct fixfile files_k515[] = {
	{ "family.nlhex", "genl ctrl getfamily devlink (CTRL_CMD_NEWFAMILY, ack)", mk_family },
	{ "dev-get.nlhex", "devlink dev show: 2 PCI instances, no nested ones (kernel 5.15)", mk_dev },
	{ "port-get.nlhex", "devlink port show: pci/0000:08:00.0/65535 enp8s0f0np0, pci/0000:08:00.1/131071 enp8s0f1np1", mk_port },
	{ "health-get.nlhex", "devlink health show: fw fw_fatal tx rx per PF, no vnic reporter (kernel 5.15)", mk_health },
	{ "diagnose-rx.nlhex", "devlink health diagnose pci/0000:08:00.0/65535 reporter rx: 8 channels", mk_rx },
	{ NULL, NULL, NULL },
};

static const struct {
	const char *dir;
	const struct card *card;
	const struct fixfile *files;
} sets[] = {
	{ "cx6dx-k6.8", &cx6dx, files_k68 },
	{ "cx6dx-k5.15-novnic", &cx6dx_k515, files_k515 },
};

/* Hostile replies: what a broken or malicious kernel (or a corrupted
 * recording) could hand over. */
static void mk_truncated(struct buf *b)
{
	struct buf full = { 0 };

	mk_vnic(&full, &cx6dx);
	memcpy(bput(b, 150), full.p, 150);           /* cut inside message 1 */
	bfree(&full);
}

static void mk_garbage(struct buf *b)
{
	uint32_t x = 0x9e3779b9u;
	uint8_t *p = bput(b, 512);

	for (int i = 0; i < 512; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

static void mk_hugelen(struct buf *b)
{
	struct nlmsghdr *nlh = bput(b, 96);

	nlh->nlmsg_len = 0x80000001u;   /* (int) negative: mnl_nlmsg_ok says fine */
	nlh->nlmsg_type = FAMILY;
	nlh->nlmsg_flags = NLM_F_MULTI;
	nlh->nlmsg_seq = 1005;
	nlh->nlmsg_pid = PORTID;
}

static void mk_zerolen(struct buf *b)
{
	struct nlmsghdr *nlh = bput(b, 32);

	nlh->nlmsg_len = 0;
	nlh->nlmsg_type = FAMILY;
}

/* every message well framed, the fmsg cut before its root closes */
static void mk_open_fmsg(struct buf *b)
{
	struct kf k;

	kinit(&k);
	vnic_fmsg(&k, &cx6dx);
	k.n -= 3;                               /* drop the closing nests */
	kf_send(&k, b, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, 1005, GOODSIZE, 0, 0);
	kfree(&k);
}

static const struct {
	const char *name, *comment;
	void (*make)(struct buf *b);
} hostile[] = {
	{ "truncated.nlhex", "the vnic diagnose reply cut at byte 150 of its first message", mk_truncated },
	{ "garbage.nlhex", "512 bytes of xorshift noise", mk_garbage },
	{ "nlmsg_len-0x80000001.nlhex", "a header claiming 0x80000001 bytes, 96 bytes there", mk_hugelen },
	{ "nlmsg_len-0.nlhex", "a header with nlmsg_len 0", mk_zerolen },
	{ "open-fmsg.nlhex", "vnic diagnose, framing fine, fmsg root never closed (DONE and ack follow)", mk_open_fmsg },
};

static int write_fixtures(const char *root)
{
	char path[PATH_MAX], e[256];

	for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
		snprintf(path, sizeof(path), "%s/%s", root, sets[s].dir);
		mkdir(path, 0755);
		for (const struct fixfile *f = sets[s].files; f->name; f++) {
			struct buf b = { 0 };
			char c[512];

			f->make(&b, sets[s].card);
			snprintf(path, sizeof(path), "%s/%s/%s", root, sets[s].dir, f->name);
			snprintf(c, sizeof(c), "%s\nbuilt by tests/unit/test_devlink_health.c (--write-fixtures); format: README.md",
				 f->comment);
			if (dlh_nlhex_write(path, c, b.p, b.len, e, sizeof(e)) < 0) {
				fprintf(stderr, "%s\n", e);
				return 1;
			}
			bfree(&b);
		}
	}
	snprintf(path, sizeof(path), "%s/hostile", root);
	mkdir(path, 0755);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		struct buf b = { 0 };
		char c[512];

		hostile[i].make(&b);
		snprintf(path, sizeof(path), "%s/hostile/%s", root, hostile[i].name);
		snprintf(c, sizeof(c), "%s\nbuilt by tests/unit/test_devlink_health.c (--write-fixtures)",
			 hostile[i].comment);
		if (dlh_nlhex_write(path, c, b.p, b.len, e, sizeof(e)) < 0) {
			fprintf(stderr, "%s\n", e);
			return 1;
		}
		bfree(&b);
	}
	return 0;
}

/* For system tests: the cx6dx-k6.8 set into DIR (files replaced
 * atomically, so a running daemon reads old or new, never half), with PF0's
 * netdev, steering discards and rx reporter errors as given:
 *   test_devlink_health --write-set DIR [--netdev NAME] [--steer N]
 *                       [--rx-errors N] */
static int write_set(int argc, char **argv)
{
	struct card c = cx6dx;
	char path[PATH_MAX], e[256];

	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--netdev") && strlen(argv[i + 1]) < 16)
			netdev0 = argv[i + 1];
		else if (!strcmp(argv[i], "--steer"))
			c.steer = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--rx-errors"))
			c.rx_errors = atoi(argv[i + 1]);
		else {
			fprintf(stderr, "--write-set: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if ((argc - 3) % 2) {
		fprintf(stderr, "--write-set: option without a value\n");
		return 2;
	}
	for (const struct fixfile *f = files_k68; f->name; f++) {
		struct buf b = { 0 };

		f->make(&b, &c);
		snprintf(path, sizeof(path), "%s/%s", argv[2], f->name);
		if (dlh_nlhex_write(path, f->comment, b.p, b.len, e, sizeof(e)) < 0) {
			fprintf(stderr, "%s\n", e);
			return 1;
		}
		bfree(&b);
	}
	return 0;
}

/* ================================================================ helpers */

static void to_repo_root(void)
{
	char exe[PATH_MAX];
	ssize_t n;

	if (access(FIXDIR "/cx6dx-k6.8/family.nlhex", R_OK) == 0)
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(chdir(dirname(exe)), 0);
	assert_int_equal(chdir("../.."), 0);
	assert_int_equal(access(FIXDIR "/cx6dx-k6.8/family.nlhex", R_OK), 0);
}

/* The chunk in a buffer of exactly its size, so ASan sees any over-read. */
static int feed_exact(struct dlh_reply *r, const void *p, size_t len, uint32_t seq,
		      char *err, size_t errlen)
{
	void *copy = malloc(len ? len : 1);
	int rc;

	assert_non_null(copy);
	memcpy(copy, p, len);
	rc = dlh_reply_feed(r, copy, len, seq, PORTID, FAMILY, err, errlen);
	free(copy);
	return rc;
}

static void parse_reply(const struct buf *b, int dump, struct dlh_reply *r)
{
	char e[256] = "";
	int rc;

	dlh_reply_init(r, dump);
	rc = feed_exact(r, b->p, b->len, 0, e, sizeof(e));
	if (rc != 1)
		print_error("feed: %d %s\n", rc, e);
	assert_int_equal(rc, 1);
}

static uint64_t diag_val(const struct dlh_diag *d, const char *name)
{
	for (unsigned i = 0; i < d->n; i++)
		if (!strcmp(d->names[i], name))
			return d->vals[i];
	print_error("no counter %s\n", name);
	fail();
	return 0;
}

static int diag_has(const struct dlh_diag *d, const char *name)
{
	for (unsigned i = 0; i < d->n; i++)
		if (!strcmp(d->names[i], name))
			return 1;
	return 0;
}

static int fmsg_of(const struct buf *b, const char *rep, struct dlh_diag *d,
		   struct json_object **tree, char *e, size_t elen)
{
	struct dlh_reply r;
	int rc;

	dlh_reply_init(&r, 0);
	rc = feed_exact(&r, b->p, b->len, 0, e, elen);
	if (rc == 1)
		rc = dlh_parse_fmsg(&r, FAMILY, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, rep, d,
				    tree, e, elen);
	else if (rc == 0)
		rc = -EAGAIN;
	dlh_reply_free(&r);
	return rc;
}

static int lay_find(const struct clayout *l, const char *name)
{
	return clayout_find(l, name);
}

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* A copy of a fixture set in a temp dir, to swap files. */
static void copy_set(const char *set, char *dir, size_t len)
{
	char cmd[PATH_MAX * 2];

	snprintf(dir, len, "/tmp/test_devlink_health.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp %s/%s/*.nlhex %s/", FIXDIR, set, dir);
	assert_int_equal(system(cmd), 0);
}

static void rm_set(const char *dir)
{
	nftw(dir, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
}

static void open_fixture(struct src *s, const char *dir, const char *ifname,
			 const char *const *diag)
{
	struct src_ctx ctx = { .port_name = "p0", .ifname = ifname, .netns_fd = -1,
			       .sysfs_root = "" };
	struct dlh_opts o = { .fixture_dir = dir, .diagnose = diag };
	int rc;

	memset(s, 0, sizeof(*s));
	s->ops = &src_devlink_health_ops;
	rc = src_devlink_health_open(s, &ctx, &o);
	if (rc)
		print_error("open: %s\n", s->err);
	assert_int_equal(rc, 0);
}

/* ================================================================ requests */

static void dlh_build_diagnose__port_reporter__handle_port_and_name(void **state)
{
	uint8_t buf[512];
	const struct nlmsghdr *nlh = (const void *)buf;
	const struct genlmsghdr *g = (const void *)(buf + NLMSG_HDRLEN);
	struct dlh_handle h = { "auxiliary", "mlx5_core.eth.0", 1, 65535 };
	const struct nlattr *a;
	int seen = 0;
	size_t n;

	(void)state;
	n = dlh_build_diagnose(buf, sizeof(buf), FAMILY, 77, &h, "rx");
	assert_true(n > 0);
	assert_int_equal(nlh->nlmsg_len, n);
	assert_int_equal(nlh->nlmsg_type, FAMILY);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
	assert_int_equal(nlh->nlmsg_seq, 77);
	assert_int_equal(g->cmd, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE);
	assert_int_equal(g->version, DEVLINK_GENL_VERSION);
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		switch (mnl_attr_get_type(a)) {
		case DEVLINK_ATTR_BUS_NAME:
			assert_string_equal(mnl_attr_get_str(a), "auxiliary");
			seen |= 1;
			break;
		case DEVLINK_ATTR_DEV_NAME:
			assert_string_equal(mnl_attr_get_str(a), "mlx5_core.eth.0");
			seen |= 2;
			break;
		case DEVLINK_ATTR_PORT_INDEX:
			assert_int_equal(mnl_attr_get_u32(a), 65535);
			seen |= 4;
			break;
		case DEVLINK_ATTR_HEALTH_REPORTER_NAME:
			assert_string_equal(mnl_attr_get_str(a), "rx");
			seen |= 8;
			break;
		default:
			fail();
		}
	}
	assert_int_equal(seen, 15);
}

static void dlh_build_reporter_dump__port_handle__instance_only_dump(void **state)
{
	uint8_t buf[512];
	const struct nlmsghdr *nlh = (const void *)buf;
	struct dlh_handle h = { "pci", "0000:08:00.0", 1, 65535 };
	const struct nlattr *a;
	size_t n;

	(void)state;
	n = dlh_build_reporter_dump(buf, sizeof(buf), FAMILY, 5, &h);
	assert_true(n > 0);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP);
	mnl_attr_for_each(a, nlh, GENL_HDRLEN)
		assert_int_not_equal(mnl_attr_get_type(a), DEVLINK_ATTR_PORT_INDEX);
	n = dlh_build_dump_get(buf, sizeof(buf), FAMILY, 5, &h, "rx");
	assert_true(n > 0);
	assert_true(nlh->nlmsg_flags & NLM_F_DUMP);
	n = dlh_build_getfamily(buf, sizeof(buf), 9);
	assert_true(n > 0);
	assert_int_equal(nlh->nlmsg_type, GENL_ID_CTRL);
}

static void dlh_build__bad_arguments__zero(void **state)
{
	uint8_t buf[512];
	struct dlh_handle h = { "pci", "0000:08:00.0", 0, 0 };
	struct dlh_handle slash = { "pci", "0000:08/00.0", 0, 0 };
	char longname[100];

	(void)state;
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(dlh_build_diagnose(buf, sizeof(buf), FAMILY, 1, &h, NULL), 0);
	assert_int_equal(dlh_build_diagnose(buf, sizeof(buf), FAMILY, 1, &h, "a/b"), 0);
	assert_int_equal(dlh_build_diagnose(buf, sizeof(buf), FAMILY, 1, &h, longname), 0);
	assert_int_equal(dlh_build_diagnose(buf, sizeof(buf), FAMILY, 1, &slash, "rx"), 0);
	assert_int_equal(dlh_build_diagnose(buf, 64, FAMILY, 1, &h, "rx"), 0);
	assert_int_equal(dlh_build_diagnose(buf, sizeof(buf), 0, 1, &h, "rx"), 0);
	assert_int_equal(dlh_build_reporter_dump(buf, sizeof(buf), FAMILY, 1, NULL), 0);
}

/* ================================================================ framing */

static void dlh_reply_feed__diagnose_parts_done_ack__complete_at_ack(void **state)
{
	struct buf b = { 0 };
	struct dlh_reply r;
	char e[128];
	size_t cut;

	(void)state;
	mk_rx(&b, &cx6dx);
	parse_reply(&b, 0, &r);
	assert_int_equal(r.nmsg, 3);                 /* three NLM_F_MULTI parts */
	assert_true(r.done);
	dlh_reply_free(&r);
	/* the same bytes in two recv()s, cut after the NLMSG_DONE: not done
	 * until the ack */
	cut = b.len - NLMSG_ALIGN(sizeof(struct nlmsghdr) + sizeof(struct nlmsgerr));
	dlh_reply_init(&r, 0);
	assert_int_equal(feed_exact(&r, b.p, cut, 1005, e, sizeof(e)), 0);
	assert_true(r.done);
	assert_int_equal(feed_exact(&r, b.p + cut, b.len - cut, 1005, e, sizeof(e)), 1);
	dlh_reply_free(&r);
	bfree(&b);
}

/* Feed b (an exact-size copy) as one reply; expect rc want and, when msg
 * is given, that text in the error. */
static void expect_feed(void (*make)(struct buf *), int dump, uint32_t seq, int want,
			const char *msg)
{
	struct buf b = { 0 };
	struct dlh_reply r;
	char e[160] = "";
	int rc;

	make(&b);
	dlh_reply_init(&r, dump);
	rc = feed_exact(&r, b.p, b.len, seq, e, sizeof(e));
	if (rc != want || (msg && !strstr(e, msg)))
		print_error("feed: %d \"%s\", expected %d \"%s\"\n", rc, e, want, msg ? msg : "");
	assert_int_equal(rc, want);
	assert_true(!msg || strstr(e, msg));
	if (rc < 0)
		assert_int_equal(r.nmsg, 0);
	dlh_reply_free(&r);
	bfree(&b);
}

static void mk_three_bytes(struct buf *b)
{
	memcpy(bput(b, 3), "\x14\x00\x00", 3);
}

static void mk_trampled(struct buf *b)
{
	put_ack(b, 9, -EINVAL, "Dump trampled, please retry");
}

static void mk_fw_fatal_err(struct buf *b)
{
	mk_fw_fatal(b, &cx6dx);
}

static void mk_done_int_min(struct buf *b)
{
	struct nlmsghdr *nlh = msg_begin(b, NLMSG_DONE, NLM_F_MULTI, 9);
	int *v = mnl_nlmsg_put_extra_header(nlh, sizeof(int));

	*v = -2147483647 - 1;
	msg_end(b, nlh);
}

static void dlh_reply_feed__nlmsg_len_0x80000001__ebadmsg(void **state)
{
	(void)state;
	expect_feed(mk_hugelen, 0, 0, -EBADMSG, "nlmsg_len 2147483649 with 96 bytes left");
}

static void dlh_reply_feed__short_zero_and_garbage__ebadmsg(void **state)
{
	(void)state;
	expect_feed(mk_zerolen, 0, 0, -EBADMSG, "nlmsg_len 0");
	expect_feed(mk_three_bytes, 0, 0, -EBADMSG, "less than a netlink header");
	expect_feed(mk_garbage, 0, 0, -EBADMSG, NULL);
	expect_feed(mk_truncated, 0, 0, -EBADMSG, "nlmsg_len 592 with 150 bytes left");
}

static void dlh_reply_feed__kernel_error_with_extack__errno_and_text(void **state)
{
	(void)state;
	expect_feed(mk_trampled, 1, 9, -EINVAL, "Invalid argument: Dump trampled, please retry");
	expect_feed(mk_fw_fatal_err, 0, 0, -EOPNOTSUPP, "Operation not supported");
	expect_feed(mk_done_int_min, 1, 9, -EPROTO, NULL);
}

static void dlh_reply_feed__other_sequence__skipped(void **state)
{
	struct buf b = { 0 };
	struct dlh_reply r;
	char e[128];
	size_t mid;

	(void)state;
	mk_vnic(&b, &cx6dx);                  /* a late reply of request 1005 */
	mid = b.len;
	mk_fw(&b, &cx6dx);
	for (size_t off = mid; off < b.len;) { /* the reply of request 1006 */
		struct nlmsghdr *nlh = (void *)(b.p + off);

		nlh->nlmsg_seq = 1006;
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	dlh_reply_init(&r, 0);
	assert_int_equal(feed_exact(&r, b.p, b.len, 1006, e, sizeof(e)), 1);
	assert_int_equal(r.skipped, 3);        /* its part, NLMSG_DONE, ack */
	assert_int_equal(r.nmsg, 1);
	dlh_reply_free(&r);
	bfree(&b);
}

/* ================================================================ messages */

static void dlh_parse_reporter__cx6dx_dump__five_reporters_per_pf(void **state)
{
	struct buf b = { 0 };
	const struct nlmsghdr *nlh;
	struct dlh_reply r;
	char e[128];
	unsigned n = 0;
	size_t off;

	(void)state;
	mk_health(&b, &cx6dx);
	parse_reply(&b, 1, &r);
	assert_int_equal(r.nmsg, 10);
	dlh_reply_for_each(&r, nlh, off) {
		struct dlh_reporter rep;

		assert_int_equal(dlh_parse_reporter(nlh, r.len - off, FAMILY, &rep, e, sizeof(e)), 0);
		if (n == 1) {
			assert_string_equal(rep.name, "fw_fatal");
			assert_string_equal(rep.h.bus, "pci");
			assert_false(rep.h.has_port);
			assert_int_equal(rep.have, DLH_HAVE_RECOVER | DLH_HAVE_DUMP);
			assert_int_equal(rep.grace_period_ms, 1200000);
			assert_int_equal(rep.auto_recover, 1);
		}
		if (n == 2) {
			assert_string_equal(rep.name, "vnic");
			assert_int_equal(rep.have, 0);
		}
		if (n == 4) {
			assert_string_equal(rep.name, "rx");
			assert_string_equal(rep.h.dev, "mlx5_core.eth.0");
			assert_int_equal(rep.h.port, 65535);
			assert_int_equal(rep.error_count, 2);
			assert_int_equal(rep.recover_count, 2);
			assert_true(rep.have & DLH_HAVE_DUMP_TS);
			assert_int_equal(rep.dump_ts_ns, 1764576000123456789ull);
		}
		n++;
	}
	assert_int_equal(n, 10);
	dlh_reply_free(&r);
	bfree(&b);
}

static void dlh_parse_reporter__pads_and_burst__parsed(void **state)
{
	struct buf b = { 0 };
	struct krep k = { "rx", 1, 1, 1, 500, 7, 6, 1, 1 };
	struct dlh_reporter rep;
	char e[128];

	(void)state;
	reporter_msg(&b, "pci", "0000:08:00.0", 65535, &k, 1, 1);
	assert_int_equal(dlh_parse_reporter(b.p, b.len, FAMILY, &rep, e, sizeof(e)), 0);
	assert_int_equal(rep.state, 1);
	assert_int_equal(rep.error_count, 7);
	assert_int_equal(rep.recover_count, 6);
	assert_true(rep.have & DLH_HAVE_BURST);
	assert_int_equal(rep.grace_period_ms, 500);
	bfree(&b);
}

static void dlh_parse_reporter__hostile_messages__ebadmsg(void **state)
{
	struct buf b = { 0 };
	struct nlmsghdr *nlh;
	struct nlattr *n;
	struct dlh_reporter rep;
	char e[128] = "";
	struct krep k = { "rx", 0, 0, 0, 0, 0, 0, 0, 0 };

	(void)state;
	/* no counts */
	nlh = genl_begin(&b, FAMILY, 0, 1, DEVLINK_CMD_HEALTH_REPORTER_GET);
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_BUS_NAME, "pci");
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_DEV_NAME, "x");
	n = mnl_attr_nest_start(nlh, DEVLINK_ATTR_HEALTH_REPORTER);
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_HEALTH_REPORTER_NAME, "rx");
	mnl_attr_nest_end(nlh, n);
	msg_end(&b, nlh);
	assert_int_equal(dlh_parse_reporter(b.p, b.len, FAMILY, &rep, e, sizeof(e)), -EBADMSG);
	assert_non_null(strstr(e, "missing"));
	bfree(&b);
	/* a name that would escape the counter path */
	k.name = "../x";
	reporter_msg(&b, "pci", "0000:08:00.0", 0, &k, 0, 0);
	assert_int_equal(dlh_parse_reporter(b.p, b.len, FAMILY, &rep, e, sizeof(e)), -EBADMSG);
	/* shorter than it says, and a u64 of 4 bytes */
	assert_int_equal(dlh_parse_reporter(b.p, b.len - 4, FAMILY, &rep, e, sizeof(e)), -EBADMSG);
	bfree(&b);
	k.name = "rx";
	reporter_msg(&b, "pci", "0000:08:00.0", 0, &k, 0, 0);
	for (size_t off = NLMSG_HDRLEN + GENL_HDRLEN; off + 4 <= b.len; off += 4) {
		struct nlattr *a = (void *)(b.p + off);

		if (a->nla_type == DEVLINK_ATTR_HEALTH_REPORTER_ERR_COUNT && a->nla_len == 12) {
			a->nla_len = 8;
			break;
		}
	}
	assert_int_equal(dlh_parse_reporter(b.p, b.len, FAMILY, &rep, e, sizeof(e)), -EBADMSG);
	/* wrong family, wrong command */
	assert_int_equal(dlh_parse_reporter(b.p, b.len, FAMILY + 1, &rep, e, sizeof(e)), -EBADMSG);
	bfree(&b);
}

static void dlh_parse_port_and_dev__cx6dx__netdev_and_nesting(void **state)
{
	struct buf b = { 0 };
	const struct nlmsghdr *nlh;
	struct dlh_reply r;
	struct dlh_port p;
	struct dlh_dev d;
	char e[128];
	size_t off;

	(void)state;
	mk_port(&b, &cx6dx);
	parse_reply(&b, 1, &r);
	nlh = (const void *)r.buf;
	assert_int_equal(dlh_parse_port(nlh, r.len, FAMILY, &p, e, sizeof(e)), 0);
	assert_string_equal(p.netdev, "enp8s0f0np0");
	assert_string_equal(p.h.bus, "auxiliary");
	assert_int_equal(p.h.port, 65535);
	assert_int_equal(p.ifindex, 4);
	dlh_reply_free(&r);
	bfree(&b);

	mk_dev(&b, &cx6dx);
	parse_reply(&b, 1, &r);
	off = 0;
	nlh = (const void *)r.buf;
	assert_int_equal(dlh_parse_dev(nlh, r.len - off, FAMILY, &d, e, sizeof(e)), 0);
	assert_string_equal(d.h.dev, "0000:08:00.0");
	assert_int_equal(d.nnested, 1);
	assert_string_equal(d.nested[0].bus, "auxiliary");
	assert_string_equal(d.nested[0].dev, "mlx5_core.eth.0");
	dlh_reply_free(&r);
	bfree(&b);
}

/* ================================================================ fmsg */

static void dlh_parse_fmsg__vnic__steering_discard_counter(void **state)
{
	struct buf b = { 0 };
	struct dlh_diag d;
	char e[160];

	(void)state;
	mk_vnic(&b, &cx6dx);
	assert_int_equal(fmsg_of(&b, "vnic", &d, NULL, e, sizeof(e)), 0);
	assert_int_equal(d.n, 10);
	assert_int_equal(diag_val(&d, "devlink/vnic/nic_receive_steering_discard"), 1843);
	assert_int_equal(diag_val(&d, "devlink/vnic/total_error_queues"), 0);
	assert_int_equal(diag_val(&d, "devlink/vnic/handled_pkt_steering_fail"), 0);
	assert_int_equal(d.width[7], CNT_W64);      /* u64 in the fmsg */
	assert_int_equal(d.width[0], CNT_W32);
	dlh_diag_free(&d);
	bfree(&b);
}

static void dlh_parse_fmsg__rx_three_parts__per_queue_paths(void **state)
{
	struct buf b = { 0 };
	struct dlh_diag d;
	char e[160];

	(void)state;
	mk_rx(&b, &cx6dx);
	assert_int_equal(fmsg_of(&b, "rx", &d, NULL, e, sizeof(e)), 0);
	assert_int_equal(diag_val(&d, "devlink/rx/Common_config/RQ/stride_size"), 2048);
	assert_int_equal(diag_val(&d, "devlink/rx/Common_config/RQ/CQ/size"), 1024);
	assert_int_equal(diag_val(&d, "devlink/rx/RQs/0/channel_ix"), 0);
	assert_int_equal(diag_val(&d, "devlink/rx/RQs/7/channel_ix"), 7);
	assert_int_equal(diag_val(&d, "devlink/rx/RQs/3/HW_state"), 1);
	assert_int_equal(diag_val(&d, "devlink/rx/RQs/3/CQ/ci"), 29784);
	assert_int_equal(diag_val(&d, "devlink/rx/RQs/7/ICOSQ/CQ/cc"), 98);
	assert_false(diag_has(&d, "devlink/rx/RQs/8/channel_ix"));
	assert_int_equal(d.ntext, 1);
	assert_string_equal(d.tnames[0], "devlink/rx/Common_config/RQ/ts_format");
	assert_string_equal(d.texts[0], "FRC");
	assert_int_equal(d.n, 5 + 8 * 24);
	dlh_diag_free(&d);
	bfree(&b);
}

/* Any part size the kernel could use, down to parts of one token, with
 * and without 64-bit pads: the same counters. Small sizes leave the value
 * type dangling at the end of a part (devlink_fmsg_prepare_skb). */
static void dlh_parse_fmsg__any_part_size_or_pads__same_counters(void **state)
{
	struct buf ref = { 0 };
	struct dlh_diag dr;
	char e[160];

	(void)state;
	mk_rx(&ref, &cx6dx);
	assert_int_equal(fmsg_of(&ref, "rx", &dr, NULL, e, sizeof(e)), 0);
	for (size_t part = 60; part <= 4096; part += part < 200 ? 1 : 97) {
		for (int pad = 0; pad < 2; pad++) {
			struct buf b = { 0 };
			struct dlh_diag d;

			fmsg_reply(&b, rx_fmsg, &cx6dx, part, pad);
			if (fmsg_of(&b, "rx", &d, NULL, e, sizeof(e)) != 0)
				print_error("part %zu pad %d: %s\n", part, pad, e);
			assert_int_equal(d.n, dr.n);
			for (unsigned i = 0; i < d.n; i++) {
				assert_string_equal(d.names[i], dr.names[i]);
				assert_int_equal(d.vals[i], dr.vals[i]);
			}
			dlh_diag_free(&d);
			bfree(&b);
		}
	}
	dlh_diag_free(&dr);
	bfree(&ref);
}

/* Every prefix of a reply and every single-byte corruption: an error or a
 * result, never a crash or an out-of-bounds read (run under ASan). */
static void dlh_parse_fmsg__every_cut_and_flip__no_crash(void **state)
{
	struct buf b = { 0 };
	char e[160];
	unsigned ok = 0;

	(void)state;
	mk_vnic(&b, &cx6dx);
	for (size_t cut = 0; cut < b.len; cut++) {
		struct buf c = { 0 };
		struct dlh_diag d;

		memcpy(bput(&c, cut), b.p, cut);
		if (fmsg_of(&c, "vnic", &d, NULL, e, sizeof(e)) == 0) {
			ok++;           /* only possible with the ack cut off */
			dlh_diag_free(&d);
		}
		bfree(&c);
	}
	assert_int_equal(ok, 0);
	for (size_t i = 0; i < b.len; i++) {
		for (unsigned v = 0; v < 4; v++) {
			static const uint8_t vals[] = { 0x00, 0xff, 0x80, 0x01 };
			struct buf c = { 0 };
			struct json_object *t = NULL;
			struct dlh_diag d;

			memcpy(bput(&c, b.len), b.p, b.len);
			c.p[i] = (uint8_t)(c.p[i] ^ vals[v] ^ (v == 0 ? 0x55 : 0));
			if (fmsg_of(&c, "vnic", &d, &t, e, sizeof(e)) == 0) {
				dlh_diag_free(&d);
				json_object_put(t);
			}
			bfree(&c);
		}
	}
	bfree(&b);
}

static void fmsg_raw(struct buf *b, const uint16_t *tok, unsigned n)
{
	struct nlmsghdr *nlh = genl_begin(b, FAMILY, NLM_F_MULTI, 1005,
					  DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE);
	struct nlattr *nest = nest_noflag(nlh, DEVLINK_ATTR_FMSG);

	for (unsigned i = 0; i < n; i++) {
		uint16_t t = tok[i];

		if (t == DEVLINK_ATTR_FMSG_OBJ_NAME)
			mnl_attr_put_strz(nlh, t, "n");
		else if (t == DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE)
			mnl_attr_put_u8(nlh, t, 3);
		else if (t == DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA)
			mnl_attr_put_u32(nlh, t, 5);
		else if (t == 1000)                  /* a u8 value with 4 bytes */
			mnl_attr_put_u32(nlh, DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA, 5);
		else
			mnl_attr_put(nlh, t, 0, NULL);
	}
	mnl_attr_nest_end(nlh, nest);
	msg_end(b, nlh);
	put_done(b, 1005, 0);
	put_ack(b, 1005, 0, NULL);
}

static void dlh_parse_fmsg__grammar_violations__ebadmsg(void **state)
{
	enum {
		O = DEVLINK_ATTR_FMSG_OBJ_NEST_START, P = DEVLINK_ATTR_FMSG_PAIR_NEST_START,
		A = DEVLINK_ATTR_FMSG_ARR_NEST_START, E = DEVLINK_ATTR_FMSG_NEST_END,
		N = DEVLINK_ATTR_FMSG_OBJ_NAME, T = DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE,
		D = DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA,
	};
	static const struct {
		uint16_t tok[24];
		unsigned n;
		const char *what;
	} bad[] = {
		{ { P, N, T, D, E }, 5, "starts with attribute" },
		{ { O, T, D, E }, 4, "out of place" },                 /* value in an object */
		{ { O, N, E }, 3, "out of place" },                    /* name outside a pair */
		{ { O, P, T, D, E, E }, 6, "out of place" },           /* pair without name */
		{ { O, P, N, D, E, E }, 6, "without a type" },
		{ { O, P, N, T, E, E }, 6, "type without data" },
		{ { O, E, O, E }, 4, "after the end" },
		{ { O, P, N, T, D, E }, 6, "truncated" },              /* root never closed */
		{ { O, E, E }, 3, "after the end" },
		{ { O, A, E, E }, 4, "out of place" },                 /* array in an object */
		{ { O, P, N, O, E, O, E, E, E }, 9, "out of place" },  /* two objects, one pair */
	};
	char e[160];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct buf b = { 0 };
		struct dlh_diag d;

		fmsg_raw(&b, bad[i].tok, bad[i].n);
		e[0] = '\0';
		assert_int_equal(fmsg_of(&b, "x", &d, NULL, e, sizeof(e)), -EBADMSG);
		if (!strstr(e, bad[i].what))
			print_error("case %zu: \"%s\"\n", i, e);
		assert_non_null(strstr(e, bad[i].what));
		bfree(&b);
	}
	/* deeper than DLH_FMSG_DEPTH */
	{
		uint16_t tok[80];
		unsigned n = 0;
		struct buf b = { 0 };
		struct dlh_diag d;

		tok[n++] = O;
		for (int i = 0; i < 20; i++)
			tok[n++] = P, tok[n++] = N, tok[n++] = O;
		fmsg_raw(&b, tok, n);
		assert_int_equal(fmsg_of(&b, "x", &d, NULL, e, sizeof(e)), -EBADMSG);
		assert_non_null(strstr(e, "deeper"));
		bfree(&b);
	}
	/* a u32-typed value of the wrong size */
	{
		static const uint16_t tok[] = { O, P, N, T, 1000, E, E };
		struct buf b = { 0 };
		struct dlh_diag d;
		struct nlmsghdr *nlh;

		fmsg_raw(&b, tok, 7);
		/* make the type u8: the 4-byte payload no longer matches */
		for (size_t off = NLMSG_HDRLEN + GENL_HDRLEN + 4; off + 5 <= b.len; off += 4) {
			struct nlattr *a = (void *)(b.p + off);

			if (a->nla_type == T && a->nla_len == 5) {
				b.p[off + 4] = 1;
				break;
			}
		}
		nlh = (void *)b.p;
		(void)nlh;
		assert_int_equal(fmsg_of(&b, "x", &d, NULL, e, sizeof(e)), -EBADMSG);
		assert_non_null(strstr(e, "bytes for type 1"));
		bfree(&b);
	}
}

static void dlh_parse_fmsg__pads_unknown_tokens_and_types__skipped(void **state)
{
	struct kf k;
	struct buf b = { 0 };
	struct dlh_diag d;
	uint8_t odd[3] = { 1, 2, 3 };
	char e[160];

	(void)state;
	kinit(&k);
	obj_start(&k);
	u32_pair(&k, "a", 1);
	kadd(&k, 200);                              /* a token of a newer kernel */
	pair_start(&k, "weird");
	put_value(&k, 99, odd, 3);                  /* a value type we do not know */
	nest_end(&k);
	u64_pair(&k, "b", 2);
	bool_pair(&k, "on", 1);
	arr_pair_start(&k, "list");
	put_value(&k, 3, &(uint32_t){ 10 }, 4);
	put_value(&k, 3, &(uint32_t){ 11 }, 4);
	arr_pair_end(&k);
	nest_end(&k);
	kf_send(&k, &b, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, 1005, GOODSIZE, 1, 0);
	kfree(&k);
	/* kf_send skips unknown attrs as flags: token 200 is a flag here */
	assert_int_equal(fmsg_of(&b, "x", &d, NULL, e, sizeof(e)), 0);
	assert_int_equal(diag_val(&d, "devlink/x/a"), 1);
	assert_int_equal(diag_val(&d, "devlink/x/b"), 2);
	assert_int_equal(diag_val(&d, "devlink/x/on"), 1);
	assert_int_equal(diag_val(&d, "devlink/x/list/0"), 10);
	assert_int_equal(diag_val(&d, "devlink/x/list/1"), 11);
	assert_false(diag_has(&d, "devlink/x/weird"));
	assert_int_equal(d.unknown, 2);
	dlh_diag_free(&d);
	bfree(&b);
}

static void dlh_parse_fmsg__repeated_and_odd_names__suffixed_sanitized(void **state)
{
	struct kf k;
	struct buf b = { 0 };
	struct dlh_diag d;
	char e[160];

	(void)state;
	kinit(&k);
	obj_start(&k);
	u32_pair(&k, "cc", 1);
	u32_pair(&k, "cc", 2);
	u32_pair(&k, "a/b c\xc3\xa9", 3);
	u32_pair(&k, "", 4);
	nest_end(&k);
	kf_send(&k, &b, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, 1005, GOODSIZE, 0, 0);
	kfree(&k);
	assert_int_equal(fmsg_of(&b, "x", &d, NULL, e, sizeof(e)), 0);
	assert_int_equal(diag_val(&d, "devlink/x/cc"), 1);
	assert_int_equal(diag_val(&d, "devlink/x/cc~2"), 2);
	assert_int_equal(diag_val(&d, "devlink/x/a_b_c__"), 3);
	assert_int_equal(diag_val(&d, "devlink/x/_"), 4);
	dlh_diag_free(&d);
	bfree(&b);
}

static void dlh_parse_fmsg__tree__shaped_like_devlink_json(void **state)
{
	struct buf b = { 0 };
	struct json_object *t = NULL, *v, *rqs, *rq;
	struct dlh_reply r;
	char e[160];

	(void)state;
	mk_vnic(&b, &cx6dx);
	assert_int_equal(fmsg_of(&b, "vnic", NULL, &t, e, sizeof(e)), 0);
	assert_true(json_object_object_get_ex(t, "vNIC env counters", &v));
	assert_true(json_object_object_get_ex(v, "nic_receive_steering_discard", &v));
	assert_int_equal(json_object_get_uint64(v), 1843);
	json_object_put(t);
	bfree(&b);

	mk_rx(&b, &cx6dx);
	assert_int_equal(fmsg_of(&b, "rx", NULL, &t, e, sizeof(e)), 0);
	assert_true(json_object_object_get_ex(t, "RQs", &rqs));
	assert_int_equal(json_object_array_length(rqs), 8);
	rq = json_object_array_get_idx(rqs, 5);
	assert_true(json_object_object_get_ex(rq, "channel ix", &v));
	assert_int_equal(json_object_get_int(v), 5);
	assert_true(json_object_object_get_ex(rq, "EQ", &v));
	assert_true(json_object_object_get_ex(v, "irqn", &v));
	assert_int_equal(json_object_get_int(v), 81);
	json_object_put(t);
	bfree(&b);

	mk_rx_dump(&b, &cx6dx);
	dlh_reply_init(&r, 1);
	assert_int_equal(feed_exact(&r, b.p, b.len, 0, e, sizeof(e)), 1);
	assert_int_equal(dlh_parse_fmsg(&r, FAMILY, DEVLINK_CMD_HEALTH_REPORTER_DUMP_GET, "rx",
				       NULL, &t, e, sizeof(e)), 0);
	assert_true(json_object_object_get_ex(t, "RX Slice", &v));
	assert_true(json_object_object_get_ex(v, "data", &v));
	v = json_object_array_get_idx(v, 0);
	assert_int_equal(strncmp(json_object_get_string(v), "01080f16", 8), 0);
	json_object_put(t);
	/* a dump is not a diagnose */
	assert_int_equal(dlh_parse_fmsg(&r, FAMILY, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, "rx",
				       NULL, &t, e, sizeof(e)), -EBADMSG);
	dlh_reply_free(&r);
	bfree(&b);
}

/* ================================================================ files */

static void fixtures__committed__exactly_what_the_model_builds(void **state)
{
	char path[PATH_MAX], e[256];

	(void)state;
	for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
		for (const struct fixfile *f = sets[s].files; f->name; f++) {
			struct buf b = { 0 };
			uint8_t *got;
			size_t len;

			f->make(&b, sets[s].card);
			snprintf(path, sizeof(path), "%s/%s/%s", FIXDIR, sets[s].dir, f->name);
			if (dlh_nlhex_load(path, &got, &len, e, sizeof(e)) < 0)
				print_error("%s\n", e);
			assert_int_equal(len, b.len);
			assert_memory_equal(got, b.p, len);
			free(got);
			bfree(&b);
		}
	}
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		struct buf b = { 0 };
		uint8_t *got;
		size_t len;

		hostile[i].make(&b);
		snprintf(path, sizeof(path), "%s/hostile/%s", FIXDIR, hostile[i].name);
		assert_int_equal(dlh_nlhex_load(path, &got, &len, e, sizeof(e)), 0);
		assert_int_equal(len, b.len);
		assert_memory_equal(got, b.p, len);
		free(got);
		bfree(&b);
	}
}

static void dlh_nlhex__roundtrip_and_bad_text__line_numbers(void **state)
{
	char dir[] = "/tmp/test_dlh_hex.XXXXXX", path[128], e[256];
	static const uint8_t bytes[] = { 0x14, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef };
	uint8_t *got;
	size_t len;
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a.nlhex", dir);
	assert_int_equal(dlh_nlhex_write(path, "two\nlines", bytes, sizeof(bytes), e, sizeof(e)), 0);
	assert_int_equal(dlh_nlhex_load(path, &got, &len, e, sizeof(e)), 0);
	assert_int_equal(len, sizeof(bytes));
	assert_memory_equal(got, bytes, len);
	free(got);
	fp = fopen(path, "w");
	fputs("# ok\n14000000\n# still ok\n00zz\n", fp);
	fclose(fp);
	assert_int_equal(dlh_nlhex_load(path, &got, &len, e, sizeof(e)), -EINVAL);
	assert_non_null(strstr(e, ":4: not a hex digit: 'z'"));
	fp = fopen(path, "w");
	fputs("140", fp);
	fclose(fp);
	assert_int_equal(dlh_nlhex_load(path, &got, &len, e, sizeof(e)), -EINVAL);
	assert_non_null(strstr(e, "odd number"));
	unlink(path);
	assert_int_equal(dlh_nlhex_load(path, &got, &len, e, sizeof(e)), -ENOENT);
	assert_int_equal(dlh_nlhex_load(dir, &got, &len, e, sizeof(e)), -EINVAL);
	rmdir(dir);
}

/* ================================================================ source */

static void src_devlink_health__cx6dx_fixture__all_reporters_and_vnic(void **state)
{
	static const char *const diag[] = { "vnic", "rx", "fw", "fw_fatal", NULL };
	const struct dlh_state *st;
	struct clayout *lay;
	const uint64_t *vals;
	struct src s;
	int i;

	(void)state;
	open_fixture(&s, FIXDIR "/cx6dx-k6.8", "enp8s0f0np0", diag);
	assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
	assert_string_equal(s.err, "");             /* fw_fatal EOPNOTSUPP: fine */
	st = src_devlink_health_state(&s);
	assert_int_equal(st->n, 5);
	assert_string_equal(st->handles, "pci/0000:08:00.0 auxiliary/mlx5_core.eth.0/65535");
	assert_string_equal(st->rep[0].name, "fw");
	assert_string_equal(st->rep[4].name, "vnic");
	assert_int_equal(st->diag_rc[1], -EOPNOTSUPP);          /* fw_fatal */
	assert_int_equal(st->diag_rc[3], 1);                    /* tx: not asked */
	i = lay_find(lay, "devlink/vnic/nic_receive_steering_discard");
	assert_true(i >= 0);
	assert_int_equal(vals[i], 1843);
	assert_int_equal(lay->width[i], CNT_W64);
	i = lay_find(lay, "devlink/rx/error_count");
	assert_true(i >= 0);
	assert_int_equal(vals[i], 2);
	assert_int_equal(vals[lay_find(lay, "devlink/rx/recover_count")], 2);
	assert_int_equal(vals[lay_find(lay, "devlink/rx/state")], 0);
	assert_int_equal(vals[lay_find(lay, "devlink/rx/grace_period_ms")], 500);
	assert_int_equal(vals[lay_find(lay, "devlink/rx/auto_recover")], 1);
	assert_int_equal(vals[lay_find(lay, "devlink/rx/dump_time_ns")], 1764576000123456789ull);
	assert_int_equal(vals[lay_find(lay, "devlink/tx/dump_time_ns")], 0);
	assert_int_equal(vals[lay_find(lay, "devlink/fw_fatal/grace_period_ms")], 1200000);
	assert_int_equal(vals[lay_find(lay, "devlink/fw/Syndrome")], 0);
	assert_int_equal(vals[lay_find(lay, "devlink/rx/RQs/7/channel_ix")], 7);
	assert_true(lay_find(lay, "devlink/vnic/grace_period_ms") < 0);   /* no recover op */
	assert_true(lay_find(lay, "devlink/fw/grace_period_ms") < 0);
	/* PF1's reporters were in the dump too: not this port's */
	/* fw 5, fw_fatal 7, rx 7, tx 7, vnic 3; diagnose fw 1, rx, vnic 10 */
	assert_int_equal(lay->n, (5 + 7 + 7 + 7 + 3) + 1 + (5 + 8 * 24) + 10);
	s.ops->close(&s);
}

static void src_devlink_health__k515_without_vnic__rx_on_pci_port(void **state)
{
	const struct dlh_state *st;
	struct clayout *lay;
	const uint64_t *vals;
	struct src s;

	(void)state;
	open_fixture(&s, FIXDIR "/cx6dx-k5.15-novnic", "enp8s0f1np1", NULL);
	assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
	st = src_devlink_health_state(&s);
	assert_int_equal(st->n, 4);
	assert_string_equal(st->handles, "pci/0000:08:00.1 pci/0000:08:00.1/131071");
	assert_true(lay_find(lay, "devlink/vnic/state") < 0);
	assert_true(lay_find(lay, "devlink/vnic/nic_receive_steering_discard") < 0);
	assert_true(lay_find(lay, "devlink/rx/error_count") >= 0);
	assert_int_equal(vals[lay_find(lay, "devlink/rx/error_count")], 0);
	/* the recording is PF0's diagnose; the port filter does not apply to
	 * diagnose, so it still parses */
	assert_true(lay_find(lay, "devlink/rx/RQs/0/rqn") >= 0);
	s.ops->close(&s);
}

/* Each diagnose at its own rate: vnic (one firmware command) at every
 * query, rx (three per channel) seldom; a full refresh asks for both. */
static void src_devlink_health__diagnose_intervals__rx_carried_vnic_fresh(void **state)
{
	static const char *const diag[] = { "vnic", "rx", NULL };
	static const uint64_t every[] = { 0, 3600000000000ull };
	struct src_ctx ctx = { .port_name = "p0", .ifname = "enp8s0f0np0", .netns_fd = -1,
			       .sysfs_root = "" };
	struct dlh_opts o = { .diagnose = diag, .diagnose_every_ns = every,
			      .interval_ns = 1, .min_refresh_ns = 1 };
	const struct dlh_state *st;
	struct clayout *l;
	const uint64_t *v;
	uint64_t rx0 = 0, vnic0 = 0;
	struct src s;
	char dir[64], path[128];
	int k;

	(void)state;
	copy_set("cx6dx-k6.8", dir, sizeof(dir));
	o.fixture_dir = dir;
	memset(&s, 0, sizeof(s));
	s.ops = &src_devlink_health_ops;
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o), 0);
	assert_int_equal(s.ops->read(&s, &l, &v), 0);
	st = src_devlink_health_state(&s);
	for (unsigned i = 0; i < st->n; i++) {
		if (!strcmp(st->rep[i].name, "rx"))
			rx0 = st->diag_real_ns[i];
		if (!strcmp(st->rep[i].name, "vnic"))
			vnic0 = st->diag_real_ns[i];
	}
	assert_true(rx0 && vnic0);
	snprintf(path, sizeof(path), "%s/diagnose-vnic.nlhex", dir);
	{
		struct buf b = { 0 };
		struct card c = cx6dx;
		char e[128];

		c.steer = 1900;
		mk_vnic(&b, &c);
		assert_int_equal(dlh_nlhex_write(path, NULL, b.p, b.len, e, sizeof(e)), 0);
		bfree(&b);
	}
	usleep(2000);
	assert_int_equal(s.ops->read(&s, &l, &v), 0);
	k = lay_find(l, "devlink/vnic/nic_receive_steering_discard");
	assert_true(k >= 0);
	assert_int_equal(v[k], 1900);           /* vnic asked again */
	assert_true(lay_find(l, "devlink/rx/RQs/0/HW_state") >= 0);  /* rx carried */
	st = src_devlink_health_state(&s);
	for (unsigned i = 0; i < st->n; i++) {
		if (!strcmp(st->rep[i].name, "rx"))
			assert_true(st->diag_real_ns[i] == rx0);
		if (!strcmp(st->rep[i].name, "vnic"))
			assert_true(st->diag_real_ns[i] > vnic0);
	}
	/* a full refresh (the investigation's end) asks rx too */
	src_devlink_health_refresh(&s, NULL);
	usleep(2000);
	assert_int_equal(s.ops->read(&s, &l, &v), 0);
	st = src_devlink_health_state(&s);
	for (unsigned i = 0; i < st->n; i++)
		if (!strcmp(st->rep[i].name, "rx"))
			assert_true(st->diag_real_ns[i] > rx0);
	s.ops->close(&s);
	rm_set(dir);
}

static void src_devlink_health__read_twice__cached_until_refresh(void **state)
{
	struct clayout *l1, *l2;
	const uint64_t *v1, *v2;
	uint64_t q, total, last;
	struct src s;
	char dir[64], path[128];

	(void)state;
	copy_set("cx6dx-k6.8", dir, sizeof(dir));
	open_fixture(&s, dir, "enp8s0f0np0", NULL);
	assert_int_equal(s.ops->read(&s, &l1, &v1), 0);
	/* the reply changes; the source does not ask again within its interval */
	snprintf(path, sizeof(path), "%s/diagnose-vnic.nlhex", dir);
	{
		struct buf b = { 0 };
		struct card c = cx6dx;
		char e[128];

		c.steer = 1900;
		mk_vnic(&b, &c);
		assert_int_equal(dlh_nlhex_write(path, NULL, b.p, b.len, e, sizeof(e)), 0);
		bfree(&b);
	}
	assert_int_equal(s.ops->read(&s, &l2, &v2), 0);
	assert_ptr_equal(l1, l2);
	assert_ptr_equal(v1, v2);
	src_devlink_health_cost(&s, &q, &total, &last);
	assert_int_equal(q, 1);
	/* a refresh right away is held back by min_refresh (100 ms) */
	src_devlink_health_refresh(&s, NULL);
	assert_int_equal(s.ops->read(&s, &l2, &v2), 0);
	src_devlink_health_cost(&s, &q, NULL, NULL);
	assert_int_equal(q, 1);
	s.ops->close(&s);

	/* with a short floor, the refresh queries: same names, same layout */
	{
		struct src_ctx ctx = { .port_name = "p0", .ifname = "enp8s0f0np0",
				       .netns_fd = -1, .sysfs_root = "" };
		struct dlh_opts o = { .fixture_dir = dir, .min_refresh_ns = 1 };
		int i;

		memset(&s, 0, sizeof(s));
		s.ops = &src_devlink_health_ops;
		assert_int_equal(src_devlink_health_open(&s, &ctx, &o), 0);
		assert_int_equal(s.ops->read(&s, &l1, &v1), 0);
		i = lay_find(l1, "devlink/vnic/nic_receive_steering_discard");
		assert_int_equal(v1[i], 1900);
		src_devlink_health_refresh(&s, NULL);
		assert_int_equal(s.ops->read(&s, &l2, &v2), 0);
		assert_ptr_equal(l1, l2);
		src_devlink_health_cost(&s, &q, NULL, NULL);
		assert_int_equal(q, 2);
		s.ops->close(&s);
	}
	rm_set(dir);
}

static void src_devlink_health__hostile_vnic_reply__named_error_others_kept(void **state)
{
	struct clayout *lay;
	const uint64_t *vals;
	struct src s;
	char dir[64], cmd[512];
	const struct dlh_state *st;

	(void)state;
	for (size_t h = 0; h < sizeof(hostile) / sizeof(hostile[0]); h++) {
		copy_set("cx6dx-k6.8", dir, sizeof(dir));
		snprintf(cmd, sizeof(cmd), "cp %s/hostile/%s %s/diagnose-vnic.nlhex", FIXDIR,
			 hostile[h].name, dir);
		assert_int_equal(system(cmd), 0);
		open_fixture(&s, dir, "enp8s0f0np0", NULL);
		assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
		assert_non_null(strstr(s.err, "diagnose vnic"));
		st = src_devlink_health_state(&s);
		assert_true(st->diag_rc[4] < 0);
		assert_true(lay_find(lay, "devlink/vnic/nic_receive_steering_discard") < 0);
		assert_true(lay_find(lay, "devlink/vnic/error_count") >= 0);
		assert_true(lay_find(lay, "devlink/rx/RQs/0/rqn") >= 0);
		s.ops->close(&s);
		rm_set(dir);
	}
	/* a hostile reporter list: the read fails with the reason */
	for (size_t h = 0; h < sizeof(hostile) / sizeof(hostile[0]); h++) {
		copy_set("cx6dx-k6.8", dir, sizeof(dir));
		snprintf(cmd, sizeof(cmd), "cp %s/hostile/%s %s/health-get.nlhex", FIXDIR,
			 hostile[h].name, dir);
		assert_int_equal(system(cmd), 0);
		open_fixture(&s, dir, "enp8s0f0np0", NULL);
		assert_true(s.ops->read(&s, &lay, &vals) < 0);
		assert_non_null(strstr(s.err, "devlink health show"));
		s.ops->close(&s);
		rm_set(dir);
	}
}

/* The first snapshot asks vnic only: rx keeps its values, with their
 * older time, and the layout does not change. */
static void src_devlink_health__narrowed_refresh__others_carried(void **state)
{
	static const char *const only_vnic[] = { "vnic", NULL };
	struct clayout *l1, *l2;
	const uint64_t *v1, *v2;
	struct json_object *o, *reps, *rx;
	const struct dlh_state *st;
	struct src s;
	struct src_ctx ctx = { .port_name = "p0", .ifname = "enp8s0f0np0",
			       .netns_fd = -1, .sysfs_root = "" };
	struct dlh_opts o2 = { .fixture_dir = FIXDIR "/cx6dx-k6.8", .min_refresh_ns = 1 };
	char e[128];
	uint64_t first;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.ops = &src_devlink_health_ops;
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o2), 0);
	assert_int_equal(s.ops->read(&s, &l1, &v1), 0);
	first = src_devlink_health_state(&s)->diag_real_ns[2];
	assert_true(first > 0);
	src_devlink_health_refresh(&s, only_vnic);
	assert_int_equal(s.ops->read(&s, &l2, &v2), 0);
	assert_ptr_equal(l1, l2);
	st = src_devlink_health_state(&s);
	assert_int_equal(st->diag_rc[2], 1);                   /* rx: not asked */
	assert_int_equal(st->diag_real_ns[2], first);          /* ... carried */
	assert_true(st->diag_real_ns[4] >= first);             /* vnic: new */
	assert_int_equal(v2[lay_find(l2, "devlink/rx/RQs/7/channel_ix")], 7);
	assert_string_equal(s.err, "");
	o = json_object_new_object();
	assert_int_equal(dlh_state_to_json(st, o), 0);
	reps = json_object_object_get(o, "reporters");
	rx = json_object_array_get_idx(reps, 2);
	assert_true(json_object_object_get_ex(rx, "diagnose", NULL));
	assert_int_equal(json_object_get_uint64(json_object_object_get(rx, "diagnose_time_ns")),
			 first);
	json_object_put(o);
	/* the next refresh is the full list again */
	src_devlink_health_refresh(&s, NULL);
	assert_int_equal(s.ops->read(&s, &l2, &v2), 0);
	assert_int_equal(src_devlink_health_state(&s)->diag_rc[2], 0);
	/* recorded replies have no events to monitor */
	assert_null(src_devlink_health_mon_open(&s, e, sizeof(e)));
	assert_string_equal(src_devlink_health_target(&s)->port.dev, "mlx5_core.eth.0");
	s.ops->close(&s);
}

/* The writer the system tests use: another netdev name, new figures. */
static void write_set__netdev_and_figures__source_reads_them(void **state)
{
	char dir[] = "/tmp/test_dlh_set.XXXXXX";
	char *argv[] = { "t", "--write-set", dir, "--netdev", "veth-srv", "--steer", "1900",
			 "--rx-errors", "1", NULL };
	struct clayout *lay;
	const uint64_t *vals;
	struct src s;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(write_set(9, argv), 0);
	netdev0 = "enp8s0f0np0";
	open_fixture(&s, dir, "veth-srv", NULL);
	assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
	assert_int_equal(vals[lay_find(lay, "devlink/vnic/nic_receive_steering_discard")], 1900);
	assert_int_equal(vals[lay_find(lay, "devlink/rx/error_count")], 1);
	s.ops->close(&s);
	rm_set(dir);
}

static void src_devlink_health__diagnose_fails_later__previous_values_kept(void **state)
{
	struct clayout *l1, *l2;
	const uint64_t *v1, *v2;
	struct src s;
	struct src_ctx ctx = { .port_name = "p0", .ifname = "enp8s0f0np0",
			       .netns_fd = -1, .sysfs_root = "" };
	struct dlh_opts o = { .min_refresh_ns = 1 };
	char dir[64], cmd[512];
	int i;

	(void)state;
	copy_set("cx6dx-k6.8", dir, sizeof(dir));
	o.fixture_dir = dir;
	memset(&s, 0, sizeof(s));
	s.ops = &src_devlink_health_ops;
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o), 0);
	assert_int_equal(s.ops->read(&s, &l1, &v1), 0);
	snprintf(cmd, sizeof(cmd), "cp %s/hostile/truncated.nlhex %s/diagnose-vnic.nlhex",
		 FIXDIR, dir);
	assert_int_equal(system(cmd), 0);
	src_devlink_health_refresh(&s, NULL);
	assert_int_equal(s.ops->read(&s, &l2, &v2), 0);
	assert_ptr_equal(l1, l2);                 /* same names */
	i = lay_find(l2, "devlink/vnic/nic_receive_steering_discard");
	assert_int_equal(v2[i], 1843);
	assert_non_null(strstr(s.err, "diagnose vnic"));
	s.ops->close(&s);
	rm_set(dir);
}

static void src_devlink_health__no_devlink_or_no_port__enoent_enodev(void **state)
{
	struct src_ctx ctx = { .port_name = "p0", .ifname = "enp8s0f0np0",
			       .netns_fd = -1, .sysfs_root = "" };
	struct dlh_opts o = { 0 };
	struct src s;
	char dir[64], path[128];

	(void)state;
	copy_set("cx6dx-k6.8", dir, sizeof(dir));
	o.fixture_dir = dir;
	memset(&s, 0, sizeof(s));
	/* an interface that is not a devlink port, no PCI address either */
	ctx.ifname = "veth0";
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o), -ENODEV);
	assert_non_null(strstr(s.err, "no devlink port for veth0"));
	/* ... with a PCI address that exists: device reporters only */
	o.bus_info = "0000:08:00.1";
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o), 0);
	{
		struct clayout *lay;
		const uint64_t *vals;

		s.ops = &src_devlink_health_ops;
		assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
		assert_int_equal(src_devlink_health_state(&s)->n, 3);
		assert_true(lay_find(lay, "devlink/rx/state") < 0);
		s.ops->close(&s);
	}
	/* ... and one that does not */
	o.bus_info = "0000:09:00.0";
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o), -ENODEV);
	/* a kernel without devlink */
	snprintf(path, sizeof(path), "%s/family.nlhex", dir);
	unlink(path);
	ctx.ifname = "enp8s0f0np0";
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o), -ENOENT);
	rm_set(dir);
}

static void src_devlink_health__kernel_without_health__empty_layout(void **state)
{
	struct clayout *lay;
	const uint64_t *vals;
	struct json_object *o;
	struct src s;
	char dir[64], path[128];

	(void)state;
	copy_set("cx6dx-k6.8", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/health-get.nlhex", dir);
	unlink(path);                             /* answers EOPNOTSUPP */
	open_fixture(&s, dir, "enp8s0f0np0", NULL);
	assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
	assert_int_equal(lay->n, 0);
	o = json_object_new_object();
	assert_int_equal(dlh_state_to_json(src_devlink_health_state(&s), o), 0);
	assert_string_equal(json_object_get_string(json_object_object_get(o, "note")),
			    "no devlink health");
	json_object_put(o);
	s.ops->close(&s);
	rm_set(dir);
}

static void dlh_state_to_json__cx6dx__reporters_with_diagnose(void **state)
{
	struct json_object *o = json_object_new_object(), *reps, *r, *v;
	struct clayout *lay;
	const uint64_t *vals;
	struct src s;

	(void)state;
	open_fixture(&s, FIXDIR "/cx6dx-k6.8", "enp8s0f0np0", NULL);
	assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
	assert_int_equal(dlh_state_to_json(src_devlink_health_state(&s), o), 0);
	assert_true(json_object_object_get_ex(o, "reporters", &reps));
	assert_int_equal(json_object_array_length(reps), 5);
	r = json_object_array_get_idx(reps, 2);     /* fw, fw_fatal, rx */
	assert_string_equal(json_object_get_string(json_object_object_get(r, "name")), "rx");
	assert_string_equal(json_object_get_string(json_object_object_get(r, "handle")),
			    "auxiliary/mlx5_core.eth.0/65535");
	assert_string_equal(json_object_get_string(json_object_object_get(r, "state")), "healthy");
	assert_int_equal(json_object_get_int(json_object_object_get(r, "error_count")), 2);
	assert_true(json_object_get_boolean(json_object_object_get(r, "auto_recover")));
	assert_true(json_object_object_get_ex(r, "diagnose", &v));
	assert_true(json_object_object_get_ex(v, "RQs", &v));
	assert_int_equal(json_object_array_length(v), 8);
	r = json_object_array_get_idx(reps, 4);     /* vnic */
	assert_true(json_object_object_get_ex(r, "diagnose", &v));
	assert_true(json_object_object_get_ex(v, "vNIC env counters", &v));
	assert_int_equal(json_object_get_int(json_object_object_get(v,
			 "nic_receive_steering_discard")), 1843);
	assert_false(json_object_object_get_ex(r, "grace_period_ms", NULL));
	json_object_put(o);
	s.ops->close(&s);
}

static void src_devlink_health_dump__stored_dump__json_only_when_newer(void **state)
{
	struct json_object *t = NULL, *v;
	struct src s;
	char e[200];
	int retaken = -1;

	(void)state;
	open_fixture(&s, FIXDIR "/cx6dx-k6.8", "enp8s0f0np0", NULL);
	assert_int_equal(src_devlink_health_dump(&s, "rx", 1764575000000000000ull, 1 << 20,
						 &t, &retaken, e, sizeof(e)), 0);
	assert_non_null(t);
	assert_int_equal(retaken, 0);
	assert_true(json_object_object_get_ex(t, "RQs", &v));
	json_object_put(t);
	/* older than the stall: not copied */
	assert_int_equal(src_devlink_health_dump(&s, "rx", 1764577000000000000ull, 1 << 20,
						 &t, NULL, e, sizeof(e)), 0);
	assert_null(t);
	assert_non_null(strstr(e, "older than the stall"));
	/* over the size bound */
	assert_int_equal(src_devlink_health_dump(&s, "rx", 0, 100, &t, NULL, e, sizeof(e)), 0);
	assert_null(t);
	assert_non_null(strstr(e, "over the 100 limit"));
	/* no stored dump: DUMP_GET is never sent (it would take one) */
	assert_int_equal(src_devlink_health_dump(&s, "tx", 0, 1 << 20, &t, NULL, e, sizeof(e)), 0);
	assert_null(t);
	assert_non_null(strstr(e, "no stored dump"));
	assert_int_equal(src_devlink_health_dump(&s, "nope", 0, 1 << 20, &t, NULL, e, sizeof(e)),
			 -ENOENT);
	s.ops->close(&s);
}

static void src_devlink_health__recover_count_moves__recover_seen_time(void **state)
{
	struct clayout *lay;
	const uint64_t *vals;
	struct src s;
	struct src_ctx ctx = { .port_name = "p0", .ifname = "enp8s0f0np0",
			       .netns_fd = -1, .sysfs_root = "" };
	struct dlh_opts o = { .min_refresh_ns = 1 };
	const struct dlh_state *st;
	char dir[64], path[128], e[128];
	struct buf b = { 0 };
	struct card c = cx6dx;

	(void)state;
	copy_set("cx6dx-k6.8", dir, sizeof(dir));
	o.fixture_dir = dir;
	memset(&s, 0, sizeof(s));
	s.ops = &src_devlink_health_ops;
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o), 0);
	assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
	st = src_devlink_health_state(&s);
	assert_int_equal(st->recover_seen_ns[2], 0);   /* rx */
	c.rx_errors = 3;
	mk_health(&b, &c);
	snprintf(path, sizeof(path), "%s/health-get.nlhex", dir);
	assert_int_equal(dlh_nlhex_write(path, NULL, b.p, b.len, e, sizeof(e)), 0);
	bfree(&b);
	src_devlink_health_refresh(&s, NULL);
	assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
	st = src_devlink_health_state(&s);
	assert_string_equal(st->rep[2].name, "rx");
	assert_int_equal(st->rep[2].recover_count, 3);
	assert_true(st->recover_seen_ns[2] > 0);
	assert_int_equal(vals[lay_find(lay, "devlink/rx/error_count")], 3);
	s.ops->close(&s);
	rm_set(dir);
}

/* ================================================================ events */

struct evs {
	struct dlh_reporter r[8];
	unsigned n;
};

static void ev_cb(const struct dlh_reporter *r, void *arg)
{
	struct evs *e = arg;

	if (e->n < 8)
		e->r[e->n++] = *r;
}

/* devlink_recover_notify: devlink_nl_health_reporter_fill with cmd
 * HEALTH_REPORTER_RECOVER, portid 0, seq 0, flags 0. */
static void recover_event(struct buf *b, const char *bus, const char *dev, uint32_t port,
			  const struct krep *k, uint8_t state)
{
	size_t at = b->len;
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;

	reporter_msg(b, bus, dev, port, k, state, 0);
	nlh = (void *)(b->p + at);
	g = (void *)(b->p + at + NLMSG_HDRLEN);
	nlh->nlmsg_flags = 0;
	nlh->nlmsg_seq = 0;
	nlh->nlmsg_pid = 0;
	g->cmd = DEVLINK_CMD_HEALTH_REPORTER_RECOVER;
}

static void dlh_mon_parse__recover_notifications__events_for_the_port(void **state)
{
	struct krep rx = { "rx", 1, 1, 1, 500, 3, 2, 0, 0 };
	struct krep vnic = { "vnic", 0, 0, 0, 0, 0, 0, 0, 0 };
	struct dlh_target t = { { "pci", "0000:08:00.0", 0, 0 },
				{ "auxiliary", "mlx5_core.eth.0", 1, 65535 } };
	struct buf b = { 0 };
	struct evs ev = { .n = 0 };
	struct nlmsghdr *nlh;
	char e[160] = "";

	(void)state;
	recover_event(&b, "auxiliary", "mlx5_core.eth.0", 65535, &rx, 1);   /* error */
	nlh = genl_begin(&b, FAMILY, 0, 0, DEVLINK_CMD_PORT_NEW);         /* not health */
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_BUS_NAME, "pci");
	msg_end(&b, nlh);
	recover_event(&b, "auxiliary", "mlx5_core.eth.1", 131071, &rx, 0);  /* PF1 */
	recover_event(&b, "pci", "0000:08:00.0", 0, &vnic, 0);
	assert_int_equal(dlh_mon_parse(b.p, b.len, FAMILY, ev_cb, &ev, e, sizeof(e)), 3);
	assert_int_equal(ev.n, 3);
	assert_string_equal(ev.r[0].name, "rx");
	assert_int_equal(ev.r[0].state, 1);
	assert_int_equal(ev.r[0].error_count, 3);
	assert_true(dlh_target_has(&t, &ev.r[0].h));
	assert_false(dlh_target_has(&t, &ev.r[1].h));      /* another port's */
	assert_true(dlh_target_has(&t, &ev.r[2].h));
	bfree(&b);
	/* broken framing: an error, no event */
	mk_hugelen(&b);
	ev.n = 0;
	assert_int_equal(dlh_mon_parse(b.p, b.len, FAMILY, ev_cb, &ev, e, sizeof(e)), -EBADMSG);
	assert_int_equal(ev.n, 0);
	bfree(&b);
}

static void dlh_parse_family__ctrl_reply__id_and_config_group(void **state)
{
	struct buf b = { 0 };
	uint16_t fam = 0;
	uint32_t grp = 0;
	char e[128];

	(void)state;
	family_reply(&b);
	assert_int_equal(dlh_parse_family(b.p, b.len, &fam, &grp, e, sizeof(e)), 0);
	assert_int_equal(fam, FAMILY);
	assert_int_equal(grp, 7);
	assert_int_equal(dlh_parse_family(b.p, 30, &fam, NULL, e, sizeof(e)), -EBADMSG);
	bfree(&b);
}

/* ================================================================ live */

/* This kernel may have no devlink (CONFIG_NET_DEVLINK=n): then the socket
 * says so with -ENOENT, the way the source reports "no devlink". */
static void dlh_io_socket__this_kernel__family_or_enoent(void **state)
{
	char e[256] = "";
	struct dlh_io *io;

	(void)state;
	io = dlh_io_socket(-1, NULL, e, sizeof(e));
	if (!io) {
		assert_int_equal(errno, ENOENT);
		assert_non_null(strstr(e, "no devlink"));
		return;
	}
	assert_true(dlh_io_family(io) >= NLMSG_MIN_TYPE);
	{
		struct dlh_handle h = { "pci", "0000:ff:1f.7", 0, 0 };
		struct dlh_reply r;

		assert_true(dlh_io_request(io, DLH_REQ_HEALTH, &h, NULL, &r, e, sizeof(e)) < 0);
		dlh_reply_free(&r);
	}
	dlh_io_close(io);
}

static void dlh_mon_open__this_kernel__fd_or_enoent(void **state)
{
	struct evs ev = { .n = 0 };
	char e[256] = "";
	struct dlh_mon *m;

	(void)state;
	m = dlh_mon_open(-1, e, sizeof(e));
	if (!m) {
		assert_int_equal(errno, ENOENT);
		return;
	}
	assert_true(dlh_mon_fd(m) >= 0);
	assert_true(dlh_mon_dispatch(m, ev_cb, &ev, e, sizeof(e)) >= 0);   /* nothing yet */
	dlh_mon_close(m);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dlh_build_diagnose__port_reporter__handle_port_and_name),
		cmocka_unit_test(dlh_build_reporter_dump__port_handle__instance_only_dump),
		cmocka_unit_test(dlh_build__bad_arguments__zero),
		cmocka_unit_test(dlh_reply_feed__diagnose_parts_done_ack__complete_at_ack),
		cmocka_unit_test(dlh_reply_feed__nlmsg_len_0x80000001__ebadmsg),
		cmocka_unit_test(dlh_reply_feed__short_zero_and_garbage__ebadmsg),
		cmocka_unit_test(dlh_reply_feed__kernel_error_with_extack__errno_and_text),
		cmocka_unit_test(dlh_reply_feed__other_sequence__skipped),
		cmocka_unit_test(dlh_parse_reporter__cx6dx_dump__five_reporters_per_pf),
		cmocka_unit_test(dlh_parse_reporter__pads_and_burst__parsed),
		cmocka_unit_test(dlh_parse_reporter__hostile_messages__ebadmsg),
		cmocka_unit_test(dlh_parse_port_and_dev__cx6dx__netdev_and_nesting),
		cmocka_unit_test(dlh_parse_fmsg__vnic__steering_discard_counter),
		cmocka_unit_test(dlh_parse_fmsg__rx_three_parts__per_queue_paths),
		cmocka_unit_test(dlh_parse_fmsg__any_part_size_or_pads__same_counters),
		cmocka_unit_test(dlh_parse_fmsg__every_cut_and_flip__no_crash),
		cmocka_unit_test(dlh_parse_fmsg__grammar_violations__ebadmsg),
		cmocka_unit_test(dlh_parse_fmsg__pads_unknown_tokens_and_types__skipped),
		cmocka_unit_test(dlh_parse_fmsg__repeated_and_odd_names__suffixed_sanitized),
		cmocka_unit_test(dlh_parse_fmsg__tree__shaped_like_devlink_json),
		cmocka_unit_test(fixtures__committed__exactly_what_the_model_builds),
		cmocka_unit_test(dlh_nlhex__roundtrip_and_bad_text__line_numbers),
		cmocka_unit_test(src_devlink_health__cx6dx_fixture__all_reporters_and_vnic),
		cmocka_unit_test(src_devlink_health__k515_without_vnic__rx_on_pci_port),
		cmocka_unit_test(src_devlink_health__read_twice__cached_until_refresh),
		cmocka_unit_test(src_devlink_health__diagnose_intervals__rx_carried_vnic_fresh),
		cmocka_unit_test(src_devlink_health__hostile_vnic_reply__named_error_others_kept),
		cmocka_unit_test(src_devlink_health__narrowed_refresh__others_carried),
		cmocka_unit_test(write_set__netdev_and_figures__source_reads_them),
		cmocka_unit_test(src_devlink_health__diagnose_fails_later__previous_values_kept),
		cmocka_unit_test(src_devlink_health__no_devlink_or_no_port__enoent_enodev),
		cmocka_unit_test(src_devlink_health__kernel_without_health__empty_layout),
		cmocka_unit_test(dlh_state_to_json__cx6dx__reporters_with_diagnose),
		cmocka_unit_test(src_devlink_health_dump__stored_dump__json_only_when_newer),
		cmocka_unit_test(src_devlink_health__recover_count_moves__recover_seen_time),
		cmocka_unit_test(dlh_mon_parse__recover_notifications__events_for_the_port),
		cmocka_unit_test(dlh_parse_family__ctrl_reply__id_and_config_group),
		cmocka_unit_test(dlh_io_socket__this_kernel__family_or_enoent),
		cmocka_unit_test(dlh_mon_open__this_kernel__fd_or_enoent),
	};

	if (argc == 3 && !strcmp(argv[1], "--write-fixtures"))
		return write_fixtures(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "--write-set"))
		return write_set(argc, argv);
	log_set_level(LOG_ERR);
	to_repo_root();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
