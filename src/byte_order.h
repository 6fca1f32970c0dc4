/*
 * Multi-byte integers in an explicit byte order, byte by byte (no pointer
 * casts, no alignment needs). The host's order is a host fact
 * (JF_HOST_BIG_ENDIAN, src/arch/host.h): what the library writes for a
 * consumer on this machine (jitdump, .eh_frame, symfiles) and reads back
 * from itself (its own .eh_frame, the template's instructions) is in it.
 */
#ifndef JF_BYTE_ORDER_H
#define JF_BYTE_ORDER_H

#include "arch/host.h"

#include <stddef.h>
#include <stdint.h>

#if defined(__BYTE_ORDER__) && ((__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) != JF_HOST_BIG_ENDIAN) && \
    !defined(JF_TEST_FOREIGN_BYTE_ORDER)
#error "src/arch/host.h: JF_HOST_BIG_ENDIAN disagrees with the compiler's byte order"
#endif

/* Store v in n bytes at p, most significant byte first if big_endian.
 * One loop per order, each with a fixed index: the compiler merges either
 * into a single store (and a byte swap); an index that depends on
 * big_endian inside one loop kept n byte stores (+1,100 instructions per
 * jitdump registration, bench_jitdump under callgrind). */
static inline void jf__store_uint(uint8_t *p, uint64_t v, size_t n, int big_endian)
{
    if (big_endian)
        for (size_t i = 0; i < n; i++)
            p[n - 1 - i] = (uint8_t)(v >> (8 * i));
    else
        for (size_t i = 0; i < n; i++)
            p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t jf__load_uint(const uint8_t *p, size_t n, int big_endian)
{
    uint64_t v = 0;
    if (big_endian)
        for (size_t i = 0; i < n; i++)
            v |= (uint64_t)p[n - 1 - i] << (8 * i);
    else
        for (size_t i = 0; i < n; i++)
            v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static inline uint32_t jf__load_host_u32(const uint8_t *p)
{
    return (uint32_t)jf__load_uint(p, 4, JF_HOST_BIG_ENDIAN);
}

static inline void jf__store_host_u32(uint8_t *p, uint32_t v)
{
    jf__store_uint(p, v, 4, JF_HOST_BIG_ENDIAN);
}

#endif
