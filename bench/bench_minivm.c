/*
 * bench_minivm: what do trampolines cost a real interpreter?
 *
 * Runs minivm's recursive fib with every interpreted call going through a
 * jitframes trampoline (JITFRAMES=perfmap) and with direct calls
 * (--no-jitframes), interleaved (ABBA order, so drift hits both sides
 * alike), and prints the median CPU time (user + system, from wait4) of each,
 * the time per interpreted call and their ratio. Target: ratio <= 1.05.
 * Wall-clock medians are printed too, but on a busy machine CPU time is the
 * figure to quote. The two runs execute the same code except for the
 * trampoline itself (fn->entry is the eval function or its trampoline), so
 * the difference per call is the trampoline's cost.
 *
 * Usage: bench_minivm [-r RUNS] [-n FIB_N] [MINIVM [FIB.mvm]]   (defaults: 5, 35, the build's)
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MINIVM_BIN
#define MINIVM_BIN "minivm"
#endif
#ifndef MINIVM_FIB
#define MINIVM_FIB "fib.mvm"
#endif

#define MAX_RUNS 101

struct sample {
    double cpu;  /* seconds, user + system */
    double wall; /* seconds */
};

static double seconds(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void child(const char *minivm, const char *program, const char *n, int trampolines)
{
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
        dup2(null, STDOUT_FILENO);
    if (trampolines) {
        setenv("JITFRAMES", "perfmap", 1);
        execl(minivm, minivm, program, n, (char *)NULL);
    } else {
        unsetenv("JITFRAMES");
        execl(minivm, minivm, "--no-jitframes", program, n, (char *)NULL);
    }
    fprintf(stderr, "bench_minivm: cannot run %s: %s\n", minivm, strerror(errno));
    _exit(127);
}

/* The trampoline run must really have used trampolines: its perf map names mvm:fib. */
static int check_and_remove_map(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)pid);
    FILE *f = fopen(path, "r");
    int found = 0;
    while (f && fgets(line, sizeof line, f))
        found |= strstr(line, " mvm:fib\n") != NULL;
    if (f)
        fclose(f);
    unlink(path);
    return found;
}

static int run_once(const char *minivm, const char *program, const char *n, int trampolines,
                    struct sample *out)
{
    fflush(NULL);
    double start = now();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        child(minivm, program, n, trampolines);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return -1;
    out->wall = now() - start;
    out->cpu = seconds(ru.ru_utime) + seconds(ru.ru_stime);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_minivm: minivm failed (status 0x%x)\n", status);
        return -1;
    }
    if (trampolines && !check_and_remove_map(pid)) {
        fprintf(stderr, "bench_minivm: the JITFRAMES=perfmap run wrote no mvm:fib trampoline\n");
        return -1;
    }
    return 0;
}

/* Interpreted calls made by fib(n) plus main: 2 * F(n + 1) - 1 + 1. */
static double fib_calls(long n)
{
    double a = 0, b = 1; /* F(0), F(1) */
    for (long i = 0; i <= n; i++) {
        double next = a + b;
        a = b;
        b = next;
    }
    return 2 * a;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const struct sample *s, int n, int wall)
{
    double v[MAX_RUNS];
    for (int i = 0; i < n; i++)
        v[i] = wall ? s[i].wall : s[i].cpu;
    qsort(v, (size_t)n, sizeof v[0], compare_doubles);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int runs = 5, opt;
    const char *n = "35";
    while ((opt = getopt(argc, argv, "r:n:")) != -1) {
        if (opt == 'r')
            runs = atoi(optarg);
        else if (opt == 'n')
            n = optarg;
        else
            return 2;
    }
    if (runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "bench_minivm: runs must be 1..%d\n", MAX_RUNS);
        return 2;
    }
    const char *minivm = optind < argc ? argv[optind] : MINIVM_BIN;
    const char *program = optind + 1 < argc ? argv[optind + 1] : MINIVM_FIB;
    struct sample direct[MAX_RUNS], tramp[MAX_RUNS];
    printf("minivm fib(%s), %d interleaved runs each: CPU seconds (wall)\n", n, runs);
    for (int i = 0; i < runs; i++) {
        int tramp_first = i % 2; /* ABBA */
        for (int k = 0; k < 2; k++) {
            int t = k == tramp_first ? 1 : 0;
            struct sample *s = t ? &tramp[i] : &direct[i];
            if (run_once(minivm, program, n, t, s) < 0)
                return 1;
            printf("  run %d %-12s %.3f (%.3f)\n", i + 1, t ? "trampolines" : "direct", s->cpu,
                   s->wall);
        }
    }
    double d = median(direct, runs, 0), t = median(tramp, runs, 0);
    double dw = median(direct, runs, 1), tw = median(tramp, runs, 1);
    printf("median direct      %.3f s (wall %.3f)\n", d, dw);
    printf("median trampolines %.3f s (wall %.3f)\n", t, tw);
    double calls = fib_calls(atol(n));
    printf("per interpreted call: %.2f ns direct, %.2f ns with trampolines (+%.2f ns)\n",
           d / calls * 1e9, t / calls * 1e9, (t - d) / calls * 1e9);
    printf("ratio trampolines/direct: %.3f CPU, %.3f wall (target <= 1.05): %s\n", t / d, tw / dw,
           t / d <= 1.05 ? "ok" : "ABOVE TARGET");
    return 0;
}
