/*
 * What the library asks of the system, each in one place: the page size,
 * the clock, size arithmetic, its environment variables.
 */
#ifndef JF_SYS_H
#define JF_SYS_H

#include <stddef.h>
#include <stdint.h>

/* v rounded up to a multiple of `to` (> 0); SIZE_MAX if that overflows. */
static inline size_t jf__round_up(size_t v, size_t to)
{
    size_t rem = (to & (to - 1)) == 0 ? v & (to - 1) : v % to;
    if (rem == 0)
        return v;
    return v > SIZE_MAX - (to - rem) ? SIZE_MAX : v + (to - rem);
}

/* The page size (sysconf; 4096 if it fails). */
size_t jf__page_size(void);

/* CLOCK_MONOTONIC in nanoseconds: what `perf record -k 1` timestamps with. */
uint64_t jf__monotonic_ns(void);

/* getenv(name), except in a program run with privileges its caller does
 * not have (setuid, setgid, file capabilities: the kernel's AT_SECURE):
 * there NULL, so the caller's JITFRAMES* cannot choose where a privileged
 * program writes or what it prints. */
const char *jf__getenv(const char *name);

#endif
