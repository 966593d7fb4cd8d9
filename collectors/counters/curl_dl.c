/* curl_dl: libcurl loaded at its first use. See curl_dl.h. */
#include "collectors/counters/curl_dl.h"
#include "lib/log.h"
#include "lib/util.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *const default_names[] = { "libcurl.so.4", "libcurl-gnutls.so.4", NULL };
static const char *const *names = default_names;
static struct curl_dl fns;
static void *handle;

/* Each function of the table by its libcurl name and its place. */
static const struct {
	const char *sym;
	size_t off;
} syms[] = {
#define F(field, sym) { sym, offsetof(struct curl_dl, field) }
	F(global_init, "curl_global_init"),
	F(version_info, "curl_version_info"),
	F(easy_init, "curl_easy_init"),
	F(easy_setopt, "curl_easy_setopt"),
	F(easy_getinfo, "curl_easy_getinfo"),
	F(easy_strerror, "curl_easy_strerror"),
	F(easy_cleanup, "curl_easy_cleanup"),
	F(multi_init, "curl_multi_init"),
	F(multi_setopt, "curl_multi_setopt"),
	F(multi_add_handle, "curl_multi_add_handle"),
	F(multi_remove_handle, "curl_multi_remove_handle"),
	F(multi_assign, "curl_multi_assign"),
	F(multi_socket_action, "curl_multi_socket_action"),
	F(multi_info_read, "curl_multi_info_read"),
	F(multi_strerror, "curl_multi_strerror"),
	F(multi_cleanup, "curl_multi_cleanup"),
	F(slist_append, "curl_slist_append"),
	F(slist_free_all, "curl_slist_free_all"),
	F(url, "curl_url"),
	F(url_set, "curl_url_set"),
	F(url_get, "curl_url_get"),
	F(url_cleanup, "curl_url_cleanup"),
	F(free_str, "curl_free"),
#undef F
};

/* One name: loaded, every function found, 7.62 or later (curl_url);
 * 0, or -1 with why in why (appended). */
static int try_one(const char *name, char *why, size_t len)
{
	size_t o = strlen(why);
	const char *e;
	void *h;

	/* RTLD_LOCAL: its symbols stay out of the process's namespace;
	 * RTLD_NOW: a library missing a function fails here, not in a scrape */
	h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		e = dlerror();
		snprintf(why + o, len - o, "%s%s", o ? "; " : "", e ? e : name);
		return -1;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(h, syms[i].sym);

		if (!f) {
			snprintf(why + o, len - o, "%s%s: no %s", o ? "; " : "", name, syms[i].sym);
			goto fail;
		}
		/* POSIX: a function's address from dlsym, as an object pointer */
		memcpy((char *)&fns + syms[i].off, &f, sizeof(f));
	}
	if (fns.version_info(CURLVERSION_NOW)->version_num < 0x073e00) {
		snprintf(why + o, len - o, "%s%s: libcurl %s, 7.62 or later is needed",
			 o ? "; " : "", name, fns.version_info(CURLVERSION_NOW)->version);
		goto fail;
	}
	handle = h;
	return 0;
fail:
	dlclose(h);
	memset(&fns, 0, sizeof(fns));
	return -1;
}

const struct curl_dl *curl_dl(char *err, size_t errlen)
{
	char why[1024] = "";

	if (handle)
		return &fns;
	for (unsigned i = 0; names[i]; i++)
		if (!try_one(names[i], why, sizeof(why))) {
			log_info("app metrics: libcurl %s loaded (%s)",
				 fns.version_info(CURLVERSION_NOW)->version, names[i]);
			return &fns;
		}
	util_errf(err, errlen, "libcurl could not be loaded (%s): install libcurl4 (Debian) "
		  "or libcurl (RPM)", why[0] ? why : "no name to load");
	return NULL;
}

int curl_dl_loaded(void)
{
	return handle != NULL;
}

void curl_dl_test_names(const char *const *n)
{
	names = n ? n : default_names;
}
