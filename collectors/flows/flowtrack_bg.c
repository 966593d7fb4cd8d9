/* flowtrack_bg: a change of the tracker's hooks made by a thread, so that
 * the event loop does not wait for the kernel's grace periods. See
 * flowtrack_api.h, flowtrack_set_hooked_bg (in flowtrack.c, which gives
 * the change to make). */
#include "collectors/flows/flowtrack_int.h"

static void *ft_bg_main(void *arg)
{
	struct flowtrack *ft = arg;

	/* the port's namespace is entered by this thread alone (setns(2)
	 * moves the calling thread) */
	ft->bg_rc = ft->bg_fn(ft, ft->bg_on, ft->bg_err, sizeof(ft->bg_err));
	__atomic_store_n(&ft->bg_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

int ft_bg_start(struct flowtrack *ft, int on, ft_change_fn fn)
{
	int rc;

	ft->bg_on = on;
	ft->bg_fn = fn;
	ft->bg_rc = 0;
	ft->bg_err[0] = '\0';
	ft->bg_done = 0;
	rc = pthread_create(&ft->bg_th, NULL, ft_bg_main, ft);
	if (!rc)
		ft->bg_busy = 1;
	return rc;
}

int ft_bg_done(const struct flowtrack *ft)
{
	return !ft->bg_busy || __atomic_load_n(&ft->bg_done, __ATOMIC_ACQUIRE);
}

void ft_bg_join(struct flowtrack *ft)
{
	if (!ft->bg_busy)
		return;
	pthread_join(ft->bg_th, NULL);
	ft->bg_busy = 0;
	if (ft->bg_rc == 0)
		ft->hooked = ft->bg_on;
}
