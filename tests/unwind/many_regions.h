/* Helpers for the tests that register thousands of small regions. */
#ifndef MANY_REGIONS_H
#define MANY_REGIONS_H

#include "jitframes.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { MANY_NAME = 32 };

/* Region i of `size` bytes at code + i * size, named "<prefix>_<i>" in
 * names[i], with unwind rules cfi. */
jf_region many_region(uint8_t *code, size_t size, jf_cfi *cfi, char (*names)[MANY_NAME], const char *prefix,
                      size_t i);

/* order[0..n) = a permutation of 0..n-1, the same for a given seed. */
void shuffle_indexes(size_t *order, size_t n, unsigned seed);

/* The function an FDE found for pc starts at, through an unwinder's
 * _Unwind_Find_FDE (bases = {tbase, dbase, func}); NULL if none. */
typedef const void *(*find_fde_fn)(void *pc, void **bases);
const void *fde_function(find_fde_fn find, const void *pc);

#ifdef __cplusplus
}
#endif

#endif
