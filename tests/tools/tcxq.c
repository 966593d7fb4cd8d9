/* tcxq: which BPF programs are on an interface's tcx hooks, for tests.
 *
 *   tcxq IFNAME     (in the interface's namespace: ip netns exec NS tcxq IF)
 *
 * One line per program, in the order the kernel runs them:
 * "ingress NAME ID" or "egress NAME ID". Nothing on a hook prints nothing
 * for it. Exit 0; 1 with a message when the interface is missing or the
 * kernel refuses the query (BPF_PROG_QUERY on BPF_TCX_INGRESS/EGRESS,
 * kernel/bpf/mprog.c bpf_mprog_query). bpftool before 7.3 does not know
 * tcx, hence this. */
#include <bpf/bpf.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TCXQ_INGRESS 46         /* include/uapi/linux/bpf.h BPF_TCX_INGRESS */
#define TCXQ_EGRESS 47
#define TCXQ_MAX 64             /* BPF_MPROG_MAX */

int main(int argc, char **argv)
{
	static const char *const dir[2] = { "ingress", "egress" };
	unsigned ifindex;

	if (argc != 2) {
		fprintf(stderr, "usage: tcxq IFNAME\n");
		return 2;
	}
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex) {
		fprintf(stderr, "tcxq: no interface %s here: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (int d = 0; d < 2; d++) {
		__u32 ids[TCXQ_MAX], cnt = TCXQ_MAX, flags = 0;
		int rc = bpf_prog_query((int)ifindex, (enum bpf_attach_type)(TCXQ_INGRESS + d), 0,
					&flags, ids, &cnt);

		if (rc < 0) {
			fprintf(stderr, "tcxq: query %s of %s: %s\n", dir[d], argv[1], strerror(-rc));
			return 1;
		}
		for (__u32 i = 0; i < cnt; i++) {
			struct bpf_prog_info info;
			__u32 len = sizeof(info);
			int fd = bpf_prog_get_fd_by_id(ids[i]);

			memset(&info, 0, sizeof(info));
			if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
				snprintf((char *)info.name, sizeof(info.name), "?");
			if (fd >= 0)
				close(fd);
			printf("%s %s %u\n", dir[d], info.name, ids[i]);
		}
	}
	return 0;
}
