/* Another perf map writer in this process, as CPython's
 * PyUnstable_WritePerfMapEntry writes (open O_APPEND, fdopen "a", fprintf +
 * fflush per entry under its own lock), interleaved with jf_register: no
 * line of either writer is lost or damaged, before and after jf_shutdown,
 * and after jitframes starts again. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitframes.h"
#include "map_util.h"

#define OURS ((uintptr_t)0x7d0000000000ull)
#define THEIRS ((uintptr_t)0x7e0000000000ull)

/* ---- the other writer: CPython's way ------------------------------------ */

static FILE *other_map;
static pthread_mutex_t other_lock = PTHREAD_MUTEX_INITIALIZER;

static void other_open(void)
{
    char path[64];
    int fd = open(map_path(path, sizeof path, getpid()),
                  O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    other_map = fdopen(fd, "a");
    assert_non_null(other_map);
}

static void other_write(int i)
{
    pthread_mutex_lock(&other_lock);
    fprintf(other_map, "%lx %x py::theirs_%d:/app/module.py\n", (unsigned long)(THEIRS + 64 * (uintptr_t)i),
            64, i);
    fflush(other_map);
    pthread_mutex_unlock(&other_lock);
}

static void other_close(void)
{
    fclose(other_map);
    other_map = NULL;
}

/* ---- ours ---------------------------------------------------------------- */

static int register_ours(int i)
{
    char name[64];
    snprintf(name, sizeof name, "jf::ours_%d", i);
    jf_region r = test_region((const void *)(OURS + 64 * (uintptr_t)i), 64, name);
    return jf_register(&r);
}

/* The map is valid and holds exactly ours [0, n_ours) and theirs
 * [0, n_theirs), each line whole (one pass: maps here are big). */
static void assert_both_complete(int n_ours, int n_theirs)
{
    size_t len = 0;
    char *data = map_read(getpid(), &len);
    assert_non_null(data);
    char why[300];
    long lines = map_validate(data, len, why, sizeof why);
    if (lines < 0)
        fail_msg("malformed map: %s", why);
    assert_int_equal(lines, n_ours + n_theirs);
    unsigned char *seen_ours = calloc((size_t)n_ours + 1, 1), *seen_theirs = calloc((size_t)n_theirs + 1, 1);
    assert_true(seen_ours && seen_theirs);
    for (char *p = data, *nl; *p; p = nl + 1) {
        unsigned long addr, size;
        int i, end = 0;
        nl = strchr(p, '\n'); /* map_validate: every line ends in one */
        if (nl == p)
            continue;
        *nl = '\0'; /* sscanf's strlen sees one line, not the whole map */
        if (sscanf(p, "%lx %lx jf::ours_%d%n", &addr, &size, &i, &end) == 3 && !p[end] && i >= 0 &&
            i < n_ours && addr == OURS + 64 * (uintptr_t)i && size == 64 && !seen_ours[i])
            seen_ours[i] = 1;
        else if (sscanf(p, "%lx %lx py::theirs_%d:/app/module.py%n", &addr, &size, &i, &end) == 3 &&
                 !p[end] && i >= 0 && i < n_theirs && addr == THEIRS + 64 * (uintptr_t)i && size == 64 &&
                 !seen_theirs[i])
            seen_theirs[i] = 1;
        else
            fail_msg("damaged, foreign or repeated line: '%.80s'", p);
    }
    free(seen_ours);
    free(seen_theirs);
    free(data); /* every line accounted for and the count matches: none lost */
}

static void interleaved_writers_lose_nothing_before_and_after_shutdown(void **state)
{
    (void)state;
    enum { N = 20000 };
    other_open(); /* the host's writer first, as CPython starts before a JIT */
    other_write(0);
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    int theirs = 1, ours = 0;
    for (int i = 0; i < N; i++) { /* every pattern of growth: theirs between our reserves */
        assert_int_equal(register_ours(ours++), 0);
        if (i % 3 == 0)
            other_write(theirs++);
        if (i % 1000 == 999) { /* a batch in the middle */
            jf_region batch[50];
            char names[50][64];
            for (int k = 0; k < 50; k++) {
                snprintf(names[k], sizeof names[k], "jf::ours_%d", ours + k);
                batch[k] = test_region((const void *)(OURS + 64 * (uintptr_t)(ours + k)), 64, names[k]);
            }
            assert_int_equal(jf_register_batch(batch, 50), 0);
            ours += 50;
        }
    }
    assert_both_complete(ours, theirs);
    assert_int_equal(jf_shutdown(), 0); /* must not cut their lines after our space */
    assert_both_complete(ours, theirs);
    for (int i = 0; i < 100; i++)
        other_write(theirs++);
    assert_both_complete(ours, theirs);
    /* jitframes again: it resumes its space and appends after theirs. */
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(register_ours(ours++), 0);
        other_write(theirs++);
    }
    assert_both_complete(ours, theirs);
    other_close();
}

static void writer_that_starts_after_jitframes_loses_nothing(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    int ours = 0, theirs = 0;
    for (; ours < 10; ours++)
        assert_int_equal(register_ours(ours), 0);
    other_open(); /* lands after our reserved space */
    for (int i = 0; i < 5000; i++) {
        other_write(theirs++);
        assert_int_equal(register_ours(ours++), 0);
    }
    assert_both_complete(ours, theirs);
    assert_int_equal(jf_shutdown(), 0);
    other_write(theirs++);
    other_close();
    assert_both_complete(ours, theirs);
}

typedef struct writer_thread {
    pthread_t thread;
    int first, count, failures;
} writer_thread;

static void *theirs_in_a_thread(void *arg)
{
    writer_thread *w = arg;
    for (int i = 0; i < w->count; i++)
        other_write(w->first + i);
    return NULL;
}

static void *ours_in_a_thread(void *arg)
{
    writer_thread *w = arg;
    for (int i = 0; i < w->count; i++)
        w->failures += register_ours(w->first + i) != 0;
    return NULL;
}

static void concurrent_threads_of_both_writers_lose_nothing(void **state)
{
    (void)state;
    enum { PER = 20000 };
    other_open();
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    writer_thread w[4] = {{.first = 0, .count = PER},
                          {.first = PER, .count = PER},
                          {.first = 0, .count = PER},
                          {.first = PER, .count = PER}};
    for (int t = 0; t < 4; t++)
        assert_int_equal(
            pthread_create(&w[t].thread, NULL, t < 2 ? theirs_in_a_thread : ours_in_a_thread, &w[t]), 0);
    for (int t = 0; t < 4; t++)
        pthread_join(w[t].thread, NULL);
    assert_int_equal(w[2].failures + w[3].failures, 0);
    assert_both_complete(2 * PER, 2 * PER);
    assert_int_equal(jf_shutdown(), 0);
    assert_both_complete(2 * PER, 2 * PER);
    other_close();
}

int main(void)
{
    unsetenv("JITFRAMES");
    unsetenv("JITFRAMES_LOG");
    test_reset(NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(interleaved_writers_lose_nothing_before_and_after_shutdown, test_reset),
        cmocka_unit_test_teardown(writer_that_starts_after_jitframes_loses_nothing, test_reset),
        cmocka_unit_test_teardown(concurrent_threads_of_both_writers_lose_nothing, test_reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
