/*
 * Trampoline costs, measured in one run:
 * - time: nanoseconds a call through an arena trampoline adds to a direct
 *   call of the same target, against the floor: the same template linked
 *   into .text (its own slot in .data). Median of 7 interleaved rounds.
 *   Target: added cost <= 1.25x the floor's.
 * - memory: bytes of arena (code + data) per trampoline, in perf map mode
 *   and with jitdump unwind room, and the registry's heap bytes per
 *   trampoline (its region record, name, CFI copy, table slot).
 * Usage: bench_trampoline [calls per round]   (default 50,000,000)
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include "bench_util.h"
#include "trampoline.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { ROUNDS = 7, REGISTRY_SAMPLE = 20000 };

/* The template as assembled, linked here; it calls what this slot holds. */
void jitframes_trampoline_template(void);
void *jitframes_trampoline_slot;

typedef long (*unary_fn)(long);

__attribute__((noinline)) static long target(long x)
{
    return x + 1;
}

/* A dependent chain of calls through `fn` (volatile: never inlined). */
__attribute__((noinline)) static double time_calls(unary_fn fn, long n)
{
    unary_fn volatile call = fn;
    struct timespec a, b;
    long acc = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++)
        acc = call(acc);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (acc != n)
        abort();
    return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
}

static void bench_time(long n)
{
    jf_fn entry;
    if (jf_trampoline_create((jf_fn)target, "bench_target", NULL, &entry) != 0) {
        fprintf(stderr, "jf_trampoline_create: %s\n", jf_last_error());
        exit(1);
    }
    jitframes_trampoline_slot = (void *)target;
    unary_fn floor_fn = (unary_fn)(void *)jitframes_trampoline_template;
    double direct[ROUNDS], floor_added[ROUNDS], arena_added[ROUNDS];
    time_calls(target, n / 10); /* warm up */
    for (int r = 0; r < ROUNDS; r++) {
        double d = time_calls(target, n);
        floor_added[r] = time_calls(floor_fn, n) - d;
        arena_added[r] = time_calls((unary_fn)entry, n) - d;
        direct[r] = d;
    }
    double fl = bench_median(floor_added, (size_t)(ROUNDS)), ar = bench_median(arena_added, (size_t)(ROUNDS));
    printf("direct call:                       %.2f ns\n", bench_median(direct, (size_t)(ROUNDS)));
    printf("added by the template in .text:     %.2f ns (floor)\n", fl);
    printf("added by an arena trampoline:       %.2f ns\n", ar);
    printf("ratio to the floor:                 %.2fx (target <= 1.25x)\n", fl > 0 ? ar / fl : 0.0);
    jf_trampoline_destroy(entry);
}

static void print_layout(const char *mode, unsigned sinks)
{
    jf__trampoline_layout l;
    if (jf__trampoline_layout_for(sinks, 0, &l) != 0) {
        printf("%s: %s\n", mode, jf_last_error());
        return;
    }
    printf("%s %s: template %zu B, stride %zu B, %u code blocks per data block, "
           "%.2f B per trampoline (code + data)\n",
           l.arch, mode, l.code_size, l.stride, l.variants, (double)l.group_bytes / (double)l.per_group);
}

/* Heap the registry keeps per live trampoline, and the cost of creating one. */
static void bench_registry_heap(void)
{
    static jf_fn entries[REGISTRY_SAMPLE];
    struct mallinfo2 before = mallinfo2();
    char name[32];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < REGISTRY_SAMPLE; i++) {
        snprintf(name, sizeof name, "fn_%06d", i);
        if (jf_trampoline_create((jf_fn)target, name, NULL, &entries[i]) != 0) {
            fprintf(stderr, "jf_trampoline_create: %s\n", jf_last_error());
            exit(1);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    struct mallinfo2 after = mallinfo2();
    printf("jf_trampoline_create with the perf map sink: %.0f ns each\n",
           ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / REGISTRY_SAMPLE);
    printf("registry heap per trampoline (10-byte names, perf map sink): %.1f B\n",
           (double)(after.uordblks - before.uordblks) / REGISTRY_SAMPLE);
    for (int i = 0; i < REGISTRY_SAMPLE; i++)
        jf_trampoline_destroy(entries[i]);
}

/* The perf map the run wrote (~512 KiB of trampoline names): perf has no
 * use for it once the process is gone, and every run left one in /tmp. */
static void remove_own_perfmap(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
    unlink(path);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 50000000L;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_PERFMAP;
    if (n <= 0 || jf_init(&cfg) != 0) {
        fprintf(stderr, "usage: bench_trampoline [calls per round]\n");
        return 2;
    }
    atexit(remove_own_perfmap);
    bench_time(n);
    print_layout("perf map", JF_SINK_PERFMAP);
    print_layout("jitdump with unwind info", JF_SINK_PERFMAP | JF_SINK_JITDUMP);
    bench_registry_heap();
    jf_shutdown();
    return 0;
}
