/* bpflog: libbpf's messages through the daemon's log. See bpflog.h. */
#include "lib/bpflog.h"

#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"

static int bl_set, bl_quiet;

static int bl_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	int pri = lvl == LIBBPF_WARN && !bl_quiet ? LOG_WARNING : LOG_DEBUG;
	char buf[1024];
	size_t n;

	if (pri > log_get_level())
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	/* Netlink refusals we expect (qdisc exists, no such filter) or report
	 * ourselves with the interface named: keep them at debug. */
	if (strstr(buf, "Kernel error message:"))
		pri = LOG_DEBUG;
	if (pri > log_get_level())
		return 0;
	log_msg(pri, "%s%s", strncmp(buf, "libbpf: ", 8) ? "libbpf: " : "", buf);
	return 0;
}

void bpflog_init(void)
{
	if (!bl_set) {
		libbpf_set_print(bl_print);
		bl_set = 1;
	}
}

void bpflog_quiet(int on)
{
	bl_quiet = on;
}
