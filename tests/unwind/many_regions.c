/* See many_regions.h. */
#include "many_regions.h"

#include <stdio.h>
#include <stdlib.h>

jf_region many_region(uint8_t *code, size_t size, jf_cfi *cfi, char (*names)[MANY_NAME], const char *prefix,
                      size_t i)
{
    snprintf(names[i], MANY_NAME, "%s_%zu", prefix, i);
    jf_region r = JF_REGION_INIT;
    r.addr = code + i * size;
    r.size = size;
    r.name = names[i];
    r.cfi = cfi;
    return r;
}

void shuffle_indexes(size_t *order, size_t n, unsigned seed)
{
    srand(seed);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rand() % i;
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

const void *fde_function(find_fde_fn find, const void *pc)
{
    void *bases[3] = {NULL, NULL, NULL};
    return find((void *)(uintptr_t)pc, bases) ? bases[2] : NULL;
}
