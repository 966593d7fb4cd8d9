/* peers base: what peers.c (our notices, set-up, status) and peers_rx.c
 * (their datagrams) share (peers_int.h), so that calls go one way,
 * peers.c -> peers_rx.c -> here: addresses, refusals logged once per
 * interval, sending a datagram, the receiver's memory. */
#include "daemon/peers/peers_int.h"
#include "daemon/conf.h"
#include "daemon/peers/peerproto.h"
#include "lib/ipfilter.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

const char *const peers_lr_name[LR_N] = {
	"bad_payload", "rate_limited", "over_budget", "origin_is_this_host", "send_failed",
	"unanswered", "stray_summary",
};
const char *const peers_ur_name[UR_N] = {
	"garbage", "oversized", "old_version", "unknown_key_id", "wrong_recipient",
	"verify_throttled", "bad_signature", "replayed",
};

/* ---- addresses ---- */

static int same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return !memcmp(&((const struct sockaddr_in *)a)->sin_addr,
			       &((const struct sockaddr_in *)b)->sin_addr, 4);
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
}

static unsigned port_of(const struct sockaddr_storage *a)
{
	return ntohs(a->ss_family == AF_INET ? ((const struct sockaddr_in *)a)->sin_port :
		     ((const struct sockaddr_in6 *)a)->sin6_port);
}

const char *peers_addr_text(const struct sockaddr_storage *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (a->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)a)->sin_addr, ip, sizeof(ip));
	else
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)a)->sin6_addr, ip, sizeof(ip));
	snprintf(buf, len, a->ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port_of(a));
	return buf;
}

/* The peer a datagram from sa came from: by address, and by port when
 * several peers share the address. */
struct peer *peers_peer_by_addr(struct peers *ps, const struct sockaddr_storage *sa)
{
	struct peer *host = NULL;
	unsigned nhost = 0;

	for (unsigned i = 0; i < ps->n; i++) {
		if (!same_host(&ps->p[i].sa, sa))
			continue;
		if (port_of(&ps->p[i].sa) == port_of(sa))
			return &ps->p[i];
		host = &ps->p[i];
		nhost++;
	}
	return nhost == 1 ? host : NULL;
}

const char *peers_peer_host(const struct peer *p)
{
	return p->pc.host[0] ? p->pc.host : p->name;
}

int peers_same_host_name(const char *a, const char *b)
{
	return !strcasecmp(a, b);
}

unsigned peers_snapshot_share(const struct peers *ps)
{
	unsigned share = ps->n ? ps->c->peer_snapshots_per_hour / ps->n : 0;

	return share ? share : 1;
}

/* ---- logging once per interval ---- */

__attribute__((format(printf, 4, 5)))
void peers_refuse(struct peers *ps, struct peer *p, enum lr kind, const char *fmt, ...)
{
	uint64_t held = 0, now = loop_mono_ns();
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p) {
		p->refused[kind]++;
		util_strlcpy(p->last_error, msg, sizeof(p->last_error));
		if (!peer_lograte_due(&p->lr[kind], now, PEERS_LOG_INTERVAL_NS, &held))
			return;
		log_warnx("peer %s: %s", p->name, msg);
		if (held)
			log_warnx("peer %s: %" PRIu64 " more %s since the last message (logged once "
				  "per %u s)", p->name, held, peers_lr_name[kind],
				  (unsigned)(PEERS_LOG_INTERVAL_NS / 1000000000ull));
		return;
	}
	if (peer_lograte_due(&ps->lr_unknown, now, PEERS_LOG_INTERVAL_NS, &held))
		log_warnx("peers: %s%s", msg, held ? " (and others since the last message: "
			  "logged once per 10 s)" : "");
}

/* The entry of an address that is no peer's: its own, else the least
 * recently seen one (the table is bounded, the total is not). */
static void count_unknown(struct peers *ps, const struct sockaddr_storage *at, uint64_t now)
{
	struct unknown_src *u = &ps->unknown[0];

	ps->unknown_senders++;
	for (unsigned i = 0; i < UNKNOWN_SOURCES; i++) {
		struct unknown_src *e = &ps->unknown[i];

		if (e->datagrams && same_host(&e->sa, at)) {
			u = e;
			break;
		}
		if (e->last_mono < u->last_mono)
			u = e;
	}
	if (!u->datagrams || !same_host(&u->sa, at)) {
		memset(u, 0, sizeof(*u));
		u->sa = *at;
	}
	u->datagrams++;
	u->last_mono = now;
}

__attribute__((format(printf, 5, 6)))
void peers_refuse_unauth(struct peers *ps, struct peer *p, const struct sockaddr_storage *at,
			 enum ur kind, const char *fmt, ...)
{
	uint64_t held = 0, now = loop_mono_ns();
	char msg[400], a[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!p) {
		count_unknown(ps, at, now);
		peers_refuse(ps, NULL, LR_N, "%s", msg);
		return;
	}
	p->from.refused[kind]++;
	p->from.last_mono = now;
	util_strlcpy(p->from.last_refusal, msg, sizeof(p->from.last_refusal));
	if (!peer_lograte_due(&p->from.lr[kind], now, PEERS_LOG_INTERVAL_NS, &held))
		return;
	log_warnx("peer %s: from its address %s, unauthenticated: %s", p->name,
		  peers_addr_text(at, a, sizeof(a)), msg);
	if (held)
		log_warnx("peer %s: %" PRIu64 " more %s from its address since the last message "
			  "(logged once per %u s)", p->name, held, peers_ur_name[kind],
			  (unsigned)(PEERS_LOG_INTERVAL_NS / 1000000000ull));
}

/* ---- sending ---- */

int peers_send_dgram(struct peers *ps, struct peer *p, enum peer_type type, const char *to,
		     const char *payload, uint8_t nonce[PEER_NONCE_LEN])
{
	uint8_t out[PEER_MAX_DGRAM];
	ssize_t n;

	if (ps->fd < 0) {
		peers_refuse(ps, p, LR_SEND, "not sent: the peer socket is not open");
		return -1;
	}
	if (peer_nonce(nonce) < 0) {
		peers_refuse(ps, p, LR_SEND, "not sent: no random nonce (getrandom)");
		return -1;
	}
	n = peer_encode(&p->pc.key, type, to, loop_real_ns(), nonce, payload, strlen(payload), out,
			type == PEER_NOTICE ? PEER_MAX_NOTICE : PEER_MAX_DGRAM);
	if (n < 0) {
		peers_refuse(ps, p, LR_SEND, "not sent: the message does not fit a datagram");
		return -1;
	}
	if (sendto(ps->fd, out, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&p->sa, p->salen) != n) {
		char why[256];

		/* EPERM: the unit's cgroup filter (IPAddressDeny=) */
		peers_refuse(ps, p, LR_SEND, "send to %s port %u: %s", p->pc.address, p->pc.port,
			     ipfilter_errstr(errno, p->pc.address, why, sizeof(why)));
		return -1;
	}
	if (type == PEER_NOTICE)
		p->tx_notices++;
	else
		p->tx_summaries++;
	return 0;
}

/* ---- the receiver's memory ---- */

void peers_recent_clear(struct recent *r)
{
	json_object_put(r->sum);
	memset(r, 0, sizeof(*r));
}
