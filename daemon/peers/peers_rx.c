/* peers_rx: answering the notices of peer daemons (receiver) and reading
 * the datagrams of the peers socket. Shared state: peers_int.h. */
#include "daemon/peers/peers_int.h"
#include "daemon/peers/peers.h"
#include "daemon/conf.h"
#include "daemon/peers/peermsg.h"
#include "daemon/peers/peerproto.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/netns.h"
#include "lib/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- answering (receiver) ---- */

static struct recent *recent_find(struct peer *p, const char *origin, uint64_t incident)
{
	for (unsigned i = 0; i < RECENT; i++)
		if (p->recent[i].used && p->recent[i].incident == incident &&
		    !strcmp(p->recent[i].origin, origin))
			return &p->recent[i];
	return NULL;
}

/* Send r's summary bound to its latest notice nonce. */
static int send_answer(struct peers *ps, struct peer *p, struct recent *r)
{
	uint8_t nonce[PEER_NONCE_LEN];
	char hex[PEER_NONCE_LEN * 2 + 1];
	char *text;
	int rc;

	peer_nonce_hex(r->nonce, hex, sizeof(hex));
	jx_add_str(r->sum, "notice_nonce", hex);
	jx_add_u64(r->sum, "answered_real_ns", loop_real_ns());
	text = peermsg_summary(r->sum, PEER_MAX_DGRAM - PEER_HDR_LEN - PEER_MAC_LEN);
	if (!text) {
		peers_refuse(ps, p, LR_SEND, "the summary of incident %s:%" PRIu64 " does not fit a "
		       "datagram", r->origin, r->incident);
		return -1;
	}
	rc = peers_send_dgram(ps, p, PEER_SUMMARY, r->origin, text, nonce);
	free(text);
	r->answered_mono = loop_mono_ns();
	return rc;
}

int peers_answer(struct peers *ps, uint64_t token, struct json_object *summary)
{
	for (unsigned i = 0; i < ps->n; i++)
		for (unsigned k = 0; k < RECENT; k++) {
			struct recent *r = &ps->p[i].recent[k];

			if (!r->used || r->token != token)
				continue;
			json_object_put(r->sum);
			r->sum = summary;
			return send_answer(ps, &ps->p[i], r);
		}
	json_object_put(summary);
	return -1;
}

static void on_notice(struct peers *ps, struct peer *p, const struct peer_hdr *h,
		      const char *payload)
{
	const char *why = NULL;
	struct json_object *n = peermsg_read_notice(payload, h->len, &why);
	const char *origin;
	uint64_t inc, now = loop_mono_ns();
	struct recent *r;
	unsigned in_hour, share;

	if (!n) {
		peers_refuse(ps, p, LR_PAYLOAD, "a notice refused: %s", why);
		return;
	}
	origin = jx_str(n, "origin");
	inc = jx_u64(n, "incident");
	if (peers_same_host_name(origin, ps->host)) {
		/* this host's own notice, reflected back at it */
		peers_refuse(ps, p, LR_SELF, "a notice of incident %s:%" PRIu64 " whose origin is "
			     "this host (%s): a notice of ours sent back, not acted on", origin, inc,
			     ps->host);
		json_object_put(n);
		return;
	}
	p->rx_notices++;
	util_strlcpy(p->host, origin, sizeof(p->host));
	r = recent_find(p, origin, inc);
	if (r) {
		/* a repeat (our answer was lost, or is still being made) */
		memcpy(r->nonce, h->nonce, PEER_NONCE_LEN);
		if (r->sum && now - r->answered_mono >= REPEAT_EVERY_NS)
			send_answer(ps, p, r);
		json_object_put(n);
		return;
	}
	if (!peer_bucket_take(&p->notices, now, PEERS_NOTICE_BURST, PEERS_NOTICE_EVERY_NS)) {
		peers_refuse(ps, p, LR_LIMIT, "notice of incident %s:%" PRIu64 " not acted on: more than %d "
		       "incidents at once, then one per %u s (rate limit)", origin, inc,
		       PEERS_NOTICE_BURST, (unsigned)(PEERS_NOTICE_EVERY_NS / 1000000000ull));
		json_object_put(n);
		return;
	}
	/* each peer its fair share of the hour's budget, so one keyed peer
	 * cannot use up the snapshots of all the others */
	share = peers_snapshot_share(ps);
	if (peer_hourly_count(&p->snapshots, now) >= share) {
		ps->snapshots_refused++;
		peers_refuse(ps, p, LR_BUDGET, "notice of incident %s:%" PRIu64 " not acted on: %u "
			     "snapshots for this peer within the last hour, its share of "
			     "peer_snapshots_per_hour (%u among %u peers)", origin, inc,
			     peer_hourly_count(&p->snapshots, now), ps->c->peer_snapshots_per_hour,
			     ps->n);
		json_object_put(n);
		return;
	}
	if (!peer_hourly_admit(&ps->snapshots, now, ps->c->peer_snapshots_per_hour, &in_hour)) {
		ps->snapshots_refused++;
		peers_refuse(ps, p, LR_BUDGET, "notice of incident %s:%" PRIu64 " not acted on: %u "
			     "peer snapshots within the last hour, all peers together "
			     "(peer_snapshots_per_hour = %u)", origin, inc, in_hour,
			     ps->c->peer_snapshots_per_hour);
		json_object_put(n);
		return;
	}
	peer_hourly_admit(&p->snapshots, now, share, &in_hour);
	r = &p->recent[p->recent_next];
	p->recent_next = (p->recent_next + 1) % RECENT;
	peers_recent_clear(r);
	r->used = 1;
	util_strlcpy(r->origin, origin, sizeof(r->origin));
	r->incident = inc;
	r->token = ++ps->next_token;
	memcpy(r->nonce, h->nonce, PEER_NONCE_LEN);
	log_info("peer %s: snapshot notice for incident %s:%" PRIu64, p->name, origin, inc);
	if (ps->on_notice)
		ps->on_notice(p->name, n, now, loop_real_ns(), r->token, ps->arg);
	json_object_put(n);
}

static void on_summary(struct peers *ps, struct peer *p, const struct peer_hdr *h,
		       const char *payload)
{
	const char *why = NULL, *nh;
	struct json_object *s = peermsg_read_summary(payload, h->len, &why);
	uint64_t inc, now = loop_mono_ns();

	(void)h;
	if (!s) {
		peers_refuse(ps, p, LR_PAYLOAD, "a summary refused: %s", why);
		return;
	}
	inc = jx_u64(s, "incident");
	nh = jx_str(s, "notice_nonce");
	if (!peers_same_host_name(jx_text(s, "origin"), ps->host)) {
		peers_refuse(ps, p, LR_STRAY, "a summary for host %s, not this one (%s)", jx_text(s, "origin"),
		       ps->host);
		json_object_put(s);
		return;
	}
	for (unsigned i = 0; i < OUTSTANDING; i++) {
		struct outstanding *o = &ps->out[i];

		if (!o->used || o->incident != inc)
			continue;
		for (unsigned k = 0; k < o->nper; k++) {
			if (strcmp(o->per[k].name, p->name))
				continue;
			for (unsigned a = 0; a < o->per[k].n; a++) {
				char hex[PEER_NONCE_LEN * 2 + 1];

				peer_nonce_hex(o->per[k].nonce[a], hex, sizeof(hex));
				if (strcmp(hex, nh))
					continue;
				p->rx_summaries++;
				if (o->per[k].answered) {
					json_object_put(s);
					return;         /* a second answer (to a repeat) */
				}
				o->per[k].answered = 1;
				p->last_rtt_ms = (double)(now - o->per[k].sent_mono[a]) / 1e6;
				p->have_rtt = 1;
				if (jx_str(s, "host"))
					util_strlcpy(p->host, jx_str(s, "host"), sizeof(p->host));
				log_info("peer %s: summary of incident %" PRIu64 " (rtt %.1f ms)%s%s",
					 p->name, inc, p->last_rtt_ms, jx_str(s, "bundle") ? ", bundle " : "",
					 jx_text(s, "bundle"));
				if (ps->on_summary)
					ps->on_summary(inc, p->name, s, p->last_rtt_ms, ps->arg);
				json_object_put(s);
				return;
			}
		}
	}
	peers_refuse(ps, p, LR_STRAY, "a summary of incident %" PRIu64 " that answers no notice still "
	       "outstanding (late, or not ours)", inc);
	json_object_put(s);
}

/* ---- receiving ---- */

/* Everything here up to the signature is cheap (sizes, fields compared,
 * the nonce looked up) and changes nothing but the source's counters; the
 * signature check runs only within the source's budget (VERIFY_BURST at
 * once, then one per VERIFY_EVERY_NS), so a flood from one address costs
 * a bounded number of HMACs, and a replay or a stale copy none. The peer's
 * state (last contact, key state, last error) and its nonce cache change
 * only once a datagram proved authentic and fresh. */
static void on_dgram(struct peers *ps, const uint8_t *buf, size_t len, size_t real_len,
		     const struct sockaddr_storage *from)
{
	struct peer *p = peers_peer_by_addr(ps, from);
	struct peer_hdr h;
	const char *why;
	char at[96];
	uint64_t now_real;
	int rc;

	if (!p) {
		peers_refuse_unauth(ps, NULL, from, UR_GARBAGE, "a datagram from %s, which is no "
				    "configured peer: ignored", peers_addr_text(from, at, sizeof(at)));
		return;
	}
	if (real_len > PEER_MAX_DGRAM) {
		peers_refuse_unauth(ps, p, from, UR_OVERSIZE, "a datagram of %zu bytes (at most %d): "
				    "ignored", real_len, PEER_MAX_DGRAM);
		return;
	}
	rc = peer_decode_hdr(buf, len, &h, &why);
	if (rc == PEER_HDR_VERSION) {
		peers_refuse_unauth(ps, p, from, UR_VERSION, "a datagram of %s: ignored", why);
		return;
	}
	if (rc < 0) {
		peers_refuse_unauth(ps, p, from, UR_GARBAGE, "a datagram from %s: %s",
				    peers_addr_text(from, at, sizeof(at)), why);
		return;
	}
	if (h.type == PEER_NOTICE && len > PEER_MAX_NOTICE) {
		peers_refuse_unauth(ps, p, from, UR_OVERSIZE, "a notice of %zu bytes (at most %d): "
				    "ignored", len, PEER_MAX_NOTICE);
		return;
	}
	if (h.key_id != p->pc.key.id) {
		peers_refuse_unauth(ps, p, from, UR_KEYID, "a datagram signed with key %u, not the "
				    "peer's key %u: ignored", h.key_id, p->pc.key.id);
		return;
	}
	if (!peers_same_host_name(h.to, ps->host)) {
		peers_refuse_unauth(ps, p, from, UR_RECIPIENT, "a datagram for host %s, not this one "
				    "(%s): ignored", h.to, ps->host);
		return;
	}
	/* the time and the nonce before the signature: a replay costs nothing;
	 * the nonce is remembered only once the signature proved it the peer's */
	now_real = loop_real_ns();
	if (peer_replay_fresh(&p->replay, now_real, ps->c->peer_skew_ns, h.ts_real_ns, h.nonce,
			      &why) < 0) {
		peers_refuse_unauth(ps, p, from, UR_REPLAY, "a datagram refused before its signature "
				    "check: %s", why);
		return;
	}
	if (!peer_bucket_take(&p->from.verify, loop_mono_ns(), VERIFY_BURST, VERIFY_EVERY_NS)) {
		peers_refuse_unauth(ps, p, from, UR_THROTTLED, "more than %d datagrams to verify at "
				    "once from this address, then %llu a second: ignored unverified",
				    VERIFY_BURST, 1000000000ull / VERIFY_EVERY_NS);
		return;
	}
	p->from.verified++;
	if (!peer_verify(&p->pc.key, buf, len)) {
		peers_refuse_unauth(ps, p, from, UR_BADSIG, "a datagram whose signature does not "
				    "verify with key %u (%s): ignored (the two key files differ, or "
				    "someone else sent it)", h.key_id, p->pc.key_file);
		return;
	}
	peer_replay_remember(&p->replay, now_real, ps->c->peer_skew_ns, h.ts_real_ns, h.nonce);
	p->last_rx_mono = loop_mono_ns();
	p->last_rx_real = loop_real_ns();
	if (h.type == PEER_NOTICE)
		on_notice(ps, p, &h, (const char *)buf + PEER_HDR_LEN);
	else
		on_summary(ps, p, &h, (const char *)buf + PEER_HDR_LEN);
}

void peers_on_readable(int fd, uint32_t events, void *arg)
{
	struct peers *ps = arg;

	(void)events;
	for (int i = 0; i < RX_PER_WAKE; i++) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, ps->buf, sizeof(ps->buf), MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&from, &fl);

		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR) {
				uint64_t held;

				if (peer_lograte_due(&ps->lr_recv, loop_mono_ns(), PEERS_LOG_INTERVAL_NS, &held))
					log_warn("peers: receive");
			}
			return;
		}
		on_dgram(ps, ps->buf, (size_t)n > sizeof(ps->buf) ? sizeof(ps->buf) : (size_t)n,
			 (size_t)n, &from);
	}
}
