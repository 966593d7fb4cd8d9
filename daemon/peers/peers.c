/* peers: notices to peer daemons and their summaries, on one UDP socket. */
#include "daemon/peers/peers_int.h"
#include "daemon/peers/peers.h"
#include "daemon/conf.h"
#include "daemon/peers/peermsg.h"
#include "daemon/peers/peerproto.h"
#include "lib/ipfilter.h"
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
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- addresses ---- */

static int make_addr(int family, const char *addr, unsigned port, struct sockaddr_storage *ss,
		     socklen_t *len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	struct in_addr v4;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		if (inet_pton(AF_INET, addr, &a4->sin_addr) != 1)
			return -1;
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*len = sizeof(*a4);
		return 0;
	}
	a6->sin6_family = AF_INET6;
	a6->sin6_port = htons((uint16_t)port);
	*len = sizeof(*a6);
	if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1)
		return 0;
	if (inet_pton(AF_INET, addr, &v4) != 1)
		return -1;
	/* an IPv4 peer seen through a dual-stack socket */
	a6->sin6_addr.s6_addr[10] = a6->sin6_addr.s6_addr[11] = 0xff;
	memcpy(&a6->sin6_addr.s6_addr[12], &v4, 4);
	return 0;
}

static struct peer *peer_by_name(struct peers *ps, const char *name)
{
	for (unsigned i = 0; i < ps->n; i++)
		if (!strcmp(ps->p[i].name, name))
			return &ps->p[i];
	return NULL;
}

static void arm(struct peers *ps)
{
	for (unsigned i = 0; i < OUTSTANDING; i++)
		if (ps->out[i].used) {
			loop_timer_set(ps->timer, 50000000ull, 50000000ull);
			return;
		}
	loop_timer_set(ps->timer, 0, 0);
}

static void out_free(struct outstanding *o)
{
	free(o->payload);
	memset(o, 0, sizeof(*o));
}

static void notice_to(struct peers *ps, struct outstanding *o, unsigned k)
{
	struct peer *p = peer_by_name(ps, o->per[k].name);
	unsigned a = o->per[k].n;

	if (!p || a >= ATTEMPTS)
		return;
	if (peers_send_dgram(ps, p, PEER_NOTICE, peers_peer_host(p), o->payload,
			     o->per[k].nonce[a]) == 0) {
		o->per[k].sent_mono[a] = loop_mono_ns();
		o->per[k].n++;
	}
}

/* No more waiting for the notices of o: each peer that was sent one and
 * did not answer is counted unanswered (nicstallctl peers, the metric
 * nicstalld_peer_notices_unanswered_total), once. */
static void give_up(struct peers *ps, struct outstanding *o, uint64_t now)
{
	for (unsigned k = 0; k < o->nper; k++) {
		struct peer *p = peer_by_name(ps, o->per[k].name);

		if (o->per[k].answered || !o->per[k].n || !p)
			continue;
		peers_refuse(ps, p, LR_NOANSWER, "no answer to the notice of incident %" PRIu64
			     " within %.1f s (%u sent)", o->incident,
			     (double)(now - o->first_mono) / 1e9, o->per[k].n);
		if (!p->pc.host[0] && !p->unanswered_hint) {
			/* the likeliest cause after an upgrade to protocol 2, and
			 * the peer's refusal is logged on the peer only: said
			 * here, once per peer */
			p->unanswered_hint = 1;
			log_warnx("peer %s: unanswered, and [peer %s] sets no host =: its notices "
				  "are addressed to the host named '%s' (the section's name); a peer "
				  "whose host_name differs refuses every one as wrong_recipient "
				  "(logged only on that host). If so, set host = its host_name in "
				  "[peer %s] (nicstalld.conf(5)); said once per peer", p->name,
				  p->name, p->name, p->name);
		}
	}
	out_free(o);
}

/* Resend to whoever did not answer; give up at the deadline. */
static void tick(struct loop_timer *t, void *arg)
{
	struct peers *ps = arg;
	uint64_t now = loop_mono_ns();

	(void)t;
	for (unsigned i = 0; i < OUTSTANDING; i++) {
		struct outstanding *o = &ps->out[i];

		if (!o->used)
			continue;
		for (unsigned k = 0; k < o->nper; k++) {
			uint64_t due = o->first_mono + (o->per[k].n == 1 ? RETRY_MS_1 : RETRY_MS_2) * 1000000ull;

			if (o->per[k].answered || o->per[k].n >= ATTEMPTS || !o->per[k].n)
				continue;
			if (now >= due && now < o->deadline_mono)
				notice_to(ps, o, k);
		}
		if (now >= o->deadline_mono)
			give_up(ps, o, now);
	}
	arm(ps);
}

struct json_object *peers_notify(struct peers *ps, uint64_t incident_id, uint64_t stall_real_ns,
				 struct json_object *ports, struct json_object *flows)
{
	struct json_object *rec;
	struct outstanding *o;
	uint64_t now = loop_mono_ns();

	if (!ps || !ps->n)
		return NULL;
	rec = json_object_new_object();
	o = &ps->out[ps->out_next];
	ps->out_next = (ps->out_next + 1) % OUTSTANDING;
	give_up(ps, o, now);            /* the oldest, overwritten */
	o->payload = peermsg_notice(ps->host, incident_id, loop_real_ns(), stall_real_ns, ports,
				    flows, PEER_MAX_NOTICE - PEER_HDR_LEN - PEER_MAC_LEN);
	o->incident = incident_id;
	o->first_mono = now;
	o->deadline_mono = now + ps->c->peer_wait_ns;
	o->used = o->payload != NULL;
	for (unsigned i = 0; i < ps->n; i++) {
		struct peer *p = &ps->p[i];
		struct json_object *e = json_object_new_object();

		jx_add_str(e, "address", p->pc.address);
		jx_add_u64(e, "port", p->pc.port);
		if (o->used && o->nper < PEER_MAX) {
			unsigned k = o->nper++;

			util_strlcpy(o->per[k].name, p->name, sizeof(o->per[k].name));
			notice_to(ps, o, k);
			jx_add_bool(e, "notified", o->per[k].n > 0);
			if (!o->per[k].n)
				jx_add_str(e, "error", p->last_error);
		} else {
			jx_add_bool(e, "notified", 0);
			jx_add_str(e, "error", "the notice could not be built");
		}
		json_object_object_add(rec, p->name, e);
	}
	if (o->used)
		log_info("incident %" PRIu64 ": snapshot notice sent to %u peer(s)", incident_id, ps->n);
	arm(ps);
	return rec;
}

void peers_forget(struct peers *ps, uint64_t incident_id)
{
	/* the investigation stopped waiting (all answered, or peer_wait is
	 * over): whoever did not answer is unanswered now, not never */
	for (unsigned i = 0; ps && i < OUTSTANDING; i++)
		if (ps->out[i].used && ps->out[i].incident == incident_id)
			give_up(ps, &ps->out[i], loop_mono_ns());
	if (ps)
		arm(ps);
}

/* ---- set-up ---- */

static void close_sock(struct peers *ps)
{
	if (ps->fd >= 0) {
		loop_del_fd(ps->loop, ps->fd);
		close(ps->fd);
	}
	ps->fd = -1;
}

static int open_sock(struct peers *ps, const struct conf *c, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	socklen_t len;
	int family = strchr(c->peer_listen, ':') ? AF_INET6 : AF_INET, nsfd = -1, fd, one = 1;

	if (make_addr(family, c->peer_listen, c->peer_listen_port, &sa, &len) < 0) {
		util_errf(err, errlen, "peer_listen %s: not an address", c->peer_listen);
		return -1;
	}
	if (c->peer_netns[0] && (nsfd = netns_open(c->peer_netns)) < 0) {
		util_errf(err, errlen, "peer_netns %s: %s", c->peer_netns, strerror(errno));
		return -1;
	}
	fd = netns_socket(nsfd, family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (nsfd >= 0)
		close(nsfd);
	if (fd < 0) {
		util_errf(err, errlen, "peer socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, len) < 0) {
		util_errf(err, errlen, "peer socket: bind %s port %u%s%s: %s", c->peer_listen,
			  c->peer_listen_port, c->peer_netns[0] ? " in netns " : "", c->peer_netns,
			  strerror(errno));
		close(fd);
		return -1;
	}
	if (loop_add_fd(ps->loop, fd, EPOLLIN, peers_on_readable, ps) < 0) {
		util_errf(err, errlen, "peer socket: %s", strerror(errno));
		close(fd);
		return -1;
	}
	loop_fd_name(ps->loop, fd, "peers");
	ps->fd = fd;
	ps->family = family;
	snprintf(ps->listen, sizeof(ps->listen), family == AF_INET6 ? "[%s]:%u" : "%s:%u",
		 c->peer_listen, c->peer_listen_port);
	util_strlcpy(ps->netns, c->peer_netns, sizeof(ps->netns));
	return 0;
}

static int same_peer(const struct peer_conf *a, const struct peer_conf *b)
{
	return !strcmp(a->address, b->address) && a->port == b->port && a->key.id == b->key.id &&
	       a->key.len == b->key.len && !memcmp(a->key.k, b->key.k, a->key.len);
}

int peers_configure(struct peers *ps, const struct conf *c, char *err, size_t errlen)
{
	struct peer *np = c->npeers ? calloc(c->npeers, sizeof(*np)) : NULL;
	char listen[80];
	int family = strchr(c->peer_listen, ':') ? AF_INET6 : AF_INET, rc = 0;

	if (c->npeers && !np) {
		util_errf(err, errlen, "out of memory");
		return -1;
	}
	ps->c = c;
	if (c->host_name[0])
		util_strlcpy(ps->host, c->host_name, sizeof(ps->host));
	else if (gethostname(ps->host, sizeof(ps->host) - 1) < 0 || !ps->host[0])
		util_strlcpy(ps->host, "localhost", sizeof(ps->host));
	for (unsigned i = 0; i < c->npeers; i++) {
		const struct peer_conf *pc = &c->peers[i];
		struct peer *old = peer_by_name(ps, pc->name);

		if (old && same_peer(&old->pc, pc)) {
			np[i] = *old;           /* counters, nonces, rate, recent answers */
			memset(old->recent, 0, sizeof(old->recent));
		} else {
			util_strlcpy(np[i].name, pc->name, sizeof(np[i].name));
			if (old)        /* its share of the hour stays spent */
				np[i].snapshots = old->snapshots;
		}
		np[i].pc = *pc;
		if (make_addr(family, pc->address, pc->port, &np[i].sa, &np[i].salen) < 0) {
			util_errf(err, errlen, "peer %s: address %s cannot be reached from peer_listen "
				  "%s (IPv4 and IPv6 do not mix)", pc->name, pc->address, c->peer_listen);
			rc = -1;
		}
	}
	for (unsigned i = 0; i < ps->n; i++) {
		for (unsigned k = 0; k < RECENT; k++)
			peers_recent_clear(&ps->p[i].recent[k]);
		explicit_bzero(&ps->p[i].pc.key, sizeof(ps->p[i].pc.key));
	}
	free(ps->p);
	ps->p = np;
	ps->n = c->npeers;
	snprintf(listen, sizeof(listen), family == AF_INET6 ? "[%s]:%u" : "%s:%u", c->peer_listen,
		 c->peer_listen_port);
	if (!c->npeers) {
		close_sock(ps);
		return rc;
	}
	if (ps->fd >= 0 && !strcmp(listen, ps->listen) && !strcmp(ps->netns, c->peer_netns))
		return rc;
	close_sock(ps);
	if (open_sock(ps, c, err, errlen) < 0)
		return -1;
	log_info("peers: %u peer(s), listening on %s%s%s", c->npeers, ps->listen,
		 c->peer_netns[0] ? " in netns " : "", c->peer_netns);
	return rc;
}

struct peers *peers_new(struct loop *l, const struct conf *c, char *err, size_t errlen)
{
	struct peers *ps = calloc(1, sizeof(*ps));

	if (!ps) {
		util_errf(err, errlen, "out of memory");
		return NULL;
	}
	ps->loop = l;
	ps->fd = -1;
	ps->timer = loop_timer_new(l, tick, ps);
	if (ps->timer)
		loop_timer_name(ps->timer, "peers");
	if (!ps->timer || peers_configure(ps, c, err, errlen) < 0) {
		peers_free(ps);
		return NULL;
	}
	return ps;
}

void peers_free(struct peers *ps)
{
	if (!ps)
		return;
	close_sock(ps);
	loop_timer_free(ps->timer);
	for (unsigned i = 0; i < ps->n; i++) {
		for (unsigned k = 0; k < RECENT; k++)
			peers_recent_clear(&ps->p[i].recent[k]);
		explicit_bzero(&ps->p[i].pc.key, sizeof(ps->p[i].pc.key));
	}
	for (unsigned i = 0; i < OUTSTANDING; i++)
		out_free(&ps->out[i]);
	free(ps->p);
	free(ps);
}

void peers_set_hooks(struct peers *ps, peers_notice_fn on_n, peers_summary_fn on_s, void *arg)
{
	ps->on_notice = on_n;
	ps->on_summary = on_s;
	ps->arg = arg;
}

unsigned peers_count(const struct peers *ps)
{
	return ps ? ps->n : 0;
}

const char *peers_host(const struct peers *ps)
{
	return ps->host;
}

/* ---- status ---- */

/* From authentic datagrams alone: what fails to verify may be anyone's
 * (the "unauthenticated" counters say how many came from its address). */
static const char *key_state(const struct peer *p)
{
	if (p->last_rx_mono)
		return "ok: its messages verify";
	return "loaded, not yet verified: nothing authentic received from it";
}

static struct json_object *unknown_json(const struct peers *ps, uint64_t now)
{
	struct json_object *arr = json_object_new_array();

	for (unsigned i = 0; i < UNKNOWN_SOURCES; i++) {
		const struct unknown_src *u = &ps->unknown[i];
		struct json_object *e;
		char a[96];

		if (!u->datagrams)
			continue;
		e = json_object_new_object();
		peers_addr_text(&u->sa, a, sizeof(a));
		*strrchr(a, ':') = 0;           /* the address, not the port it used last */
		jx_add_str(e, "address", a);
		jx_add_u64(e, "refused_unauthenticated", u->datagrams);
		jx_add_double(e, "last_s", (double)(now - u->last_mono) / 1e9);
		json_object_array_add(arr, e);
	}
	return arr;
}

static struct json_object *src_json(const struct src_stat *f, uint64_t now)
{
	struct json_object *o = json_object_new_object();

	for (int r = 0; r < UR_N; r++)
		jx_add_u64(o, peers_ur_name[r], f->refused[r]);
	jx_add_u64(o, "signature_checks", f->verified);
	if (f->last_refusal[0]) {
		jx_add_str(o, "last_refusal", f->last_refusal);
		jx_add_double(o, "last_refusal_s", (double)(now - f->last_mono) / 1e9);
	}
	return o;
}

struct json_object *peers_status_json(const struct peers *ps)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	uint64_t now = loop_mono_ns();

	jx_add_str(o, "host", ps->host);
	jx_add_str(o, "listen", ps->fd >= 0 ? ps->listen : "");
	jx_add_str(o, "netns", ps->netns);
	jx_add_bool(o, "open", ps->fd >= 0);
	jx_add_u64(o, "unknown_senders", ps->unknown_senders);
	json_object_object_add(o, "unknown_sources", unknown_json(ps, now));
	jx_add_u64(o, "snapshots_per_hour", ps->c->peer_snapshots_per_hour);
	jx_add_u64(o, "snapshots_last_hour", peer_hourly_count(&ps->snapshots, now));
	jx_add_u64(o, "snapshots_over_budget", ps->snapshots_refused);
	jx_add_u64(o, "snapshots_per_hour_per_peer", peers_snapshot_share(ps));
	for (unsigned i = 0; i < ps->n; i++) {
		const struct peer *p = &ps->p[i];
		struct json_object *e = json_object_new_object(), *k = json_object_new_object();
		struct json_object *ref = json_object_new_object();

		jx_add_str(e, "name", p->name);
		jx_add_str(e, "address", p->pc.address);
		jx_add_u64(e, "port", p->pc.port);
		if (p->host[0])
			jx_add_str(e, "host", p->host);
		if (p->last_rx_mono) {
			jx_add_double(e, "last_contact_s", (double)(now - p->last_rx_mono) / 1e9);
			jx_add_u64(e, "last_contact_real_ns", p->last_rx_real);
		}
		if (p->have_rtt)
			json_object_object_add(e, "rtt_ms", jx_new_fixed(p->last_rtt_ms, 3));
		jx_add_u64(k, "id", p->pc.key.id);
		jx_add_u64(k, "bytes", p->pc.key.len);
		jx_add_str(k, "file", p->pc.key_file);
		jx_add_str(k, "algorithm", "HMAC-SHA256");
		jx_add_str(k, "state", key_state(p));
		json_object_object_add(e, "key", k);
		jx_add_u64(e, "notices_sent", p->tx_notices);
		jx_add_u64(e, "notices_received", p->rx_notices);
		jx_add_u64(e, "snapshots_last_hour", peer_hourly_count(&p->snapshots, now));
		jx_add_u64(e, "summaries_sent", p->tx_summaries);
		jx_add_u64(e, "summaries_received", p->rx_summaries);
		for (int r = 0; r < LR_N; r++)
			jx_add_u64(ref, peers_lr_name[r], p->refused[r]);
		json_object_object_add(e, "refused", ref);
		json_object_object_add(e, "unauthenticated", src_json(&p->from, now));
		if (p->last_error[0])
			jx_add_str(e, "last_error", p->last_error);
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "peers", arr);
	return o;
}
