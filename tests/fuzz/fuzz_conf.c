/* libFuzzer target: the configuration (conf_load on the input as a file),
 * then what the daemon does with a valid one: every probe command line and
 * the bundle hook are split into words (probe_exec_split), every selector
 * is formatted back. Seeds: systemd/nicstalld.conf.example, the test
 * configurations. */
#include "tests/fuzz/fuzz.h"

#include "collectors/flows/flowsel.h"
#include "daemon/conf.h"
#include "probes/probe_exec.h"

static unsigned reported;

static void report(const char *msg, void *arg)
{
	(void)arg;
	reported += msg[0] != '\0';
}

static void split(const char *line)
{
	char err[256], **argv = NULL;
	int argc = probe_exec_split(line, &argv, err, sizeof(err));

	if (argc > 0) {
		for (int i = 0; i < argc; i++)
			if (!argv[i])
				abort();        /* argc words, then NULL */
		if (argv[argc])
			abort();
		probe_exec_argv_free(argv);
	}
}

FZ_QUIET_INITIALIZE()

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], buf[128];
	struct conf *c = NULL;
	int fd = fz_memfd(data, size, path, sizeof(path));
	int nerr = conf_load(path, &c, report, NULL);

	if (nerr == 0) {
		if (!c)
			abort();
		split(c->bundle_hook);
		for (unsigned i = 0; i < c->nports; i++) {
			const struct port_conf *p = &c->ports[i];

			for (unsigned k = 0; k < p->nprobe; k++)
				split(p->probe[k]);
			struct flow_key k = { .proto = 6, .sport = 11111, .dport = 40000 };

			flow_addr_v4mapped(&k.saddr, "\x0a\x00\x00\x01");
			flow_addr_v4mapped(&k.daddr, "\x0a\x00\x00\x02");
			flow_sel_match(p->sel, p->nsel, &k);
			flow_key_format(&k, buf, sizeof(buf));
		}
		conf_free(c);
	} else if (c) {
		abort();                /* errors leave *out NULL */
	}
	close(fd);
	return 0;
}
