/*
 * CLOCK_MONOTONIC from the cycle counter (tick_clock.h): real readings,
 * each bracketed by two counter reads, and straight lines between them.
 */
#define _GNU_SOURCE
#include "tick_clock.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"

enum {
    BRACKET_FLOOR_TICKS = 1024, /* a bracket this narrow is always good (~0.5 us at 2 GHz) */
    REAL_TRIES = 4,             /* readings tried for a narrow bracket */
};

/* The kernel keeps CLOCK_MONOTONIC with this host's counter (its current
 * clocksource is JF_HOST_TICKS_CLOCKSOURCE): then the counter is
 * synchronised between CPUs and runs at a constant rate. */
static int kernel_keeps_time_with_ticks(void)
{
    static const char ours[] = JF_HOST_TICKS_CLOCKSOURCE "\n";
    if (!JF_HOST_HAS_TICKS || sizeof ours < 3)
        return 0;
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char name[64];
    ssize_t n = read(fd, name, sizeof name);
    close(fd);
    return n == (ssize_t)sizeof ours - 1 && memcmp(name, ours, sizeof ours - 1) == 0;
}

void jf__tick_clock_init(jf__tick_clock *c)
{
    *c = (jf__tick_clock){.set_up = 1, .usable = kernel_keeps_time_with_ticks(), .tight_ticks = UINT64_MAX};
}

/* A bracket is narrow if within 4x the narrowest seen (a slower host, or
 * valgrind, has wider ones) or under the floor. */
static int narrow(jf__tick_clock *c, uint64_t width)
{
    if (width < c->tight_ticks)
        c->tight_ticks = width;
    uint64_t limit = c->tight_ticks > UINT64_MAX / 4 ? UINT64_MAX : c->tight_ticks * 4;
    return width <= limit || width <= BRACKET_FLOOR_TICKS;
}

typedef struct bracketed {
    uint64_t ns, ticks, width;
    int narrow; /* judged once: judging updates the narrowest seen */
} bracketed;

/* A real reading, and the counter's value just before it (so the clock
 * read at least base_ns at base_ticks: extrapolations are upper bounds):
 * the narrowest of up to REAL_TRIES. A counter read that went back (not
 * synchronised after all) gives the widest bracket there is. */
static bracketed read_bracketed(jf__tick_clock *c)
{
    bracketed best = {0, 0, UINT64_MAX, 0};
    for (int k = 0; k < REAL_TRIES && !best.narrow; k++) {
        uint64_t before = jf__host_ticks();
        uint64_t ns = jf__monotonic_ns();
        uint64_t after = jf__host_ticks();
        uint64_t width = after >= before ? after - before : UINT64_MAX;
        int good = width != UINT64_MAX && narrow(c, width);
        if (width < best.width)
            best = (bracketed){ns, before, width, good};
    }
    return best;
}

/* A narrow reading r ends the rate's window if the window is wide enough
 * (then it starts the next), or starts one if there is none. */
static void measure_rate(jf__tick_clock *c, const bracketed *r)
{
    if (c->rate_ticks == 0 || r->ticks < c->rate_ticks || r->ns < c->rate_ns) {
        c->rate_ns = r->ns;
        c->rate_ticks = r->ticks;
        return;
    }
    uint64_t span = r->ticks - c->rate_ticks;
    if (span < JF_TICK_CLOCK_RATE_TICKS)
        return;
    double q32 = (double)(r->ns - c->rate_ns) / (double)span * 4294967296.0 * (1.0 + 1.0 / 16384);
    /* Below 256 ns a tick: (ticks < 2^24) * q32 < 2^64 when extrapolating. */
    c->ns_per_tick_q32 = q32 > 0 && q32 < 0x1p40 ? (uint64_t)q32 : 0;
    c->rate_ns = r->ns;
    c->rate_ticks = r->ticks;
}

/* A real reading; a narrow one is the new base and may measure the rate. */
static uint64_t read_real(jf__tick_clock *c)
{
    if (!c->set_up)
        jf__tick_clock_init(c);
    c->real_readings++;
    if (!c->usable)
        return jf__monotonic_ns();
    bracketed r = read_bracketed(c);
    if (r.narrow) {
        c->base_ns = r.ns;
        c->base_ticks = r.ticks;
        measure_rate(c, &r);
    }
    return r.ns;
}

uint64_t jf__tick_clock_read(jf__tick_clock *c)
{
    uint64_t ns = read_real(c);
    if (ns < c->last_ns)
        ns = c->last_ns;
    return c->last_ns = ns;
}
