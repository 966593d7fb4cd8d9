/* flowtrack: the tc eBPF flow tracker's loader (userspace API).
 *
 * Two direct-action programs on a port's ingress and egress hooks count
 * frames and bytes of every TCP/UDP flow matching the port's selectors
 * in a bounded LRU map; poll reads the map as FLOW_SRC_BPF observations.
 * Nothing here exits: every failure (old kernel, no BTF, no CAP_BPF, missing
 * interface) comes back as NULL / -errno with a message naming the place. */
#ifndef NICSTALL_FLOWTRACK_API_H
#define NICSTALL_FLOWTRACK_API_H

#include <stddef.h>

#include "collectors/flows/flows.h"

/* How the programs are hooked. tcx: two BPF links (BPF_TCX_INGRESS and
 * BPF_TCX_EGRESS, kernels 6.6 and later), appended after any tcx program
 * already there and before the clsact filters; they live as long as our
 * link file descriptors, so no qdisc is made and a killed daemon leaves
 * nothing. clsact: two tc filters on the clsact qdisc, made when missing
 * (and removed at the end when we made it): grafting that qdisc
 * deactivates the interface for a moment and frames sent then are lost.
 * auto: tcx where the kernel has it, else clsact. */
enum flowtrack_attach_mode {
	FLOWTRACK_AUTO = 0,
	FLOWTRACK_TCX,
	FLOWTRACK_CLSACT,
};

/* Our tc filters (clsact): this handle and priority on both directions.
 * The priority is deliberately late (a large number): another program on
 * the hook (e.g. a test emulator dropping frames) runs first, so the tracker
 * counts what reaches the host. Such a program must return TC_ACT_UNSPEC
 * (not TC_ACT_OK) for frames it passes, or later filters never run. */
#define FLOWTRACK_TC_HANDLE 0x4e53u
#define FLOWTRACK_TC_PRIO 0xff4eu
#define FLOWTRACK_MAX_SEL 8
#define FLOWTRACK_STATE_DIR "/run/nicstalld/tc"

struct flowtrack;

/* Directory for "we created this clsact qdisc" markers, one file per
 * <netns inode>-<ifindex>. Default FLOWTRACK_STATE_DIR; NULL disables markers
 * (a qdisc left by a killed daemon is then never removed). Created 0700. */
void flowtrack_set_state_dir(const char *dir);

/* 0 when this kernel loads and verifies the tracker, else -errno + err. */
int flowtrack_supported(char *err, size_t errlen);

/* Load the tracker and attach it to ifindex in namespace nsfd (-1: ours)
 * the way mode says. sel[0..nsel) (nsel <= FLOWTRACK_MAX_SEL) picks flows;
 * nsel 0 tracks every TCP and UDP flow. max_flows bounds the LRU map (0:
 * 16384). clsact: creates the qdisc when missing (and remembers that, in
 * memory and in the state marker); replaces a stale filter of ours. auto
 * falls back to clsact when the tcx links fail for another reason than a
 * missing interface. NULL + err (naming both tries) on any failure. */
struct flowtrack *flowtrack_attach(int nsfd, int ifindex, const struct flow_sel *sel,
				   unsigned nsel, unsigned max_flows,
				   enum flowtrack_attach_mode mode, char *err, size_t errlen);
/* FLOWTRACK_TCX or FLOWTRACK_CLSACT: how ft is hooked; and its name. */
enum flowtrack_attach_mode flowtrack_attach_mode(const struct flowtrack *ft);
const char *flowtrack_attach_name(enum flowtrack_attach_mode mode);

/* Emit one FLOW_SRC_BPF observation per tracked flow: key local = s*,
 * remote = d*; rx/tx msgs = frames (GSO segments), bytes = L2 bytes,
 * last_rx/tx_ns, state = FT_STATE_* bits (flowtrack.h) of TCP flags seen.
 * The map is read in batches (BPF_MAP_LOOKUP_BATCH), key by key where the
 * kernel has no batch reads. Returns the number emitted or -errno. */
int flowtrack_poll(struct flowtrack *ft, flow_emit_fn emit, void *arg);

/* Read the map in batches (on, the default) or key by key (off: two
 * system calls per flow, what kernels before 5.6 need). For benchmarks. */
void flowtrack_set_batch(struct flowtrack *ft, int on);
/* The map's size, and how many batch reads and key-by-key walks so far. */
void flowtrack_stats(const struct flowtrack *ft, unsigned *max_flows, uint64_t *batches,
		     uint64_t *walks);

/* Memory the tracker's map holds (the kernel's memlock figure), bytes; 0
 * when unknown. */
size_t flowtrack_map_bytes(const struct flowtrack *ft);
/* For benchmarks: run the ingress (egress != 0: egress) program on the
 * Ethernet frame pkt[0..len) in the kernel (BPF_PROG_TEST_RUN), repeat
 * times, as if the port had seen it; *ns_per_run is the kernel's mean. The
 * map sees every run. 0 or -errno. */
int flowtrack_test_run(struct flowtrack *ft, int egress, const void *pkt, size_t len,
		       unsigned repeat, unsigned *ns_per_run);

/* Take the tracker's two hooks off the port (on 0) or put them back (on
 * 1), the program, its map (and the clsact qdisc) kept: what the map holds
 * stays, frames add to it again once hooked. tcx: the links closed (no
 * namespace entered, no netlink) and made again. clsact: the filters; the
 * qdisc goes only with flowtrack_detach, since grafting one deactivates the
 * interface for a moment (frames sent then are lost) and filters do not.
 * 0 or -errno + err. */
int flowtrack_set_hooked(struct flowtrack *ft, int on, char *err, size_t errlen);
/* The same without waiting for it, for the event loop: the kernel waits
 * out an RCU grace period for every tcx link made or closed
 * (tcx_entry_sync() in kernel/bpf/tcx.c: about 15 ms a link here, 13 to
 * 32 ms for the two in a detector's poll, which held the stall call back
 * by as much), and a qdisc's filters change under the same kind of wait.
 * A thread of its own makes the change: -EINPROGRESS while one is in
 * flight, whichever way it goes (also when this call started it; the
 * next call after it ended starts the other way if asked), then 0 once
 * the hooks are as asked, or -errno + err for the change that failed (the
 * next call tries again). A change to on also sets flowtrack_set_since()
 * to its start. Without a thread (pthread_create() failed) the change is
 * made at the call. */
int flowtrack_set_hooked_bg(struct flowtrack *ft, int on, char *err, size_t errlen);
/* From now on, flowtrack_poll leaves out flows whose last frame either way
 * is older than mono_ns (CLOCK_MONOTONIC; 0: none left out): what the map
 * held from before the hooks last came on (closed or idle connections) is
 * not news. */
void flowtrack_set_since(struct flowtrack *ft, uint64_t mono_ns);
/* 1 when the hooks are on the port. */
int flowtrack_hooked(const struct flowtrack *ft);

/* Unhook: tcx, close the links; clsact, remove our two filters and delete
 * the qdisc only if we created it and no other filter remains on it. Safe
 * when the interface or namespace is gone. Frees ft. */
void flowtrack_detach(struct flowtrack *ft);

/* At start-up: remove clsact filters with our handle and priority whose program is
 * ours (left by a killed daemon), and the clsact qdisc when the marker says
 * we created it and it has no other filter. Returns the number of filters
 * removed, or -errno + err. */
int flowtrack_cleanup_stale(int nsfd, int ifindex, char *err, size_t errlen);

#endif
