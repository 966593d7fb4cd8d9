/* ctlproto: what the daemon's control socket and its client agree on
 * (nicstalld(8) "CONTROL SOCKET"): one JSON request per line, one JSON reply
 * per request, peer credentials decide access. */
#ifndef NICSTALL_CTLPROTO_H
#define NICSTALL_CTLPROTO_H

#define CTL_SOCKET_NAME "nicstalld.sock"
#define CTL_DEFAULT_RUN_DIR "/run/nicstalld"
#define CTL_GROUP "nicstall"
#define CTL_MAX_REQUEST 65536

#endif
