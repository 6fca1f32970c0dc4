/*
 * Internal side of the CFI assembler: what the registry and the sinks need
 * from an unwind description. (The public builder API is in jitframes.h.)
 */
#ifndef JF_CFI_H
#define JF_CFI_H

#include "internal.h"

/* Deep copy for the registry (the caller keeps ownership of the original).
 * Returns NULL with the last error set on failure. */
struct jf_cfi *jf__cfi_clone(const struct jf_cfi *cfi);

/* Free a copy made by jf__cfi_clone. NULL is fine. */
void jf__cfi_free(struct jf_cfi *cfi);

/* Check that every FDE lies within a region of `size` bytes (JF_EINVAL). */
int jf__cfi_validate(const struct jf_cfi *cfi, size_t size);

#endif
