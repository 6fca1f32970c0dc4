/*
 * Small helpers every benchmark uses: a monotonic clock, a fatal error for
 * setup failures (benchmarks are programs, not library code) and the median
 * of a run's samples.
 */
#ifndef JF_BENCH_UTIL_H
#define JF_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

#endif
