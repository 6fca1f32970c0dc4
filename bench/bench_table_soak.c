/*
 * Soak of the published table (issue 31): 100,000 live regions, each with
 * a line table and unwind rules of its own, churned at a steady rate (a
 * change: one region unregistered, a new version of it registered at the
 * same address) for a while, with the table and without it
 * (JF_CONFIG_NO_TABLE), side by side in one run. Prints each change's
 * p50/p99/max time, and with the table, how many reads `jitframes regions
 * PID --json` (the CLI's C reader, run again and again from a thread
 * during the churn) got consistent and how many live regions they listed.
 * Not a test: run on demand.
 * Usage: bench_table_soak --cli PATH/jitframes [--seconds S] [--regions N] [--rates R1,R2]
 *        (default 60 s per rate and variant, 100000 regions, 1000,10000 changes/s)
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include "bench_util.h"

#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { REGION = 64, LINES = 8, NAME = 48, RATES_MAX = 8 };

static uint8_t *code;
static unsigned *version;
static size_t n_regions = 100000;
static jf_cfi *cfi;
static jf_line lines[LINES];

static void register_version(size_t i)
{
    char name[NAME];
    snprintf(name, sizeof name, "soak_%zu_v%u", i, version[i]);
    jf_region r = JF_REGION_INIT;
    r.addr = code + i * REGION;
    r.size = REGION;
    r.name = name;
    r.file = "soak.mvm";
    r.line = 1;
    r.lines = lines;
    r.n_lines = LINES;
    r.cfi = cfi;
    if (jf_register(&r) != 0)
        bench_die(jf_last_error());
}

/* ---- The reader thread: `jitframes regions PID --json` in a loop -------- */

static const char *cli;
static volatile int reading;

typedef struct read_stats {
    size_t reads, consistent, failed;
    size_t min_live, max_live;
} read_stats;

/* One read: 0 with *consistent and *live, or -1. */
static int read_once(int *consistent, size_t *live)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    /* posix_spawn, not fork: no atfork handlers (a forked child would make
     * its own table of 100,000 regions before exec). */
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY,
                                     0); /* "changed during all N reads": counted here */
    char *args[] = {(char *)cli, "regions", pid, "--json", NULL};
    pid_t child;
    if (posix_spawn(&child, cli, &fa, NULL, args, environ) != 0)
        child = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    FILE *f = fdopen(p[0], "r");
    char *line = NULL;
    size_t cap = 0;
    int in_live = 1, ok = 0;
    *consistent = 0;
    *live = 0;
    while (f && getline(&line, &cap, f) > 0) {
        if (!ok && strstr(line, "\"consistent\": ")) {
            ok = 1;
            *consistent = strstr(line, "\"consistent\": true") != NULL;
        } else if (strstr(line, "\"removed\": [")) {
            in_live = 0;
        } else if (in_live && strncmp(line, "  {\"start\"", 10) == 0) {
            (*live)++;
        }
    }
    free(line);
    if (f)
        fclose(f);
    int status;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return ok ? 0 : -1;
}

static void *reader(void *arg)
{
    read_stats *st = arg;
    st->min_live = SIZE_MAX;
    while (reading) {
        int consistent;
        size_t live;
        if (read_once(&consistent, &live) != 0) {
            st->failed++;
            continue;
        }
        st->reads++;
        st->consistent += (size_t)consistent;
        if (live < st->min_live)
            st->min_live = live;
        if (live > st->max_live)
            st->max_live = live;
    }
    return NULL;
}

/* ---- Churn ------------------------------------------------------------- */

static double now_ns(void)
{
    return bench_now_seconds() * 1e9;
}

typedef struct churn_result {
    double p50, p99, max; /* ns per change */
    size_t changes;
    read_stats reads;
} churn_result;

/* Fill, churn at `rate` changes/s for `seconds`, read meanwhile (table on). */
static churn_result churn(int no_table, double rate, double seconds)
{
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV | (no_table ? JF_CONFIG_NO_TABLE : 0);
    if (jf_init(&c) != 0)
        bench_die(jf_last_error());
    for (size_t i = 0; i < n_regions; i++)
        register_version(i);
    size_t max_changes = (size_t)(rate * seconds) + 1;
    double *ns = malloc(max_changes * sizeof *ns);
    if (!ns)
        bench_die("malloc");
    churn_result res = {0};
    pthread_t t;
    reading = !no_table && cli;
    if (reading && pthread_create(&t, NULL, reader, &res.reads) != 0)
        bench_die("pthread_create");
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    long step = (long)(1e9 / rate);
    size_t k = 0;
    srand(31);
    for (; k < max_changes; k++) {
        next.tv_nsec += step;
        while (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        size_t i = ((size_t)rand() * ((size_t)RAND_MAX + 1) + (size_t)rand()) % n_regions;
        double t0 = now_ns();
        if (jf_unregister(code + i * REGION) != 0)
            bench_die(jf_last_error());
        version[i]++;
        register_version(i);
        ns[k] = now_ns() - t0;
    }
    if (reading) {
        reading = 0;
        pthread_join(t, NULL);
    }
    res.changes = k;
    bench_median(ns, k); /* sorts */
    res.p50 = ns[k / 2];
    res.p99 = ns[(size_t)((double)k * 0.99)];
    res.max = ns[k - 1];
    free(ns);
    jf_shutdown();
    return res;
}

int main(int argc, char **argv)
{
    double seconds = 60, rates[RATES_MAX] = {1000, 10000};
    int n_rates = 2;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cli") == 0 && i + 1 < argc)
            cli = argv[++i];
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "--regions") == 0 && i + 1 < argc)
            n_regions = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--rates") == 0 && i + 1 < argc) {
            char *s = argv[++i];
            for (n_rates = 0; n_rates < RATES_MAX && *s; n_rates++) {
                rates[n_rates] = strtod(s, &s);
                s += *s == ',';
            }
        } else {
            fprintf(stderr, "usage: bench_table_soak --cli PATH/jitframes [--seconds S] [--regions N] "
                            "[--rates R1,R2]\n");
            return 2;
        }
    }
    if (!cli)
        fprintf(stderr, "bench_table_soak: no --cli: reader consistency not measured\n");
    if (n_regions == 0 || seconds <= 0)
        bench_die("bench_table_soak: --regions and --seconds must be positive");
    code = calloc(n_regions, REGION);
    version = calloc(n_regions, sizeof *version);
    if (!code || !version || jf_cfi_new(&cfi) != 0 || jf_cfi_add_frameless(cfi, 0, 16, 8) != 0 ||
        jf_cfi_add_frameless(cfi, 16, REGION, 16) != 0)
        bench_die("bench_table_soak: setup");
    for (int k = 0; k < LINES; k++)
        lines[k] = (jf_line){(size_t)k * (REGION / LINES), 1u + (unsigned)k, NULL};
    printf("%zu regions with %d-row line tables and unwind rules (two FDEs), churned %.0f s per rate:\n",
           n_regions, LINES, seconds);
    for (int r = 0; r < n_rates; r++)
        for (int v = 0; v < 2; v++) {
            churn_result res = churn(v, rates[r], seconds);
            printf("  %6.0f changes/s, %-8s: %zu changes, per change p50 %.1f us, p99 %.1f us, max %.1f us",
                   rates[r], v ? "no table" : "table", res.changes, res.p50 / 1e3, res.p99 / 1e3,
                   res.max / 1e3);
            if (!v && cli)
                printf("; reader: %zu reads, %zu consistent, %zu failed, %zu-%zu live listed",
                       res.reads.reads, res.reads.consistent, res.reads.failed,
                       res.reads.reads ? res.reads.min_live : 0, res.reads.max_live);
            printf("\n");
            fflush(stdout);
        }
    jf_cfi_free(cfi);
    free(version);
    free(code);
    return 0;
}
