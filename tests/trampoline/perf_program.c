/*
 * perf test program: three C callers each call the same work function
 * through their own named trampoline for about a second in all. With the
 * perf map sink, `perf record -g` must show every sample in the work
 * function under the right trampoline name, itself under the right caller.
 * Usage: perf_program [--no-jitframes]  (the negative control: plain calls
 * through unnamed copies of the template are never named)
 */
#define _POSIX_C_SOURCE 200809L
#include "jitframes.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

typedef long (*work_fn)(long);

/* Global (not static) so their names survive as-is for perf. */
long spin(long n);
long caller_alpha(long n);
long caller_beta(long n);
long caller_gamma(long n);

__attribute__((noinline)) long spin(long n)
{
    volatile unsigned long acc = 0;
    for (long i = 0; i < n; i++)
        acc += (unsigned long)i ^ (acc >> 3);
    return (long)(acc & 0xffff);
}

static work_fn through_alpha, through_beta, through_gamma;

__attribute__((noinline)) long caller_alpha(long n)
{
    return through_alpha(n) + 1;
}
__attribute__((noinline)) long caller_beta(long n)
{
    return through_beta(n) + 2;
}
__attribute__((noinline)) long caller_gamma(long n)
{
    return through_gamma(n) + 3;
}

/* CPU time used so far: the run lasts 1.2 s of it, so it holds as many
 * samples on a busy machine as on a quiet one. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int make(const char *name, work_fn *out)
{
    jf_fn entry;
    int rc = jf_trampoline_create((jf_fn)spin, name, NULL, &entry);
    if (rc) {
        fprintf(stderr, "jf_trampoline_create(%s): %s\n", name, jf_last_error());
        return rc;
    }
    *out = (work_fn)entry;
    return 0;
}

int main(int argc, char **argv)
{
    int named = !(argc > 1 && strcmp(argv[1], "--no-jitframes") == 0);
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = named ? JF_SINK_PERFMAP : 0;
    if (jf_init(&cfg) != 0 || make("tramp_alpha", &through_alpha) || make("tramp_beta", &through_beta) ||
        make("tramp_gamma", &through_gamma))
        return 1;
    unsigned long sum = 0;
    double end = now() + 1.2;
    while (now() < end)
        sum += (unsigned long)caller_alpha(20000) + (unsigned long)caller_beta(20000) +
               (unsigned long)caller_gamma(20000);
    printf("%lu\n", sum & 1);
    jf_shutdown();
    return 0;
}
