/* flow_src_vma_json: the VMA/XLIO source's evidence (the involved
 * processes' sockets as their files show them) and its status (files,
 * refusals, claims, cost) (src_vma_int.h). */
#include "collectors/flows/src_vma_int.h"
#include "collectors/flows/flowsel.h"
#include "lib/json.h"
#include "lib/util.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

static void add_ipport(struct json_object *o, const char *k, const struct in6_addr *a,
		       uint16_t port)
{
	struct flow_key key = { .saddr = *a, .sport = port, .proto = IPPROTO_UDP };
	char buf[96], *sp;

	/* "udp A:P -> ..." without the protocol and the far end */
	flow_key_format(&key, buf, sizeof(buf));
	sp = strchr(buf, ' ');
	if (sp && strstr(sp, " -> "))
		*strstr(sp, " -> ") = '\0';
	jx_add_str(o, k, sp ? sp + 1 : buf);
}

/* Every field of one parsed socket block, for the bundle. */
static struct json_object *sock_json(const struct vfile *vf, const struct vsock *vs)
{
	const struct flow_vma_sock *s = &vs->s;
	struct json_object *o = json_object_new_object();

	jx_add_str(o, "file", vf->path);
	jx_add_int(o, "pid", flow_vma_file_pid(vf->f));
	jx_add_int(o, "slot", s->slot);
	jx_add_int(o, "fd", s->fd);
	jx_add_u64(o, "inode", s->inode);
	jx_add_u64(o, "tcp_state", s->tcp_state);
	jx_add_str(o, "socket_type", s->socket_type == 2 ? "dgram" : s->socket_type == 1 ?
		   "stream" : "other");
	jx_add_bool(o, "offloaded", s->offloaded);
	add_ipport(o, "local", &s->laddr, s->lport);
	add_ipport(o, "remote", &s->raddr, s->rport);
	jx_add_u64(o, "n_rx_ready_pkt_count", s->rx_ready_pkt);
	jx_add_u64(o, "n_rx_ready_byte_count", s->rx_ready_byte);
	jx_add_u64(o, "n_tx_ready_byte_count", s->tx_ready_byte);
	jx_add_u64(o, "n_rx_packets", s->rx_packets);
	jx_add_u64(o, "n_rx_bytes", s->rx_bytes);
	jx_add_u64(o, "n_tx_sent_pkt_count", s->tx_packets);
	jx_add_u64(o, "n_tx_sent_byte_count", s->tx_bytes);
	jx_add_u64(o, "n_rx_errors", s->rx_errors);
	jx_add_u64(o, "n_rx_ready_pkt_drop", s->rx_drop_pkt);
	jx_add_u64(o, "n_rx_ready_byte_drop", s->rx_drop_byte);
	jx_add_u64(o, "n_tx_errors", s->tx_errors);
	jx_add_u64(o, "n_tx_retransmits", s->tx_retransmits);
	jx_add_u64(o, "n_rx_os_packets", s->rx_os_packets);
	jx_add_u64(o, "n_rx_os_bytes", s->rx_os_bytes);
	jx_add_u64(o, "n_rx_os_errors", s->rx_os_errors);
	jx_add_u64(o, "n_rx_os_eagain", s->rx_os_eagain);
	jx_add_u64(o, "n_tx_os_packets", s->tx_os_packets);
	jx_add_u64(o, "n_tx_os_bytes", s->tx_os_bytes);
	jx_add_u64(o, "n_tx_os_errors", s->tx_os_errors);
	jx_add_u64(o, "n_tx_os_eagain", s->tx_os_eagain);
	jx_add_str(o, "verdict", flow_live_name((enum flow_live)vs->t.live.verdict));
	jx_add_str(o, "claim", vs->claim == FLOW_CLAIM_VERIFIED ? "verified" :
		   vs->claim == FLOW_CLAIM_UNVERIFIED ? "unverified" : "unchecked");
	return o;
}

int vma_src_evidence(struct flow_src *s, const struct flow_src_ref *refs, unsigned n,
		       const char *when, struct json_object *out, flow_src_evid_done_fn done,
		       void *arg)
{
	struct vsrc *v = s->priv;
	struct json_object *socks = json_object_new_array(), *files = json_object_new_array();

	(void)when;
	(void)done;
	(void)arg;
	for (unsigned i = 0; v && i < v->nfiles; i++) {
		const struct vfile *vf = v->files[i];
		int any = 0;

		for (unsigned k = 0; k < vf->n; k++)
			for (unsigned r = 0; r < n; r++)
				if (refs[r].src == FLOW_SRC_VMA &&
				    refs[r].pid == flow_vma_file_pid(vf->f) &&
				    refs[r].session == vf->socks[k].o.session) {
					json_object_array_add(socks, sock_json(vf, &vf->socks[k]));
					any = 1;
					break;
				}
		if (any) {
			struct json_object *f = json_object_new_object();

			jx_add_str(f, "file", vf->path);
			jx_add_str(f, "release", vf->lay ? vf->lay->release : "?");
			jx_add_str(f, "variant", vf->lay ? vf->lay->variant : "");
			jx_add_str(f, "stats_protocol_ver", vf->lay ? vf->lay->md5 : "");
			jx_add_u64(f, "max_skt_inst_num", vf->nslots);
			jx_add_u64(f, "sockets", vf->n);
			jx_add_u64(f, "torn", vf->torn);
			jx_add_u64(f, "bad", vf->bad);
			jx_add_u64(f, "bumps", vf->bumps);
			json_object_array_add(files, f);
		}
	}
	json_object_object_add(out, "files", files);
	json_object_object_add(out, "sockets", socks);
	return 0;
}

void vma_src_status(const struct flow_src *s, struct json_object *out)
{
	const struct vsrc *v = s->priv;
	struct json_object *files = json_object_new_array(), *ref = json_object_new_array();

	if (!v) {
		json_object_put(files);
		json_object_put(ref);
		return;
	}
	jx_add_str(out, "vma_dir", v->dir[0]);
	jx_add_str(out, "xlio_dir", v->dir[1]);
	jx_add_ms(out, "interval_ms", v->interval_ns);
	jx_add_u64(out, "polls", v->polls);
	jx_add_double(out, "last_poll_us", (double)v->last_cost_ns / 1e3);
	jx_add_double(out, "mean_poll_us", v->polls ? (double)v->cost_ns / 1e3 / (double)v->polls : 0);
	for (unsigned i = 0; i < v->nfiles; i++) {
		const struct vfile *vf = v->files[i];
		struct json_object *f = json_object_new_object();
		int xlio = flow_vma_file_engine(vf->f) == FLOW_VMA_XLIO;

		jx_add_str(f, "file", vf->path);
		jx_add_str(f, "engine", xlio ? "xlio" : "vma");
		jx_add_int(f, "pid", flow_vma_file_pid(vf->f));
		jx_add_str(f, "release", vf->lay ? vf->lay->release : "");
		jx_add_u64(f, "max_skt_inst_num", vf->nslots);
		jx_add_u64(f, "sockets", vf->n);
		jx_add_u64(f, "torn", vf->torn);
		jx_add_u64(f, "bad", vf->bad);
		jx_add_u64(f, "uid", flow_vma_file_uid(vf->f));
		jx_add_u64(f, "claims_verified", vf->verified);
		jx_add_u64(f, "claims_unverified", vf->unverified);
		jx_add_u64(f, "reads", vf->reads);
		jx_add_u64(f, "skipped", vf->skipped);
		jx_add_u64(f, "bumps", vf->bumps);
		if (vf->err[0])
			jx_add_str(f, "error", vf->err);
		else if (xlio && vf->lay && !vf->nslots)
			jx_add_str(f, "warning", "no per-socket statistics: run the application "
				   "with XLIO_STATS_FD_NUM > 0 (libxlio 3.40 and later publish none "
				   "by default)");
		json_object_array_add(files, f);
	}
	json_object_object_add(out, "files", files);
	for (unsigned i = 0; i < v->nrecent; i++) {
		const struct recent *rc = &v->recent[(v->recent_at + VS_RECENT - v->nrecent + i) %
						    VS_RECENT];
		struct json_object *r = json_object_new_object();

		jx_add_str(r, "file", rc->path);
		jx_add_str(r, "error", rc->why);
		json_object_array_add(ref, r);
	}
	json_object_object_add(out, "refused", ref);
	jx_add_u64(out, "refused_total", v->log_refused.total);
	jx_add_u64(out, "refused_names", v->nrefused);
	jx_add_u64(out, "unverified_claims_total", v->log_claims.total);
	jx_add_u64(out, "evicted", v->evicted);
	jx_add_u64(out, "reads_deferred", v->deferred);
	{
		struct claimv_stats cs;
		struct json_object *c = json_object_new_object();

		claimv_stats(v->cv, &cs);
		jx_add_u64(c, "checks", cs.checks);
		jx_add_u64(c, "verified", cs.verified);
		jx_add_u64(c, "unverified", cs.unverified);
		jx_add_u64(c, "deferred", cs.deferred);
		jx_add_u64(c, "cached", cs.entries);
		json_object_object_add(out, "claim_checks", c);
	}
}
