/*
 * Standby: what a region costs when jitframes is initialised with no sink
 * (the registry keeps it, nothing is written), against the same
 * registrations with the perf map and the jitdump on, and what turning a
 * sink on later costs: jf_enable replaying every live region (what a
 * profiler attaching to a running process waits for). Median of 5 rounds
 * in a rotating order; the regions are fake (never executed), 64 bytes
 * apart, so the jitdump copies readable bytes. Standby is measured with the
 * published table (the default) and without it (JF_CONFIG_NO_TABLE), and
 * the table's resident memory per region is reported.
 * Usage: bench_standby [N]   (default 100000)
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include "bench_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ROUNDS = 5, REGION = 64 };

static uint8_t *code;
static char dump_dir[] = "/tmp/jf-bench-standby.XXXXXX";

static void start(unsigned sinks, unsigned flags)
{
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV | flags;
    c.sinks = sinks;
    c.dump_dir = dump_dir;
    if (jf_init(&c) != 0)
        bench_die(jf_last_error());
}

static void stop(void)
{
    jf_shutdown();
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
    unlink(path);
    snprintf(path, sizeof path, "%s/jit-%ld.dump", dump_dir, (long)getpid());
    unlink(path);
}

/* Seconds to register n regions one by one. */
static double register_all(size_t n)
{
    char name[32];
    double t0 = bench_now_seconds();
    for (size_t i = 0; i < n; i++) {
        jf_region r = JF_REGION_INIT;
        r.addr = code + i * REGION;
        r.size = REGION;
        snprintf(name, sizeof name, "jit_fn_%zu", i);
        r.name = name;
        if (jf_register(&r) != 0)
            bench_die(jf_last_error());
    }
    return bench_now_seconds() - t0;
}

/* Resident bytes of the published table's mapping, from /proc/self/smaps. */
static size_t table_resident_bytes(void)
{
    const void *addr;
    size_t size;
    if (jf_published_table(&addr, &size) != 0)
        return 0;
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    size_t kib = 0;
    int in_table = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            in_table = lo == (uintptr_t)addr;
        else if (in_table && strncmp(line, "Rss:", 4) == 0)
            kib = strtoul(line + 4, NULL, 10);
    }
    if (f)
        fclose(f);
    return kib * 1024;
}

enum { VARIANTS = 4, STANDBY = 0, STANDBY_NO_TABLE = 3 };
static size_t table_bytes;

/* One round of variant v: ns per registration (and, for standby, the
 * seconds jf_enable(perf map) then took to replay all n, in *enable_s). */
static double run(int v, size_t n, double *enable_s)
{
    static const unsigned sinks[VARIANTS] = {0, JF_SINK_PERFMAP, JF_SINK_JITDUMP, 0};
    start(sinks[v], v == STANDBY_NO_TABLE ? JF_CONFIG_NO_TABLE : 0);
    double s = register_all(n);
    if (v == STANDBY)
        table_bytes = table_resident_bytes();
    if (v == 0) {
        double t0 = bench_now_seconds();
        if (jf_enable(JF_SINK_PERFMAP) != 0)
            bench_die(jf_last_error());
        *enable_s = bench_now_seconds() - t0;
    }
    stop();
    return s / (double)n * 1e9;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    if (n == 0 || !mkdtemp(dump_dir))
        bench_die("bench_standby: setup");
    code = calloc(n, REGION);
    if (!code)
        bench_die("calloc");
    static const char *const names[VARIANTS] = {"standby (no sink)", "perfmap", "jitdump",
                                                 "standby, no table"};
    double ns[VARIANTS][ROUNDS], enable[ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < VARIANTS; k++) {
            int v = (k + r) % VARIANTS;
            ns[v][r] = run(v, n, &enable[r]);
        }
    double med[VARIANTS];
    for (int v = 0; v < VARIANTS; v++)
        med[v] = bench_median(ns[v], ROUNDS);
    printf("registration of %zu regions, median of %d rotating rounds:\n", n, ROUNDS);
    for (int v = 0; v < VARIANTS; v++)
        printf("  %-18s %8.1f ns per region  (standby / this: %.3f)\n", names[v], med[v],
               med[0] / med[v]);
    printf("  published table: standby / standby without it = %.3f (target <= 1.2); "
           "%zu bytes resident, %.1f per region (64-byte entry + name \"jit_fn_N\")\n",
           med[STANDBY] / med[STANDBY_NO_TABLE], table_bytes, (double)table_bytes / (double)n);
    printf("  jf_enable(perfmap) after standby: %.1f ms to replay %zu live regions (%.0f ns each)\n",
           bench_median(enable, ROUNDS) * 1e3, n, bench_median(enable, ROUNDS) / (double)n * 1e9);
    rmdir(dump_dir);
    free(code);
    return 0;
}
