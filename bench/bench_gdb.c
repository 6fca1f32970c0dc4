/*
 * The gdb sink's cost where it matters: under a debugger whose JIT
 * breakpoint is live, every registration stops the process. Run by
 * bench_gdb.sh inside gdb (see there); on its own it measures only our side.
 *
 *   bench_gdb scale   100,000 regions through jf_register_batch (100 per
 *                     call); at 1k, 10k and 100k live regions, the mean cost
 *                     of single registrations, unregistrations and moves
 *                     (jf_move); then a trap in JIT code so the driver can
 *                     time `bt`
 *   bench_gdb naive   the same single-registration costs with one symfile
 *                     per registration (no merging), up to 10,000 regions
 *   bench_gdb hold    100,000 regions, then wait (up to 120 s) for a
 *                     debugger to attach; prints "ready PID" first
 *
 * Regions are laid out like a JIT's: packed, 16-byte aligned, sizes 24 to
 * 200 bytes, each with a frameless FDE.
 */
#define _GNU_SOURCE
#include "sink_gdb.h"
#include "jitframes.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { TOTAL = 100000, BATCH = 100, SINGLES = 500, CHURN = 100, SIZE_CLASSES = 12 };

static uint8_t *arena;
static size_t arena_used, arena_size;
static jf_cfi *cfi_for_size[SIZE_CLASSES];
static unsigned rng = 12345;
static int without_cfi; /* BENCH_GDB_NO_CFI=1: names only */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "bench_gdb: %s: %s (%s)\n", what, jf_strerror(rc), jf_last_error());
        exit(2);
    }
}

static size_t class_size(int k)
{
    return 24 + 16 * (size_t)k; /* 24 .. 200 */
}

static void setup(void)
{
    arena_size = (size_t)(TOTAL + 8 * SINGLES + 64) * 224;
    arena = mmap(NULL, arena_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (arena == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    memset(arena, 0xc3, arena_size); /* ret */
    for (int k = 0; k < SIZE_CLASSES; k++) {
        check(jf_cfi_new(&cfi_for_size[k]), "cfi");
        check(jf_cfi_add_frameless(cfi_for_size[k], 0, class_size(k), 8), "cfi");
    }
    jf_config cfg = JF_CONFIG_INIT;
    cfg.sinks = JF_SINK_GDB;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    check(jf_init(&cfg), "jf_init");
}

/* The next region of the arena: packed, 16-byte aligned. */
static jf_region next_region(char *name, size_t name_cap, size_t index)
{
    rng = rng * 1103515245u + 12345u;
    int k = (int)((rng >> 16) % SIZE_CLASSES);
    arena_used = (arena_used + 15) & ~(size_t)15;
    jf_region r = JF_REGION_INIT;
    r.addr = arena + arena_used;
    r.size = class_size(k);
    r.cfi = without_cfi ? NULL : cfi_for_size[k];
    snprintf(name, name_cap, "jit_fn_%zu", index);
    r.name = name;
    arena_used += r.size;
    return r;
}

static size_t live;
static const void *live_addr[TOTAL + 8 * SINGLES + 64]; /* every live region, in registration order */

/* Register up to `target` live regions in batches; returns the seconds spent. */
static double fill_to(size_t target)
{
    static jf_region batch[BATCH];
    static char names[BATCH][32];
    double t0 = now();
    while (live < target) {
        size_t n = target - live < BATCH ? target - live : BATCH;
        for (size_t i = 0; i < n; i++)
            batch[i] = next_region(names[i], sizeof names[i], live + i);
        check(jf_register_batch(batch, n), "batch");
        for (size_t i = 0; i < n; i++)
            live_addr[live + i] = batch[i].addr;
        live += n;
    }
    return now() - t0;
}

static uint64_t live_symfiles(void)
{
    struct jf_stats st = JF_STATS_INIT;
    check(jf_stats(&st), "stats");
    return st.sink[2].objects;
}

typedef struct cost {
    double median_ms, mean_ms, max_ms;
} cost;

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, mean and max of `count` timings in milliseconds (sorts them). */
static cost summarize(double *ms, int count)
{
    double sum = 0;
    for (int i = 0; i < count; i++)
        sum += ms[i];
    qsort(ms, (size_t)count, sizeof ms[0], by_value);
    cost c = {ms[count / 2], sum / count, ms[count - 1]};
    return c;
}

/* Single-region registrations at the current live count: the median is one
 * debugger stop; the mean includes the merges they trigger (amortised); the
 * max is the worst merge in the window. */
static cost single_cost(int count)
{
    static double ms[4096];
    char name[32];
    for (int i = 0; i < count && i < 4096; i++) {
        jf_region r = next_region(name, sizeof name, live);
        double t0 = now();
        check(jf_register(&r), "single");
        ms[i] = (now() - t0) * 1e3;
        live_addr[live++] = r.addr;
    }
    return summarize(ms, count);
}

/* Register then unregister one region, `count` times, at the current live
 * count: two stops each (the unregistration drops a one-region symfile).
 * Returns the median milliseconds of the unregistration. */
static double unregister_cost_ms(int count)
{
    static double ms[1024];
    char name[32];
    jf__gdb_set_merging(0); /* a lone symfile, not merged before it goes */
    for (int i = 0; i < count && i < 1024; i++) {
        jf_region r = next_region(name, sizeof name, live);
        check(jf_register(&r), "single");
        double t0 = now();
        check(jf_unregister(r.addr), "unregister");
        ms[i] = (now() - t0) * 1e3;
    }
    jf__gdb_set_merging(1);
    qsort(ms, (size_t)count, sizeof ms[0], by_value);
    return ms[count / 2];
}

/* Unregister a live region, most likely inside a big merged symfile: what
 * a runtime freeing old code pays. Returns milliseconds. */
static double unregister_one(size_t victim)
{
    double t0 = now();
    check(jf_unregister(live_addr[victim]), "unregister");
    double ms = (now() - t0) * 1e3;
    live_addr[victim] = live_addr[--live];
    return ms;
}

/* Move a live region to fresh space, as a compacting collector does: it
 * leaves its (merged) symfile, which is rebuilt, and is registered at its
 * new address. Returns milliseconds. */
static double move_one(size_t victim)
{
    arena_used = (arena_used + 15) & ~(size_t)15;
    const void *to = arena + arena_used;
    arena_used += class_size(SIZE_CLASSES - 1); /* room for any size */
    double t0 = now();
    check(jf_move(live_addr[victim], to), "move");
    double ms = (now() - t0) * 1e3;
    live_addr[victim] = to;
    return ms;
}

/* `op` on `count` regions picked at random among the live ones. */
static cost random_op_cost(int count, double (*op)(size_t victim))
{
    static double ms[1024];
    for (int i = 0; i < count && i < 1024; i++) {
        rng = rng * 1103515245u + 12345u;
        ms[i] = op(((size_t)rng >> 4) % live);
    }
    return summarize(ms, count);
}

/* 1 if a debugger (gdb) is tracing this process. */
static int traced(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return 0;
    char line[256];
    long tracer = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "TracerPid: %ld", &tracer) == 1)
            break;
    fclose(f);
    return tracer != 0;
}

/* A real framed function with a trap, registered last, called for `bt`
 * when a debugger runs us (without one the trap would kill the process). */
static void trap_in_jit(void)
{
    if (!traced())
        return;
    static const uint8_t code[] = {0x55, 0x48, 0x89, 0xe5, 0xcc, 0x5d, 0xc3};
    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        exit(2);
    memcpy(page, code, sizeof code);
    mprotect(page, 4096, PROT_READ | PROT_EXEC);
    jf_region r = JF_REGION_INIT;
    r.addr = page;
    r.size = sizeof code;
    r.name = "bench_trap_fn";
    check(jf_register(&r), "trap fn");
#if defined(__x86_64__)
    ((void (*)(void))page)();
#endif
}

static int scale(void)
{
    static const size_t marks[] = {1000, 10000, TOTAL};
    double batch_seconds = 0;
    size_t batched = 0;
    for (size_t m = 0; m < sizeof marks / sizeof marks[0]; m++) {
        size_t before = live;
        batch_seconds += fill_to(marks[m]);
        batched += live - before;
        cost c = single_cost(SINGLES);
        double unreg = unregister_cost_ms(100);
        printf("live %6zu: single registration median %.3f ms, mean %.3f ms, max %.1f ms (%d calls), "
               "%llu live symfiles; unregistering a lone symfile: median %.3f ms\n",
               live, c.median_ms, c.mean_ms, c.max_ms, SINGLES, (unsigned long long)live_symfiles(), unreg);
        cost u = random_op_cost(CHURN, unregister_one);
        printf("live %6zu: unregistering random old regions: median %.3f ms, mean %.3f ms, max %.1f ms "
               "(%d calls), %llu live symfiles\n",
               live, u.median_ms, u.mean_ms, u.max_ms, CHURN, (unsigned long long)live_symfiles());
        cost mv = random_op_cost(CHURN, move_one);
        printf("live %6zu: moving random old regions (jf_move): median %.3f ms, mean %.3f ms, max %.1f ms "
               "(%d calls), %llu live symfiles\n",
               live, mv.median_ms, mv.mean_ms, mv.max_ms, CHURN, (unsigned long long)live_symfiles());
    }
    printf("batch registration: %zu regions in %d-region calls took %.2f s in all\n", batched, BATCH,
           batch_seconds);
    fflush(stdout);
    trap_in_jit();
    return 0;
}

static int naive(void)
{
    jf__gdb_set_merging(0);
    double t0 = now();
    static const size_t marks[] = {1000, 2000, 5000, 10000};
    const char *max_env = getenv("BENCH_GDB_NAIVE_MAX");
    size_t max = max_env ? (size_t)strtoul(max_env, NULL, 10) : 10000;
    for (size_t m = 0; m < sizeof marks / sizeof marks[0] && marks[m] <= max; m++) {
        char name[32];
        while (live < marks[m] - 100) {
            jf_region r = next_region(name, sizeof name, live);
            check(jf_register(&r), "single");
            live++;
        }
        cost c = single_cost(100);
        printf("naive: live %6zu: single registration median %.3f ms, mean %.3f ms, %llu live symfiles\n",
               live, c.median_ms, c.mean_ms, (unsigned long long)live_symfiles());
        fflush(stdout);
    }
    printf("naive: %zu single registrations took %.2f s in all\n", live, now() - t0);
    return 0;
}

static volatile sig_atomic_t attached;

static int hold(void)
{
    fill_to(TOTAL);
    printf("ready %ld, %llu live symfiles\n", (long)getpid(), (unsigned long long)live_symfiles());
    fflush(stdout);
    for (int i = 0; i < 1200 && !attached; i++)
        usleep(100 * 1000);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "scale";
    without_cfi = getenv("BENCH_GDB_NO_CFI") != NULL;
    setup();
    if (strcmp(mode, "scale") == 0)
        return scale();
    if (strcmp(mode, "naive") == 0)
        return naive();
    if (strcmp(mode, "hold") == 0)
        return hold();
    fprintf(stderr, "usage: bench_gdb scale|naive|hold\n");
    return 2;
}
