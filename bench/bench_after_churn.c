/*
 * Registration and unregistration after a random-order churn, against the
 * same calls before it, in one process lifetime (as a JIT that has freed
 * code in whatever order lives): register N regions in ascending address
 * order and unregister them in that order (before), then register N and
 * unregister them in a random order (the churn), then the ascending pass
 * again (after). The registry's records and the published table's slots
 * are reused after the churn; where they are reused matters as much as
 * what a call does (a record missing the cache costs more than the call).
 * Each variant (standby with the table, without it) runs in a child of its
 * own, so one's churn cannot touch the other's "before". Times are the
 * thread's CPU time, medians of ROUNDS passes.
 * Usage: bench_after_churn [N]   (default 100000)
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include "bench_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { ROUNDS = 5, REGION = 64, NAME = 32 };

static uint8_t *code;
static char *names;
static size_t *shuffled;

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void register_ascending(size_t n)
{
    for (size_t i = 0; i < n; i++) {
        jf_region r = JF_REGION_INIT;
        r.addr = code + i * REGION;
        r.size = REGION;
        r.name = names + i * NAME;
        if (jf_register(&r) != 0)
            bench_die(jf_last_error());
    }
}

/* Unregister the n regions in the order order[] gives (NULL: ascending). */
static void unregister_all(size_t n, const size_t *order)
{
    for (size_t i = 0; i < n; i++)
        if (jf_unregister(code + (order ? order[i] : i) * REGION) != 0)
            bench_die(jf_last_error());
}

/* One ascending pass: ns per registration and per unregistration. */
static void ascending_pass(size_t n, double *reg_ns, double *unreg_ns)
{
    double t0 = cpu_seconds();
    register_ascending(n);
    double t1 = cpu_seconds();
    unregister_all(n, NULL);
    double t2 = cpu_seconds();
    *reg_ns = (t1 - t0) / (double)n * 1e9;
    *unreg_ns = (t2 - t1) / (double)n * 1e9;
}

/* Medians of ROUNDS ascending passes into out[0] (register), out[1]. */
static void measure(size_t n, double *out)
{
    double reg[ROUNDS], unreg[ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        ascending_pass(n, &reg[r], &unreg[r]);
    out[0] = bench_median(reg, ROUNDS);
    out[1] = bench_median(unreg, ROUNDS);
}

/* The child: before, churn, after; four doubles written to fd. */
static int child(size_t n, unsigned flags, int fd)
{
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV | flags;
    if (jf_init(&c) != 0)
        return 1;
    double figures[4];
    double warm_reg, warm_unreg;
    ascending_pass(n, &warm_reg, &warm_unreg); /* first touches: not measured */
    measure(n, figures);
    register_ascending(n);
    unregister_all(n, shuffled);
    measure(n, figures + 2);
    jf_shutdown();
    return write(fd, figures, sizeof figures) == (ssize_t)sizeof figures ? 0 : 3;
}

static void run_variant(const char *title, size_t n, unsigned flags)
{
    int fds[2];
    if (pipe(fds) != 0)
        bench_die("pipe");
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork");
    if (pid == 0)
        _exit(child(n, flags, fds[1]));
    close(fds[1]);
    double f[4];
    int status = 0;
    ssize_t got = read(fds[0], f, sizeof f);
    close(fds[0]);
    waitpid(pid, &status, 0);
    if (got != (ssize_t)sizeof f || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_die("bench_after_churn: a child failed");
    printf("  %-18s register %6.1f -> %6.1f ns (%.2fx)   unregister %6.1f -> %6.1f ns (%.2fx)\n", title, f[0],
           f[2], f[2] / f[0], f[1], f[3], f[3] / f[1]);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    code = calloc(n ? n : 1, REGION);
    names = malloc((n ? n : 1) * NAME);
    shuffled = malloc((n ? n : 1) * sizeof *shuffled);
    if (n == 0 || !code || !names || !shuffled)
        bench_die("bench_after_churn: setup");
    srand(12345);
    for (size_t i = 0; i < n; i++) {
        snprintf(names + i * NAME, NAME, "jit_fn_%zu", i);
        shuffled[i] = i;
    }
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)rand() % (i + 1), t = shuffled[i];
        shuffled[i] = shuffled[j];
        shuffled[j] = t;
    }
    printf("%zu regions, ascending passes before -> after one random-order unregistration, "
           "medians of %d passes (target: 1.0x):\n",
           n, ROUNDS);
    run_variant("standby (table)", n, 0);
    run_variant("standby, no table", n, JF_CONFIG_NO_TABLE);
    free(code);
    free(names);
    free(shuffled);
    return 0;
}
