/* bpflog: libbpf's messages through the daemon's log (lib/log.h), for every
 * module that loads BPF programs (the tc tracker, the socket reader). */
#ifndef NICSTALL_BPFLOG_H
#define NICSTALL_BPFLOG_H

/* Route libbpf's output to the log (once; safe to call again). */
void bpflog_init(void);
/* While quiet, everything libbpf says goes at debug level: for loads that
 * may fail on older kernels, where the caller reports the failure in one
 * line (a verifier dump is hundreds). */
void bpflog_quiet(int on);

#endif
