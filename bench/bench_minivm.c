/*
 * bench_minivm: what do trampolines cost a real interpreter?
 *
 * Runs minivm's recursive fib four ways, interleaved (each round starts with
 * a different one, so drift hits all alike):
 *   direct        minivm --no-jitframes: fn->entry is the eval function;
 *   trampolines   minivm, JITFRAMES=perfmap: every call through its
 *                 function's jitframes trampoline;
 *   floor-direct  the floor build (bench/minivm_floor_jit.c) with direct calls;
 *   floor         the floor build calling through the trampoline template
 *                 linked into .text: the least a native frame per
 *                 interpreted call can cost (same instructions, no arena).
 * It prints the median CPU time (user + system, from wait4) of each, the time
 * per interpreted call and the ratios. Target: trampolines/direct <= 1.05.
 * Each ratio compares runs of one binary that differ only in what
 * fn->entry points to, so code layout cannot bias it. Wall-clock figures are
 * printed too; on a busy machine CPU time is the one to quote.
 *
 * Usage: bench_minivm [-r RUNS] [-n FIB_N] [MINIVM [FIB.mvm [FLOOR_VM]]]
 *        (defaults: 21, 32, the build's binaries)
 * Many short runs rather than a few long ones: a run's time depends on its
 * process's random layout (ASLR) by up to +-10% here, the same for every
 * variant, so the median needs many processes, not long ones.
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
#ifndef MINIVM_FLOOR_BIN
#define MINIVM_FLOOR_BIN "" /* not built: no floor runs */
#endif

#define MAX_RUNS 101

struct sample {
    double cpu;  /* seconds, user + system */
    double wall; /* seconds */
};

static double seconds(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Each variant: which binary, and whether its calls go through trampolines. */
enum variant { DIRECT, TRAMPOLINES, FLOOR_DIRECT, FLOOR, N_VARIANTS };
static const char *const variant_name[N_VARIANTS] = {"direct", "trampolines", "floor-direct", "floor"};
static const char *binary[N_VARIANTS]; /* minivm twice, then the floor build twice */

static int through_trampolines(enum variant v)
{
    return v == TRAMPOLINES || v == FLOOR;
}

static void child(const char *program, const char *n, enum variant v)
{
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
        dup2(null, STDOUT_FILENO);
    if (v == TRAMPOLINES)
        setenv("JITFRAMES", "perfmap", 1);
    else
        unsetenv("JITFRAMES");
    if (through_trampolines(v))
        execl(binary[v], binary[v], program, n, (char *)NULL);
    else
        execl(binary[v], binary[v], "--no-jitframes", program, n, (char *)NULL);
    fprintf(stderr, "bench_minivm: cannot run %s: %s\n", binary[v], strerror(errno));
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

static int run_once(const char *program, const char *n, enum variant v, struct sample *out)
{
    fflush(NULL);
    double start = now();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        child(program, n, v);
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
    if (v == TRAMPOLINES && !check_and_remove_map(pid)) {
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
    int runs = 21, opt;
    const char *n = "32";
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
    const char *floor_vm = optind + 2 < argc ? argv[optind + 2] : MINIVM_FLOOR_BIN;
    binary[DIRECT] = binary[TRAMPOLINES] = minivm;
    binary[FLOOR_DIRECT] = binary[FLOOR] = floor_vm;
    int n_variants = *floor_vm ? N_VARIANTS : 2;
    static struct sample samples[N_VARIANTS][MAX_RUNS];
    printf("minivm fib(%s), %d interleaved runs each: CPU seconds (wall)\n", n, runs);
    for (int i = 0; i < runs; i++) {
        for (int k = 0; k < n_variants; k++) {
            enum variant v = (enum variant)((i + k) % n_variants); /* each round starts elsewhere */
            struct sample *s = &samples[v][i];
            if (run_once(program, n, v, s) < 0)
                return 1;
            printf("  run %d %-12s %.3f (%.3f)\n", i + 1, variant_name[v], s->cpu, s->wall);
        }
    }
    double cpu[N_VARIANTS], wall[N_VARIANTS], calls = fib_calls(atol(n));
    for (int v = 0; v < n_variants; v++) {
        cpu[v] = median(samples[v], runs, 0);
        wall[v] = median(samples[v], runs, 1);
        printf("median %-12s %.3f s (wall %.3f), %.2f ns per interpreted call\n", variant_name[v], cpu[v],
               wall[v], cpu[v] / calls * 1e9);
    }
    if (n_variants == N_VARIANTS) /* the floor build is a different binary: its own direct run */
        printf("ratio floor/floor-direct: %.3f CPU, %.3f wall (template in .text, +%.2f ns per call)\n",
               cpu[FLOOR] / cpu[FLOOR_DIRECT], wall[FLOOR] / wall[FLOOR_DIRECT],
               (cpu[FLOOR] - cpu[FLOOR_DIRECT]) / calls * 1e9);
    double d = cpu[DIRECT], t = cpu[TRAMPOLINES];
    printf("ratio trampolines/direct: %.3f CPU, %.3f wall (+%.2f ns per call; target <= 1.05): %s\n", t / d,
           wall[TRAMPOLINES] / wall[DIRECT], (t - d) / calls * 1e9, t / d <= 1.05 ? "ok" : "ABOVE TARGET");
    return 0;
}
