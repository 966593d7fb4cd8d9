/* dlhfix: the devlink health fixture sets and the tests' shared helpers
 * (dlhfix.h). */
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
#include "lib/nlhex.h"
#include "lib/log.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#include "dlhfix.h"
#include "nstest.h"

/* ================================================================ fixtures */

void dlf_mk_family(struct buf *b, const struct card *c) { (void)c; dlm_family_reply(b); }
void dlf_mk_dev(struct buf *b, const struct card *c) { dlm_dev_reply(b, c); }
void dlf_mk_port(struct buf *b, const struct card *c) { dlm_port_reply(b, c); }
void dlf_mk_health(struct buf *b, const struct card *c) { dlm_health_reply(b, c); }
void dlf_mk_vnic(struct buf *b, const struct card *c)
{
	dlm_fmsg_reply(b, dlm_vnic_fmsg, c, GOODSIZE, c->pad64);
}
void dlf_mk_rx(struct buf *b, const struct card *c)
{
	dlm_fmsg_reply(b, dlm_rx_fmsg, c, GOODSIZE, c->pad64);
}
void dlf_mk_fw(struct buf *b, const struct card *c)
{
	dlm_fmsg_reply(b, dlm_fw_fill, c, GOODSIZE, c->pad64);
}
/* fw_fatal has no diagnose op: devlink_nl_health_reporter_diagnose_doit
 * returns -EOPNOTSUPP, netlink_ack sends it */
void dlf_mk_fw_fatal(struct buf *b, const struct card *c)
{
	(void)c;
	dlm_put_ack(b, 1005, -EOPNOTSUPP, NULL);
}
void dlf_mk_rx_dump(struct buf *b, const struct card *c)
{
	struct kf k;

	(void)c;
	dlm_kinit(&k);
	dlm_rx_dump_fmsg(&k);
	dlm_kf_send(&k, b, DEVLINK_CMD_HEALTH_REPORTER_DUMP_GET, 1006, GOODSIZE, 0, 1);
	dlm_kfree(&k);
}

const struct fixfile dlf_files_k68[] = {
	{ "family.nlhex", "genl ctrl getfamily devlink (CTRL_CMD_NEWFAMILY, ack)", dlf_mk_family },
	{ "dev-get.nlhex", "devlink dev show: 2 PCI instances nesting auxiliary/mlx5_core.eth.N", dlf_mk_dev },
	{ "port-get.nlhex", "devlink port show: auxiliary/mlx5_core.eth.0/65535 enp8s0f0np0, .1/131071 enp8s0f1np1", dlf_mk_port },
	{ "health-get.nlhex", "devlink health show (every instance): fw fw_fatal vnic tx rx per PF; rx of PF0 recovered twice, dump stored", dlf_mk_health },
	{ "diagnose-vnic.nlhex", "devlink health diagnose pci/0000:08:00.0 reporter vnic (mlx5_reporter_vnic_diagnose_counters)", dlf_mk_vnic },
	{ "diagnose-rx.nlhex", "devlink health diagnose auxiliary/mlx5_core.eth.0/65535 reporter rx: 8 channels, 3 NLM_F_MULTI parts", dlf_mk_rx },
	{ "diagnose-fw.nlhex", "devlink health diagnose pci/0000:08:00.0 reporter fw (Syndrome 0)", dlf_mk_fw },
	{ "diagnose-fw_fatal.nlhex", "devlink health diagnose reporter fw_fatal: no diagnose op, -EOPNOTSUPP", dlf_mk_fw_fatal },
	{ "dump-rx.nlhex", "devlink health dump show auxiliary/mlx5_core.eth.0/65535 reporter rx (dump, binary data)", dlf_mk_rx_dump },
	{ NULL, NULL, NULL },
};

const struct fixfile dlf_files_k515[] = {
	{ "family.nlhex", "genl ctrl getfamily devlink (CTRL_CMD_NEWFAMILY, ack)", dlf_mk_family },
	{ "dev-get.nlhex", "devlink dev show: 2 PCI instances, no nested ones (kernel 5.15)", dlf_mk_dev },
	{ "port-get.nlhex", "devlink port show: pci/0000:08:00.0/65535 enp8s0f0np0, pci/0000:08:00.1/131071 enp8s0f1np1", dlf_mk_port },
	{ "health-get.nlhex", "devlink health show: fw fw_fatal tx rx per PF, no vnic reporter (kernel 5.15)", dlf_mk_health },
	{ "diagnose-rx.nlhex", "devlink health diagnose pci/0000:08:00.0/65535 reporter rx: 8 channels", dlf_mk_rx },
	{ NULL, NULL, NULL },
};

const struct fixset dlf_sets[2] = {
	{ "cx6dx-k6.8", &dlm_cx6dx, dlf_files_k68 },
	{ "cx6dx-k5.15-novnic", &dlm_cx6dx_k515, dlf_files_k515 },
};

/* Hostile replies: what a broken or malicious kernel (or a corrupted
 * recording) could hand over. */
void dlf_mk_truncated(struct buf *b)
{
	struct buf full = { 0 };

	dlf_mk_vnic(&full, &dlm_cx6dx);
	memcpy(dlm_bput(b, 150), full.p, 150);           /* cut inside message 1 */
	dlm_bfree(&full);
}

void dlf_mk_garbage(struct buf *b)
{
	uint32_t x = 0x9e3779b9u;
	uint8_t *p = dlm_bput(b, 512);

	for (int i = 0; i < 512; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

void dlf_mk_hugelen(struct buf *b)
{
	struct nlmsghdr *nlh = dlm_bput(b, 96);

	nlh->nlmsg_len = 0x80000001u;   /* (int) negative: mnl_nlmsg_ok says fine */
	nlh->nlmsg_type = FAMILY;
	nlh->nlmsg_flags = NLM_F_MULTI;
	nlh->nlmsg_seq = 1005;
	nlh->nlmsg_pid = PORTID;
}

void dlf_mk_zerolen(struct buf *b)
{
	struct nlmsghdr *nlh = dlm_bput(b, 32);

	nlh->nlmsg_len = 0;
	nlh->nlmsg_type = FAMILY;
}

/* every message well framed, the fmsg cut before its root closes */
void dlf_mk_open_fmsg(struct buf *b)
{
	struct kf k;

	dlm_kinit(&k);
	dlm_vnic_fmsg(&k, &dlm_cx6dx);
	k.n -= 3;                               /* drop the closing nests */
	dlm_kf_send(&k, b, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, 1005, GOODSIZE, 0, 0);
	dlm_kfree(&k);
}

const struct hostile_fix dlf_hostile[5] = {
	{ "truncated.nlhex", "the vnic diagnose reply cut at byte 150 of its first message", dlf_mk_truncated },
	{ "garbage.nlhex", "512 bytes of xorshift noise", dlf_mk_garbage },
	{ "nlmsg_len-0x80000001.nlhex", "a header claiming 0x80000001 bytes, 96 bytes there", dlf_mk_hugelen },
	{ "nlmsg_len-0.nlhex", "a header with nlmsg_len 0", dlf_mk_zerolen },
	{ "open-fmsg.nlhex", "vnic diagnose, framing fine, fmsg root never closed (DONE and ack follow)", dlf_mk_open_fmsg },
};

int dlf_write_fixtures(const char *root)
{
	char path[PATH_MAX], e[256];

	for (size_t s = 0; s < sizeof(dlf_sets) / sizeof(dlf_sets[0]); s++) {
		snprintf(path, sizeof(path), "%s/%s", root, dlf_sets[s].dir);
		mkdir(path, 0755);
		for (const struct fixfile *f = dlf_sets[s].files; f->name; f++) {
			struct buf b = { 0 };
			char c[512];

			f->make(&b, dlf_sets[s].card);
			snprintf(path, sizeof(path), "%s/%s/%s", root, dlf_sets[s].dir, f->name);
			snprintf(c, sizeof(c), "%s\nbuilt by tests/unit/test_devlink_health.c (--write-fixtures); format: README.md",
				 f->comment);
			if (nlhex_write(path, c, b.p, b.len, e, sizeof(e)) < 0) {
				fprintf(stderr, "%s\n", e);
				return 1;
			}
			dlm_bfree(&b);
		}
	}
	snprintf(path, sizeof(path), "%s/hostile", root);
	mkdir(path, 0755);
	for (size_t i = 0; i < sizeof(dlf_hostile) / sizeof(dlf_hostile[0]); i++) {
		struct buf b = { 0 };
		char c[512];

		dlf_hostile[i].make(&b);
		snprintf(path, sizeof(path), "%s/hostile/%s", root, dlf_hostile[i].name);
		snprintf(c, sizeof(c), "%s\nbuilt by tests/unit/test_devlink_health.c (--write-fixtures)",
			 dlf_hostile[i].comment);
		if (nlhex_write(path, c, b.p, b.len, e, sizeof(e)) < 0) {
			fprintf(stderr, "%s\n", e);
			return 1;
		}
		dlm_bfree(&b);
	}
	return 0;
}

/* For system tests: the cx6dx-k6.8 set into DIR (files replaced
 * atomically, so a running daemon reads old or new, never half), with PF0's
 * netdev, steering discards and rx reporter errors as given:
 *   test_devlink_health --write-set DIR [--netdev NAME] [--steer N]
 *                       [--rx-errors N] */
int dlf_write_set(int argc, char **argv)
{
	struct card c = dlm_cx6dx;
	char path[PATH_MAX], e[256];

	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--netdev") && strlen(argv[i + 1]) < 16)
			dlm_netdev0 = argv[i + 1];
		else if (!strcmp(argv[i], "--steer"))
			c.steer = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--rx-errors"))
			c.rx_errors = atoi(argv[i + 1]);
		else {
			fprintf(stderr, "--write-set: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if ((argc - 3) % 2) {
		fprintf(stderr, "--write-set: option without a value\n");
		return 2;
	}
	for (const struct fixfile *f = dlf_files_k68; f->name; f++) {
		struct buf b = { 0 };

		f->make(&b, &c);
		snprintf(path, sizeof(path), "%s/%s", argv[2], f->name);
		if (nlhex_write(path, f->comment, b.p, b.len, e, sizeof(e)) < 0) {
			fprintf(stderr, "%s\n", e);
			return 1;
		}
		dlm_bfree(&b);
	}
	return 0;
}

/* ================================================================ helpers */

void dlf_to_repo_root(void)
{
	assert_int_equal(nstest_chdir_repo(FIXDIR "/cx6dx-k6.8/family.nlhex"), 0);
}

/* The chunk in a buffer of exactly its size, so ASan sees any over-read. */
int dlf_feed_exact(struct dlh_reply *r, const void *p, size_t len, uint32_t seq,
	       char *err, size_t errlen)
{
	void *copy = malloc(len ? len : 1);
	int rc;

	assert_non_null(copy);
	memcpy(copy, p, len);
	rc = dlh_reply_feed(r, copy, len, seq, PORTID, FAMILY, err, errlen);
	free(copy);
	return rc;
}

void dlf_parse_reply(const struct buf *b, int dump, struct dlh_reply *r)
{
	char e[256] = "";
	int rc;

	dlh_reply_init(r, dump);
	rc = dlf_feed_exact(r, b->p, b->len, 0, e, sizeof(e));
	if (rc != 1)
		print_error("feed: %d %s\n", rc, e);
	assert_int_equal(rc, 1);
}

uint64_t dlf_diag_val(const struct dlh_diag *d, const char *name)
{
	for (unsigned i = 0; i < d->n; i++)
		if (!strcmp(d->names[i], name))
			return d->vals[i];
	print_error("no counter %s\n", name);
	fail();
	return 0;
}

int dlf_diag_has(const struct dlh_diag *d, const char *name)
{
	for (unsigned i = 0; i < d->n; i++)
		if (!strcmp(d->names[i], name))
			return 1;
	return 0;
}

int dlf_fmsg_of(const struct buf *b, const char *rep, struct dlh_diag *d,
	    struct json_object **tree, char *e, size_t elen)
{
	struct dlh_reply r;
	int rc;

	dlh_reply_init(&r, 0);
	rc = dlf_feed_exact(&r, b->p, b->len, 0, e, elen);
	if (rc == 1)
		rc = dlh_parse_fmsg(&r, FAMILY, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, rep, d,
				    tree, e, elen);
	else if (rc == 0)
		rc = -EAGAIN;
	dlh_reply_free(&r);
	return rc;
}

int dlf_lay_find(const struct clayout *l, const char *name)
{
	return clayout_find(l, name);
}

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* A copy of a fixture set in a temp dir, to swap files. */
void dlf_copy_set(const char *set, char *dir, size_t len)
{
	char cmd[PATH_MAX * 2];

	snprintf(dir, len, "/tmp/test_devlink_health.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp %s/%s/*.nlhex %s/", FIXDIR, set, dir);
	assert_int_equal(system(cmd), 0);
}

void dlf_rm_set(const char *dir)
{
	nftw(dir, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
}

void dlf_open_fixture(struct src *s, const char *dir, const char *ifname,
		  const char *const *diag)
{
	struct src_ctx ctx = { .port_name = "p0", .ifname = ifname, .netns_fd = -1,
			       .sysfs_root = "" };
	struct dlh_opts o = { .fixture_dir = dir, .diagnose = diag };
	int rc;

	memset(s, 0, sizeof(*s));
	s->ops = &src_devlink_health_ops;
	rc = src_devlink_health_open(s, &ctx, &o);
	if (rc)
		print_error("open: %s\n", s->err);
	assert_int_equal(rc, 0);
}
