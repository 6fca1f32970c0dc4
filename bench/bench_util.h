/*
 * Small helpers every benchmark uses: a monotonic clock, a fatal error for
 * setup failures (benchmarks are programs, not library code) and the median
 * of a run's samples.
 */
#ifndef JF_BENCH_UTIL_H
#define JF_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline double bench_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void bench_die(const char *what)
{
    perror(what);
    exit(1);
}

static inline int bench_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n samples (sorts them in place). */
static inline double bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, bench_compare_doubles);
    return v[n / 2];
}

/* ---- Fresh processes ----------------------------------------------------
 * A run in a process that already ran one finds the library's mappings
 * populated: only a fresh process pays a first run's page faults, which is
 * what every real program pays. The parent runs this program again
 * (/proc/self/exe) per run; the child measures its run with getrusage and
 * prints one "fresh" line. */

typedef struct bench_usage {
    double wall, cpu; /* seconds; cpu: user + system */
    long minflt;      /* minor page faults */
    long maxrss_kb;   /* the process's peak resident set (not a difference) */
} bench_usage;

static inline bench_usage bench_usage_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    bench_usage u = {bench_now_seconds(),
                     (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6,
                     ru.ru_minflt, ru.ru_maxrss};
    return u;
}

/* In the child, after its run: what the run cost since `before`. */
static inline void bench_report_fresh(bench_usage before)
{
    bench_usage after = bench_usage_now();
    printf("fresh %.9f %.9f %ld %ld\n", after.wall - before.wall, after.cpu - before.cpu,
           after.minflt - before.minflt, after.maxrss_kb);
    fflush(stdout);
}

/* Run this program again with argv (argv[0] included) in a fresh process
 * and return what its "fresh" line says. */
static inline bench_usage bench_run_fresh(char *const argv[])
{
    int fds[2];
    if (pipe(fds) != 0)
        bench_die("pipe");
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork");
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(fds[1]);
    char out[4096];
    size_t used = 0;
    ssize_t got;
    while (used < sizeof out - 1 && (got = read(fds[0], out + used, sizeof out - 1 - used)) > 0)
        used += (size_t)got;
    out[used] = '\0';
    close(fds[0]);
    int status;
    bench_usage u;
    const char *line = strstr(out, "fresh ");
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !line ||
        sscanf(line, "fresh %lf %lf %ld %ld", &u.wall, &u.cpu, &u.minflt, &u.maxrss_kb) != 4) {
        fprintf(stderr, "a fresh run failed (status 0x%x): %s\n", status, out);
        exit(1);
    }
    return u;
}

/* Medians of each field over n runs (sorts copies). */
static inline bench_usage bench_usage_median(const bench_usage *runs, size_t n)
{
    double wall[64], cpu[64], flt[64], rss[64];
    if (n > 64)
        n = 64;
    for (size_t i = 0; i < n; i++)
        wall[i] = runs[i].wall, cpu[i] = runs[i].cpu, flt[i] = (double)runs[i].minflt,
        rss[i] = (double)runs[i].maxrss_kb;
    bench_usage m = {bench_median(wall, n), bench_median(cpu, n), (long)bench_median(flt, n),
                     (long)bench_median(rss, n)};
    return m;
}

/* The table-on against JF_CONFIG_NO_TABLE figures of fresh runs of n_regions. */
static inline void bench_print_fresh(const bench_usage *on, const bench_usage *off, size_t runs,
                                     size_t n_regions)
{
    bench_usage a = bench_usage_median(on, runs), b = bench_usage_median(off, runs);
    double n = (double)n_regions;
    printf("fresh processes, %zu regions each, median of %zu (table on / JF_CONFIG_NO_TABLE, interleaved):\n",
           n_regions, runs);
    printf("  CPU time per registration (user+sys) %8.0f ns / %8.0f ns  %.2fx\n", a.cpu * 1e9 / n,
           b.cpu * 1e9 / n, a.cpu / b.cpu);
    printf("  wall time per registration           %8.0f ns / %8.0f ns  %.2fx\n", a.wall * 1e9 / n,
           b.wall * 1e9 / n, a.wall / b.wall);
    printf("  minor page faults in the run         %8ld    / %8ld     %.2fx\n", a.minflt, b.minflt,
           (double)a.minflt / (double)(b.minflt ? b.minflt : 1));
    printf("  peak RSS of the process              %8.1f MiB / %6.1f MiB  %.2fx; the table's share %.0f "
           "bytes per region\n",
           a.maxrss_kb / 1024.0, b.maxrss_kb / 1024.0, (double)a.maxrss_kb / (double)b.maxrss_kb,
           (double)(a.maxrss_kb - b.maxrss_kb) * 1024.0 / n);
}

/* The writer named "jitframes-notable": jitframes with JF_CONFIG_NO_TABLE. */
static inline int bench_wants_no_table(int argc, char **argv)
{
    return argc > 2 && strcmp(argv[2], "jitframes-notable") == 0;
}

/* A child of bench_fresh_table_on_off ("<N> <writer> fresh"): one run,
 * reported; 1 if this process was one. */
static inline int bench_fresh_child(int argc, char **argv, double (*run)(void))
{
    if (argc < 4 || strcmp(argv[3], "fresh") != 0)
        return 0;
    bench_usage before = bench_usage_now();
    run();
    bench_report_fresh(before);
    return 1;
}

/* The fresh section: 5 runs each of "<self> N jitframes fresh" and
 * "<self> N jitframes-notable fresh" (JF_CONFIG_NO_TABLE), interleaved,
 * printed side by side. */
static inline void bench_fresh_table_on_off(char *self, size_t n_regions)
{
    enum { FRESH_RUNS = 5 };
    char count[32];
    snprintf(count, sizeof count, "%zu", n_regions);
    char on_word[] = "jitframes", off_word[] = "jitframes-notable", fresh[] = "fresh";
    char *on_argv[] = {self, count, on_word, fresh, NULL};
    char *off_argv[] = {self, count, off_word, fresh, NULL};
    bench_usage on[FRESH_RUNS], off[FRESH_RUNS];
    for (int run = 0; run < FRESH_RUNS; run++) {
        int off_first = run % 2; /* neither always runs first */
        if (off_first)
            off[run] = bench_run_fresh(off_argv);
        on[run] = bench_run_fresh(on_argv);
        if (!off_first)
            off[run] = bench_run_fresh(off_argv);
    }
    bench_print_fresh(on, off, FRESH_RUNS, n_regions);
}

#endif
