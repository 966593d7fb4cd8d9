/* netns: create sockets inside a port's network namespace. */
#ifndef NICSTALL_NETNS_H
#define NICSTALL_NETNS_H

/* Open a namespace by name (/run/netns/NAME) or absolute path.
 * NULL or "" means the daemon's own namespace and returns -1 with errno 0.
 * Returns an O_RDONLY|O_CLOEXEC fd, or -1 with errno set. */
int netns_open(const char *name_or_path);

/* socket(2) inside the namespace nsfd (-1: own namespace), then back.
 * Returns the fd or -1 with errno set. */
int netns_socket(int nsfd, int domain, int type, int protocol);

/* Enter nsfd (saving the current namespace in *saved) and leave again.
 * For libraries that open their own sockets (libpcap, libmnl). */
int netns_enter(int nsfd, int *saved);
int netns_leave(int saved);

#endif
