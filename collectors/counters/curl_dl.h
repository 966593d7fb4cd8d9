/* curl_dl: libcurl, loaded when the configuration first names an
 * app_metrics endpoint (dlopen), not linked into the daemon. Linked, its
 * dependencies (a TLS stack or two, Kerberos, LDAP, SSH, RTMP, p11-kit:
 * 26 libraries on Debian 12 beside libcurl) cost every daemon about 4 MiB resident and
 * their load-time code whether it scrapes anything or not; most never do.
 * The functions are libcurl's own, called through this table. Not
 * thread-safe (the daemon's one thread). */
#ifndef NICSTALL_CURL_DL_H
#define NICSTALL_CURL_DL_H

/* The options whose use depends on the loaded library's version
 * (src_app.c asks it) are named whether or not this header deprecates
 * them. */
#define CURL_DISABLE_DEPRECATION 1
#include <curl/curl.h>
#include <stddef.h>

struct curl_dl {
	CURLcode (*global_init)(long flags);
	curl_version_info_data *(*version_info)(CURLversion v);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	const char *(*easy_strerror)(CURLcode c);
	void (*easy_cleanup)(CURL *h);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_setopt)(CURLM *m, CURLMoption opt, ...);
	CURLMcode (*multi_add_handle)(CURLM *m, CURL *h);
	CURLMcode (*multi_remove_handle)(CURLM *m, CURL *h);
	CURLMcode (*multi_assign)(CURLM *m, curl_socket_t s, void *p);
	CURLMcode (*multi_socket_action)(CURLM *m, curl_socket_t s, int ev, int *running);
	CURLMsg *(*multi_info_read)(CURLM *m, int *left);
	const char *(*multi_strerror)(CURLMcode c);
	CURLMcode (*multi_cleanup)(CURLM *m);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
	CURLU *(*url)(void);
	CURLUcode (*url_set)(CURLU *u, CURLUPart what, const char *part, unsigned flags);
	CURLUcode (*url_get)(CURLU *u, CURLUPart what, char **part, unsigned flags);
	void (*url_cleanup)(CURLU *u);
	void (*free_str)(void *p);        /* curl_free */
};

/* libcurl's functions, loaded at the first call (libcurl.so.4, then
 * libcurl-gnutls.so.4: the first that loads with every function and is
 * 7.62 or later) and kept; NULL, with why in err ("libcurl could not be
 * loaded: ...", each name's reason), when none can be. A failed load is
 * tried again at the next call (a package installed meanwhile). */
const struct curl_dl *curl_dl(char *err, size_t errlen);
/* Whether libcurl is loaded in this process (status, tests). */
int curl_dl_loaded(void);
/* Tests: the file names tried instead of libcurl's (NULL: libcurl's). */
void curl_dl_test_names(const char *const *names);

#endif
