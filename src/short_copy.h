/*
 * memcpy for the short strings of a registration (names): 8 to 16 bytes
 * as two overlapping 8-byte copies, neither past src + n, without a call.
 */
#ifndef JF_SHORT_COPY_H
#define JF_SHORT_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void jf__short_copy(char *dst, const char *src, size_t n)
{
    if (n - 8 <= 8) {
        uint64_t head, tail;
        memcpy(&head, src, 8);
        memcpy(&tail, src + n - 8, 8);
        memcpy(dst, &head, 8);
        memcpy(dst + n - 8, &tail, 8);
    } else {
        memcpy(dst, src, n);
    }
}

#endif
