/* Unit tests: evidence bundles (write, verify, cleanup, retention, summary). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bundle/bundle.h"
#include "client/client.h"

struct fx {
	char dir[64];           /* state dir (mkdtemp) */
	char src[128];          /* a source file to copy */
	int mounted;
};

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	FILE *fp;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_bundle.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->src, sizeof(f->src), "/tmp/test_bundle_src.%d", (int)getpid());
	fp = fopen(f->src, "w");
	assert_non_null(fp);
	for (int i = 0; i < 3000; i++)
		fputc('A' + i % 26, fp);
	fclose(fp);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[256];

	if (f->mounted)
		umount2(f->dir, MNT_DETACH);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "teardown: %s failed\n", cmd);
	unlink(f->src);
	free(f);
	return 0;
}

static int mount_tmpfs(struct fx *f, const char *size)
{
	char opt[32];

	snprintf(opt, sizeof(opt), "size=%s", size);
	if (mount("tmpfs", f->dir, "tmpfs", 0, opt) < 0) {
		fprintf(stderr, "# skip: cannot mount a tmpfs on %s: %s\n", f->dir, strerror(errno));
		return -1;
	}
	f->mounted = 1;
	return 0;
}

static int write_std(struct fx *f, const char *name, char *path, size_t plen, char *err, size_t elen)
{
	struct json_object *m = json_object_new_object();
	static const char big[] = "{\"flows\": []}\n";
	struct bundle_file files[] = {
		{ .name = "summary.txt", .data = "port-drop on srv\n", .len = 17 },
		{ .name = "record.json", .data = big, .len = sizeof(big) - 1 },
		{ .name = "captures/srv.pcap", .src_path = f->src },
		{ .name = "probes/1.txt", .data = "", .len = 0 },
	};
	int rc;

	json_object_object_add(m, "host", json_object_new_string("scan"));
	json_object_object_add(m, "verdict", json_object_new_string("port-drop"));
	rc = bundle_write(f->dir, name, m, files, 4, 0, path, plen, err, elen);
	json_object_put(m);
	return rc;
}

static int count_entries(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    !strncmp(e->d_name, prefix, strlen(prefix)))
			n++;
	closedir(d);
	return n;
}

static void put_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void bundle_write__several_files__sha256sum_passes(void **state)
{
	struct fx *f = *state;
	char path[512], err[256], bdir[256];
	struct json_object *m = NULL, *files, *schema;

	assert_int_equal(write_std(f, "20261002T115003Z-scan-srv-port-drop", path, sizeof(path),
				   err, sizeof(err)), 0);
	snprintf(bdir, sizeof(bdir), "%s/bundles", f->dir);
	assert_int_equal(count_entries(bdir, ".tmp-"), 0);
	assert_int_equal(count_entries(bdir, "2026"), 1);
	assert_non_null(strstr(path, "/bundles/20261002T115003Z-scan-srv-port-drop"));
	run("cd '%s' && sha256sum --quiet -c SHA256SUMS", path);
	/* sorted, every file but SHA256SUMS itself */
	run("cd '%s' && test \"$(cut -c67- SHA256SUMS | tr '\\n' ' ')\" = "
	    "'captures/srv.pcap manifest.json probes/1.txt record.json summary.txt '", path);
	run("cmp -s '%s' '%s/captures/srv.pcap'", f->src, path);
	assert_int_equal(bundle_load_manifest(path, &m, err, sizeof(err)), 0);
	assert_true(json_object_object_get_ex(m, "schema", &schema));
	assert_int_equal(json_object_get_int(schema), BUNDLE_SCHEMA);
	assert_true(json_object_object_get_ex(m, "files", &files));
	assert_int_equal(json_object_array_length(files), 4);
	assert_string_equal(json_object_get_string(json_object_object_get(m, "host")), "scan");
	assert_int_equal(json_object_get_int(json_object_object_get(
		json_object_array_get_idx(files, 2), "bytes")), 3000);
	json_object_put(m);
}

static void bundle_write__existing_name__unique_suffix(void **state)
{
	struct fx *f = *state;
	char p1[512], p2[512], p3[512], err[256];

	assert_int_equal(write_std(f, "x-h-p-v", p1, sizeof(p1), err, sizeof(err)), 0);
	assert_int_equal(write_std(f, "x-h-p-v", p2, sizeof(p2), err, sizeof(err)), 0);
	assert_int_equal(write_std(f, "x-h-p-v", p3, sizeof(p3), err, sizeof(err)), 0);
	assert_non_null(strstr(p1, "/x-h-p-v"));
	assert_non_null(strstr(p2, "/x-h-p-v-2"));
	assert_non_null(strstr(p3, "/x-h-p-v-3"));
}

static void bundle_write__traversal_names__refused(void **state)
{
	struct fx *f = *state;
	char path[512], err[256], bdir[256];
	struct bundle_file bad[] = { { .name = "../escape.txt", .data = "x", .len = 1 } };
	struct bundle_file abs[] = { { .name = "/etc/x", .data = "x", .len = 1 } };
	struct bundle_file res[] = { { .name = "SHA256SUMS", .data = "x", .len = 1 } };

	assert_int_equal(write_std(f, "../evil", path, sizeof(path), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "../evil"));
	assert_int_equal(write_std(f, ".tmp-x", path, sizeof(path), err, sizeof(err)), -EINVAL);
	assert_int_equal(bundle_write(f->dir, "ok", NULL, bad, 1, 0, path, sizeof(path),
				      err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "../escape.txt"));
	assert_int_equal(bundle_write(f->dir, "ok", NULL, abs, 1, 0, path, sizeof(path),
				      err, sizeof(err)), -EINVAL);
	assert_int_equal(bundle_write(f->dir, "ok", NULL, res, 1, 0, path, sizeof(path),
				      err, sizeof(err)), -EINVAL);
	snprintf(bdir, sizeof(bdir), "%s/bundles", f->dir);
	assert_int_equal(count_entries(bdir, ""), 0);
	assert_int_equal(access("/tmp/escape.txt", F_OK), -1);
}

static void bundle_write__source_over_max_copy__truncated(void **state)
{
	struct fx *f = *state;
	char path[512], err[256], cap[600];
	struct bundle_file files[] = { { .name = "captures/big.pcap", .src_path = f->src } };
	struct json_object *m = NULL, *e;
	struct stat st;

	assert_int_equal(bundle_write(f->dir, "t", NULL, files, 1, 1000, path, sizeof(path),
				      err, sizeof(err)), 0);
	snprintf(cap, sizeof(cap), "%s/captures/big.pcap", path);
	assert_int_equal(stat(cap, &st), 0);
	assert_int_equal(st.st_size, 1000);
	assert_int_equal(bundle_verify(path, &m, err, sizeof(err)), 0);
	e = json_object_array_get_idx(json_object_object_get(m, "files"), 0);
	assert_true(json_object_get_boolean(json_object_object_get(e, "truncated")));
	assert_int_equal(json_object_get_int(json_object_object_get(e, "source_bytes")), 3000);
	json_object_put(m);
}

static void bundle_verify__intact__passes(void **state)
{
	struct fx *f = *state;
	char path[512], err[256];
	struct json_object *m = NULL;

	assert_int_equal(write_std(f, "v", path, sizeof(path), err, sizeof(err)), 0);
	assert_int_equal(bundle_verify(path, &m, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_non_null(m);
	json_object_put(m);
}

static void bundle_verify__byte_changed__names_file(void **state)
{
	struct fx *f = *state;
	char path[512], err[256], fp[600];
	int fd;

	assert_int_equal(write_std(f, "v", path, sizeof(path), err, sizeof(err)), 0);
	snprintf(fp, sizeof(fp), "%s/captures/srv.pcap", path);
	fd = open(fp, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "z", 1, 1500), 1);
	close(fd);
	assert_int_equal(bundle_verify(path, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "captures/srv.pcap: checksum mismatch");
}

static void bundle_verify__file_deleted__missing(void **state)
{
	struct fx *f = *state;
	char path[512], err[256], fp[600];

	assert_int_equal(write_std(f, "v", path, sizeof(path), err, sizeof(err)), 0);
	snprintf(fp, sizeof(fp), "%s/summary.txt", path);
	assert_int_equal(unlink(fp), 0);
	assert_int_equal(bundle_verify(path, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "summary.txt: missing");
}

static void bundle_verify__file_added__not_in_sums(void **state)
{
	struct fx *f = *state;
	char path[512], err[256], fp[600];

	assert_int_equal(write_std(f, "v", path, sizeof(path), err, sizeof(err)), 0);
	snprintf(fp, sizeof(fp), "%s/probes/extra.txt", path);
	put_file(fp, "sneaked in\n");
	assert_int_equal(bundle_verify(path, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "probes/extra.txt: not in SHA256SUMS");
}

static void bundle_verify__symlink_and_fifo__refused_without_hanging(void **state)
{
	struct fx *f = *state;
	char path[512], err[256], fp[600], cmd[1400];

	assert_int_equal(write_std(f, "v", path, sizeof(path), err, sizeof(err)), 0);
	/* summary.txt replaced by a symlink to a FIFO: must neither follow nor block */
	snprintf(fp, sizeof(fp), "%s/fifo", f->dir);
	assert_int_equal(mkfifo(fp, 0600), 0);
	snprintf(cmd, sizeof(cmd), "%s/summary.txt", path);
	assert_int_equal(unlink(cmd), 0);
	assert_int_equal(symlink(fp, cmd), 0);
	assert_int_equal(bundle_verify(path, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "summary.txt: "));
	/* a FIFO listed in place of a file */
	assert_int_equal(unlink(cmd), 0);
	assert_int_equal(mkfifo(cmd, 0600), 0);
	assert_int_equal(bundle_verify(path, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "summary.txt: not a regular file");
	/* a hostile SHA256SUMS pointing outside */
	snprintf(cmd, sizeof(cmd), "cd '%s' && printf '%%064d  ../../etc/passwd\\n' 0 > SHA256SUMS", path);
	run("%s", cmd);
	assert_int_equal(bundle_verify(path, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "SHA256SUMS:1: unsafe"));
}

static void bundle_read_file__symlink_and_fifo__refused_without_hanging(void **state)
{
	/* issue #12 item 6: nicstallctl show printed /etc/shadow through a
	 * symlinked summary.txt and hung on a FIFO */
	struct fx *f = *state;
	const char *root_file = access("/etc/shadow", F_OK) == 0 ? "/etc/shadow" : "/etc/passwd";
	char path[512], err[512], fp[600];
	struct timespec t0, t1;
	size_t len = 0;
	char *s;

	assert_int_equal(write_std(f, "r", path, sizeof(path), err, sizeof(err)), 0);
	s = bundle_read_file(path, "summary.txt", 1 << 20, &len, err, sizeof(err));
	assert_non_null(s);
	assert_int_equal(len, 17);
	assert_string_equal(s, "port-drop on srv\n");
	free(s);
	/* summary.txt -> a root file: refused, with a clear error */
	snprintf(fp, sizeof(fp), "%s/summary.txt", path);
	assert_int_equal(unlink(fp), 0);
	assert_int_equal(symlink(root_file, fp), 0);
	assert_null(bundle_read_file(path, "summary.txt", 1 << 20, &len, err, sizeof(err)));
	assert_int_equal(errno, ELOOP);
	assert_non_null(strstr(err, "/summary.txt: a symbolic link"));
	/* a FIFO: refused at once (an alarm fails the test instead of a hang) */
	assert_int_equal(unlink(fp), 0);
	assert_int_equal(mkfifo(fp, 0600), 0);
	alarm(5);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_null(bundle_read_file(path, "summary.txt", 1 << 20, &len, err, sizeof(err)));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	alarm(0);
	assert_true(t1.tv_sec - t0.tv_sec < 2);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "/summary.txt: not a regular file"));
	/* names that lead outside, and a bound */
	assert_null(bundle_read_file(path, "../r/record.json", 1 << 20, &len, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_null(bundle_read_file(path, "record.json", 4, &len, err, sizeof(err)));
	assert_non_null(strstr(err, "record.json: too large"));
}

/* issue 34 finding 8: nicstallctl show passed C1 controls of summary.txt
 * (U+009B as UTF-8 C2 9B, the byte 0x9B: CSI to some terminals) and
 * bidirectional overrides to the terminal */
static void cmd_show__c1_in_summary__replaced(void **state)
{
	static const char txt[] = "verdict\xc2\x9b" "2J x\x9b" "31m y\x1b]0;t\x07 z\xe2\x80\xae" "w\n"
				  "tab\tkept\n";
	struct bundle_file files[] = { { .name = "summary.txt", .data = txt, .len = sizeof(txt) - 1 } };
	struct json_object *m = json_object_new_object();
	struct fx *f = *state;
	char path[512], err[512], out[160], buf[8192];
	char *args[1] = { path };
	struct cli c = { .cmd = "show", .args = args, .nargs = 1, .state_dir = f->dir };
	int fd, saved;
	ssize_t n;

	json_object_object_add(m, "host", json_object_new_string("scan"));
	assert_int_equal(bundle_write(f->dir, "c1", m, files, 1, 0, path, sizeof(path), err,
				      sizeof(err)), 0);
	json_object_put(m);
	snprintf(out, sizeof(out), "%s/show.out", f->dir);
	fd = open(out, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	assert_true(dup2(fd, STDOUT_FILENO) >= 0);
	assert_int_equal(cmd_show(&c), EXIT_OK);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "verdict?2J x?31m y?]0;t? z?w\ntab\tkept\n"));
	assert_null(memmem(buf, (size_t)n, "\x9b", 1));
	assert_null(memmem(buf, (size_t)n, "\x1b", 1));
	assert_null(memmem(buf, (size_t)n, "\xe2\x80\xae", 3));
}

/* The same for every line nicstallctl prints (util_term_std in its main):
 * `bundles` lists the verdict a bundle's manifest names. Runs the
 * nicstallctl built beside this test (BUILD/tests/.. /nicstallctl). */
static void nicstallctl_bundles__c1_in_manifest__replaced(void **state)
{
	struct fx *f = *state;
	struct json_object *m = json_object_new_object(), *v = json_object_new_object();
	char path[512], err[512], exe[512], cmd[1400], buf[8192];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t n;
	FILE *p;

	assert_true(el > 0);
	exe[el] = '\0';
	*strrchr(exe, '/') = '\0';
	json_object_object_add(v, "verdict", json_object_new_string("v\xc2\x9b" "2J\x9b" "31m\xe2\x80\xae"));
	json_object_object_add(m, "verdict", v);
	assert_int_equal(bundle_write(f->dir, "c1", m, NULL, 0, 0, path, sizeof(path), err,
				      sizeof(err)), 0);
	json_object_put(m);
	snprintf(cmd, sizeof(cmd), "'%s/../nicstallctl' -S '%s' bundles 2>&1", exe, f->dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(buf, 1, sizeof(buf) - 1, p);
	assert_int_equal(pclose(p), 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, " v?2J?31m? "));
	assert_null(memmem(buf, n, "\x9b", 1));
	assert_null(memmem(buf, n, "\xe2\x80\xae", 3));
}

static void set_schema(const char *path, int schema)
{
	struct json_object *m;
	char fp[600];

	snprintf(fp, sizeof(fp), "%s/manifest.json", path);
	m = json_object_from_file(fp);
	assert_non_null(m);
	if (schema < 0)
		json_object_object_del(m, "schema");
	else
		json_object_object_add(m, "schema", json_object_new_int(schema));
	assert_int_equal(json_object_to_file(fp, m), 0);
	json_object_put(m);
	/* keep the checksums right so the schema is what is judged */
	run("cd '%s' && sha256sum captures/srv.pcap manifest.json probes/1.txt record.json "
	    "summary.txt > SHA256SUMS", path);
}

static void bundle_verify__newer_schema__refused_naming_versions(void **state)
{
	struct fx *f = *state;
	char path[512], err[256];
	struct json_object *m = NULL;

	assert_int_equal(write_std(f, "v", path, sizeof(path), err, sizeof(err)), 0);
	set_schema(path, 2);
	assert_int_equal(bundle_verify(path, &m, err, sizeof(err)), -1);
	assert_null(m);
	assert_non_null(strstr(err, "schema 2 is newer"));
	assert_non_null(strstr(err, "(schema 1)"));
	assert_int_equal(bundle_load_manifest(path, &m, err, sizeof(err)), -1);
}

static void bundle_verify__missing_or_older_schema__clear_message(void **state)
{
	struct fx *f = *state;
	char path[512], err[256];
	struct json_object *m = NULL;

	assert_int_equal(write_std(f, "v", path, sizeof(path), err, sizeof(err)), 0);
	set_schema(path, -1);
	assert_int_equal(bundle_verify(path, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "manifest.json: no \"schema\" field"));
	set_schema(path, 0);
	assert_int_equal(bundle_verify(path, &m, err, sizeof(err)), 0);
	assert_non_null(m);
	assert_non_null(strstr(err, "schema 0 is older"));
	json_object_put(m);
}

static void bundle_write__tmpfs_full__enospc_and_nothing_left(void **state)
{
	struct fx *f = *state;
	char path[512], err[512], bdir[256];
	size_t len = 512 * 1024;
	char *big = malloc(len);
	struct bundle_file files[] = {
		{ .name = "summary.txt", .data = "hello\n", .len = 6 },
		{ .name = "captures/huge.pcap", .data = big, .len = len },
	};

	assert_non_null(big);
	memset(big, 0x5a, len);
	if (mount_tmpfs(f, "256k") < 0) {
		free(big);
		skip();
	}
	assert_int_equal(bundle_write(f->dir, "full", NULL, files, 2, 0, path, sizeof(path),
				      err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "captures/huge.pcap"));
	assert_non_null(strstr(err, "No space left"));
	snprintf(bdir, sizeof(bdir), "%s/bundles", f->dir);
	assert_int_equal(count_entries(bdir, ""), 0);
	/* room again: a bundle that fits is written */
	files[1].len = 64 * 1024;
	assert_int_equal(bundle_write(f->dir, "full", NULL, files, 2, 0, path, sizeof(path),
				      err, sizeof(err)), 0);
	assert_int_equal(bundle_verify(path, NULL, err, sizeof(err)), 0);
	assert_int_equal(count_entries(bdir, ".tmp-"), 0);
	free(big);
}

static void bundle_write__read_only_state_dir__erofs_and_nothing_left(void **state)
{
	struct fx *f = *state;
	char path[512], err[512], bdir[256];
	struct bundle_file files[] = { { .name = "summary.txt", .data = "x\n", .len = 2 } };

	if (mount_tmpfs(f, "1m") < 0)
		skip();
	snprintf(bdir, sizeof(bdir), "%s/bundles", f->dir);
	assert_int_equal(mkdir(bdir, 0750), 0);
	assert_int_equal(mount(NULL, f->dir, NULL, MS_REMOUNT | MS_RDONLY, NULL), 0);
	assert_int_equal(bundle_write(f->dir, "ro", NULL, files, 1, 0, path, sizeof(path),
				      err, sizeof(err)), -EROFS);
	assert_non_null(strstr(err, ".tmp-ro"));
	assert_non_null(strstr(err, "Read-only"));
	assert_int_equal(count_entries(bdir, ""), 0);
	assert_int_equal(mount(NULL, f->dir, NULL, MS_REMOUNT, NULL), 0);
}

static void bundle_cleanup__tmp_leftover__removed(void **state)
{
	struct fx *f = *state;
	char path[512], err[256], bdir[256];

	assert_int_equal(write_std(f, "keep", path, sizeof(path), err, sizeof(err)), 0);
	snprintf(bdir, sizeof(bdir), "%s/bundles", f->dir);
	run("mkdir -p '%s/.tmp-crashed/captures' && echo x > '%s/.tmp-crashed/captures/a.pcap' "
	    "&& echo y > '%s/.tmp-crashed/summary.txt' && mkdir '%s/.tmp-other'", bdir, bdir, bdir, bdir);
	assert_int_equal(count_entries(bdir, ".tmp-"), 2);
	assert_int_equal(bundle_cleanup(f->dir, err, sizeof(err)), 2);
	assert_int_equal(count_entries(bdir, ".tmp-"), 0);
	assert_int_equal(count_entries(bdir, "keep"), 1);
	assert_int_equal(bundle_cleanup(f->dir, err, sizeof(err)), 0);
}

/* Finding 6: a bare name is the state directory's bundle, never a
 * look-alike in the working directory; ./NAME is the path it says. */
static void bundle_locate__name_in_cwd__state_dir_only(void **state)
{
	struct fx *f = *state;
	char path[512], err[256], out[512], cwd[512], want[512];

	assert_int_equal(write_std(f, "real", path, sizeof(path), err, sizeof(err)), 0);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	/* the working directory holds a look-alike of both names */
	run("mkdir -p '%s/cwd/real' '%s/cwd/planted'", f->dir, f->dir);
	assert_int_equal(chdir(f->dir), 0);
	assert_int_equal(chdir("cwd"), 0);
	snprintf(want, sizeof(want), "%s/bundles/real", f->dir);
	assert_int_equal(bundle_locate(f->dir, "real", out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, want);
	/* only in the working directory: not taken, and the message says so */
	assert_int_equal(bundle_locate(f->dir, "planted", out, sizeof(out), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no bundle planted in"));
	assert_non_null(strstr(err, "./planted"));
	/* a path is what it says */
	assert_int_equal(bundle_locate(f->dir, "./planted", out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "./planted");
	/* names that are not names */
	assert_int_equal(bundle_locate(f->dir, "..", out, sizeof(out), err, sizeof(err)), -1);
	assert_int_equal(bundle_locate(f->dir, "", out, sizeof(out), err, sizeof(err)), -1);
	/* a symbolic link in bundles/ is no bundle */
	run("ln -s /etc '%s/bundles/link'", f->dir);
	assert_int_equal(bundle_locate(f->dir, "link", out, sizeof(out), err, sizeof(err)), -1);
	assert_int_equal(chdir(cwd), 0);
}

static void list_cb(const char *path, struct json_object *m, uint64_t bytes, void *arg)
{
	char *seen = arg;
	const char *base = strrchr(path, '/');

	assert_non_null(m);
	assert_true(bytes > 3000);
	strcat(seen, base ? base + 1 : path);
	strcat(seen, " ");
}

static void list_cb_any(const char *path, struct json_object *m, uint64_t bytes, void *arg)
{
	const char *base = strrchr(path, '/');

	(void)m;
	(void)bytes;
	strcat(arg, base ? base + 1 : path);
	strcat(arg, " ");
}

/* The bundles of f, oldest first, are n and named names ("A B "). */
static void assert_listed(struct fx *f, void (*cb)(const char *, struct json_object *, uint64_t,
						   void *), int n, const char *names)
{
	char seen[2048] = "";

	assert_int_equal(bundle_list(f->dir, cb, seen), n);
	assert_string_equal(seen, names);
}

static void bundle_retention__five_bundles_max_three__oldest_two_removed(void **state)
{
	struct fx *f = *state;
	char path[512], err[256];
	static const char *names[] = { "20260101T000005Z-h-p-v", "20260101T000001Z-h-p-v",
				       "20260101T000003Z-h-p-v", "20260101T000002Z-h-p-v",
				       "20260101T000004Z-h-p-v" };

	for (int i = 0; i < 5; i++)
		assert_int_equal(write_std(f, names[i], path, sizeof(path), err, sizeof(err)), 0);
	assert_listed(f, list_cb, 5, "20260101T000001Z-h-p-v 20260101T000002Z-h-p-v "
		      "20260101T000003Z-h-p-v 20260101T000004Z-h-p-v 20260101T000005Z-h-p-v ");
	assert_int_equal(bundle_retention(f->dir, BUNDLE_POOL_OWN, 3, 0), 2);
	assert_listed(f, list_cb, 3, "20260101T000003Z-h-p-v 20260101T000004Z-h-p-v "
		      "20260101T000005Z-h-p-v ");
	/* a byte budget smaller than the newest alone: only the newest stays */
	assert_int_equal(bundle_retention(f->dir, BUNDLE_POOL_OWN, 0, 100), 2);
	assert_listed(f, list_cb, 1, "20260101T000005Z-h-p-v ");
	assert_int_equal(bundle_retention(f->dir, BUNDLE_POOL_OWN, 1, 1), 0);
}

static int write_peer(struct fx *f, const char *name, const char *trigger)
{
	struct json_object *m = json_object_new_object();
	struct bundle_file file = { .name = "summary.txt", .data = "peer\n", .len = 5 };
	char path[512], err[256];
	int rc;

	json_object_object_add(m, "trigger", json_object_new_string(trigger));
	rc = bundle_write(f->dir, name, m, &file, 1, 0, path, sizeof(path), err, sizeof(err));
	json_object_put(m);
	return rc;
}

/* Issue 34 finding 4: peer snapshots (as many as an authentic peer's
 * notices make) never evict this host's own bundles, older or not; they
 * keep a pool of their own, the oldest of it going first. A bundle whose
 * name merely ends in "peer-snapshot" but whose manifest says otherwise
 * is this host's. */
static void bundle_retention__peer_snapshots__never_evict_own_bundles(void **state)
{
	struct fx *f = *state;
	char path[512], err[256], name[96];

	assert_int_equal(write_std(f, "20260101T000001Z-h-p-v", path, sizeof(path), err, sizeof(err)), 0);
	assert_int_equal(write_std(f, "20260101T000002Z-h-p-v", path, sizeof(path), err, sizeof(err)), 0);
	assert_int_equal(write_peer(f, "20260101T000003Z-h-p-peer-snapshot", "stall"), 0);
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "20260101T0001%02dZ-h-p-peer-snapshot", i);
		assert_int_equal(write_peer(f, name, "peer-snapshot"), 0);
		assert_int_equal(bundle_retention(f->dir, BUNDLE_POOL_PEER, 2, 0), i >= 2);
	}
	/* a second bundle of the same second: "-2" */
	assert_int_equal(write_peer(f, "20260101T000109Z-h-p-peer-snapshot", "peer-snapshot"), 0);
	assert_int_equal(bundle_retention(f->dir, BUNDLE_POOL_PEER, 2, 0), 1);
	assert_int_equal(bundle_retention(f->dir, BUNDLE_POOL_PEER, 1, 1), 1);
	assert_listed(f, list_cb_any, 4, "20260101T000001Z-h-p-v 20260101T000002Z-h-p-v "
		      "20260101T000003Z-h-p-peer-snapshot 20260101T000109Z-h-p-peer-snapshot-2 ");
	/* this host's pool: three of its own (one named like a snapshot),
	 * the snapshot not counted, never removed */
	assert_int_equal(bundle_retention(f->dir, BUNDLE_POOL_OWN, 1, 0), 2);
	assert_listed(f, list_cb_any, 2, "20260101T000003Z-h-p-peer-snapshot "
		      "20260101T000109Z-h-p-peer-snapshot-2 ");
}

/* A snapshot of peer origin (its manifest as the daemon writes it:
 * "trigger", then "peer"), padded to pad bytes of manifest. */
static void write_snap(struct fx *f, const char *name, const char *origin, size_t pad)
{
	struct json_object *m = json_object_new_object(), *pe = json_object_new_object();
	struct bundle_file file = { .name = "summary.txt", .data = "peer\n", .len = 5 };
	char path[512], err[256], *big = NULL;

	json_object_object_add(m, "trigger", json_object_new_string("peer-snapshot"));
	json_object_object_add(pe, "origin_peer", json_object_new_string(origin));
	json_object_object_add(pe, "origin_host", json_object_new_string(origin));
	json_object_object_add(m, "peer", pe);
	if (pad) {
		big = malloc(pad + 1);
		assert_non_null(big);
		memset(big, 'x', pad);
		big[pad] = 0;
		json_object_object_add(m, "facts", json_object_new_string(big));
	}
	assert_int_equal(bundle_write(f->dir, name, m, &file, 1, 0, path, sizeof(path), err,
				      sizeof(err)), 0);
	json_object_put(m);
	free(big);
}

/* Review of issue 34's fix, 2: a bundle named like a peer snapshot whose
 * manifest cannot be read (missing, not a file, not JSON, no trigger
 * where the daemon writes it) counts in neither pool and is never
 * removed: it was counted as this host's, so this host's retention
 * removed one more of its own bundles. A snapshot's manifest is read
 * only as far as its first members: one over the manifest limit still
 * counts as a snapshot, not as this host's. */
static void bundle_retention__manifest_in_doubt__neither_pool_kept(void **state)
{
	struct fx *f = *state;
	char path[512], err[256], p[700];
	static const char *own[] = { "20260101T000001Z-h-p-v", "20260101T000005Z-h-p-v",
				     "20260101T000009Z-h-p-v" };
	int fd;

	for (int i = 0; i < 3; i++)
		assert_int_equal(write_std(f, own[i], path, sizeof(path), err, sizeof(err)), 0);
	/* no manifest; a manifest that is a directory; one that is no JSON;
	 * one whose trigger is not within the bytes read */
	run("mkdir -p %s/bundles/20260101T000002Z-h-p-peer-snapshot", f->dir);
	run("mkdir -p %s/bundles/20260101T000003Z-h-p-peer-snapshot/manifest.json", f->dir);
	run("mkdir -p %s/bundles/20260101T000004Z-h-p-peer-snapshot && printf '[1,' > "
	    "%s/bundles/20260101T000004Z-h-p-peer-snapshot/manifest.json", f->dir, f->dir);
	run("mkdir -p %s/bundles/20260101T000006Z-h-p-peer-snapshot && { printf '{\"a\": \"'; "
	    "head -c 8000 /dev/zero | tr '\\0' x; printf '\", \"trigger\": \"stall\"}'; } > "
	    "%s/bundles/20260101T000006Z-h-p-peer-snapshot/manifest.json", f->dir, f->dir);
	/* a snapshot whose manifest is over the limit of a whole read (32 MiB) */
	write_snap(f, "20260101T000007Z-h-p-peer-snapshot", "a", 0);
	snprintf(p, sizeof(p), "%s/bundles/20260101T000007Z-h-p-peer-snapshot/manifest.json", f->dir);
	fd = open(p, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 33 << 20), 0);
	close(fd);
	/* this host's three are within its limit of three: nothing removed */
	assert_int_equal(bundle_retention(f->dir, BUNDLE_POOL_OWN, 3, 0), 0);
	/* nor by the peer pool's retention, but the one snapshot it holds */
	write_snap(f, "20260101T000008Z-h-p-peer-snapshot", "a", 0);
	assert_int_equal(bundle_retention(f->dir, BUNDLE_POOL_PEER, 1, 0), 1);
	assert_listed(f, list_cb_any, 8, "20260101T000001Z-h-p-v 20260101T000002Z-h-p-peer-snapshot "
		      "20260101T000003Z-h-p-peer-snapshot 20260101T000004Z-h-p-peer-snapshot "
		      "20260101T000005Z-h-p-v 20260101T000006Z-h-p-peer-snapshot "
		      "20260101T000008Z-h-p-peer-snapshot 20260101T000009Z-h-p-v ");
	assert_int_equal(bundle_retention(f->dir, BUNDLE_POOL_OWN, 2, 0), 1);
	assert_int_equal(bundle_retention(f->dir, BUNDLE_POOL_PEER, 1, 0), 0);
	assert_listed(f, list_cb_any, 7, "20260101T000002Z-h-p-peer-snapshot "
		      "20260101T000003Z-h-p-peer-snapshot 20260101T000004Z-h-p-peer-snapshot "
		      "20260101T000005Z-h-p-v 20260101T000006Z-h-p-peer-snapshot "
		      "20260101T000008Z-h-p-peer-snapshot 20260101T000009Z-h-p-v ");
}

/* Review of issue 34's fix, 4: the peer pool gives way by the peer
 * holding the most, its oldest first: a peer whose notices keep coming
 * cycles out its own snapshots, not another peer's older one. By bytes
 * when the pool is over its bytes only. */
static void bundle_retention__peer_pool__the_peer_holding_most_gives_way(void **state)
{
	struct fx *f = *state;
	char name[96];

	write_snap(f, "20260101T000100Z-h-p-peer-snapshot", "a", 0);
	for (int i = 1; i <= 4; i++) {
		snprintf(name, sizeof(name), "20260101T00010%dZ-h-p-peer-snapshot", i);
		write_snap(f, name, "b", 0);
	}
	assert_int_equal(bundle_retention(f->dir, BUNDLE_POOL_PEER, 3, 0), 2);
	assert_listed(f, list_cb_any, 3, "20260101T000100Z-h-p-peer-snapshot "
		      "20260101T000103Z-h-p-peer-snapshot 20260101T000104Z-h-p-peer-snapshot ");
	/* over the bytes: c holds one large snapshot, more bytes than b's two */
	write_snap(f, "20260101T000090Z-h-p-peer-snapshot", "c", 200000);
	write_snap(f, "20260101T000105Z-h-p-peer-snapshot", "a", 0);
	assert_int_equal(bundle_retention(f->dir, BUNDLE_POOL_PEER, 0, 150000), 1);
	assert_listed(f, list_cb_any, 4, "20260101T000100Z-h-p-peer-snapshot "
		      "20260101T000103Z-h-p-peer-snapshot 20260101T000104Z-h-p-peer-snapshot "
		      "20260101T000105Z-h-p-peer-snapshot ");
}

static void bundle_name__hostile_parts__sanitised(void **state)
{
	char buf[256];

	(void)state;
	/* 2026-10-02 11:50:03 UTC */
	bundle_name(buf, sizeof(buf), 1790941803ull * 1000000000ull + 5, "scan.lab", "srv", "port-drop");
	assert_string_equal(buf, "20261002T115003Z-scan.lab-srv-port-drop");
	bundle_name(buf, sizeof(buf), 0, "../../etc", "a/b c", "");
	assert_string_equal(buf, "19700101T000000Z-_._.._etc-a_b_c-unknown");
	assert_null(strchr(buf, '/'));
	bundle_name(buf, 20, 0, "h", "p", "v");
	assert_int_equal(strlen(buf), 19);
}

static struct json_object *crafted_manifest(void)
{
	static const char txt[] =
	"{ \"host\": \"scan\", \"kernel\": \"5.14.0-687.44.1.el9_8\", \"trigger\": \"stall\","
	"  \"incident_id\": 3, \"port\": \"srv\", \"opened_real_ns\": 1790941803000000000,"
	"  \"ports\": { \"srv\": { \"interface\": \"mlxB\", \"netns\": \"bench-srv\","
	"     \"driver\": \"mlx5_core\", \"firmware\": \"14.17.1010\", \"psid\": \"MT_2420110034\" } },"
	"  \"verdict\": { \"verdict\": \"port-drop\", \"rule\": \"port-drop\","
	"     \"explanation\": \"srv: 22 frames counted at the port and not at the vport in 0.4s\","
	"     \"action\": \"receive-filter reprogram (promiscuous toggle) releases it; check firmware 14.17.1010\","
	"     \"terms\": [ { \"expr\": \"gap >= 2 and held == 0 and ping.ok\", \"value\": true,"
	"                    \"values\": { \"gap\": 22, \"held\": 0, \"ping.ok\": true } } ],"
	"     \"not\": [ { \"verdict\": \"buffer-drop\", \"rule\": \"buffer-drop\", \"failed\": \"drops > 0\","
	"                  \"value\": false, \"values\": { \"drops\": 0 } },"
	"                { \"verdict\": \"engine-blocked\", \"failed\": \"any(starved)\", \"value\": null,"
	"                  \"values\": {}, \"unknown\": { \"thread.state\": \"no thread facts\" } } ] },"
	"  \"facts\": { \"schema\": 1, \"port\": \"srv\","
	"     \"ports\": { \"srv\": { \"profile\": \"mlx5\", \"link_up\": true, \"stall\": { \"span_s\": 0.4,"
	"        \"counters\": { \"rx_packets_phy\": 22, \"rx_vport_unicast_packets\": 0, \"rx_out_of_buffer\": 0 } } } },"
	"     \"flows\": { \"stalled\": 4, \"progressing\": 28, \"held\": { \"unsent\": 0, \"unread\": 0, \"staged\": 0 },"
	"        \"list\": [ { \"tuple\": \"10.0.0.1:5000->10.0.0.2:6000\", \"src\": \"engine\", \"waited_ms\": 812,"
	"                      \"unsent\": 0, \"unread\": 0, \"staged\": 0 } ] },"
	"     \"pings\": [ { \"from\": \"cli\", \"to\": \"srv\", \"sent\": 3, \"received\": 3 } ],"
	"     \"captures\": [ { \"port\": \"srv\", \"promisc\": true, \"frames\": 0, \"transition\": true } ] },"
	"  \"release\": { \"released\": true, \"action\": \"promisc-capture\", \"after_ms\": 12.5 },"
	"  \"steps\": [ { \"step\": \"snapshot\", \"port\": \"srv\", \"start_ms\": 0, \"end_ms\": 3.2, \"outcome\": \"ok\" },"
	"               { \"step\": \"capture\", \"port\": \"srv\", \"start_ms\": 410, \"end_ms\": 900,"
	"                 \"outcome\": \"ok\", \"note\": \"promiscuous on\" } ] }";

	return json_tokener_parse(txt);
}

static void bundle_summary__port_drop__verdict_not_and_missing_parts(void **state)
{
	struct json_object *m = crafted_manifest();
	char *s;

	(void)state;
	assert_non_null(m);
	s = bundle_summary(m);
	assert_non_null(s);
	assert_non_null(strstr(s, "# nicstalld: port-drop on port srv, 2026-10-02 11:50:03 UTC"));
	assert_non_null(strstr(s, "## What it is\n"));
	/* sentences for people: the terms are classify --explain's */
	assert_non_null(strstr(s, "Rule port-drop matched (`nicstallctl classify BUNDLE --explain`"));
	assert_null(strstr(s, "gap = 22"));
	assert_non_null(strstr(s, "## What it is not\n"));
	assert_non_null(strstr(s, "**Not buffer-drop:** rule buffer-drop does not hold (it gives no "
				  "sentence: classify --explain shows the term)."));
	assert_null(strstr(s, "`drops > 0`"));
	assert_non_null(strstr(s, "**Not decided: engine-blocked.**"));
	assert_non_null(strstr(s, "could not be decided: no thread facts"));
	assert_non_null(strstr(s, "driver mlx5_core, firmware 14.17.1010, PSID MT_2420110034"));
	assert_non_null(strstr(s, "rx_packets_phy +22"));
	assert_non_null(strstr(s, "1 connection stalled, 28 other connection(s) of the ports progressing"));
	assert_non_null(strstr(s, "cli -> srv: 3 of 3 echo requests answered"));
	assert_non_null(strstr(s, "0 frames, promiscuous, with a promiscuous transition"));
	assert_non_null(strstr(s, "Released by promisc-capture, 12.5 ms after the action."));
	assert_non_null(strstr(s, "promiscuous on"));
	/* what is missing is said to be missing */
	assert_non_null(strstr(s, "Journal: not read for this bundle."));
	assert_non_null(strstr(s, "Threads of the flows' processes: not recorded."));
	assert_non_null(strstr(s, "## Recommended action\n\nreceive-filter reprogram"));
	free(s);
	json_object_put(m);
}

static void bundle_summary__empty_manifest__says_missing(void **state)
{
	struct json_object *m = json_object_new_object();
	char *s = bundle_summary(m);

	(void)state;
	assert_non_null(s);
	assert_non_null(strstr(s, "no verdict"));
	assert_non_null(strstr(s, "the verdict is missing"));
	assert_non_null(strstr(s, "Flows: not recorded."));
	assert_non_null(strstr(s, "Release: not recorded."));
	assert_non_null(strstr(s, "No step timeline recorded."));
	assert_null(strstr(s, "Released by"));
	free(s);
	s = bundle_summary(NULL);
	assert_non_null(s);
	free(s);
	json_object_put(m);
}

static void bundle_of_incident__origin_peers_and_hostile__linked_only(void **state)
{
	struct json_object *origin = json_tokener_parse(
		"{\"host\": \"rank0\", \"incident_id\": 12, \"peers\": {"
		" \"rank1\": {\"host\": \"rank1\", \"bundle\": \"B1\", \"answered\": true},"
		" \"rank3\": {\"answered\": false}, \"x\": 5 }}");
	struct json_object *peer = json_tokener_parse(
		"{\"host\": \"rank1\", \"incident_id\": 12, \"peer\": {\"origin_host\": \"rank0\","
		" \"incident_id\": 12}}");
	struct json_object *other = json_tokener_parse(
		"{\"host\": \"rank0\", \"incident_id\": 13}");
	struct json_object *hostile = json_tokener_parse(
		"{\"host\": 7, \"incident_id\": \"12\", \"peer\": {\"origin_host\": [], \"incident_id\": \"12\"}}");
	struct json_object *a;
	char host[64], err[256];
	uint64_t id;

	(void)state;
	assert_int_equal(bundle_incident_parse("rank0:12", host, sizeof(host), &id, err, sizeof(err)), 0);
	assert_string_equal(host, "rank0");
	assert_true(id == 12);
	assert_int_equal(bundle_incident_parse("fd00::1:7", host, sizeof(host), &id, err, sizeof(err)), 0);
	assert_string_equal(host, "fd00::1");
	assert_int_equal(bundle_incident_parse("rank0", host, sizeof(host), &id, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "write HOST:ID"));
	assert_int_equal(bundle_incident_parse("rank0:x1", host, sizeof(host), &id, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'x1' is not a positive number"));
	assert_int_equal(bundle_incident_parse(":3", host, sizeof(host), &id, err, sizeof(err)), -1);
	assert_int_equal(bundle_incident_parse("rank0:-3", host, sizeof(host), &id, err, sizeof(err)), -1);

	assert_int_equal(bundle_of_incident(origin, "rank0", 12), 1);
	assert_int_equal(bundle_of_incident(peer, "rank0", 12), 1);
	/* a peer's bundle is of the origin's incident, not of its own host's */
	assert_int_equal(bundle_of_incident(peer, "rank1", 12), 0);
	assert_int_equal(bundle_of_incident(other, "rank0", 12), 0);
	assert_int_equal(bundle_of_incident(hostile, "rank0", 12), 0);
	assert_int_equal(bundle_of_incident(NULL, "rank0", 12), 0);

	a = bundle_incident_announced(origin);
	assert_int_equal(json_object_array_length(a), 1);
	assert_string_equal(json_object_get_string(json_object_object_get(
				    json_object_array_get_idx(a, 0), "bundle")), "B1");
	json_object_put(a);
	a = bundle_incident_announced(peer);
	assert_int_equal(json_object_array_length(a), 0);
	json_object_put(a);
	json_object_put(origin);
	json_object_put(peer);
	json_object_put(other);
	json_object_put(hostile);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bundle_of_incident__origin_peers_and_hostile__linked_only),
		cmocka_unit_test_setup_teardown(bundle_write__several_files__sha256sum_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_write__existing_name__unique_suffix, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_write__traversal_names__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_write__source_over_max_copy__truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_verify__intact__passes, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_verify__byte_changed__names_file, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_verify__file_deleted__missing, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_verify__file_added__not_in_sums, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_verify__symlink_and_fifo__refused_without_hanging, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_read_file__symlink_and_fifo__refused_without_hanging, setup, teardown),
		cmocka_unit_test_setup_teardown(cmd_show__c1_in_summary__replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(nicstallctl_bundles__c1_in_manifest__replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_verify__newer_schema__refused_naming_versions, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_verify__missing_or_older_schema__clear_message, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_write__tmpfs_full__enospc_and_nothing_left, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_write__read_only_state_dir__erofs_and_nothing_left, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_cleanup__tmp_leftover__removed, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_locate__name_in_cwd__state_dir_only, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_retention__five_bundles_max_three__oldest_two_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_retention__peer_snapshots__never_evict_own_bundles, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_retention__manifest_in_doubt__neither_pool_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_retention__peer_pool__the_peer_holding_most_gives_way, setup, teardown),
		cmocka_unit_test(bundle_name__hostile_parts__sanitised),
		cmocka_unit_test(bundle_summary__port_drop__verdict_not_and_missing_parts),
		cmocka_unit_test(bundle_summary__empty_manifest__says_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
