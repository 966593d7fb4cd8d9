/* Unit tests for collectors/flows/vma_parse.c: statistics files on disk (opened
 * safely, read, the reader counter bumped) and the emulated engine
 * (tests/engine/vmaengine.c, which writes through the engines' own
 * headers: libvma, libxlio with and without DEFINED_UTLS, offloaded or on
 * the OS path); images built as in vmaimg.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collectors/flows/vma_parse.h"

#include "vmaimg.h"

/* ---- files ---- */

struct fx {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test_flow_vma.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/vmastat.%d", f->dir, (int)getpid());
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void write_file(const char *path, const unsigned char *b, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	close(fd);
}

static void flow_vma_file__image_on_disk__read_and_bumped_once(void **state)
{
	struct fx *f = *state;
	size_t len;
	unsigned char *img = vma_image(100, &len), *back;
	struct flow_vma_file *vf;
	char err[256] = "";
	uint32_t rc_now;

	vma_put(img, 0, &client);
	p32(img, 0, 41);                        /* reader_counter */
	write_file(f->path, img, len);
	vf = flow_vma_file_open(f->path, 1, err, sizeof(err));
	if (!vf)
		print_error("%s\n", err);
	assert_non_null(vf);
	assert_int_equal(flow_vma_file_pid(vf), getpid());
	assert_int_equal(flow_vma_file_read(vf, &snap, err, sizeof(err)), 0);
	assert_int_equal(snap.n, 1);
	assert_int_equal(snap.reader_counter, 41);
	assert_int_equal(flow_vma_file_bump(vf, 1000000000ull, 100000000ull, err, sizeof(err)), 1);
	/* rate-limited: 50 ms later no write */
	assert_int_equal(flow_vma_file_bump(vf, 1050000000ull, 100000000ull, err, sizeof(err)), 0);
	assert_int_equal(flow_vma_file_bump(vf, 1100000000ull, 100000000ull, err, sizeof(err)), 1);
	flow_vma_file_close(vf);
	/* the counter moved by exactly two, nothing else changed */
	back = malloc(len);
	assert_non_null(back);
	{
		int fd = open(f->path, O_RDONLY);

		assert_true(fd >= 0);
		assert_int_equal(read(fd, back, len), (ssize_t)len);
		close(fd);
	}
	memcpy(&rc_now, back, 4);
	assert_int_equal(rc_now, 43);
	assert_memory_equal(back + 4, img + 4, len - 4);
	free(back);
	free(img);
}

static uint32_t counter_at(const char *path)
{
	uint32_t v = 0;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &v, sizeof(v), 0), (ssize_t)sizeof(v));
	close(fd);
	return v;
}

/* The engine's name swapped under the reader (a symbolic link, a FIFO, a
 * victim file renamed over it): a bump never goes through the name again,
 * only to the inode that was opened and read; a swap before the first
 * bump is refused. */
static void flow_vma_file_bump__name_swapped__only_the_read_file_bumped(void **state)
{
	struct fx *f = *state;
	char old[160], victim[160], tmp[160], err[256] = "";
	size_t len;
	unsigned char *img = vma_image(1, &len);
	struct flow_vma_file *vf;

	snprintf(old, sizeof(old), "%s/old", f->dir);
	snprintf(victim, sizeof(victim), "%s/victim", f->dir);
	snprintf(tmp, sizeof(tmp), "%s/tmp", f->dir);
	p32(img, 0, 7);
	write_file(f->path, img, len);
	write_file(victim, img, len);
	vf = flow_vma_file_open(f->path, 1, err, sizeof(err));
	assert_non_null(vf);
	assert_int_equal(flow_vma_file_read(vf, &snap, err, sizeof(err)), 0);
	assert_int_equal(flow_vma_file_bump(vf, 1000000000ull, 100000000ull, err, sizeof(err)), 1);
	assert_int_equal(rename(f->path, old), 0);
	/* a symbolic link to the victim */
	assert_int_equal(symlink(victim, f->path), 0);
	assert_int_equal(flow_vma_file_bump(vf, 1100000000ull, 100000000ull, err, sizeof(err)), 1);
	/* a FIFO (opening it for writing would wait for a reader) */
	assert_int_equal(unlink(f->path), 0);
	assert_int_equal(mkfifo(f->path, 0644), 0);
	assert_int_equal(flow_vma_file_bump(vf, 1200000000ull, 100000000ull, err, sizeof(err)), 1);
	/* the victim itself renamed over the name */
	assert_int_equal(unlink(f->path), 0);
	assert_int_equal(link(victim, tmp), 0);
	assert_int_equal(rename(tmp, f->path), 0);
	assert_int_equal(flow_vma_file_bump(vf, 1300000000ull, 100000000ull, err, sizeof(err)), 1);
	flow_vma_file_close(vf);
	assert_int_equal(counter_at(old), 11);
	assert_int_equal(counter_at(victim), 7);

	/* swapped between the open and the first bump: the bump's descriptor
	 * is the read one reopened (fsu_reopen_as), so it goes to the inode
	 * that was read, never to what the name points at now */
	assert_int_equal(unlink(f->path), 0);
	assert_int_equal(rename(old, f->path), 0);
	vf = flow_vma_file_open(f->path, 1, err, sizeof(err));
	assert_non_null(vf);
	assert_int_equal(rename(f->path, old), 0);      /* the read inode, by another name */
	assert_int_equal(link(victim, tmp), 0);
	assert_int_equal(rename(tmp, f->path), 0);
	assert_int_equal(flow_vma_file_bump(vf, 1000000000ull, 100000000ull, err, sizeof(err)), 1);
	flow_vma_file_close(vf);
	assert_int_equal(counter_at(victim), 7);
	assert_int_equal(counter_at(old), 12);
	free(img);
}

static void flow_vma_file_open__fifo__refused(void **state)
{
	struct fx *f = *state;
	char err[256] = "";

	assert_int_equal(mkfifo(f->path, 0644), 0);
	assert_null(flow_vma_file_open(f->path, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "not a regular file"));
}

static void flow_vma_file_open__symlink__refused(void **state)
{
	struct fx *f = *state;
	char real[160], err[256] = "";
	size_t len;
	unsigned char *img = vma_image(1, &len);

	snprintf(real, sizeof(real), "%s/real", f->dir);
	write_file(real, img, len);
	assert_int_equal(symlink(real, f->path), 0);
	assert_null(flow_vma_file_open(f->path, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "symbolic links are refused"));
	free(img);
}

static void flow_vma_file_open__truncated_file__refused(void **state)
{
	struct fx *f = *state;
	unsigned char small[100] = { 0 };
	char err[256] = "";

	write_file(f->path, small, sizeof(small));
	assert_null(flow_vma_file_open(f->path, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "100 bytes"));
}

static void flow_vma_file_read__truncated_after_open__error(void **state)
{
	struct fx *f = *state;
	size_t len;
	unsigned char *img = vma_image(10, &len);
	struct flow_vma_file *vf;
	char err[256] = "";

	write_file(f->path, img, len);
	vf = flow_vma_file_open(f->path, 0, err, sizeof(err));
	assert_non_null(vf);
	assert_int_equal(truncate(f->path, (off_t)len - V_BLOCK), 0);
	assert_int_equal(flow_vma_file_read(vf, &snap, err, sizeof(err)), -EINVAL);
	assert_int_equal(truncate(f->path, 10), 0);
	assert_int_equal(flow_vma_file_read(vf, &snap, err, sizeof(err)), -EFBIG);
	flow_vma_file_close(vf);
	free(img);
}

static void flow_vma_file_open__owner_not_the_pid_user__refused(void **state)
{
	struct fx *f = *state;
	char path[160], err[256] = "";
	size_t len;
	unsigned char *img = vma_image(1, &len);

	if (getuid() != 0)
		skip();
	/* pid 1 runs as root; a file claiming pid 1 owned by nobody is a lie */
	snprintf(path, sizeof(path), "%s/vmastat.1", f->dir);
	write_file(path, img, len);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_null(flow_vma_file_open(path, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "owned by uid 65534"));
	free(img);
}

static void flow_vma_file_open__hard_link__refused(void **state)
{
	struct fx *f = *state;
	char src[160], path[160], err[256] = "";
	size_t len;
	unsigned char *img = vma_image(1, &len);
	struct flow_vma_file *vf;

	if (getuid() != 0)
		skip();
	/* root's file, linked under pid 1's name (pid 1 runs as root): the
	 * owner matches, the second name gives it away */
	snprintf(src, sizeof(src), "%s/roots-own", f->dir);
	snprintf(path, sizeof(path), "%s/vmastat.1", f->dir);
	write_file(src, img, len);
	assert_int_equal(link(src, path), 0);
	assert_null(flow_vma_file_open(path, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "2 links to the file"));
	assert_int_equal(unlink(src), 0);
	vf = flow_vma_file_open(path, 1, err, sizeof(err));
	assert_non_null(vf);
	flow_vma_file_close(vf);
	unlink(path);
	free(img);
}

/* ---- the emulated engine (tests/engine/vmaengine.c) ---- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			close(fd);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static void stop_child(pid_t pid)
{
	int st;

	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
}

/* Start the emulated engine (tests/engine/vmaengine.c, built beside the
 * tests' directory): a server on 127.0.0.1:port, then its client, both
 * with --dir f->dir, --interval-us 2000 (the client's) and the options in
 * both (NULL-ended), the server also those in srv. Skips the test when
 * the engine is not built. */
static void engines_start(const struct fx *f, int port, const char *const both[],
			  const char *const srv[], pid_t *sp, pid_t *cp)
{
	char exe[PATH_MAX], eng[PATH_MAX + 16], ep[32];
	const char *av[32];
	ssize_t n;
	int i;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	snprintf(eng, sizeof(eng), "%s/../vmaengine", dirname(exe));
	if (access(eng, X_OK) != 0) {
		print_message("skipped: %s not built (make)\n", eng);
		skip();
	}
	snprintf(ep, sizeof(ep), "127.0.0.1:%d", port);
	for (int client = 0; client < 2; client++) {
		i = 0;
		av[i++] = eng;
		av[i++] = "--role";
		av[i++] = client ? "client" : "server";
		av[i++] = "--bind";
		av[i++] = client ? "127.0.0.1:0" : ep;
		if (client) {
			av[i++] = "--peer";
			av[i++] = ep;
			av[i++] = "--interval-us";
			av[i++] = "2000";
		}
		av[i++] = "--dir";
		av[i++] = f->dir;
		for (int k = 0; both[k]; k++)
			av[i++] = both[k];
		for (int k = 0; !client && srv[k]; k++)
			av[i++] = srv[k];
		av[i] = NULL;
		assert_true(i < 32);
		if (client) {
			*cp = spawn((char *const *)av);
		} else {
			*sp = spawn((char *const *)av);
			usleep(100000);
		}
	}
}

static void flow_vma_engine__reader_bumps_then_stall__publishing_and_waiting(void **state)
{
	static const char *const both[] = { "--duration", "20", NULL };
	static const char *const srv[] = { "--stall-after", "200", NULL };
	struct fx *f = *state;
	char cli_path[160], err[256];
	struct flow_vma_file *vf = NULL;
	struct flow_vma_track t = { 0 };
	struct flow_obs o;
	pid_t sp, cp;
	int port = 20000 + (int)(getpid() % 20000), stalled = 0, i;
	uint64_t t0;

	engines_start(f, port, both, srv, &sp, &cp);
	snprintf(cli_path, sizeof(cli_path), "%s/vmastat.%d", f->dir, (int)cp);
	for (i = 0; i < 100 && !vf; i++) {
		usleep(20000);
		vf = flow_vma_file_open(cli_path, 1, err, sizeof(err));
	}
	assert_non_null(vf);
	/* nobody bumped: the socket block is there, its counters unpublished */
	usleep(300000);
	assert_int_equal(flow_vma_file_read(vf, &snap, err, sizeof(err)), 0);
	assert_int_equal(snap.n, 1);
	assert_int_equal(snap.s[0].tx_packets, 0);
	/* a bump: copied within the 10 ms publisher period */
	assert_int_equal(flow_vma_file_bump(vf, mono_ns(), 100000000ull, err, sizeof(err)), 1);
	usleep(50000);
	assert_int_equal(flow_vma_file_read(vf, &snap, err, sizeof(err)), 0);
	assert_true(snap.s[0].tx_packets > 0);
	assert_int_equal(ntohs(snap.s[0].rport), port);
	/* poll as the daemon would: bump, read, judge; the server stops
	 * answering after 200 requests and the client waits */
	t0 = mono_ns();
	while (mono_ns() - t0 < 5000000000ull && !stalled) {
		uint64_t now = mono_ns();

		flow_vma_file_bump(vf, now, 100000000ull, err, sizeof(err));
		usleep(100000);
		if (flow_vma_file_read(vf, &snap, err, sizeof(err)) == 0 && snap.n == 1) {
			flow_vma_obs(&snap.s[0], "vma", (int)cp, &t, mono_ns(), &o);
			stalled = flow_live_stalled(&t.live, mono_ns(), 200000000ull);
		}
	}
	assert_true(stalled);
	assert_int_equal(t.live.verdict, FLOW_LIVE_WAITING);
	assert_int_equal(snap.s[0].rx_packets, 200);    /* every answer the server gave */
	assert_int_equal(snap.s[0].tx_packets, 201);
	flow_vma_file_close(vf);
	stop_child(cp);
	stop_child(sp);
	/* the engine removes its file when it ends */
	assert_int_equal(access(cli_path, F_OK), -1);
}

/* The socket inode of fd in process pid, from /proc/PID/fd/FD
 * ("socket:[N]"); 0 when it is not a socket. */
static unsigned long proc_sock_inode(pid_t pid, int fd)
{
	char p[64], l[64];
	unsigned long ino = 0;
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(p, l, sizeof(l) - 1);
	if (n <= 0)
		return 0;
	l[n] = '\0';
	if (sscanf(l, "socket:[%lu]", &ino) != 1)
		return 0;
	return ino;
}

/* One engine variant end to end: a server and a client of --engine name
 * (--path path) on loopback; the client's file is found under the
 * variant's name, parsed with the variant's row, its socket block carries
 * the inode of the client's real socket, and its traffic is seen moving. */
static void engine_round(const struct fx *f, const char *name, const char *path,
			 const char *prefix, const char *release, const char *variant)
{
	const char *const both[] = { "--engine", name, "--path", path, "--duration", "10", NULL };
	static const char *const none[] = { NULL };
	char cli_path[160], err[256];
	struct flow_vma_file *vf = NULL;
	struct flow_vma_track t = { 0 };
	struct flow_obs o;
	pid_t sp, cp;
	int port = 20000 + (int)((getpid() * 7 + name[0] + path[0]) % 20000), i, moving = 0;
	uint64_t t0;

	engines_start(f, port, both, none, &sp, &cp);
	snprintf(cli_path, sizeof(cli_path), "%s/%s.%d", f->dir, prefix, (int)cp);
	for (i = 0; i < 100 && !vf; i++) {
		usleep(20000);
		vf = flow_vma_file_open(cli_path, 1, err, sizeof(err));
	}
	assert_non_null(vf);
	t0 = mono_ns();
	while (mono_ns() - t0 < 3000000000ull && moving < 3) {
		flow_vma_file_bump(vf, mono_ns(), 100000000ull, err, sizeof(err));
		usleep(100000);
		if (flow_vma_file_read(vf, &snap, err, sizeof(err)) == 0 && snap.n == 1 &&
		    flow_vma_obs(&snap.s[0], name, (int)cp, &t, mono_ns(), &o) == FLOW_LIVE_PROGRESS)
			moving++;
	}
	assert_int_equal(moving, 3);
	assert_string_equal(snap.lay->release, release);
	assert_string_equal(snap.lay->variant, variant);
	assert_int_equal(ntohs(snap.s[0].rport), port);
	/* sockinfo's fd2inode(): the client's real socket */
	assert_int_not_equal(snap.s[0].inode, 0);
	assert_int_equal(snap.s[0].inode, proc_sock_inode(cp, snap.s[0].fd));
	assert_int_equal(o.inode, snap.s[0].inode);
	if (!strcmp(path, "os")) {
		assert_int_equal(snap.s[0].offloaded, 0);
		assert_int_equal(snap.s[0].tx_packets + snap.s[0].rx_packets, 0);
		assert_true(snap.s[0].tx_os_packets > 0 && snap.s[0].rx_os_packets > 0);
	} else {
		assert_int_equal(snap.s[0].offloaded, 1);
		assert_int_equal(snap.s[0].tx_os_packets + snap.s[0].rx_os_packets, 0);
		assert_true(snap.s[0].tx_packets > 0 && snap.s[0].rx_packets > 0);
	}
	assert_true(o.tx_msgs > 0 && o.rx_msgs > 0);
	flow_vma_file_close(vf);
	stop_child(cp);
	stop_child(sp);
	assert_int_equal(access(cli_path, F_OK), -1);
}

static void flow_vma_engine__xlio__read_end_to_end(void **state)
{
	engine_round(*state, "xlio", "offload", "xliostat", "libxlio 3.70.2", "");
}

static void flow_vma_engine__xlio_utls__read_end_to_end(void **state)
{
	engine_round(*state, "xlio-utls", "offload", "xliostat", "libxlio 3.70.2", "DEFINED_UTLS");
}

/* Not offloaded: the traffic is on the OS-path counters only, and moving. */
static void flow_vma_engine__vma_os_path__seen_moving(void **state)
{
	engine_round(*state, "vma", "os", "vmastat", "libvma 9.8.84", "");
}

static void flow_vma_engine__xlio_os_path__seen_moving(void **state)
{
	engine_round(*state, "xlio", "os", "xliostat", "libxlio 3.70.2", "");
}

static void flow_vma_engine__vma__inode_of_the_real_socket(void **state)
{
	engine_round(*state, "vma", "offload", "vmastat", "libvma 9.8.84", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(flow_vma_file__image_on_disk__read_and_bumped_once, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_vma_file_bump__name_swapped__only_the_read_file_bumped, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_vma_file_open__fifo__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_vma_file_open__symlink__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_vma_file_open__truncated_file__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_vma_file_read__truncated_after_open__error, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_vma_file_open__hard_link__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_vma_file_open__owner_not_the_pid_user__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_vma_engine__reader_bumps_then_stall__publishing_and_waiting, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_vma_engine__vma__inode_of_the_real_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_vma_engine__xlio__read_end_to_end, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_vma_engine__xlio_utls__read_end_to_end, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_vma_engine__vma_os_path__seen_moving, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_vma_engine__xlio_os_path__seen_moving, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
