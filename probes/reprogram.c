/* reprogram: promiscuous off/on toggle through rtnetlink. */
#include "probes/reprogram.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/rtnl.h"
#include "lib/util.h"

#include <net/if.h>
#include <stdio.h>

int reprogram_toggle(int nsfd, const char *ifname, struct json_object *o,
		     char *err, size_t errlen)
{
	char e[256], seq[128];
	unsigned orig, first;
	struct nl_link l;

	if (nl_link_get(nsfd, ifname, 0, &l, e, sizeof(e)) < 0) {
		util_errf(err, errlen, "%s", e);
		return -1;
	}
	if (!(l.flags & IFF_UP) || !(l.flags & IFF_RUNNING)) {
		util_errf(err, errlen, "link %s is down", ifname);
		return -1;
	}
	orig = l.flags & IFF_PROMISC;
	first = orig ? 0 : IFF_PROMISC;
	snprintf(seq, sizeof(seq), "promisc %s then %s", first ? "on" : "off", first ? "off" : "on");
	jx_add_str(o, "sequence", seq);
	jx_add_bool(o, "was_promisc", orig);
	jx_add_u64(o, "start_mono_ns", loop_mono_ns());
	if (nl_link_set_flags(nsfd, l.ifindex, first, IFF_PROMISC, e, sizeof(e)) < 0 ||
	    nl_link_set_flags(nsfd, l.ifindex, orig, IFF_PROMISC, e, sizeof(e)) < 0) {
		char e2[256];

		nl_link_set_flags(nsfd, l.ifindex, orig, IFF_PROMISC, e2, sizeof(e2));
		util_errf(err, errlen, "kernel refused: %s", e);
		return -1;
	}
	jx_add_u64(o, "end_mono_ns", loop_mono_ns());
	if (nl_link_get(nsfd, ifname, 0, &l, e, sizeof(e)) == 0)
		jx_add_bool(o, "restored", (l.flags & IFF_PROMISC) == orig);
	return 0;
}
