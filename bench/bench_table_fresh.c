/*
 * The published table's share of registration in a FRESH process, where
 * every page the table touches is a page fault (a benchmark that repeats
 * rounds in one process pays them only in its first): each round forks a
 * child that initialises jitframes with the table on, or off
 * (JF_CONFIG_NO_TABLE), registers N regions and reports its CPU time
 * (user + system: page faults included), its minor faults during the
 * registrations, and its peak resident memory; table and no table
 * alternate, side by side in one run. With --sink perfmap the perf map is
 * on too (how the issue measured it), with --sink jitdump the jitdump (its
 * file in a directory of the run's own, removed; the regions' code is real
 * memory, touched before the loop, since a CODE_LOAD record copies it); the
 * default is standby (no sink).
 * Names are formatted and touched before the measured loop. --touch B adds
 * a third variant: no table, but B bytes per registration written into
 * fresh memory mapped as the grown table is (anonymous, MADV_HUGEPAGE), which
 * tells how much of the table's share is its memory (B = its bytes per
 * region) and how much its instructions.
 * --idle S sleeps S seconds before each child: rounds run back to back reuse
 * the memory the last child just freed, which a VM that hands free memory
 * back to its host (free page reporting) has not yet given away, so they
 * understate what a fresh process pays after the machine was idle (there,
 * huge pages most of all).
 * Usage: bench_table_fresh [N] [--sink perfmap|jitdump] [--rounds R] [--touch B] [--idle S]
 *        (default 1000000, 5 rounds)
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include "bench_util.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

enum { NAME = 32, REGION = 64, ROUNDS_MAX = 25, TOUCH_MAX = 4096 };

/* The variants, alternated in each round. */
enum { TABLE, NO_TABLE, NO_TABLE_TOUCHING, VARIANTS };
static const char *const variant_name[VARIANTS] = {"table", "no table", "no table + touch"};

typedef struct sample {
    double cpu_ns;   /* per registration */
    double minflt;   /* per registration */
    double peak_mib; /* the child's peak resident memory */
} sample;

static double cpu_seconds(const struct rusage *u)
{
    return (double)u->ru_utime.tv_sec + (double)u->ru_utime.tv_usec * 1e-6 + (double)u->ru_stime.tv_sec +
           (double)u->ru_stime.tv_usec * 1e-6;
}

/* Fresh memory for `bytes`, paged as the grown table is; NULL if refused. */
static char *fresh_memory(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

static char dump_dir[] = "/tmp/jf-table-fresh-XXXXXX"; /* the jitdump's: made by main */

/* The child: register n regions (writing `touch` fresh bytes after each),
 * write {cpu s, minor faults} to fd. */
static int child(size_t n, unsigned sinks, int no_table, size_t touch, int fd)
{
    char *names = malloc(n * NAME);
    char *fresh = touch ? fresh_memory(n * touch) : NULL;
    if (!names || (touch && !fresh))
        return 1;
    for (size_t i = 0; i < n; i++)
        snprintf(names + i * NAME, NAME, "jit_fn_%zu", i);
    uintptr_t base = (uintptr_t)1 << 40; /* never touched: standby and the perf map read no code */
    if (sinks & JF_SINK_JITDUMP) {
        char *code = malloc(n * REGION);
        if (!code)
            return 1;
        memset(code, 0xc3, n * REGION);
        base = (uintptr_t)code;
    }
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV | (no_table ? JF_CONFIG_NO_TABLE : 0);
    c.sinks = sinks;
    c.dump_dir = dump_dir;
    if (jf_init(&c) != 0)
        return 2;
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    for (size_t i = 0; i < n; i++) {
        jf_region r = JF_REGION_INIT;
        r.addr = (const void *)(base + i * REGION);
        r.size = REGION;
        r.name = names + i * NAME;
        if (jf_register(&r) != 0)
            return 3;
        if (touch)
            memset(fresh + i * touch, 1, touch);
    }
    getrusage(RUSAGE_SELF, &after);
    double out[2] = {cpu_seconds(&after) - cpu_seconds(&before),
                     (double)(after.ru_minflt - before.ru_minflt)};
    if (write(fd, out, sizeof out) != (ssize_t)sizeof out)
        return 4;
    jf_shutdown();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
    unlink(path);
    snprintf(path, sizeof path, "%s/jit-%ld.dump", dump_dir, (long)getpid());
    unlink(path);
    return 0;
}

static sample run(size_t n, unsigned sinks, int variant, size_t touch)
{
    int p[2];
    if (pipe(p) != 0)
        bench_die("pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork");
    if (pid == 0) {
        close(p[0]);
        _exit(child(n, sinks, variant != TABLE, variant == NO_TABLE_TOUCHING ? touch : 0, p[1]));
    }
    close(p[1]);
    double got[2];
    ssize_t k = read(p[0], got, sizeof got);
    close(p[0]);
    int status;
    struct rusage u;
    if (wait4(pid, &status, 0, &u) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        k != sizeof got)
        bench_die("bench_table_fresh: child failed");
    return (sample){got[0] / (double)n * 1e9, got[1] / (double)n, (double)u.ru_maxrss / 1024.0};
}

/* Medians of every variant's rounds, printed; m[v] = {cpu, faults, rss}. */
static void print_variant(int v, size_t n, size_t touch, const double m[3])
{
    char label[48];
    if (v == NO_TABLE_TOUCHING)
        snprintf(label, sizeof label, "no table + %zu B", touch);
    else
        snprintf(label, sizeof label, "%s", variant_name[v]);
    printf("  %-9s %7.1f ns CPU per registration, %.4f minor faults per registration (%.0f in all), "
           "peak RSS %.1f MiB\n",
           label, m[0], m[1], m[1] * (double)n, m[2]);
}

int main(int argc, char **argv)
{
    size_t n = 1000000, touch = 0;
    unsigned sinks = 0, rounds = 5, idle = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sink") == 0 && i + 1 < argc)
            sinks = strcmp(argv[++i], "perfmap") == 0 ? JF_SINK_PERFMAP
                    : strcmp(argv[i], "jitdump") == 0 ? JF_SINK_JITDUMP
                                                      : 0;
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--touch") == 0 && i + 1 < argc)
            touch = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--idle") == 0 && i + 1 < argc)
            idle = (unsigned)strtoul(argv[++i], NULL, 10);
        else
            n = strtoul(argv[i], NULL, 10);
    }
    if (n == 0 || rounds == 0 || rounds > ROUNDS_MAX || touch > TOUCH_MAX)
        bench_die("bench_table_fresh: N > 0, 1 <= rounds <= 25, touch <= 4096");
    if (!mkdtemp(dump_dir))
        bench_die("mkdtemp");
    int variants = touch ? VARIANTS : NO_TABLE_TOUCHING;
    double cpu[VARIANTS][ROUNDS_MAX], flt[VARIANTS][ROUNDS_MAX], rss[VARIANTS][ROUNDS_MAX];
    for (unsigned r = 0; r < rounds; r++)
        for (int j = 0; j < variants; j++) {
            int v = (j + (int)r) % variants; /* each variant starts a round in turn */
            sleep(idle);
            sample s = run(n, sinks, v, touch);
            cpu[v][r] = s.cpu_ns;
            flt[v][r] = s.minflt;
            rss[v][r] = s.peak_mib;
        }
    rmdir(dump_dir);
    printf("%zu registrations in a fresh process (%s), median of %u alternating rounds:\n", n,
           sinks == JF_SINK_PERFMAP ? "perf map on"
           : sinks                  ? "jitdump on"
                                    : "standby",
           rounds);
    double m[VARIANTS][3];
    for (int v = 0; v < variants; v++) {
        m[v][0] = bench_median(cpu[v], rounds);
        m[v][1] = bench_median(flt[v], rounds);
        m[v][2] = bench_median(rss[v], rounds);
        print_variant(v, n, touch, m[v]);
    }
    printf("  table / no table: CPU %.3f, faults %.3f, peak RSS %.3f (+%.0f bytes per region)\n",
           m[TABLE][0] / m[NO_TABLE][0], m[TABLE][1] / m[NO_TABLE][1], m[TABLE][2] / m[NO_TABLE][2],
           (m[TABLE][2] - m[NO_TABLE][2]) * 1048576.0 / (double)n);
    if (touch) /* the table's memory alone, then what is left: its instructions */
        printf("  no table + %zu fresh bytes / no table: CPU %.3f; table / that: CPU %.3f\n", touch,
               m[NO_TABLE_TOUCHING][0] / m[NO_TABLE][0], m[TABLE][0] / m[NO_TABLE_TOUCHING][0]);
    return 0;
}
