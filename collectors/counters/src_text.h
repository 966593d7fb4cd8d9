/* src_text: counter source "text", a recorded `ethtool -S` file.
 *
 * struct src s = { .ops = &src_text_ops };  ctx.text_file = "/path";
 * open() only checks that a file name is configured (the file may appear
 * later). Every read() opens, fstats and reads the file afresh (bounded to
 * ETXT_MAX_BYTES, regular files only), so it may be replaced by rename(2) at
 * any time, and parses it with etxt_parse (rules in ethtool_text_parse.h). The
 * layout is kept while the names are identical and in the same order, and
 * replaced by a new one when they change (counters are all CNT_W64). A
 * missing, oversized, truncated or garbage file fails the read with s->err
 * "FILE: strerror" or "FILE:LINE: message" and leaves the previous layout
 * alive. Duplicate names keep the first value; a warning is logged once per
 * new layout. */
#ifndef NICSTALL_SRC_TEXT_H
#define NICSTALL_SRC_TEXT_H

#include "collectors/counters/counters.h"

extern const struct src_ops src_text_ops;

#endif
