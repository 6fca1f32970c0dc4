/* A host for the control channel's tests: initialises jitframes from the
 * environment (JITFRAMES_CONTROL=1, no sinks), registers --regions N
 * regions named ctl_region_<i>, optionally keeps --threads T threads
 * registering and unregistering their own regions (a few rounds each time
 * the enabled sinks change: see churn), with --forking 1 a
 * thread forking child processes that each spin 50 ms in child_spin (what
 * a recording of this pid alone leaves out), prints "ready <pid>"
 * and runs until its standard input closes; then it stops the threads,
 * calls jf_shutdown and exits 0 (non-zero if any jitframes call failed). */
#define _GNU_SOURCE
#include "jitframes.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MAX_REGIONS = 100000, MAX_THREADS = 16, CHURN_REGIONS = 64, ROUNDS_PER_CHANGE = 2 };

static unsigned char code[MAX_REGIONS * 16];
static unsigned char churn_code[MAX_THREADS][CHURN_REGIONS * 16];
static int stop;
static int failures;

static void check(int rc, const char *what)
{
    /* jf_enable from outside may fail a sink; registration itself must not. */
    if (rc != 0) {
        fprintf(stderr, "control_target: %s: %s (%s)\n", what, jf_strerror(rc), jf_last_error());
        __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
    }
}

/* One round: register this thread's regions, then unregister them. */
static void churn_round(unsigned char *mine)
{
    char name[48];
    for (int i = 0; i < CHURN_REGIONS; i++) {
        snprintf(name, sizeof name, "ctl_churn_%p_%d", (void *)mine, i);
        jf_region r = JF_REGION_INIT;
        r.addr = mine + 16 * i;
        r.size = 16;
        r.name = name;
        int rc = jf_register(&r);
        check(rc == JF_ERANGE ? 0 : rc, "jf_register");
    }
    for (int i = 0; i < CHURN_REGIONS; i++)
        check(jf_unregister(mine + 16 * i), "jf_unregister");
}

/* ROUNDS_PER_CHANGE rounds each time the enabled sinks change (an enable
 * or a disable from outside): the churn overlaps every replay, and what it
 * makes the sinks write is bounded by the number of changes, never by how
 * long they take on a busy machine. */
static void *churn(void *arg)
{
    unsigned char *mine = arg;
    unsigned seen = jf_enabled_sinks();
    churn_round(mine);
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        unsigned now = jf_enabled_sinks();
        if (now == seen) {
            nanosleep(&(struct timespec){0, 100000}, NULL);
            continue;
        }
        seen = now;
        for (int k = 0; k < ROUNDS_PER_CHANGE; k++)
            churn_round(mine);
    }
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void child_spin(void)
{
    for (double end = now() + 0.05; now() < end;)
        ;
}

/* Children come and go: each spins 50 ms, then the parent rests 50 ms. */
static void *forker(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        pid_t child = fork();
        if (child == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            child_spin();
            /* A child with a sink on got its own perf map (docs/guide.md,
             * "Threads and fork"); hundreds a run would litter /tmp. */
            char map[64];
            snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
            unlink(map);
            _exit(0);
        }
        if (child > 0)
            waitpid(child, NULL, 0);
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long regions = 100, threads = 0, forking = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--regions") == 0)
            regions = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--threads") == 0)
            threads = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--forking") == 0)
            forking = strtol(argv[i + 1], NULL, 10);
    }
    if (regions < 0 || regions > MAX_REGIONS || threads < 0 || threads > MAX_THREADS) {
        fprintf(stderr, "usage: control_target [--regions 0-%d] [--threads 0-%d] [--forking 0|1]\n",
                MAX_REGIONS, MAX_THREADS);
        return 2;
    }
    int rc = jf_init(NULL);
    if (rc != 0) {
        fprintf(stderr, "control_target: jf_init: %s (%s)\n", jf_strerror(rc), jf_last_error());
        return 1;
    }
    char name[32];
    for (long i = 0; i < regions; i++) {
        snprintf(name, sizeof name, "ctl_region_%ld", i);
        jf_region r = JF_REGION_INIT;
        r.addr = code + 16 * i;
        r.size = 16;
        r.name = name;
        check(jf_register(&r), "jf_register");
    }
    pthread_t tids[MAX_THREADS];
    for (long t = 0; t < threads; t++)
        if (pthread_create(&tids[t], NULL, churn, churn_code[t]) != 0)
            return 1;
    pthread_t forking_thread;
    if (forking && pthread_create(&forking_thread, NULL, forker, NULL) != 0)
        return 1;
    printf("ready %ld\n", (long)getpid());
    fflush(stdout);
    char buf[256];
    while (read(STDIN_FILENO, buf, sizeof buf) > 0)
        ;
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (long t = 0; t < threads; t++)
        pthread_join(tids[t], NULL);
    if (forking)
        pthread_join(forking_thread, NULL);
    check(jf_shutdown(), "jf_shutdown");
    return failures ? 1 : 0;
}
