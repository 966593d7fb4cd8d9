/* guardbuf: buffers that end where an unmapped page begins, so that a
 * parser reading one byte past what it was given faults at once, even in
 * code ASan does not instrument (libmnl). Shared by the netlink parser
 * tests. */
#ifndef NICSTALL_GUARDBUF_H
#define NICSTALL_GUARDBUF_H

#include <stddef.h>

/* len bytes (at most one page less 8) copied from src, ending exactly at a
 * PROT_NONE page; 4-aligned when len is a multiple of 4. NULL on failure. */
void *guardbuf_new(const void *src, size_t len);
void guardbuf_free(void *p, size_t len);

#endif
