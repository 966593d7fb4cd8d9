/* emu_pause: link-level flow control on the emulated pair (issue 35,
 * verdict flow-control). `pause PORT MS`: PORT's peer sends it 802.3x
 * pause frames for MS milliseconds (a global pause: every priority), so
 * PORT's transmitter stops. Frames are not lost, they wait: a tbf qdisc at
 * 8 bit/s holds what the port sends (on a real port the NIC's queue fills,
 * the driver stops the netdev queue and the frames back up in the root
 * qdisc), and at the end the same qdisc at 100 Gbit/s sends them (the
 * limit is unchanged, so tbf_change() keeps its queue). A frame already
 * in flight when the first XOFF arrives still leaves (tbf's first burst).
 * The tc command is run and waited for in the emulator's loop: a test
 * bed's few milliseconds, which delay one publication. PAUSE frames are
 * MAC control frames too (rx_mac_control_phy, tx_mac_control_phy).
 *
 * The counters are mlx5's (en_stats.c pport_per_prio_pfc_stats_desc with
 * "global", pport_802_3_stats_desc a_pause_mac_ctrl_frames_*): PORT counts
 * the pause frames it received (rx_global_pause, rx_pause_ctrl_phy), the
 * time it was paused in microseconds (rx_global_pause_duration) and one
 * transition from XOFF to XON at the end (rx_global_pause_transition); its
 * peer counts what it sent (tx_global_pause, tx_pause_ctrl_phy,
 * tx_global_pause_duration). A switch refreshes XOFF before its quanta run
 * out: one frame every PAUSE_REFRESH_US (half of 65535 quanta of 512 bit
 * times at 25 Gbit/s). Nothing counts a drop: there is none. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emuport.h"

#define PAUSE_REFRESH_US 671
#define PAUSE_LIMIT "64mb"      /* the same in both states: the queue stays */

/* tc in the port's namespace (the test bed runs as root; a short exec). */
static int tc_rate(const struct port *p, const char *rate, const char *burst)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execlp("ip", "ip", "netns", "exec", p->netns, "tc", "qdisc", "replace", "dev",
		       p->ifname, "root", "handle", "1:", "tbf", "rate", rate, "burst", burst,
		       "limit", PAUSE_LIMIT, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int pause_start(struct emu *e, struct port *p, uint64_t ms, char *err, size_t len)
{
	uint64_t now = mono_ns();

	(void)e;
	/* a burst of one standard frame: what leaves after XOFF is at most
	 * the frame in flight (a jumbo frame larger than it would be tbf's
	 * drop: the emulated pause is for ports at MTU 1500) */
	if (!p->pause_until && tc_rate(p, "8bit", "1600") < 0) {
		snprintf(err, len, "tc qdisc tbf on %s in %s failed", p->ifname, p->netns);
		return -1;
	}
	if (!p->pause_until) {
		p->pause_last = now;
		p->pause_ep_us = 0;
	}
	p->pause_until = now + ms * 1000000ull;
	logx("port %s: paused by its peer for %llu ms", p->name, (unsigned long long)ms);
	return 0;
}

/* At each tick: the pause's time and frames so far, and its end. */
void pause_tick(struct emu *e, struct port *p)
{
	uint64_t now = mono_ns(), to, us;
	struct port *q = p->peer >= 0 ? &e->p[p->peer] : NULL;

	if (!p->pause_until)
		return;
	to = now < p->pause_until ? now : p->pause_until;
	us = to > p->pause_last ? (to - p->pause_last) / 1000 : 0;
	if (us) {
		/* the frames: one at the start, then one each refresh */
		uint64_t before = p->pause_ep_us, frames;

		p->pause_ep_us += us;
		p->pause_us += us;
		frames = p->pause_ep_us / PAUSE_REFRESH_US + 1 -
			 (before ? before / PAUSE_REFRESH_US + 1 : 0);
		p->pause_frames += frames;
		if (q) {
			q->pause_sent += frames;
			q->pause_sent_us += us;
		}
		p->pause_last += us * 1000;
	}
	if (now >= p->pause_until) {
		p->pause_until = 0;
		p->pause_transitions++;
		if (tc_rate(p, "100gbit", "1600") < 0)
			logx("port %s: tc qdisc tbf back to 100gbit failed: its frames stay held",
			     p->name);
		else
			logx("port %s: pause over (XON): its held frames leave", p->name);
	}
}
