/* dlhmodel: the kernel's devlink health replies built byte for byte the
 * way net/devlink/health.c builds them, for a ConnectX-6 Dx; shared by
 * the devlink health unit tests (test_devlink_health.c, _parse.c, _src.c)
 * and by the fixtures they write (dlhfix.h).
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
#ifndef NICSTALL_TEST_DLHMODEL_H
#define NICSTALL_TEST_DLHMODEL_H

#include <stddef.h>
#include <stdint.h>

#include <linux/netlink.h>

struct nlattr;

#define FIXDIR "tests/fixtures/devlink"
#define FAMILY 0x14              /* the id the ctrl reply gives "devlink" */
#define PORTID 4242u
#define GOODSIZE 3776u
#define BURST_ATTR 181           /* DEVLINK_ATTR_HEALTH_REPORTER_BURST_PERIOD */

/* A growing byte buffer of netlink messages. */
struct buf {
	uint8_t *p;
	size_t len, cap;
};

/* One devlink_fmsg item, and the list devlink_fmsg_* appends to. */
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

/* One reporter as devlink_nl_health_reporter_fill puts it. */
struct krep {
	const char *name;
	int port;                 /* a port reporter */
	int recover, dump;        /* ops->recover, ops->dump */
	uint64_t grace, errors, recovers;
	int stored_dump;
	int burst;                /* add BURST_PERIOD (newer kernels) */
};

extern const struct card dlm_cx6dx;
extern const struct card dlm_cx6dx_k515;
extern const char *dlm_netdev0;     /* PF0's netdev (--write-set --netdev) */

/* buffers: room at the end, messages (libmnl writes into them), done, ack */
void *dlm_bput(struct buf *b, size_t n);
void dlm_bfree(struct buf *b);
struct nlmsghdr *dlm_msg_begin(struct buf *b, uint16_t type, uint16_t flags,
			   uint32_t seq);
void dlm_msg_end(struct buf *b, struct nlmsghdr *nlh);
struct nlmsghdr *dlm_genl_begin(struct buf *b, uint16_t type, uint16_t flags,
			    uint32_t seq, uint8_t cmd);
void dlm_put_done(struct buf *b, uint32_t seq, int with_int);
void dlm_put_ack(struct buf *b, uint32_t seq, int error, const char *extack);
struct nlattr *dlm_nest_noflag(struct nlmsghdr *nlh, uint16_t type);

/* the fmsg model: devlink_fmsg_* items in a list, kf_send the parts
 * devlink_fmsg_snd would send */
void dlm_kinit(struct kf *k);
void dlm_kfree(struct kf *k);
struct kitem *dlm_kadd(struct kf *k, uint16_t attr);
void dlm_obj_start(struct kf *k);
void dlm_nest_end(struct kf *k);
void dlm_pair_start(struct kf *k, const char *name);
void dlm_arr_pair_start(struct kf *k, const char *name);
void dlm_arr_pair_end(struct kf *k);
void dlm_named_obj_start(struct kf *k, const char *name);
void dlm_named_obj_end(struct kf *k);
void dlm_put_value(struct kf *k, uint8_t type, const void *v, uint16_t len);
void dlm_u8_pair(struct kf *k, const char *name, uint8_t v);
void dlm_u32_pair(struct kf *k, const char *name, uint32_t v);
void dlm_u64_pair(struct kf *k, const char *name, uint64_t v);
void dlm_bool_pair(struct kf *k, const char *name, int v);
void dlm_string_pair(struct kf *k, const char *name, const char *v);
void dlm_kf_send(const struct kf *k, struct buf *b, uint8_t cmd, uint32_t seq,
	     size_t part_max, int pad64, int dump);

/* the card's replies, as devlink and genl ctrl fill them */
void dlm_family_reply(struct buf *b);
void dlm_dev_reply(struct buf *b, const struct card *c);
void dlm_port_reply(struct buf *b, const struct card *c);
void dlm_reporter_msg(struct buf *b, const char *bus, const char *dev,
		  uint32_t port, const struct krep *r, uint8_t state,
		  int pad64);
void dlm_health_reply(struct buf *b, const struct card *c);
void dlm_vnic_fmsg(struct kf *k, const struct card *c);
void dlm_rx_fmsg(struct kf *k, const struct card *c);
void dlm_fw_fmsg(struct kf *k);
void dlm_rx_dump_fmsg(struct kf *k);
void dlm_fmsg_reply(struct buf *b, void (*fill)(struct kf *, const struct card *),
		const struct card *c, size_t part_max, int pad64);
void dlm_fw_fill(struct kf *k, const struct card *c);

#endif
