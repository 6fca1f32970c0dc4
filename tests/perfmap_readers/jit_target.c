/*
 * A process for the perf map readers (bpftrace, bcc) to look at. It writes
 * /tmp/perf-<pid>.map through jitframes' perfmap sink with:
 *   - a framed JIT function "jitframes bpftrace target" that calls
 *     callback() -> probe_leaf() (the uprobe point) and optionally spins, so
 *     frame-pointer stack walks (bpftrace ustack, bcc profile) pass through it;
 *   - N more regions named with spaces: "bulk fn <i> (dir with spaces/f.js:<i>)".
 * Then it writes READY_FILE ("<pid> <jit addr> <jit size> <bulk addr>
 * <bulk region size> <N> <unregistered addr>") and loops calling the JIT
 * function until STOP_FILE exists (at most 60 s).
 * Usage: jit_target READY_FILE STOP_FILE N SPIN_US
 */
#define _GNU_SOURCE
#include "jit_code.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { BULK_REGION = 64 };

void probe_leaf(long x);
long callback(long x);

static long spin_us;
static volatile long sink_value;

__attribute__((noinline)) void probe_leaf(long x)
{
    sink_value += x;
    __asm__ volatile("" ::: "memory");
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

__attribute__((noinline)) long callback(long x)
{
    probe_leaf(x);
    double end = now_us() + (double)spin_us;
    while (now_us() < end)
        sink_value++;
    return x + 1;
}

static int register_bulk(uint8_t *area, size_t n)
{
    jf_region *regions = calloc(n, sizeof *regions);
    char(*names)[80] = calloc(n, sizeof *names);
    if (!regions || !names)
        return -1;
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "bulk fn %zu (dir with spaces/f.js:%zu)", i, i + 1);
        jf_region r = JF_REGION_INIT;
        r.addr = area + i * BULK_REGION;
        r.size = BULK_REGION;
        r.name = names[i];
        regions[i] = r;
    }
    int rc = jf_register_batch(regions, n);
    free(regions);
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s READY_FILE STOP_FILE N SPIN_US\n", argv[0]);
        return 2;
    }
    size_t n = strtoul(argv[3], NULL, 10);
    spin_us = strtol(argv[4], NULL, 10);
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_PERFMAP;
    jit_function frameless, framed;
    if (jf_init(&cfg) != 0 || jit_make(&frameless, &framed) != 0) {
        fprintf(stderr, "setup: %s\n", jf_last_error());
        return 1;
    }
    /* One page more than the regions: its last bytes stay unregistered. */
    size_t area_size = (n * BULK_REGION + 2 * 4096) & ~(size_t)4095;
    uint8_t *area = mmap(NULL, area_size, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    jf_region r = jit_region(&framed, "jitframes bpftrace target");
    if (area == MAP_FAILED || jf_register(&r) != 0 || register_bulk(area, n) != 0) {
        fprintf(stderr, "register: %s\n", jf_last_error());
        return 1;
    }
    jf_cfi_free(frameless.cfi); /* registration copied the rules */
    jf_cfi_free(framed.cfi);
    FILE *f = fopen(argv[1], "w");
    if (!f)
        return 1;
    fprintf(f, "%ld %p %zu %p %d %zu %p\n", (long)getpid(), framed.addr, framed.size, (void *)area,
            BULK_REGION, n, (void *)(area + area_size - 16));
    fclose(f);
    double end = now_us() + 600e6; /* the test stops it; a slow machine compiles BPF for minutes */
    for (long i = 0; now_us() < end && access(argv[2], F_OK) != 0; i++) {
        framed.fn(callback, i);
        if (!spin_us)
            usleep(10000);
    }
    jf_shutdown();
    return 0;
}
