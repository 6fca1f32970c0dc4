/*
 * Validating a caller's jf_region and turning it into an owned jf_live.
 */
#ifndef JF_REGION_H
#define JF_REGION_H

#include "internal.h"

/* The i-th region of a caller's array, honouring the caller's struct_size
 * (a caller built against an older header has a smaller stride). Copies the
 * known fields into *out. Returns 0 or JF_EINVAL with the message set. */
int jf__region_read(const jf_region *regions, size_t i, jf_region *out);

/* Check a region's fields (not its address's availability). `index` is used
 * in the message. Returns 0 or JF_EINVAL with the message set. */
int jf__region_validate(const jf_region *r, size_t index);

/* Make an owned, sanitised copy of a validated region; NULL on failure
 * (last error set). */
jf_live *jf__live_new(const jf_region *r, uint64_t group);

/* Free a jf_live and everything it owns. NULL is fine. */
void jf__live_free(jf_live *r);

#endif
