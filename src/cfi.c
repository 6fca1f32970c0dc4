/*
 * Placeholder for the DWARF CFI assembler (issue 3 replaces this file):
 * until then no jf_cfi can be built, so regions never carry one.
 */
#include "cfi.h"

struct jf_cfi *jf__cfi_clone(const struct jf_cfi *cfi)
{
    (void)cfi;
    jf__fail(JF_ENOTSUP, "unwind descriptions are not supported by this build");
    return NULL;
}

void jf__cfi_free(struct jf_cfi *cfi)
{
    (void)cfi;
}

int jf__cfi_validate(const struct jf_cfi *cfi, size_t size)
{
    (void)cfi;
    (void)size;
    return jf__fail(JF_ENOTSUP, "unwind descriptions are not supported by this build");
}
