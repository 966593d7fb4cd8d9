/* flowtrack_src: the tc tracker as a flow source, flow_src_bpf_ops
 * ("bpf", port scope): its programs attached for the port's selectors,
 * hooked only while a flow of the port waits where it can, read every
 * poll (flowtrack.h does the attaching and the reading). */
#include "collectors/flows/flowtrack.h"
#include "collectors/flows/flowtrack_api.h"
#include "collectors/flows/flowsrc.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/rtnl.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ft_src {
	struct flowtrack *ft;
	int udp;                /* the selectors admit UDP: read every poll */
	int on_wait;            /* hooked only while a flow of the port waits */
	int changing;           /* a change of the hooks in flight */
	int hooked;             /* as the last poll found them */
	char port[32];
	uint64_t last_read;
	uint64_t hooks_on, hooks_off;   /* transitions, for status */
};

static int ft_src_open(struct flow_src *s, const struct flow_src_ctx *ctx)
{
	struct ft_src *p;
	struct flowtrack *ft;
	int ifindex, rc;
	char e[256];

	s->err[0] = '\0';
	s->ops = &flow_src_bpf_ops;
	if (!ctx) {
		util_errf(s->err, sizeof(s->err), "flowtrack: no context");
		return -EINVAL;
	}
	ifindex = ctx->ifindex;
	if (ifindex <= 0 && ctx->ifname && *ctx->ifname) {
		struct nl_link l;

		rc = nl_link_get(ctx->netns_fd, ctx->ifname, 0, &l, e, sizeof(e));
		if (rc < 0) {
			util_errf(s->err, sizeof(s->err), "flowtrack: %s", e);
			return rc;
		}
		ifindex = l.ifindex;
	}
	/* What a killed daemon left on the port goes first. */
	if (flowtrack_cleanup_stale(ctx->netns_fd, ifindex, e, sizeof(e)) < 0)
		log_debug("flowtrack: %s", e);
	p = calloc(1, sizeof(*p));
	if (!p) {
		util_errf(s->err, sizeof(s->err), "flowtrack: out of memory");
		return -ENOMEM;
	}
	errno = 0;
	ft = flowtrack_attach(ctx->netns_fd, ifindex, ctx->sel, ctx->nsel, 0,
			      (enum flowtrack_attach_mode)ctx->tracker_attach, s->err,
			      sizeof(s->err));
	if (!ft) {
		free(p);
		return -(errno ? errno : EIO);
	}
	p->ft = ft;
	p->udp = !ctx->nsel;
	for (unsigned i = 0; i < ctx->nsel; i++)
		if (ctx->sel[i].proto != IPPROTO_TCP)
			p->udp = 1;
	util_strlcpy(p->port, ctx->port_name ? ctx->port_name : "-", sizeof(p->port));
	/* TCP only: the flows are evidence, and the hooks cost every frame of
	 * the port (bench/README.md): attached once above, so that a port
	 * the tracker cannot hook fails now, then off until a flow waits */
	if (!p->udp && !ctx->hooks_always) {
		p->on_wait = 1;
		rc = flowtrack_set_hooked(ft, 0, s->err, sizeof(s->err));
		if (rc < 0) {
			flowtrack_detach(ft);
			free(p);
			return rc;
		}
	}
	s->priv = p;
	return 0;
}

/* on_wait: hooks on from the poll that saw a flow wait half a threshold,
 * off FLOW_SRC_WANT_HOLD_NS after the last such poll, each change made by
 * a thread (flowtrack_set_hooked_bg: the kernel's grace periods held the
 * detector's poll, and the stall call, back 13 to 32 ms). 1 while hooked
 * (a change to off still in flight too), 0 off (a change to on still in
 * flight too), -errno + s->err when they could not be put on or taken
 * off. A change is counted and logged at the poll that finds it made. */
static int ft_src_hooks(struct flow_src *s, struct ft_src *p)
{
	int want = s->sched.wanted_ns && s->sched.now_ns >= s->sched.wanted_ns &&
		   s->sched.now_ns - s->sched.wanted_ns < FLOW_SRC_WANT_HOLD_NS;
	char e[256];
	int rc, h;

	rc = want == flowtrack_hooked(p->ft) && !p->changing ? 0 :
	     flowtrack_set_hooked_bg(p->ft, want, e, sizeof(e));
	p->changing = rc == -EINPROGRESS;
	h = flowtrack_hooked(p->ft);
	if (h != p->hooked) {
		p->hooked = h;
		if (h) {
			p->hooks_on++;
			log_info("port %s: tracker hooks on: a watched flow waits", p->port);
		} else {
			p->hooks_off++;
			log_info("port %s: tracker hooks off: no flow has waited for %llu s",
				 p->port,
				 (unsigned long long)(FLOW_SRC_WANT_HOLD_NS / 1000000000ull));
		}
	}
	if (rc < 0 && rc != -EINPROGRESS) {
		/* tried again next poll, told once */
		util_errf(s->err, sizeof(s->err), "%s", e);
		return rc;
	}
	return h;
}

/* TCP flows are evidence only (see flowsrc.h): when the selectors admit no
 * UDP, the map is read every refresh_ns, not every poll. */
static int ft_src_poll(struct flow_src *s, flow_emit_fn emit, void *arg)
{
	struct ft_src *p = s->priv;
	struct flow_src_sched *sc = &s->sched;
	int n;

	sc->skipped = 0;
	if (!p) {
		util_errf(s->err, sizeof(s->err), "flowtrack: source not open");
		return -EBADF;
	}
	if (p->on_wait) {
		n = ft_src_hooks(s, p);
		if (n <= 0) {
			/* nothing counted: the map's flows are as they were;
			 * the hooks come on with a want (the detector polls at
			 * once then), an error is tried again next poll */
			sc->skipped = 1;
			/* a change in flight: looked at again at the next
			 * interval, as after an error; off, nothing to read
			 * (the want that puts them on is the detector's, and
			 * it polls at once then) */
			sc->next_ns = n < 0 || p->changing ? 0 : FLOW_SRC_NO_NEXT;
			return n;
		}
		/* hooked: read at every poll, until the hold ends */
	}
	if (!p->udp && !p->on_wait && sc->now_ns && p->last_read && sc->refresh_ns > sc->poll_ns &&
	    sc->now_ns - p->last_read + sc->poll_ns / 2 < sc->refresh_ns) {
		sc->skipped = 1;
		sc->next_ns = p->last_read + sc->refresh_ns;
		return 0;
	}
	p->last_read = sc->now_ns;
	/* TCP only: evidence, read once a refresh; UDP: its waits are dated
	 * by the last frame received (flows.h), the detector plans them */
	sc->next_ns = p->on_wait ? 0 : flow_src_idle_next(s);
	n = flowtrack_poll(p->ft, emit, arg);
	if (n < 0)
		util_errf(s->err, sizeof(s->err), "flowtrack: reading the flow map: %s",
			  strerror(-n));
	return n;
}

static void ft_src_status(const struct flow_src *s, struct json_object *out)
{
	unsigned max = 0;
	uint64_t batches = 0, walks = 0;

	const struct ft_src *p = s->priv;

	if (!p)
		return;
	flowtrack_stats(p->ft, &max, &batches, &walks);
	jx_add_u64(out, "map_size", max);
	jx_add_u64(out, "map_kib", flowtrack_map_bytes(p->ft) / 1024);
	jx_add_str(out, "map_read", walks ? "key by key" : "batches");
	jx_add_str(out, "read", p->udp ? "every poll" :
		   p->on_wait ? "every poll while hooked (TCP only: evidence)" :
		   "every refresh (TCP only: evidence)");
	jx_add_str(out, "attach", flowtrack_attach_mode(p->ft) == FLOWTRACK_TCX ?
		   "tcx links" : "clsact filters");
	jx_add_str(out, "hooks", !p->on_wait ? "always" :
		   p->changing ? (flowtrack_hooked(p->ft) ? "going off" : "going on") :
		   flowtrack_hooked(p->ft) ? "on (a watched flow waits)" :
		   "off until a watched flow waits");
	if (p->on_wait) {
		jx_add_u64(out, "hooks_on", p->hooks_on);
		jx_add_u64(out, "hooks_off", p->hooks_off);
	}
}

static void ft_src_close(struct flow_src *s)
{
	struct ft_src *p = s->priv;

	if (p)
		flowtrack_detach(p->ft);
	free(p);
	s->priv = NULL;
}

const struct flow_src_ops flow_src_bpf_ops = {
	.name = "bpf",
	.kind = FLOW_SRC_BPF,
	.host = 0,
	.open = ft_src_open,
	.poll = ft_src_poll,
	.status = ft_src_status,
	.close = ft_src_close,
};
