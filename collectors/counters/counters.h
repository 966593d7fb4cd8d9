/* counters: named vectors of u64 counters and the counter-source ops table.
 *
 * A source (ethtool ioctl, netdev stats64, RDMA hw_counters, recorded text)
 * produces, on every read, one value per name of its current layout. A layout
 * is immutable and reference counted: when a source's name set changes
 * (driver reload, counter set change) it makes a new layout, and samples that
 * still hold the old one keep it alive. */
#ifndef NICSTALL_COUNTERS_H
#define NICSTALL_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#define CNT_W32 32      /* counter wraps at 2^32 (RDMA hw_counters) */
#define CNT_W64 64

struct clayout {
	unsigned refs;
	unsigned n;
	char **names;       /* n names, owned */
	uint8_t *width;     /* n widths: CNT_W32 or CNT_W64 */
};

/* Build a layout from n names (copied). width may be NULL (all 64-bit). */
struct clayout *clayout_new(unsigned n, const char *const *names,
			    const uint8_t *width);
struct clayout *clayout_ref(struct clayout *l);
void clayout_unref(struct clayout *l);
/* Same names, same order, same widths? */
int clayout_equal(const struct clayout *a, const struct clayout *b);
/* Index of name or -1 (linear; layouts are small). */
int clayout_find(const struct clayout *l, const char *name);
/* Where each counter of ref is in l: map[c] (ref->n entries) its index
 * in l, -1 where l lacks it; linear in both. 0, or -1 out of memory. */
int clayout_map(const struct clayout *l, const struct clayout *ref, int *map);
/* The same in a map of its own (free() it); NULL out of memory. */
int *clayout_map_new(const struct clayout *l, const struct clayout *ref);

/* Delta between two reads of one counter, never huge or negative.
 * Sets *flags to CNT_WRAPPED or CNT_RESET when detected. */
#define CNT_WRAPPED 1u
#define CNT_RESET   2u
uint64_t cnt_delta(uint64_t prev, uint64_t cur, uint8_t width, unsigned *flags);

struct port;    /* daemon/port.h */

/* Where a source runs: resolved by the port before open(). */
struct src_ctx {
	const char *port_name;   /* for log lines */
	const char *ifname;      /* interface name inside the namespace */
	int ifindex;             /* 0 when unknown */
	int netns_fd;            /* -1: the daemon's own namespace */
	const char *sysfs_root;  /* "" or a fixture root, never NULL */
	const char *rdma_dev;    /* NULL when the port has none */
	unsigned rdma_port;      /* 1-based */
	const char *text_file;   /* recorded `ethtool -S` text, or NULL */
};

/* One counter source instance. A module fills ops and priv in its open(). */
struct src;
struct src_ops {
	const char *name;        /* "ethtool", "netdev", "rdma", "text" */
	/* 0 on success; -errno when unavailable (logged by the caller). */
	int (*open)(struct src *s, const struct src_ctx *ctx);
	/* Read every counter now. On success *lay is the current layout
	 * (borrowed: ref it to keep it) and vals has lay->n values, valid until
	 * the next read. Returns 0, or -errno with s->err filled. */
	int (*read)(struct src *s, struct clayout **lay, const uint64_t **vals);
	void (*close)(struct src *s);
};

struct src {
	const struct src_ops *ops;
	void *priv;
	char err[256];           /* last error, human readable */
};

extern const struct src_ops src_ethtool_ops;  /* collectors/counters/src_ethtool.c */
extern const struct src_ops src_netdev_ops;   /* collectors/counters/src_netdev.c */
extern const struct src_ops src_rdma_ops;     /* collectors/counters/src_rdma.c */
extern const struct src_ops src_text_ops;     /* collectors/counters/src_text.c */

#endif
