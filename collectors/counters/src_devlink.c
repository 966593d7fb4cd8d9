/* devlink_src: a port's devlink health state, its counters and JSON, and
 * the counter source src_devlink_health_ops (see devlink_health.h). */
#include "collectors/counters/devlink_int.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/netns.h"
#include "lib/nl.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libmnl/libmnl.h>
#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

/* ================================================================ state */

void dlh_state_free(struct dlh_state *st)
{
	if (!st)
		return;
	for (unsigned i = 0; i < DLH_MAX_REPORTERS; i++) {
		dlh_diag_free(&st->diag[i]);
		dlh_reply_free(&st->raw[i]);
	}
	memset(st, 0, sizeof(*st));
}

static int rep_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dlh_reporter *)a)->name,
		      ((const struct dlh_reporter *)b)->name);
}

/* HEALTH_REPORTER_GET of one instance: keep its device reporters and the
 * reporters of t's port; a reporter name already kept is skipped. */
static int read_reporters(struct dlh_io *io, const struct dlh_handle *inst,
			  const struct dlh_target *t, struct dlh_state *st,
			  char *err, size_t errlen)
{
	const struct nlmsghdr *nlh;
	struct dlh_reply r;
	size_t off;
	char e[200];
	int rc = dlh_io_request(io, DLH_REQ_HEALTH, inst, NULL, &r, err, errlen);

	st->requests++;
	if (rc < 0) {
		dlh_reply_free(&r);
		return rc;
	}
	dlh_reply_for_each(&r, nlh, off) {
		struct dlh_reporter rep;
		int dup = 0;

		if (dlh_parse_reporter(nlh, r.len - off, io->family, &rep, e, sizeof(e)) < 0) {
			char hb[120];

			snprintf(err, errlen, "devlink health show %s: %s",
				 dlh_handle_str(inst, hb, sizeof(hb)), e);
			dlh_reply_free(&r);
			return -EBADMSG;
		}
		if (!dlh_i_same_instance(&rep.h, inst))
			continue;                     /* old kernels dump them all */
		if (rep.h.has_port && !(t->port.has_port && dlh_i_same_instance(&rep.h, &t->port) &&
					rep.h.port == t->port.port))
			continue;                     /* another port's */
		for (unsigned i = 0; i < st->n; i++)
			dup |= !strcmp(st->rep[i].name, rep.name);
		if (dup || st->n >= DLH_MAX_REPORTERS)
			continue;
		st->rep[st->n++] = rep;
	}
	dlh_reply_free(&r);
	return 0;
}

static int wanted(const char *const *list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(*list, name))
			return 1;
	return 0;
}

int dlh_read_state(struct dlh_io *io, const struct dlh_target *t,
		   const char *const *diagnose, const struct dlh_state *prev,
		   struct dlh_state *st, char *err, size_t errlen)
{
	uint64_t t0 = loop_mono_ns();
	char scratch[8], hb[2][120];
	int rc = 0;

	ERRBUF(err, errlen, scratch);
	memset(st, 0, sizeof(*st));
	if (!io || !t) {
		snprintf(err, errlen, "%s", strerror(EINVAL));
		return -EINVAL;
	}
	st->family = io->family;
	st->real_ns = loop_real_ns();
	st->mono_ns = t0;
	snprintf(st->handles, sizeof(st->handles), "%s%s%s",
		 t->dev.bus[0] ? dlh_handle_str(&t->dev, hb[0], sizeof(hb[0])) : "",
		 t->dev.bus[0] && t->port.bus[0] ? " " : "",
		 t->port.bus[0] ? dlh_handle_str(&t->port, hb[1], sizeof(hb[1])) : "");
	/* the device instance, then the port's when it is another one; a
	 * kernel or device without health answers EOPNOTSUPP: no reporters */
	for (int k = 0; k < 2; k++) {
		struct dlh_handle inst = k ? t->port : t->dev;
		int r;

		inst.has_port = 0;
		if (!inst.bus[0] || (k && dlh_i_same_instance(&t->port, &t->dev)))
			continue;
		r = read_reporters(io, &inst, t, st, k && rc < 0 ? hb[0] : err,
				   k && rc < 0 ? sizeof(hb[0]) : errlen);
		if (r < 0 && r != -EOPNOTSUPP && rc >= 0)
			rc = r;
	}
	if (rc < 0) {
		st->cost_ns = loop_mono_ns() - t0;
		return rc == -ENODEV ? -ENXIO : rc;   /* the instance went away */
	}
	qsort(st->rep, st->n, sizeof(st->rep[0]), rep_cmp);
	for (unsigned i = 0; i < st->n; i++) {
		struct dlh_reporter *rep = &st->rep[i];

		st->diag_rc[i] = 1;
		if (prev)
			for (unsigned k = 0; k < prev->n; k++)
				if (!strcmp(prev->rep[k].name, rep->name))
					st->recover_seen_ns[i] =
						rep->recover_count > prev->rep[k].recover_count ?
						st->real_ns :
						rep->recover_count == prev->rep[k].recover_count ?
						prev->recover_seen_ns[k] : 0;
		if (!wanted(diagnose, rep->name))
			continue;
		st->requests++;
		rc = dlh_io_request(io, DLH_REQ_DIAGNOSE, &rep->h, rep->name, &st->raw[i],
				    st->diag_err[i], sizeof(st->diag_err[i]));
		if (rc == 0)
			rc = dlh_parse_fmsg(&st->raw[i], io->family,
					    DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, rep->name,
					    &st->diag[i], NULL, st->diag_err[i],
					    sizeof(st->diag_err[i]));
		if (rc == 0)
			st->diag_real_ns[i] = st->real_ns;
		if (rc < 0) {
			dlh_reply_free(&st->raw[i]);
			if (rc == -ENOMEM) {
				st->cost_ns = loop_mono_ns() - t0;
				snprintf(err, errlen, "%s", strerror(ENOMEM));
				return rc;
			}
		}
		st->diag_rc[i] = rc;
	}
	st->cost_ns = loop_mono_ns() - t0;
	return 0;
}

/* The counter names of one reporter's own fields, in layout order. */
static unsigned fixed_fields(const struct dlh_reporter *r, const char **f,
			     uint64_t *v)
{
	unsigned n = 0;

	f[n] = "state", v[n++] = r->state;
	f[n] = "error_count", v[n++] = r->error_count;
	f[n] = "recover_count", v[n++] = r->recover_count;
	if (r->have & DLH_HAVE_RECOVER) {
		f[n] = "grace_period_ms", v[n++] = r->grace_period_ms;
		if (r->have & DLH_HAVE_BURST)
			f[n] = "burst_period_ms", v[n++] = r->burst_period_ms;
		f[n] = "auto_recover", v[n++] = r->auto_recover;
	}
	if (r->have & DLH_HAVE_DUMP) {
		f[n] = "auto_dump", v[n++] = r->auto_dump;
		f[n] = "dump_time_ns", v[n++] = r->dump_ts_ns;
	}
	return n;
}

/* Names, values, widths of st; names are malloc'd into names[]. Returns the
 * count, or -ENOMEM / -E2BIG over cap. */
static int state_flatten(const struct dlh_state *st, char **names,
			 uint64_t *vals, uint8_t *width, unsigned cap)
{
	unsigned n = 0;

	for (unsigned i = 0; i < st->n; i++) {
		const struct dlh_reporter *r = &st->rep[i];
		const char *f[8];
		uint64_t v[8];
		unsigned k = fixed_fields(r, f, v);

		if (n + k + st->diag[i].n > cap)
			goto big;
		for (unsigned j = 0; j < k; j++, n++) {
			char buf[DLH_PATH_MAX];

			snprintf(buf, sizeof(buf), "devlink/%s/%s", r->name, f[j]);
			if (!(names[n] = strdup(buf)))
				goto nomem;
			vals[n] = v[j];
			width[n] = CNT_W64;
		}
		for (unsigned j = 0; j < st->diag[i].n; j++, n++) {
			if (!(names[n] = strdup(st->diag[i].names[j])))
				goto nomem;
			vals[n] = st->diag[i].vals[j];
			width[n] = st->diag[i].width[j];
		}
	}
	return (int)n;
big:
	for (unsigned j = 0; j < n; j++)
		free(names[j]);
	return -E2BIG;
nomem:
	for (unsigned j = 0; j < n; j++)
		free(names[j]);
	return -ENOMEM;
}

struct clayout *dlh_state_layout(const struct dlh_state *st, uint64_t **vals)
{
	struct clayout *lay = NULL;
	unsigned cap = 0;
	char **names;
	uint8_t *width;
	int n;

	*vals = NULL;
	for (unsigned i = 0; st && i < st->n; i++)
		cap += 8 + st->diag[i].n;
	names = calloc(cap ? cap : 1, sizeof(*names));
	width = calloc(cap ? cap : 1, 1);
	*vals = calloc(cap ? cap : 1, sizeof(**vals));
	n = names && width && *vals && st ? state_flatten(st, names, *vals, width, cap) : -ENOMEM;
	if (n >= 0) {
		lay = clayout_new((unsigned)n, (const char *const *)names, width);
		for (int i = 0; i < n; i++)
			free(names[i]);
	}
	free(names);
	free(width);
	if (!lay) {
		free(*vals);
		*vals = NULL;
	}
	return lay;
}

static int reporter_json(const struct dlh_state *st, unsigned i,
			 struct json_object *arr)
{
	const struct dlh_reporter *r = &st->rep[i];
	struct json_object *o = json_object_new_object(), *tree = NULL;
	char hb[160], e[160];
	int rc = 0;

	if (!o)
		return -ENOMEM;
	rc |= jx_put(o, "name", json_object_new_string(r->name));
	rc |= jx_put(o, "handle", json_object_new_string(dlh_handle_str(&r->h, hb, sizeof(hb))));
	rc |= jx_put(o, "state", r->state == 0 ? json_object_new_string("healthy") :
		   r->state == 1 ? json_object_new_string("error") :
		   json_object_new_int(r->state));
	rc |= jx_put(o, "error_count", json_object_new_uint64(r->error_count));
	rc |= jx_put(o, "recover_count", json_object_new_uint64(r->recover_count));
	if (r->have & DLH_HAVE_RECOVER) {
		rc |= jx_put(o, "grace_period_ms", json_object_new_uint64(r->grace_period_ms));
		if (r->have & DLH_HAVE_BURST)
			rc |= jx_put(o, "burst_period_ms", json_object_new_uint64(r->burst_period_ms));
		rc |= jx_put(o, "auto_recover", json_object_new_boolean(r->auto_recover));
	}
	if (r->have & DLH_HAVE_DUMP)
		rc |= jx_put(o, "auto_dump", json_object_new_boolean(r->auto_dump));
	if (r->have & DLH_HAVE_DUMP_TS) {
		rc |= jx_put(o, "dump_time_ns", json_object_new_uint64(r->dump_ts_ns));
		rc |= jx_put(o, "dump_ts_ms", json_object_new_uint64(r->dump_ts_ms));
	}
	if (st->recover_seen_ns[i])
		rc |= jx_put(o, "recover_seen_ns", json_object_new_uint64(st->recover_seen_ns[i]));
	if (st->raw[i].len) {
		if (dlh_parse_fmsg(&st->raw[i], st->family, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE,
				   r->name, NULL, &tree, e, sizeof(e)) == 0) {
			rc |= jx_put(o, "diagnose", tree);
			rc |= jx_put(o, "diagnose_time_ns",
				   json_object_new_uint64(st->diag_real_ns[i]));
		} else {
			rc |= jx_put(o, "diagnose_error", json_object_new_string(e));
		}
	}
	if (st->diag_rc[i] < 0 && !json_object_object_get_ex(o, "diagnose_error", NULL)) {
		rc |= jx_put(o, "diagnose_error", json_object_new_string(st->diag_err[i]));
	}
	if (rc) {
		json_object_put(o);
		return -ENOMEM;
	}
	return jx_push(arr, o);
}

int dlh_state_to_json(const struct dlh_state *st, struct json_object *obj)
{
	struct json_object *arr;
	int rc = 0;

	if (!st || !obj || !json_object_is_type(obj, json_type_object))
		return -EINVAL;
	arr = json_object_new_array();
	if (!arr)
		return -ENOMEM;
	for (unsigned i = 0; i < st->n && !rc; i++)
		rc = reporter_json(st, i, arr);
	if (rc) {
		json_object_put(arr);
		return rc;
	}
	rc |= jx_put(obj, "time_ns", json_object_new_uint64(st->real_ns));
	rc |= jx_put(obj, "handles", json_object_new_string(st->handles));
	rc |= jx_put(obj, "cost_us", json_object_new_uint64(st->cost_ns / 1000));
	rc |= jx_put(obj, "reporters", arr);
	if (!st->n)
		rc |= jx_put(obj, "note", json_object_new_string("no devlink health"));
	return rc ? -ENOMEM : 0;
}

/* ================================================================ source */

struct dsrc {
	struct dlh_io *io;
	struct dlh_target t;
	char *diag[DLH_MAX_REPORTERS + 1];   /* owned, NULL-terminated */
	uint64_t interval_ns, min_refresh_ns;
	uint64_t every[DLH_MAX_REPORTERS];   /* diag[i]'s own interval */
	uint64_t diag_ns[DLH_MAX_REPORTERS]; /* when diag[i] was last asked */
	struct dlh_state *st;                /* last good read, or NULL */
	struct clayout *lay;
	uint64_t *vals;
	int failed;                          /* last query failed: its -errno */
	int refresh;
	int full;                            /* next query: every diagnose */
	int narrow;                          /* next query: once[] only */
	char *once[DLH_MAX_REPORTERS + 1];   /* owned, NULL-terminated */
	int nsfd;                            /* where io was made (borrowed) */
	uint64_t last_ns;                    /* last query (mono), 0 none */
	uint64_t queries, total_ns, last_cost_ns;
	char ifname[16];
};

static void dsrc_free(struct dsrc *d)
{
	if (!d)
		return;
	dlh_io_close(d->io);
	for (unsigned i = 0; d->diag[i]; i++)
		free(d->diag[i]);
	for (unsigned i = 0; d->once[i]; i++)
		free(d->once[i]);
	if (d->st) {
		dlh_state_free(d->st);
		free(d->st);
	}
	clayout_unref(d->lay);
	free(d->vals);
	free(d);
}

int src_devlink_health_open(struct src *s, const struct src_ctx *ctx,
			    const struct dlh_opts *o)
{
	static const char *const def_diag[] = { "vnic", "rx", NULL };
	static const uint64_t def_every[] = { 0, 10000000000ull };
	const char *const *dl = o && o->diagnose ? o->diagnose : def_diag;
	const uint64_t *ev = o && o->diagnose ? o->diagnose_every_ns : def_every;
	struct dsrc *d;
	char e[256] = "", nsd[128];
	int nsl[2], nns = 0, rc = -ENODEV;

	s->err[0] = '\0';
	if (!ctx || !ctx->ifname || !*ctx->ifname) {
		snprintf(s->err, sizeof(s->err), "devlink: no interface");
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(s->err, sizeof(s->err), "devlink: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	util_strlcpy(d->ifname, ctx->ifname, sizeof(d->ifname));
	for (unsigned i = 0, k = 0; dl[i] && k < DLH_MAX_REPORTERS; i++) {
		if (!dlh_i_good_token(dl[i]))
			continue;
		d->every[k] = ev ? ev[i] : 0;
		if (!(d->diag[k++] = strdup(dl[i]))) {
			dsrc_free(d);
			snprintf(s->err, sizeof(s->err), "devlink: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
	}
	d->interval_ns = o && o->interval_ns ? o->interval_ns : 1000000000ull;
	for (unsigned i = 0; d->diag[i]; i++)
		if (d->every[i] < d->interval_ns)
			d->every[i] = d->interval_ns;
	d->min_refresh_ns = o && o->min_refresh_ns ? o->min_refresh_ns : 100000000ull;

	if (o && o->fixture_dir) {
		d->io = dlh_io_fixture(o->fixture_dir, e, sizeof(e));
		rc = d->io ? dlh_find_target(d->io, ctx->ifname, 0, o->bus_info, &d->t, e,
					     sizeof(e)) : -(errno ? errno : EIO);
	} else {
		/* the port's namespace first; a devlink instance stays where it
		 * was when its netdev is moved into another one */
		nsl[nns++] = ctx->netns_fd;
		if (ctx->netns_fd >= 0)
			nsl[nns++] = -1;
		for (int i = 0; i < nns; i++) {
			d->io = dlh_io_socket(nsl[i], o ? o->record_dir : NULL, e, sizeof(e));
			if (!d->io) {
				rc = -(errno ? errno : EIO);
				if (rc == -ENOENT)
					break;        /* no devlink in this kernel */
				continue;
			}
			rc = dlh_find_target(d->io, ctx->ifname,
					     nsl[i] == ctx->netns_fd ? (uint32_t)ctx->ifindex : 0,
					     o ? o->bus_info : NULL, &d->t, e, sizeof(e));
			if (rc == 0) {
				d->nsfd = nsl[i];
				break;
			}
			dlh_io_close(d->io);
			d->io = NULL;
		}
	}
	if (rc < 0) {
		snprintf(s->err, sizeof(s->err), "devlink %s (%.48s): %.170s", ctx->ifname,
			 o && o->fixture_dir ? o->fixture_dir :
			 nl_ns_desc(ctx->netns_fd, nsd, sizeof(nsd)), e);
		dsrc_free(d);
		return rc;
	}
	s->priv = d;
	return 0;
}

static int dsrc_open(struct src *s, const struct src_ctx *ctx)
{
	return src_devlink_health_open(s, ctx, NULL);
}

/* A diagnose that failed this time, or was not asked for this time (a
 * narrowed refresh), keeps what it gave last time, values and reply, with
 * its older time: a transient firmware error is a delta of 0, never a
 * spike or a gap, and the layout stays the same. */
static void carry_over(struct dlh_state *st, struct dlh_state *old, char *note,
		       size_t len)
{
	for (unsigned i = 0; i < st->n; i++) {
		if (st->diag_rc[i] == 0 || st->diag_rc[i] == -EOPNOTSUPP)
			continue;
		if (st->diag_rc[i] < 0 && !note[0])
			snprintf(note, len, "devlink health diagnose %s: %s", st->rep[i].name,
				 st->diag_err[i]);
		for (unsigned k = 0; old && k < old->n; k++) {
			if (strcmp(old->rep[k].name, st->rep[i].name) || !old->diag[k].n)
				continue;
			dlh_diag_free(&st->diag[i]);
			dlh_reply_free(&st->raw[i]);
			st->diag[i] = old->diag[k];
			st->raw[i] = old->raw[k];
			st->diag_real_ns[i] = old->diag_real_ns[k];
			memset(&old->diag[k], 0, sizeof(old->diag[k]));
			memset(&old->raw[k], 0, sizeof(old->raw[k]));
		}
	}
}

static int dsrc_query(struct src *s, struct dsrc *d)
{
	struct dlh_state *st = calloc(1, sizeof(*st));
	struct clayout *lay;
	uint64_t *vals;
	char e[220];
	int rc;

	if (!st)
		return -ENOMEM;
	const char *due[DLH_MAX_REPORTERS + 1];
	const char *const *list = (const char *const *)d->once;
	uint64_t now = loop_mono_ns();
	unsigned nd = 0;

	/* a narrowed refresh asks for its list; else every diagnose whose
	 * own interval passed (a full refresh: all of them) */
	if (!d->narrow) {
		for (unsigned i = 0; d->diag[i]; i++)
			if (d->full || !d->diag_ns[i] || now - d->diag_ns[i] >= d->every[i]) {
				due[nd++] = d->diag[i];
				d->diag_ns[i] = now ? now : 1;
			}
		due[nd] = NULL;
		list = due;
	}
	rc = dlh_read_state(d->io, &d->t, list, d->st, st, e, sizeof(e));
	d->narrow = 0;
	d->full = 0;
	d->queries++;
	d->total_ns += st->cost_ns;
	d->last_cost_ns = st->cost_ns;
	if (rc < 0) {
		snprintf(s->err, sizeof(s->err), "devlink %s: %s", d->ifname, e);
		dlh_state_free(st);
		free(st);
		return rc;
	}
	s->err[0] = '\0';
	carry_over(st, d->st, s->err, sizeof(s->err));
	lay = dlh_state_layout(st, &vals);
	if (!lay) {
		snprintf(s->err, sizeof(s->err), "devlink %s: %s", d->ifname, strerror(ENOMEM));
		dlh_state_free(st);
		free(st);
		return -ENOMEM;
	}
	/* the same names as before: keep the layout, so that the recorder
	 * sees one layout for as long as the reporters do not change */
	if (d->lay && clayout_equal(d->lay, lay)) {
		clayout_unref(lay);
	} else {
		clayout_unref(d->lay);
		d->lay = lay;
	}
	free(d->vals);
	d->vals = vals;
	if (d->st) {
		dlh_state_free(d->st);
		free(d->st);
	}
	d->st = st;
	return 0;
}

static int dsrc_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	struct dsrc *d = s->priv;
	uint64_t now = loop_mono_ns(), age;
	int due;

	if (!d)
		return -EINVAL;
	age = now - d->last_ns;
	due = !d->last_ns || age >= d->interval_ns ||
	      (d->refresh && age >= d->min_refresh_ns);
	if (due) {
		d->last_ns = now ? now : 1;
		d->refresh = 0;
		d->failed = dsrc_query(s, d);
	}
	if (d->failed < 0)
		return d->failed;
	*lay = d->lay;
	*vals = d->vals;
	return 0;
}

static void dsrc_close(struct src *s)
{
	dsrc_free(s->priv);
	s->priv = NULL;
}

const struct src_ops src_devlink_health_ops = {
	.name = "devlink",
	.open = dsrc_open,
	.read = dsrc_read,
	.close = dsrc_close,
};

void src_devlink_health_refresh(struct src *s, const char *const *diagnose)
{
	struct dsrc *d = s ? s->priv : NULL;
	unsigned k = 0;

	if (!d)
		return;
	d->refresh = 1;
	d->full = diagnose == NULL;
	for (unsigned i = 0; d->once[i]; i++) {
		free(d->once[i]);
		d->once[i] = NULL;
	}
	d->narrow = diagnose != NULL;
	for (unsigned i = 0; diagnose && diagnose[i] && k < DLH_MAX_REPORTERS; i++) {
		if (!dlh_i_good_token(diagnose[i]))
			continue;
		if (!(d->once[k++] = strdup(diagnose[i]))) {
			d->narrow = 0;            /* out of memory: the full list */
			break;
		}
	}
}

const struct dlh_target *src_devlink_health_target(const struct src *s)
{
	const struct dsrc *d = s ? s->priv : NULL;

	return d ? &d->t : NULL;
}

struct dlh_mon *src_devlink_health_mon_open(const struct src *s, char *err,
					    size_t errlen)
{
	const struct dsrc *d = s ? s->priv : NULL;

	if (!d || d->io->fixture) {
		snprintf(err, errlen, "devlink monitor: %s",
			 d ? "recorded replies have no events" : strerror(EINVAL));
		errno = d ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	return dlh_mon_open(d->nsfd, err, errlen);
}

const struct dlh_state *src_devlink_health_state(const struct src *s)
{
	const struct dsrc *d = s ? s->priv : NULL;

	return d ? d->st : NULL;
}

void src_devlink_health_cost(const struct src *s, uint64_t *queries,
			     uint64_t *total_ns, uint64_t *last_ns)
{
	const struct dsrc *d = s ? s->priv : NULL;

	if (queries)
		*queries = d ? d->queries : 0;
	if (total_ns)
		*total_ns = d ? d->total_ns : 0;
	if (last_ns)
		*last_ns = d ? d->last_cost_ns : 0;
}

/* One reporter's current GET fields (a fresh HEALTH_REPORTER_GET). */
static int fresh_reporter(struct dsrc *d, const char *name, struct dlh_reporter *out,
			  char *err, size_t errlen)
{
	struct dlh_state *st = calloc(1, sizeof(*st));
	int rc;

	if (!st)
		return -ENOMEM;
	rc = dlh_read_state(d->io, &d->t, NULL, NULL, st, err, errlen);
	if (rc == 0) {
		rc = -ENOENT;
		snprintf(err, errlen, "no reporter %s", name);
		for (unsigned i = 0; i < st->n; i++)
			if (!strcmp(st->rep[i].name, name)) {
				*out = st->rep[i];
				rc = 0;
			}
	}
	dlh_state_free(st);
	free(st);
	return rc;
}

int src_devlink_health_dump(struct src *s, const char *name,
			    uint64_t newer_than_real_ns, size_t max_bytes,
			    struct json_object **out, int *retaken, char *err,
			    size_t errlen)
{
	struct dsrc *d = s ? s->priv : NULL;
	struct dlh_reporter before, after;
	struct dlh_reply r;
	char scratch[8], e[200];
	int rc;

	ERRBUF(err, errlen, scratch);
	*out = NULL;
	if (retaken)
		*retaken = 0;
	if (!d || !dlh_i_good_token(name)) {
		snprintf(err, errlen, "%s", strerror(EINVAL));
		return -EINVAL;
	}
	if ((rc = fresh_reporter(d, name, &before, err, errlen)) < 0)
		return rc;
	if (!(before.have & DLH_HAVE_DUMP_TS)) {
		snprintf(err, errlen, "reporter %s has no stored dump", name);
		return 0;
	}
	if (!before.dump_ts_ns || before.dump_ts_ns <= newer_than_real_ns) {
		snprintf(err, errlen, "reporter %s: stored dump %s", name,
			 before.dump_ts_ns ? "older than the stall" : "has no wall-clock time");
		return 0;
	}
	rc = dlh_io_request(d->io, DLH_REQ_DUMP, &before.h, name, &r, err, errlen);
	if (rc == 0 && r.len > max_bytes) {
		snprintf(err, errlen, "reporter %s: dump of %zu bytes, over the %zu limit", name,
			 r.len, max_bytes);
		dlh_reply_free(&r);
		return 0;
	}
	if (rc == 0)
		rc = dlh_parse_fmsg(&r, d->io->family, DEVLINK_CMD_HEALTH_REPORTER_DUMP_GET,
				    name, NULL, out, err, errlen);
	dlh_reply_free(&r);
	if (rc < 0)
		return rc;
	if (retaken && fresh_reporter(d, name, &after, e, sizeof(e)) == 0 &&
	    after.dump_ts_ns != before.dump_ts_ns)
		*retaken = 1;
	return 0;
}
