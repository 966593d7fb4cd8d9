/* sockdiag_owner: which process holds a socket inode, for an investigation
 * that asks (never on the poll path): the bounded /proc scan of
 * lib/procfd.h. See flow_sockdiag.h (sockdiag_inode_owner). */
#include "collectors/flows/flow_sockdiag.h"

#include <errno.h>
#include <stdio.h>

#include "lib/procfd.h"

int sockdiag_inode_owner(uint64_t inode, int *pid, char *comm, size_t commlen)
{
	struct procfd_owner o;
	int n = procfd_socket_owners(inode, &o, 1, NULL);

	if (n < 0)
		return n;
	if (n == 0)
		return -ENOENT;
	if (pid)
		*pid = o.pid;
	if (comm && commlen)
		snprintf(comm, commlen, "%s", o.comm);
	return 0;
}
