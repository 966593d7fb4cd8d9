/* guardbuf: see guardbuf.h. */
#include "guardbuf.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void *guardbuf_new(const void *src, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *m;

	if (len > pg - 8)
		return NULL;
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (mprotect(m + pg, pg, PROT_NONE) < 0) {
		munmap(m, 2 * pg);
		return NULL;
	}
	memcpy(m + pg - len, src, len);
	return m + pg - len;
}

void guardbuf_free(void *p, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	if (p)
		munmap((unsigned char *)p + len - pg, 2 * pg);
}
