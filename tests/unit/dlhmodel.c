/* dlhmodel: the kernel's devlink health replies, byte for byte (see
 * dlhmodel.h for the model). */
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

#include "collectors/counters/counters.h"
#include "collectors/counters/devlink_health.h"
#include "lib/log.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#include "dlhmodel.h"

/* ================================================================ buffers */

void *dlm_bput(struct buf *b, size_t n)
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

void dlm_bfree(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* Room for one message at the end of b: libmnl writes into it. */
struct nlmsghdr *dlm_msg_begin(struct buf *b, uint16_t type, uint16_t flags,
			   uint32_t seq)
{
	struct nlmsghdr *nlh;

	dlm_bput(b, 65536);
	b->len -= 65536;
	nlh = mnl_nlmsg_put_header(b->p + b->len);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = PORTID;
	return nlh;
}

void dlm_msg_end(struct buf *b, struct nlmsghdr *nlh)
{
	b->len += NLMSG_ALIGN(nlh->nlmsg_len);
}

struct nlmsghdr *dlm_genl_begin(struct buf *b, uint16_t type, uint16_t flags,
			    uint32_t seq, uint8_t cmd)
{
	struct nlmsghdr *nlh = dlm_msg_begin(b, type, flags, seq);
	struct genlmsghdr *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));

	g->cmd = cmd;
	g->version = type == GENL_ID_CTRL ? 2 : DEVLINK_GENL_VERSION;
	return nlh;
}

void dlm_put_done(struct buf *b, uint32_t seq, int with_int)
{
	struct nlmsghdr *nlh = dlm_msg_begin(b, NLMSG_DONE, NLM_F_MULTI, seq);

	if (with_int) {
		int *v = mnl_nlmsg_put_extra_header(nlh, sizeof(int));

		*v = 0;
	}
	dlm_msg_end(b, nlh);
}

/* netlink_ack: the error, the request's header (capped), extack TLVs. */
void dlm_put_ack(struct buf *b, uint32_t seq, int error, const char *extack)
{
	struct nlmsghdr *nlh = dlm_msg_begin(b, NLMSG_ERROR, NLM_F_CAPPED, seq);
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
	dlm_msg_end(b, nlh);
}

/* nla_nest_start_noflag: the kernel opens DEVLINK_ATTR_FMSG,
 * DEVLINK_ATTR_HEALTH_REPORTER and the ctrl family's groups without
 * NLA_F_NESTED (libmnl always sets it). */
struct nlattr *dlm_nest_noflag(struct nlmsghdr *nlh, uint16_t type)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, type);

	n->nla_type = type;
	return n;
}

/* ================================================================ fmsg model */

void dlm_kinit(struct kf *k)
{
	k->it = calloc(8192, sizeof(*k->it));
	assert_non_null(k->it);
	k->n = 0;
}

void dlm_kfree(struct kf *k)
{
	free(k->it);
	k->it = NULL;
}

struct kitem *dlm_kadd(struct kf *k, uint16_t attr)
{
	assert_true(k->n < 8192);
	memset(&k->it[k->n], 0, sizeof(k->it[0]));
	k->it[k->n].attr = attr;
	return &k->it[k->n++];
}

void dlm_obj_start(struct kf *k) { dlm_kadd(k, DEVLINK_ATTR_FMSG_OBJ_NEST_START); }
void dlm_nest_end(struct kf *k) { dlm_kadd(k, DEVLINK_ATTR_FMSG_NEST_END); }

void dlm_pair_start(struct kf *k, const char *name)
{
	struct kitem *i;

	dlm_kadd(k, DEVLINK_ATTR_FMSG_PAIR_NEST_START);
	i = dlm_kadd(k, DEVLINK_ATTR_FMSG_OBJ_NAME);
	i->type = 10;
	i->len = (uint16_t)(strlen(name) + 1);
	memcpy(i->val, name, i->len);
}

void dlm_arr_pair_start(struct kf *k, const char *name)
{
	dlm_pair_start(k, name);
	dlm_kadd(k, DEVLINK_ATTR_FMSG_ARR_NEST_START);
}

void dlm_arr_pair_end(struct kf *k)
{
	dlm_nest_end(k);
	dlm_nest_end(k);
}

/* mlx5e_health_fmsg_named_obj_nest_start/_end */
void dlm_named_obj_start(struct kf *k, const char *name)
{
	dlm_pair_start(k, name);
	dlm_obj_start(k);
}

void dlm_named_obj_end(struct kf *k)
{
	dlm_nest_end(k);
	dlm_nest_end(k);
}

void dlm_put_value(struct kf *k, uint8_t type, const void *v, uint16_t len)
{
	struct kitem *i = dlm_kadd(k, DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA);

	assert_true(len <= sizeof(i->val));
	i->type = type;
	i->len = len;
	memcpy(i->val, v, len);
}

void dlm_u8_pair(struct kf *k, const char *name, uint8_t v)
{
	dlm_pair_start(k, name);
	dlm_put_value(k, 1, &v, 1);
	dlm_nest_end(k);
}

void dlm_u32_pair(struct kf *k, const char *name, uint32_t v)
{
	dlm_pair_start(k, name);
	dlm_put_value(k, 3, &v, 4);
	dlm_nest_end(k);
}

void dlm_u64_pair(struct kf *k, const char *name, uint64_t v)
{
	dlm_pair_start(k, name);
	dlm_put_value(k, 4, &v, 8);
	dlm_nest_end(k);
}

void dlm_bool_pair(struct kf *k, const char *name, int v)
{
	uint8_t b = !!v;

	dlm_pair_start(k, name);
	dlm_put_value(k, 6, &b, 1);
	dlm_nest_end(k);
}

void dlm_string_pair(struct kf *k, const char *name, const char *v)
{
	dlm_pair_start(k, name);
	dlm_put_value(k, 10, v, (uint16_t)(strlen(v) + 1));
	dlm_nest_end(k);
}

/* devlink_fmsg_snd over devlink_fmsg_prepare_skb. */
void dlm_kf_send(const struct kf *k, struct buf *b, uint8_t cmd, uint32_t seq,
	     size_t part_max, int pad64, int dump)
{
	unsigned idx = 0;

	for (;;) {
		struct nlmsghdr *nlh = dlm_genl_begin(b, FAMILY,
						  dump ? NLM_F_ACK | NLM_F_MULTI : NLM_F_MULTI,
						  seq, cmd);
		struct nlattr *nest = dlm_nest_noflag(nlh, DEVLINK_ATTR_FMSG);
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
		dlm_msg_end(b, nlh);
		assert_true(idx > start);         /* the kernel gives up: -EMSGSIZE */
		if (idx == k->n)
			break;
	}
	if (dump) {
		dlm_put_done(b, seq, 1);
	} else {
		dlm_put_done(b, seq, 0);
		dlm_put_ack(b, seq, 0, NULL);
	}
}

/* ================================================================ the card */

const struct card dlm_cx6dx = { 0, 0, 2, 1843, 8 };
const char *dlm_netdev0 = "enp8s0f0np0";     /* --write-set --netdev */
const struct card dlm_cx6dx_k515 = { 1, 0, 0, 0, 8 };

void dlm_family_reply(struct buf *b)
{
	struct nlmsghdr *nlh = dlm_genl_begin(b, GENL_ID_CTRL, 0, 1001, CTRL_CMD_NEWFAMILY);
	struct nlattr *g, *g1;

	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, DEVLINK_GENL_NAME);
	mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, FAMILY);
	mnl_attr_put_u32(nlh, CTRL_ATTR_VERSION, DEVLINK_GENL_VERSION);
	mnl_attr_put_u32(nlh, CTRL_ATTR_HDRSIZE, 0);
	mnl_attr_put_u32(nlh, CTRL_ATTR_MAXATTR, 180);
	g = dlm_nest_noflag(nlh, CTRL_ATTR_MCAST_GROUPS);
	g1 = dlm_nest_noflag(nlh, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_MCAST_GRP_NAME, "config");
	mnl_attr_put_u32(nlh, CTRL_ATTR_MCAST_GRP_ID, 7);
	mnl_attr_nest_end(nlh, g1);
	mnl_attr_nest_end(nlh, g);
	dlm_msg_end(b, nlh);
	dlm_put_ack(b, 1001, 0, NULL);
}

void dlm_dev_reply(struct buf *b, const struct card *c)
{
	for (int pf = 0; pf < 2; pf++) {
		struct nlmsghdr *nlh = dlm_genl_begin(b, FAMILY, NLM_F_MULTI, 1002, DEVLINK_CMD_NEW);
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
		dlm_msg_end(b, nlh);
	}
	for (int pf = 0; !c->k515 && pf < 2; pf++) {
		struct nlmsghdr *nlh = dlm_genl_begin(b, FAMILY, NLM_F_MULTI, 1002, DEVLINK_CMD_NEW);
		char dev[32];

		snprintf(dev, sizeof(dev), "mlx5_core.eth.%d", pf);
		mnl_attr_put_strz(nlh, DEVLINK_ATTR_BUS_NAME, "auxiliary");
		mnl_attr_put_strz(nlh, DEVLINK_ATTR_DEV_NAME, dev);
		mnl_attr_put_u8(nlh, DEVLINK_ATTR_RELOAD_FAILED, 0);
		dlm_msg_end(b, nlh);
	}
	dlm_put_done(b, 1002, 1);
}

void dlm_port_reply(struct buf *b, const struct card *c)
{
	for (int pf = 0; pf < 2; pf++) {
		struct nlmsghdr *nlh = dlm_genl_begin(b, FAMILY, NLM_F_MULTI, 1003,
						  DEVLINK_CMD_PORT_NEW);
		char dev[32], nd[16];

		snprintf(dev, sizeof(dev), c->k515 ? "0000:08:00.%d" : "mlx5_core.eth.%d", pf);
		snprintf(nd, sizeof(nd), "enp8s0f%dnp%d", pf, pf);
		if (!pf)
			snprintf(nd, sizeof(nd), "%s", dlm_netdev0);
		mnl_attr_put_strz(nlh, DEVLINK_ATTR_BUS_NAME, c->k515 ? "pci" : "auxiliary");
		mnl_attr_put_strz(nlh, DEVLINK_ATTR_DEV_NAME, dev);
		mnl_attr_put_u32(nlh, DEVLINK_ATTR_PORT_INDEX, pf ? 131071 : 65535);
		mnl_attr_put_u16(nlh, DEVLINK_ATTR_PORT_TYPE, DEVLINK_PORT_TYPE_ETH);
		mnl_attr_put_u32(nlh, DEVLINK_ATTR_PORT_NETDEV_IFINDEX, (uint32_t)(4 + pf));
		mnl_attr_put_strz(nlh, DEVLINK_ATTR_PORT_NETDEV_NAME, nd);
		mnl_attr_put_u16(nlh, DEVLINK_ATTR_PORT_FLAVOUR, DEVLINK_PORT_FLAVOUR_PHYSICAL);
		mnl_attr_put_u32(nlh, DEVLINK_ATTR_PORT_NUMBER, (uint32_t)pf);
		mnl_attr_put_u8(nlh, DEVLINK_ATTR_PORT_SPLITTABLE, 0);
		dlm_msg_end(b, nlh);
	}
	dlm_put_done(b, 1003, 1);
}

/* devlink_nl_health_reporter_fill */
void dlm_reporter_msg(struct buf *b, const char *bus, const char *dev,
		  uint32_t port, const struct krep *r, uint8_t state,
		  int pad64)
{
	struct nlmsghdr *nlh = dlm_genl_begin(b, FAMILY, NLM_F_MULTI, 1004,
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
	n = dlm_nest_noflag(nlh, DEVLINK_ATTR_HEALTH_REPORTER);
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
	dlm_msg_end(b, nlh);
}

/* A dump of every instance, the way kernels before 6.4 answer even a
 * request with a handle: the parser has to filter. */
void dlm_health_reply(struct buf *b, const struct card *c)
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
				dlm_reporter_msg(b, "pci", pci, 0, &dev_reps[i], 0, c->pad64);
		for (unsigned i = 0; i < 2; i++)
			dlm_reporter_msg(b, c->k515 ? "pci" : "auxiliary", c->k515 ? pci : aux, port,
				     &port_reps[i], 0, c->pad64);
	}
	dlm_put_done(b, 1004, 1);
}

/* mlx5_reporter_vnic_diagnose_counters, CX6 Dx capabilities */
void dlm_vnic_fmsg(struct kf *k, const struct card *c)
{
	dlm_obj_start(k);                 /* devlink_nl_health_reporter_diagnose_doit */
	dlm_pair_start(k, "vNIC env counters");
	dlm_obj_start(k);
	dlm_u32_pair(k, "total_error_queues", 0);
	dlm_u32_pair(k, "send_queue_priority_update_flow", 0);
	dlm_u32_pair(k, "comp_eq_overrun", 0);
	dlm_u32_pair(k, "async_eq_overrun", 0);
	dlm_u32_pair(k, "cq_overrun", 0);
	dlm_u32_pair(k, "invalid_command", 0);
	dlm_u32_pair(k, "quota_exceeded_command", 0);
	dlm_u64_pair(k, "nic_receive_steering_discard", c->steer);
	dlm_u64_pair(k, "generated_pkt_steering_fail", 0);
	dlm_u64_pair(k, "handled_pkt_steering_fail", 0);
	dlm_nest_end(k);
	dlm_nest_end(k);
	dlm_nest_end(k);
}

/* mlx5e_rx_reporter_diagnose */
void dlm_rx_fmsg(struct kf *k, const struct card *c)
{
	dlm_obj_start(k);
	dlm_named_obj_start(k, "Common config");
	dlm_named_obj_start(k, "RQ");
	dlm_u8_pair(k, "type", 1);
	dlm_u64_pair(k, "stride size", 2048);
	dlm_u32_pair(k, "size", 8);
	dlm_string_pair(k, "ts_format", "FRC");
	dlm_named_obj_start(k, "CQ");
	dlm_u64_pair(k, "stride size", 64);
	dlm_u32_pair(k, "size", 1024);
	dlm_named_obj_end(k);
	dlm_named_obj_end(k);
	dlm_named_obj_end(k);
	dlm_arr_pair_start(k, "RQs");
	for (unsigned i = 0; i < c->channels; i++) {
		dlm_obj_start(k);
		dlm_u32_pair(k, "channel ix", i);
		dlm_u32_pair(k, "rqn", 0x10c9 + i * 6);
		dlm_u8_pair(k, "HW state", 1);            /* MLX5_RQC_STATE_RDY */
		dlm_u8_pair(k, "SW state", 0x11);
		dlm_u32_pair(k, "WQE counter", 4660 + i);
		dlm_u32_pair(k, "posted WQEs", 7);
		dlm_u32_pair(k, "cc", 3 + i);
		dlm_named_obj_start(k, "CQ");
		dlm_u32_pair(k, "cqn", 0x4a3 + i * 4);
		dlm_u8_pair(k, "HW status", 0);
		dlm_u32_pair(k, "ci", 29781 + i);
		dlm_u32_pair(k, "size", 1024);
		dlm_named_obj_end(k);
		dlm_named_obj_start(k, "EQ");
		dlm_u8_pair(k, "eqn", (uint8_t)(7 + i));
		dlm_u32_pair(k, "irqn", 76 + i);
		dlm_u32_pair(k, "vecidx", 1 + i);
		dlm_u32_pair(k, "ci", 31 + i);
		dlm_u32_pair(k, "size", 1024);
		dlm_named_obj_end(k);
		dlm_named_obj_start(k, "ICOSQ");
		dlm_u32_pair(k, "sqn", 0x10ca + i * 6);
		dlm_u8_pair(k, "HW state", 1);
		dlm_u32_pair(k, "cc", 91 + i);
		dlm_u32_pair(k, "pc", 91 + i);
		dlm_u32_pair(k, "WQE size", 128);
		dlm_named_obj_start(k, "CQ");
		dlm_u32_pair(k, "cqn", 0x4a4 + i * 4);
		dlm_u32_pair(k, "cc", 91 + i);
		dlm_u32_pair(k, "size", 128);
		dlm_named_obj_end(k);
		dlm_named_obj_end(k);
		dlm_nest_end(k);
	}
	dlm_arr_pair_end(k);
	dlm_nest_end(k);
}

/* mlx5_fw_reporter_diagnose, healthy */
void dlm_fw_fmsg(struct kf *k)
{
	dlm_obj_start(k);
	dlm_u8_pair(k, "Syndrome", 0);
	dlm_nest_end(k);
}

/* mlx5e_rx_reporter_dump_all_rqs, shortened: binary resource dumps */
void dlm_rx_dump_fmsg(struct kf *k)
{
	uint8_t blob[256];

	for (unsigned i = 0; i < sizeof(blob); i++)
		blob[i] = (uint8_t)(i * 7 + 1);
	dlm_obj_start(k);
	dlm_named_obj_start(k, "RX Slice");
	dlm_arr_pair_start(k, "data");                  /* binary_pair_nest_start */
	dlm_put_value(k, 11, blob, sizeof(blob));
	dlm_arr_pair_end(k);
	dlm_named_obj_end(k);
	dlm_arr_pair_start(k, "RQs");
	dlm_obj_start(k);
	dlm_named_obj_start(k, "RQ");
	dlm_u32_pair(k, "index", 0x10c9);
	dlm_arr_pair_start(k, "data");
	dlm_put_value(k, 11, blob, 64);
	dlm_arr_pair_end(k);
	dlm_named_obj_end(k);
	dlm_nest_end(k);
	dlm_arr_pair_end(k);
	dlm_nest_end(k);
}

void dlm_fmsg_reply(struct buf *b, void (*fill)(struct kf *, const struct card *),
		const struct card *c, size_t part_max, int pad64)
{
	struct kf k;

	dlm_kinit(&k);
	fill(&k, c);
	dlm_kf_send(&k, b, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, 1005, part_max, pad64, 0);
	dlm_kfree(&k);
}

void dlm_fw_fill(struct kf *k, const struct card *c)
{
	(void)c;
	dlm_fw_fmsg(k);
}
