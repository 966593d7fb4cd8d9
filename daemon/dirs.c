/* dirs: state_dir and run_dir checks (see dirs.h). */
#include "daemon/dirs.h"
#include "daemon/conf.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int dirs_check(const struct conf *c, char *err, size_t errlen)
{
	char e[PATH_MAX + 200];
	int fd;

	fd = fsu_private_dir(c->state_dir, 0750, e, sizeof(e));
	if (fd < 0) {
		util_errf(err, errlen, "state_dir %s: %s", c->state_dir, e);
		return -1;
	}
	close(fd);
	fd = fsu_private_dir(c->run_dir, 0755, e, sizeof(e));
	if (fd < 0) {
		util_errf(err, errlen, "run_dir %s: %s", c->run_dir, e);
		return -1;
	}
	close(fd);
	return 0;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n > t && !strcmp(s + n - t, tail);
}

/* What investigations write there: captures "invN-PORT-....pcap"
 * (observe.c) and Onload stack dumps "invN-onload-stackM-WHEN.txt"
 * (evid_flows.c). */
static int is_work_file(const char *name)
{
	return !strncmp(name, "inv", 3) &&
	       (ends_with(name, ".pcap") || (strstr(name, "-onload-stack") &&
					     ends_with(name, ".txt")));
}

int dirs_clean_work(const char *state_dir)
{
	char dir[PATH_MAX + 16], e[PATH_MAX + 200];
	struct dirent *de;
	int fd, n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/work", state_dir);
	if (access(dir, F_OK) < 0)
		return 0;
	fd = fsu_private_dir(dir, 0750, e, sizeof(e));
	if (fd < 0) {
		log_warnx("%s", e);
		return 0;
	}
	d = fsu_opendir_fd(fd);
	while (d && (de = readdir(d))) {
		struct stat st;

		if (!is_work_file(de->d_name) ||
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
			continue;
		if (unlinkat(fd, de->d_name, 0) == 0)
			n++;
	}
	if (d)
		closedir(d);
	close(fd);
	return n;
}
