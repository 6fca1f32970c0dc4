/*
 * Standby: what a region costs when jitframes is initialised with no sink
 * (the registry keeps it and publishes it in the region table, nothing is
 * written), against the same registrations without the table
 * (JF_CONFIG_NO_TABLE), with the perf map and with the jitdump on, and what
 * turning a sink on later costs: jf_enable replaying every live region
 * (what a profiler attaching to a running process waits for). Median of 5
 * rounds in a rotating order, side by side in one run; registrations in
 * ascending address order and in a random order (a multi-threaded JIT, an
 * arena reused). The regions are fake (never executed), 64 bytes apart, so
 * the jitdump copies readable bytes; names are formatted before the timed
 * loop. The table's resident memory per region is reported.
 *
 * Then the table's cost for every shape of region, registration and
 * unregistration apart, table against no table side by side: a name only,
 * + file and line, + a 4-row line table, + unwind rules of its own (two
 * FDEs), + unwind rules shared (as trampolines share their template's),
 * and trampolines created and destroyed; in ascending and random order
 * (unregistration in the order of registration).
 *
 * Times are the thread's CPU time (page faults included, waits for a core
 * not). Last, what the table's timestamps cost on this machine (a removal reads
 * the removal clock, src/tick_clock.h; a registration the time-stamp counter
 * on x86_64), beside CLOCK_MONOTONIC.
 *
 * Instruction counts, which a loaded machine cannot blur: bench/standby_cost.sh
 * runs one variant at a time under callgrind (--only, below) and prints
 * them beside these timings.
 * Usage: bench_standby [N] [--only table|no-table --shape SHAPE] [--order up|random]
 *        (default 100000 regions, every variant, shape and order; SHAPE:
 *        name, file, lines, cfi, cfi-shared, trampoline)
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include "bench_util.h"
#include "tick_clock.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { ROUNDS = 5, REGION = 64, NAME = 32 };

static uint8_t *code;
static char *names;    /* NAME bytes per region: "jit_fn_N" */
static size_t *place;  /* registration i goes to code + place[i] * REGION */
static jf_cfi *cfi;    /* the cfi shapes: every region's unwind rules */
static jf_fn *entries; /* the trampoline shape: what was created */

enum { NAME_ONLY, FILE_LINE, LINES, CFI_OWN, CFI_SHARED, TRAMPOLINE, SHAPES };
static const char *const shape_names[SHAPES] = {"name", "file", "lines", "cfi", "cfi-shared", "trampoline"};
static const char *const shape_titles[SHAPES] = {
    "name only",          "+ file and line",       "+ 4-row line table",
    "+ own unwind rules", "+ shared unwind rules", "trampoline create/destroy"};
static int shape;
static const jf_line lines4[] = {{0, 10, NULL}, {8, 11, NULL}, {24, 12, NULL}, {40, 14, NULL}};
int jf__cfi_share(jf_cfi *cfi); /* src/cfi.h: as trampolines share their template's */
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

static void target(void)
{
}

/* Register (or, for the trampoline shape, create) region i of the shape. */
static void register_one(size_t i)
{
    const char *name = names + place[i] * NAME;
    if (shape == TRAMPOLINE) {
        if (jf_trampoline_create(target, name, NULL, &entries[i]) != 0)
            bench_die(jf_last_error());
        return;
    }
    jf_region r = JF_REGION_INIT;
    r.addr = code + place[i] * REGION;
    r.size = REGION;
    r.name = name;
    if (shape != NAME_ONLY) {
        r.file = "prog.mvm";
        r.line = 10;
    }
    if (shape == LINES) {
        r.lines = lines4;
        r.n_lines = 4;
    }
    r.cfi = shape == CFI_OWN || shape == CFI_SHARED ? cfi : NULL;
    if (jf_register(&r) != 0)
        bench_die(jf_last_error());
}

/* This thread's CPU time in seconds: what the calls cost, without the
 * time the thread waited for a core (on the 2 shared cores of the
 * reference machine, at load 15, wall time per call swung 0.1-5 us). */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds to register n regions one by one, in the order of place[].
 * Not inlined: standby_cost.sh counts its instructions by name. */
__attribute__((noinline)) double register_all(size_t n);
__attribute__((noinline)) double register_all(size_t n)
{
    double t0 = cpu_seconds();
    for (size_t i = 0; i < n; i++)
        register_one(i);
    return cpu_seconds() - t0;
}

/* CPU seconds to unregister (destroy) them all, in the same order. */
__attribute__((noinline)) double unregister_all(size_t n);
__attribute__((noinline)) double unregister_all(size_t n)
{
    double t0 = cpu_seconds();
    for (size_t i = 0; i < n; i++)
        if ((shape == TRAMPOLINE ? jf_trampoline_destroy(entries[i])
                                 : jf_unregister(code + place[i] * REGION)) != 0)
            bench_die(jf_last_error());
    return cpu_seconds() - t0;
}

/* Ascending addresses, or a fixed random permutation of them. */
static void set_order(size_t n, int random_order)
{
    for (size_t i = 0; i < n; i++)
        place[i] = i;
    srand(25);
    for (size_t i = n - 1; random_order && i > 0; i--) {
        size_t j = ((size_t)rand() * ((size_t)RAND_MAX + 1) + (size_t)rand()) % (i + 1);
        size_t t = place[i];
        place[i] = place[j];
        place[j] = t;
    }
}

/* Resident bytes of the published table's mapping, from /proc/self/smaps. */
static size_t table_resident_bytes(size_t *mapped)
{
    const void *addr;
    if (jf_published_table(&addr, mapped) != 0)
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

/* The unwind rules of shape s: none, two FDEs, or those shared. */
static void set_cfi(int s)
{
    jf_cfi_free(cfi);
    cfi = NULL;
    if (s != CFI_OWN && s != CFI_SHARED)
        return;
    if (jf_cfi_new(&cfi) != 0 || jf_cfi_add_frameless(cfi, 0, 16, 8) != 0 ||
        jf_cfi_add_frameless(cfi, 16, REGION, 16) != 0)
        bench_die(jf_last_error());
    if (s == CFI_SHARED && jf__cfi_share(cfi) != 0)
        bench_die(jf_last_error());
}

enum { STANDBY, STANDBY_NO_TABLE, PERFMAP, JITDUMP, VARIANTS };
static const char *const variant_names[VARIANTS] = {"standby (table)", "standby, no table", "perfmap",
                                                    "jitdump"};
static size_t table_bytes, table_mapped;

/* One round of variant v: ns per registration (and, for standby, the
 * seconds jf_enable(perf map) then took to replay all n, in *enable_s;
 * unregister_ns: ns per unregistration after, or NULL to stop instead). */
static double run(int v, size_t n, double *enable_s, double *unregister_ns)
{
    static const unsigned sinks[VARIANTS] = {0, 0, JF_SINK_PERFMAP, JF_SINK_JITDUMP};
    start(sinks[v], v == STANDBY_NO_TABLE ? JF_CONFIG_NO_TABLE : 0);
    double s = register_all(n);
    if (unregister_ns)
        *unregister_ns = unregister_all(n) / (double)n * 1e9;
    if (v == STANDBY) {
        table_bytes = table_resident_bytes(&table_mapped);
        if (enable_s) {
            double t0 = bench_now_seconds();
            if (jf_enable(JF_SINK_PERFMAP) != 0)
                bench_die(jf_last_error());
            *enable_s = bench_now_seconds() - t0;
        }
    }
    stop();
    return s / (double)n * 1e9;
}

/* Medians of `variants` measured in rotating rounds. */
static void measure(const int *variants, int k, size_t n, double *med, double *enable_med)
{
    double ns[VARIANTS][ROUNDS], enable[ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        for (int j = 0; j < k; j++) {
            int v = variants[(j + r) % k];
            ns[v][r] = run(v, n, &enable[r], NULL);
        }
    for (int j = 0; j < k; j++)
        med[variants[j]] = bench_median(ns[variants[j]], ROUNDS);
    if (enable_med)
        *enable_med = bench_median(enable, ROUNDS);
}

static void report(const char *order, const int *variants, int k, const double *med)
{
    printf("registration in %s address order, median of %d rotating rounds:\n", order, ROUNDS);
    for (int j = 0; j < k; j++)
        printf("  %-18s %8.1f ns per region\n", variant_names[variants[j]], med[variants[j]]);
    printf("  published table: standby / standby without it = %.3f (target <= 1.2)\n",
           med[STANDBY] / med[STANDBY_NO_TABLE]);
}

/* Table against no table for the current shape and order: medians of
 * rotating rounds, registration and unregistration apart. */
static void measure_shape(size_t n, const char *order)
{
    double reg[2][ROUNDS], unreg[2][ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        for (int j = 0; j < 2; j++) {
            int v = (j + r) % 2 ? STANDBY_NO_TABLE : STANDBY;
            reg[v][r] = run(v, n, NULL, &unreg[v][r]);
        }
    double rt = bench_median(reg[STANDBY], ROUNDS), rn = bench_median(reg[STANDBY_NO_TABLE], ROUNDS);
    double ut = bench_median(unreg[STANDBY], ROUNDS), un = bench_median(unreg[STANDBY_NO_TABLE], ROUNDS);
    printf("  %-26s %-9s register %7.1f / %7.1f ns = %.3f   unregister %7.1f / %7.1f ns = %.3f\n",
           shape_titles[shape], order, rt, rn, rt / rn, ut, un, ut / un);
}

/* What the table's timestamps cost here: a removal reads the removal clock
 * (CLOCK_MONOTONIC, mostly extrapolated from the time-stamp counter), a
 * registration the counter (x86_64) and at most every ~0.5 ms
 * CLOCK_MONOTONIC_COARSE. ns per call, median of ROUNDS rounds of 1,000,000. */
static double clock_ns(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* ns per call of one source: 0 CLOCK_MONOTONIC, 1 CLOCK_MONOTONIC_COARSE,
 * 2 the removal clock, 3 the time-stamp counter. */
static double time_source_ns(int k, jf__tick_clock *removals)
{
    enum { CALLS = 1000000 };
    volatile double sink = 0;
    double t0 = cpu_seconds();
    for (int i = 0; i < CALLS; i++) {
        if (k == 2) {
            sink = sink + (double)jf__tick_clock_now(removals);
            continue;
        }
#if defined(__x86_64__)
        if (k == 3) {
            sink = sink + (double)__builtin_ia32_rdtsc();
            continue;
        }
#endif
        sink = sink + clock_ns(k == 0 ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_COARSE);
    }
    return (cpu_seconds() - t0) / CALLS * 1e9;
}

static void measure_time_sources(void)
{
    static const char *const source_names[] = {"CLOCK_MONOTONIC", "CLOCK_MONOTONIC_COARSE", "removal clock",
                                               "rdtsc"};
#if defined(__x86_64__)
    enum { SOURCES = 4 };
#else
    enum { SOURCES = 3 };
#endif
    double ns[4][ROUNDS];
    /* The removal clock as a process's removals find it: its rate measured. */
    jf__tick_clock removals;
    jf__tick_clock_init(&removals);
    for (long i = 0; i < 100000000 && removals.usable && !removals.ns_per_tick_q32; i++)
        (void)jf__tick_clock_now(&removals);
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < SOURCES; k++)
            ns[k][r] = time_source_ns(k, &removals);
    printf("timestamps, ns per call (median of %d rounds of 1,000,000):", ROUNDS);
    for (int k = 0; k < SOURCES; k++)
        printf(" %s %.1f", source_names[k], bench_median(ns[k], ROUNDS));
    printf("\n");
}

/* Every shape in both orders (trampolines: the library places them). */
static void measure_shapes(size_t n)
{
    printf("the table's cost by shape, table / no table, median of %d rotating rounds (target <= 1.2):\n",
           ROUNDS);
    for (shape = 0; shape < SHAPES; shape++) {
        set_cfi(shape);
        for (int random_order = 0; random_order < 2; random_order++) {
            if (shape == TRAMPOLINE && random_order)
                continue;
            set_order(n, random_order);
            measure_shape(n, random_order ? "random" : "ascending");
        }
    }
}

int main(int argc, char **argv)
{
    size_t n = 100000;
    int only = -1, order = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = strcmp(argv[++i], "no-table") == 0 ? STANDBY_NO_TABLE : STANDBY;
        else if (strcmp(argv[i], "--order") == 0 && i + 1 < argc)
            order = strcmp(argv[++i], "random") == 0;
        else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc) {
            for (shape = SHAPES - 1; shape > 0 && strcmp(argv[i + 1], shape_names[shape]) != 0; shape--)
                ;
            i++;
        } else
            n = strtoul(argv[i], NULL, 10);
    }
    code = calloc(n ? n : 1, REGION);
    names = malloc((n ? n : 1) * NAME);
    place = malloc((n ? n : 1) * sizeof *place);
    entries = malloc((n ? n : 1) * sizeof *entries);
    if (n == 0 || !mkdtemp(dump_dir) || !code || !names || !place || !entries)
        bench_die("bench_standby: setup");
    for (size_t i = 0; i < n; i++)
        snprintf(names + i * NAME, NAME, "jit_fn_%zu", i);
    if (only >= 0) { /* one round of one variant, for callgrind */
        double unused;
        set_cfi(shape);
        set_order(n, order == 1);
        run(only, n, NULL, &unused);
    } else {
        double med[VARIANTS], enable_s;
        static const int all[] = {STANDBY, STANDBY_NO_TABLE, PERFMAP, JITDUMP};
        static const int standby_pair[] = {STANDBY, STANDBY_NO_TABLE};
        set_order(n, 0);
        measure(all, 4, n, med, &enable_s);
        report("ascending", all, 4, med);
        printf("  jf_enable(perfmap) after standby: %.1f ms to replay %zu live regions (%.0f ns each)\n",
               enable_s * 1e3, n, enable_s / (double)n * 1e9);
        set_order(n, 1);
        measure(standby_pair, 2, n, med, NULL);
        report("random", standby_pair, 2, med);
        printf("table: %zu bytes resident for %zu regions, %.1f per region (96-byte entry + name "
               "\"jit_fn_N\" + NUL in a 16-byte block); %zu bytes of address space\n",
               table_bytes, n, (double)table_bytes / (double)n, table_mapped);
        measure_shapes(n);
        measure_time_sources();
    }
    rmdir(dump_dir);
    free(code);
    free(names);
    free(place);
    free(entries);
    jf_cfi_free(cfi);
    return 0;
}
