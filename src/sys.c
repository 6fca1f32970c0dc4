/*
 * The page size, the clock and the environment, asked of the system in one
 * place.
 */
#define _GNU_SOURCE /* clock_gettime under -std=c11 */
#include "sys.h"

#include <stdlib.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

size_t jf__page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

uint64_t jf__monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* AT_SECURE rather than secure_getenv: the same answer (glibc's
 * secure_getenv tests it too), and musl has getauxval as well. */
const char *jf__getenv(const char *name)
{
    return getauxval(AT_SECURE) ? NULL : getenv(name);
}
