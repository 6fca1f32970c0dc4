/*
 * CLOCK_MONOTONIC, precise, for a quarter of what clock_gettime costs: the
 * cycle counter read and converted with a rate learnt from real readings.
 * For the published table's removal times (src/published.c): a removal's
 * time bounds the removed region's life for `record`, so it must be precise
 * to well under the gap between a removal and the next code at the address;
 * on the reference VM clock_gettime was 26 ns of a 36 ns removal.
 *
 * A reading is either real (clock_gettime) or extrapolated from a real one
 * at most JF_TICK_CLOCK_EXTRAPOLATE_TICKS old, with the rate measured
 * between two real readings at least JF_TICK_CLOCK_RATE_TICKS apart. A real
 * reading serves as a base only if the counter read before and after it
 * differs by little (not preempted in between). An extrapolated value is
 * not before the clock and at most about a microsecond after it while the
 * clock's rate against the counter is steady (NTP's slews are followed
 * within a rate window): a removal's time still bounds the region's life.
 * Values never go backwards. Only where the kernel itself keeps time with
 * the counter (its clocksource is JF_HOST_TICKS_CLOCKSOURCE, src/arch/host.h:
 * "tsc" on x86_64; synchronised between CPUs, a constant rate) is it used;
 * elsewhere every reading is real.
 *
 * Not thread-safe: one writer at a time (the registry's lock).
 */
#ifndef JF_TICK_CLOCK_H
#define JF_TICK_CLOCK_H

#include <stdint.h>

#include "arch/host.h"

enum {
    JF_TICK_CLOCK_EXTRAPOLATE_TICKS = 1 << 24, /* ~8 ms at 2 GHz */
    JF_TICK_CLOCK_RATE_TICKS = 1 << 26,        /* ~32 ms at 2 GHz */
};

typedef struct jf__tick_clock {
    int set_up;                   /* 0 (a zeroed clock): the first reading sets it up */
    int usable;                   /* 1: the counter keeps the kernel's time; 0: real readings only */
    uint64_t base_ns, base_ticks; /* the newest precise real reading, 0 if none */
    uint64_t rate_ns, rate_ticks; /* the far end of the rate's window */
    uint64_t ns_per_tick_q32;     /* ns per tick, 32 fraction bits, 61 ppm over the rate measured
                                * (more than it can be off by: an upper bound); 0 until measured */
    uint64_t tight_ticks;         /* the narrowest bracket of a real reading seen */
    uint64_t last_ns;             /* the latest value given */
    uint64_t real_readings;       /* how many were not extrapolated: for the tests */
} jf__tick_clock;

/* A clock that extrapolates if the host has a counter the kernel keeps
 * time with (JF_HOST_HAS_TICKS, and JF_HOST_TICKS_CLOCKSOURCE is the
 * current clocksource), else reads. A zeroed clock is set up so at its
 * first reading. */
void jf__tick_clock_init(jf__tick_clock *c);

/* Now, read for real (jf__tick_clock_now's slow path). */
uint64_t jf__tick_clock_read(jf__tick_clock *c);

/* Now, CLOCK_MONOTONIC nanoseconds (see above), never before a value
 * given earlier. Inline: extrapolating is a dozen instructions. */
static inline uint64_t jf__tick_clock_now(jf__tick_clock *c)
{
    uint64_t since = jf__host_ticks() - c->base_ticks;
    if (__builtin_expect(c->ns_per_tick_q32 == 0 || since >= JF_TICK_CLOCK_EXTRAPOLATE_TICKS, 0))
        return jf__tick_clock_read(c);
    uint64_t ns = c->base_ns + ((since * c->ns_per_tick_q32) >> 32);
    if (ns < c->last_ns)
        ns = c->last_ns;
    return c->last_ns = ns;
}

#endif
