/*
 * The registry's entry points for the rest of the library (the public API
 * is jitframes.h).
 */
#ifndef JF_REGISTRY_H
#define JF_REGISTRY_H

#include "jitframes.h"

/* jf_register_batch, also telling whether the regions went into the
 * registry (*inserted = 1) even when a sink then failed and disabled itself. */
int jf__register_batch(const jf_region *regions, size_t n, int *inserted);

/* 1 while the library is initialised (read without the lock). */
int jf__initialised(void);

/* The jitdump directory, cut to fit cap bytes (the control channel's status). */
void jf__dump_dir(char *out, size_t cap);

#endif
