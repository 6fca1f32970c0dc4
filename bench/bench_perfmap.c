/*
 * Perf map registration throughput: jf_register with the perfmap sink
 * against baselines measured in the same run, median of 5 interleaved runs
 * of N regions each, in a rotating order:
 *   (a) a mutex + fprintf + fflush per entry — how runtimes usually do it;
 *   (b) one write(2) per pre-formatted line — the floor for a durable map
 *       written with a system call per line;
 *   (c) getrlimit(RLIMIT_FSIZE) + write(2) per line — what such a writer
 *       that must never raise SIGXFSZ pays.
 * All write a real file in /tmp (jitframes its /tmp/perf-<pid>.map, the
 * baselines a temporary file next to it); every one is durable per entry
 * (jitframes: stored into a shared mapping of the file). Targets (issue 10):
 * jitframes >= 3x (a) and >= 2x (b); batches of 100 reported too.
 * Those runs share one process, so only the first pays the page faults of
 * the library's mappings (the published table's above all); the fresh
 * section then runs jitframes in a new process per run, the table on
 * against JF_CONFIG_NO_TABLE interleaved, and prints CPU time (page faults
 * included), minor faults and peak memory of each (bench_util.h).
 * Usage: bench_perfmap [N [jitframes|a|b|c]]   (default 1000000; naming one
 * writer runs only it, once: for profiling with perf record or callgrind;
 * "jitframes-notable" is jitframes with JF_CONFIG_NO_TABLE)
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include "bench_util.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { RUNS = 5, REGION_SIZE = 64 };
static const uintptr_t BASE = 0x7f0000000000u;

static size_t n_regions = 1000000;
static char **names; /* "jit_fn_<i>" */
static char **lines; /* pre-formatted map lines for baseline (b) */
static size_t *line_lens;
static int profiling;       /* one writer only: skip what is not measured */
static unsigned table_flag; /* 0 or JF_CONFIG_NO_TABLE */

static void prepare_inputs(void)
{
    names = calloc(n_regions, sizeof *names);
    lines = calloc(n_regions, sizeof *lines);
    line_lens = calloc(n_regions, sizeof *line_lens);
    if (!names || !lines || !line_lens)
        bench_die("calloc");
    for (size_t i = 0; i < n_regions; i++) {
        char buf[128];
        snprintf(buf, sizeof buf, "jit_fn_%zu", i);
        names[i] = strdup(buf);
        if (profiling) {
            lines[i] = names[i];
            continue;
        }
        int n = snprintf(buf, sizeof buf, "%lx %x %s\n", (unsigned long)(BASE + i * REGION_SIZE), REGION_SIZE,
                         names[i]);
        lines[i] = strdup(buf);
        line_lens[i] = (size_t)n;
        if (!names[i] || !lines[i])
            bench_die("strdup");
    }
}

static char perf_map_path[64];
static char baseline_path[64];

enum { BATCH = 100 };

/* jitframes, perfmap sink only: every region through jf_register, or (batch)
 * BATCH regions per jf_register_batch call. */
static double run_jitframes_in(size_t per_call)
{
    unlink(perf_map_path);
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV | table_flag;
    cfg.sinks = JF_SINK_PERFMAP;
    if (jf_init(&cfg) != 0) {
        fprintf(stderr, "jf_init: %s\n", jf_last_error());
        exit(1);
    }
    jf_region batch[BATCH];
    double t0 = bench_now_seconds();
    for (size_t i = 0; i < n_regions; i += per_call) {
        size_t n = n_regions - i < per_call ? n_regions - i : per_call;
        for (size_t k = 0; k < n; k++) {
            jf_region r = JF_REGION_INIT;
            r.addr = (const void *)(BASE + (i + k) * REGION_SIZE);
            r.size = REGION_SIZE;
            r.name = names[i + k];
            batch[k] = r;
        }
        if ((n == 1 ? jf_register(batch) : jf_register_batch(batch, n)) != 0) {
            fprintf(stderr, "jf_register: %s\n", jf_last_error());
            exit(1);
        }
    }
    double t = bench_now_seconds() - t0;
    unlink(perf_map_path);
    if (!profiling) /* freeing 1M regions is not registration */
        jf_shutdown();
    return t;
}

static double run_jitframes(void)
{
    return run_jitframes_in(1);
}

static pthread_mutex_t stdio_lock = PTHREAD_MUTEX_INITIALIZER;

/* (a) the common runtime writer: stdio, a lock, a flush per entry. */
static double run_stdio_baseline(void)
{
    FILE *f = fopen(baseline_path, "we");
    if (!f)
        bench_die("fopen");
    double t0 = bench_now_seconds();
    for (size_t i = 0; i < n_regions; i++) {
        pthread_mutex_lock(&stdio_lock);
        fprintf(f, "%lx %x %s\n", (unsigned long)(BASE + i * REGION_SIZE), REGION_SIZE, names[i]);
        fflush(f);
        pthread_mutex_unlock(&stdio_lock);
    }
    double t = bench_now_seconds() - t0;
    fclose(f);
    unlink(baseline_path);
    return t;
}

/* One write(2) of an already formatted line per entry; with check_limit,
 * getrlimit(RLIMIT_FSIZE) before each, as a writer that must never raise
 * SIGXFSZ has to do. */
static double run_write(int check_limit)
{
    int fd = open(baseline_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        bench_die("open");
    struct rlimit lim;
    double t0 = bench_now_seconds();
    for (size_t i = 0; i < n_regions; i++) {
        if (check_limit && getrlimit(RLIMIT_FSIZE, &lim) != 0)
            bench_die("getrlimit");
        if (write(fd, lines[i], line_lens[i]) != (ssize_t)line_lens[i])
            bench_die("write");
    }
    double t = bench_now_seconds() - t0;
    close(fd);
    unlink(baseline_path);
    return t;
}

/* (b) the floor: one write(2) of an already formatted line per entry. */
static double run_write_baseline(void)
{
    return run_write(0);
}

/* (c) the floor under this issue's own rule (check RLIMIT_FSIZE before
 * every write, never raise SIGXFSZ): getrlimit + write per entry. */
static double run_checked_write_baseline(void)
{
    return run_write(1);
}

/* ns per getrlimit(RLIMIT_FSIZE) in a tight loop (warm caches). */
static double getrlimit_ns(void)
{
    struct rlimit lim;
    enum { CALLS = 200000 };
    double t0 = bench_now_seconds();
    for (int i = 0; i < CALLS; i++)
        getrlimit(RLIMIT_FSIZE, &lim);
    return (bench_now_seconds() - t0) * 1e9 / CALLS;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        n_regions = strtoul(argv[1], NULL, 10);
    if (n_regions == 0)
        n_regions = 1;
    snprintf(perf_map_path, sizeof perf_map_path, "/tmp/perf-%ld.map", (long)getpid());
    snprintf(baseline_path, sizeof baseline_path, "/tmp/jf-bench-baseline-%ld.map", (long)getpid());
    profiling = argc > 2 && strcmp(argv[2], "b") != 0 && strcmp(argv[2], "c") != 0;
    prepare_inputs();
    table_flag = bench_wants_no_table(argc, argv) ? JF_CONFIG_NO_TABLE : 0;
    if (bench_fresh_child(argc, argv, run_jitframes))
        return 0;
    if (argc > 2) {
        double t = strcmp(argv[2], "a") == 0   ? run_stdio_baseline()
                   : strcmp(argv[2], "b") == 0 ? run_write_baseline()
                   : strcmp(argv[2], "c") == 0 ? run_checked_write_baseline()
                                               : run_jitframes();
        printf("%s: %.0f entries/s\n", argv[2], (double)n_regions / t);
        return 0;
    }

    double rate_jf[RUNS], rate_a[RUNS], rate_b[RUNS], rate_c[RUNS];
    for (int run = 0; run < RUNS; run++) {
        /* Rotate the order so no writer always runs first (page cache, CPU clock). */
        for (int k = 0; k < 4; k++) {
            switch ((run + k) % 4) {
            case 0: rate_jf[run] = (double)n_regions / run_jitframes(); break;
            case 1: rate_a[run] = (double)n_regions / run_stdio_baseline(); break;
            case 2: rate_b[run] = (double)n_regions / run_write_baseline(); break;
            default: rate_c[run] = (double)n_regions / run_checked_write_baseline(); break;
            }
        }
        fprintf(stderr, "run %d: jitframes %.0f/s, (a) %.0f/s, (b) %.0f/s, (c) %.0f/s\n", run + 1,
                rate_jf[run], rate_a[run], rate_b[run], rate_c[run]);
    }
    double jf = bench_median(rate_jf, RUNS), a = bench_median(rate_a, RUNS), b = bench_median(rate_b, RUNS),
           c = bench_median(rate_c, RUNS);
    double batched = (double)n_regions / run_jitframes_in(BATCH); /* one run: for information */
    printf("perf map registration, %zu regions, median of %d interleaved runs\n", n_regions, RUNS);
    printf("  jitframes (jf_register, perfmap)   %12.0f entries/s\n", jf);
    printf("  (a) mutex + fprintf + fflush       %12.0f entries/s\n", a);
    printf("  (b) write(2) of formatted lines    %12.0f entries/s\n", b);
    printf("  (c) getrlimit + write(2) per line  %12.0f entries/s\n", c);
    printf("  jitframes / (a) = %.2fx   (target >= 3x) %s\n", jf / a, jf / a >= 3 ? "ok" : "MISSED");
    printf("  jitframes / (b) = %.2fx   (target >= 2x) %s\n", jf / b, jf / b >= 2 ? "ok" : "MISSED");
    printf("  jitframes / (c) = %.2fx\n", jf / c);
    printf(
        "  jf_register_batch, %d regions per call (durable per call): %.0f entries/s, %.2fx (a), %.2fx (b)\n",
        BATCH, batched, batched / a, batched / b);
    printf("  per entry: jitframes %.0f ns, (a) %.0f ns, (b) %.0f ns, (c) %.0f ns; one getrlimit() %.0f ns\n",
           1e9 / jf, 1e9 / a, 1e9 / b, 1e9 / c, getrlimit_ns());
    bench_fresh_table_on_off(argv[0], n_regions); /* children: "<N> jitframes[-notable] fresh" */
    return 0;
}
