/* flowtrack_read: reading the tc tracker's map as flow observations, in
 * batches or key by key. See flowtrack_api.h. */
#include "collectors/flows/flowtrack_int.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void ft_emit(const struct ft_key *k, const struct ft_val *v, flow_emit_fn emit, void *arg)
{
	struct flow_obs o;
	unsigned i;

	memset(&o, 0, sizeof(o));
	o.src = FLOW_SRC_BPF;
	flow_key_set(&o.key, k->laddr, k->raddr, k->lport, k->rport, k->proto);
	o.rx_msgs = v->rx_frames;
	o.tx_msgs = v->tx_frames;
	o.rx_bytes = v->rx_bytes;
	o.tx_bytes = v->tx_bytes;
	o.last_rx_ns = v->rx_last_ns;
	o.last_tx_ns = v->tx_last_ns;
	for (i = 0; i < FT_NFLAGS; i++)
		if (v->flags[i])
			o.state |= 1u << i;
	emit(&o, arg);
}

/* Last seen before ft->since_ns (flowtrack_set_since): left out. */
static int ft_stale(const struct flowtrack *ft, const struct ft_val *v)
{
	return ft->since_ns && v->rx_last_ns < ft->since_ns && v->tx_last_ns < ft->since_ns;
}

void flowtrack_set_since(struct flowtrack *ft, uint64_t mono_ns)
{
	ft->since_ns = mono_ns;
}

/* The walk key by key: two system calls per flow. For kernels without
 * BPF_MAP_LOOKUP_BATCH on LRU hash maps (before 5.6). */
static int ft_poll_walk(struct flowtrack *ft, int fd, flow_emit_fn emit, void *arg)
{
	struct ft_key cur, next;
	struct ft_val v;
	unsigned guard;
	void *prev = NULL;
	int n = 0;

	/* LRU eviction under our feet restarts the walk; bound it. */
	guard = ft->max_flows * 2 + 64;
	while (guard-- && bpf_map_get_next_key(fd, prev, &next) == 0) {
		cur = next;
		prev = &cur;
		if (bpf_map_lookup_elem(fd, &cur, &v) < 0)
			continue;       /* evicted meanwhile */
		if ((cur.proto != IPPROTO_TCP && cur.proto != IPPROTO_UDP) || ft_stale(ft, &v))
			continue;
		ft_emit(&cur, &v, emit, arg);
		n++;
	}
	ft->walks++;
	return n;
}

/* The map in batches (BPF_MAP_LOOKUP_BATCH: the kernel copies whole hash
 * buckets, FT_BATCH entries a call, htab_lru_map_lookup_batch()), so a poll
 * of N flows costs N / FT_BATCH system calls, not 2N. -EOPNOTSUPP/-EINVAL
 * when the kernel has no batch ops for this map; -ENOSPC never (a bucket
 * longer than the batch grows the batch, up to the map size). */
static int ft_poll_batch(struct flowtrack *ft, int fd, flow_emit_fn emit, void *arg)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 in = 0, out = 0;
	int n = 0, first = 1;

	for (;;) {
		__u32 count = ft->batch_cap;
		int rc = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, ft->bkeys, ft->bvals,
					      &count, &opts);

		rc = rc < 0 ? -errno : 0;
		if (rc == -ENOSPC && ft->batch_cap < ft->max_flows) {
			/* one bucket holds more than a batch: a bigger one */
			unsigned cap = ft->batch_cap * 4 > ft->max_flows ? ft->max_flows
									  : ft->batch_cap * 4;
			void *k = realloc(ft->bkeys, cap * sizeof(struct ft_key));
			void *v = k ? realloc(ft->bvals, cap * sizeof(struct ft_val)) : NULL;

			if (k)
				ft->bkeys = k;
			if (!v)
				return -ENOMEM;
			ft->bvals = v;
			ft->batch_cap = cap;
			continue;
		}
		if (rc < 0 && rc != -ENOENT)
			return rc;
		for (__u32 i = 0; i < count; i++) {
			const struct ft_key *k = &ft->bkeys[i];

			if ((k->proto != IPPROTO_TCP && k->proto != IPPROTO_UDP) ||
			    ft_stale(ft, &ft->bvals[i]))
				continue;
			ft_emit(k, &ft->bvals[i], emit, arg);
			n++;
		}
		ft->batches++;
		if (rc == -ENOENT)      /* the end of the map */
			return n;
		in = out;
		first = 0;
	}
}

int flowtrack_poll(struct flowtrack *ft, flow_emit_fn emit, void *arg)
{
	int fd, n;

	if (!ft || !emit)
		return -EINVAL;
	fd = bpf_map__fd(ft->skel->maps.ft_flows);
	if (!ft->no_batch) {
		if (!ft->bkeys) {
			ft->batch_cap = FT_BATCH < ft->max_flows ? FT_BATCH : ft->max_flows;
			ft->bkeys = calloc(ft->batch_cap, sizeof(struct ft_key));
			ft->bvals = calloc(ft->batch_cap, sizeof(struct ft_val));
			if (!ft->bkeys || !ft->bvals)
				return -ENOMEM;
		}
		n = ft_poll_batch(ft, fd, emit, arg);
		/* nothing was emitted when the kernel has no batch ops */
		if (n != -EINVAL && n != -EOPNOTSUPP && n != -FT_ENOTSUPP)
			return n;
		ft->no_batch = 1;
	}
	return ft_poll_walk(ft, fd, emit, arg);
}

void flowtrack_set_batch(struct flowtrack *ft, int on)
{
	if (ft)
		ft->no_batch = !on;
}

void flowtrack_stats(const struct flowtrack *ft, unsigned *max_flows, uint64_t *batches,
		     uint64_t *walks)
{
	if (!ft)
		return;
	if (max_flows)
		*max_flows = ft->max_flows;
	if (batches)
		*batches = ft->batches;
	if (walks)
		*walks = ft->walks;
}


size_t flowtrack_map_bytes(const struct flowtrack *ft)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	if (!ft)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", bpf_map__fd(ft->skel->maps.ft_flows));
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return (size_t)v;
}

int flowtrack_test_run(struct flowtrack *ft, int egress, const void *pkt, size_t len,
		       unsigned repeat, unsigned *ns_per_run)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = (__u32)len,
		    .repeat = repeat ? repeat : 1);
	int fd;

	if (!ft || !pkt)
		return -EINVAL;
	fd = bpf_program__fd(egress ? ft->skel->progs.ft_egress : ft->skel->progs.ft_ingress);
	if (bpf_prog_test_run_opts(fd, &o) < 0)
		return -errno;
	if (ns_per_run)
		*ns_per_run = o.duration;
	return 0;
}
