/* Write faults injected under the library (linked with -Wl,--wrap=write):
 * interrupted and short writes are retried; a full disk or an I/O error
 * makes the call fail, disables the sink once with one log message, leaves
 * only complete lines, and the host keeps running. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitframes.h"
#include "map_util.h"

/* ---- the fault injector ------------------------------------------------ */

static struct {
    int eintr_every_other; /* fail every other call with EINTR */
    size_t max_chunk;      /* 0: no limit; else short writes of at most this */
    long budget;           /* < 0: unlimited; else bytes left before `fail_errno` */
    int fail_errno;        /* errno once the budget is spent; 0: return 0 */
    long calls;            /* write calls seen on fds > 2 */
    long interrupted;      /* EINTR failures injected */
} fault;

ssize_t __real_write(int fd, const void *buf, size_t len);
ssize_t __wrap_write(int fd, const void *buf, size_t len);

ssize_t __wrap_write(int fd, const void *buf, size_t len)
{
    if (fd <= 2)
        return __real_write(fd, buf, len);
    fault.calls++;
    if (fault.eintr_every_other && (fault.calls & 1)) {
        fault.interrupted++;
        errno = EINTR;
        return -1;
    }
    if (fault.max_chunk && len > fault.max_chunk)
        len = fault.max_chunk;
    if (fault.budget >= 0) {
        if (fault.budget == 0) {
            if (!fault.fail_errno)
                return 0;
            errno = fault.fail_errno;
            return -1;
        }
        if ((long)len > fault.budget)
            len = (size_t)fault.budget;
    }
    ssize_t n = __real_write(fd, buf, len);
    if (n > 0 && fault.budget >= 0)
        fault.budget -= n;
    return n;
}

/* ---- helpers ------------------------------------------------------------ */

static unsigned char code[1 << 16];

typedef struct log_record {
    int calls;
    int disabled_messages;
    char first[512];
} log_record;

static log_record logged;

static void record_log(void *ctx, int level, const char *message)
{
    log_record *rec = ctx;
    if (level > JF_LOG_WARNING) /* where sinks write, at info: not a failure */
        return;
    if (rec->calls++ == 0)
        snprintf(rec->first, sizeof rec->first, "%s", message);
    if (strstr(message, "perfmap sink disabled"))
        rec->disabled_messages++;
}

static int setup(void **state)
{
    (void)state;
    test_reset(NULL);
    memset(&fault, 0, sizeof fault);
    fault.budget = -1;
    memset(&logged, 0, sizeof logged);
    jf_set_log_callback(record_log, &logged);
    return test_init_with(JF_SINK_PERFMAP);
}

static int teardown(void **state)
{
    memset(&fault, 0, sizeof fault);
    fault.budget = -1;
    return test_reset(state);
}

static const char *name_of(int i)
{
    static char names[4096][40];
    snprintf(names[i], sizeof names[i], "fault_region_%04d_with_padding", i);
    return names[i];
}

static int register_one(int i)
{
    jf_region r = JF_REGION_INIT;
    r.addr = code + 16 * i;
    r.size = 16;
    r.name = name_of(i);
    return jf_register(&r);
}

/* The map is well-formed; returns its line count. */
static long valid_line_count(void)
{
    size_t len = 0;
    char *data = map_read(getpid(), &len);
    assert_non_null(data);
    char why[300];
    long n = map_validate(data, len, why, sizeof why);
    if (n < 0)
        fail_msg("malformed map: %s", why);
    free(data);
    return n;
}

static int map_has_region(int i)
{
    char *data = map_read(getpid(), NULL);
    int has = data && map_has_line(data, (uintptr_t)(code + 16 * i), 16, name_of(i));
    free(data);
    return has;
}

static jf_sink_stats perfmap_stats(void)
{
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    return st.sink[0];
}

/* ---- tests -------------------------------------------------------------- */

static void interrupted_and_short_writes_are_retried(void **state)
{
    (void)state;
    fault.eintr_every_other = 1;
    fault.max_chunk = 7;
    for (int i = 0; i < 50; i++)
        assert_int_equal(register_one(i), 0);
    jf_region batch[100];
    for (int i = 0; i < 100; i++) {
        batch[i] = (jf_region)JF_REGION_INIT;
        batch[i].addr = code + 16 * (50 + i);
        batch[i].size = 16;
        batch[i].name = name_of(50 + i);
    }
    assert_int_equal(jf_register_batch(batch, 100), 0);
    assert_true(fault.interrupted > 100); /* the faults really happened */
    assert_int_equal(valid_line_count(), 150);
    for (int i = 0; i < 150; i++)
        assert_true(map_has_region(i));
    jf_sink_stats st = perfmap_stats();
    assert_int_equal(st.errors, 0);
    assert_int_equal(st.regions, 150);
    assert_int_equal(logged.calls, 0);
}

static void full_disk_disables_the_sink_once_and_keeps_whole_lines(void **state)
{
    (void)state;
    fault.budget = 1000; /* runs out in the middle of a line */
    fault.fail_errno = ENOSPC;
    int first_failure = -1;
    for (int i = 0; i < 200; i++) {
        int rc = register_one(i);
        if (rc && first_failure < 0) {
            first_failure = i;
            assert_int_equal(rc, JF_ENOSPC);
            assert_non_null(strstr(jf_last_error(), "No space left"));
        } else {
            assert_int_equal(rc, 0); /* later calls: the sink is off, the host goes on */
        }
    }
    assert_true(first_failure > 0);
    long calls_after = fault.calls;
    assert_int_equal(register_one(300), 0);
    assert_int_equal(fault.calls, calls_after); /* a disabled sink writes nothing */

    /* Exactly the lines that fit, all complete; nothing after the failure. */
    assert_int_equal(valid_line_count(), first_failure);
    for (int i = 0; i < first_failure; i++)
        assert_true(map_has_region(i));
    assert_false(map_has_region(first_failure));

    assert_int_equal(logged.disabled_messages, 1);
    assert_int_equal(logged.calls, 1);
    assert_non_null(strstr(logged.first, "JF_ENOSPC"));
    jf_sink_stats st = perfmap_stats();
    assert_int_equal(st.enabled, 0);
    assert_int_equal(st.failed, 1);
    assert_int_equal(st.errors, 1);
    assert_int_equal(st.regions, first_failure);
    assert_int_equal(jf_enabled_sinks(), 0);

    /* Space again: enabling retries and replays every live region. */
    fault.budget = -1;
    assert_int_equal(jf_enable(JF_SINK_PERFMAP), 0);
    st = perfmap_stats();
    assert_int_equal(st.enabled, 1);
    assert_int_equal(st.failed, 0);
    for (int i = 0; i < 200; i++)
        assert_true(map_has_region(i));
    assert_true(map_has_region(300));
    valid_line_count();
}

static void full_disk_during_a_batch_keeps_whole_lines(void **state)
{
    (void)state;
    enum { N = 4000 };
    static jf_region batch[N];
    for (int i = 0; i < N; i++) {
        batch[i] = (jf_region)JF_REGION_INIT;
        batch[i].addr = code + 16 * i;
        batch[i].size = 16;
        batch[i].name = name_of(i);
    }
    fault.budget = 100000; /* past the first 64 KiB write, inside the second */
    fault.fail_errno = ENOSPC;
    assert_int_equal(jf_register_batch(batch, N), JF_ENOSPC);
    long lines = valid_line_count();
    assert_true(lines > 0 && lines < N);
    for (long i = 0; i < lines; i++)
        assert_true(map_has_region((int)i));
    /* The regions are registered all the same (for the other sinks). */
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.live_regions, N);
    assert_int_equal(st.sink[0].regions, lines);
    assert_int_equal(logged.disabled_messages, 1);
}

static void write_returning_zero_counts_as_a_full_disk(void **state)
{
    (void)state;
    fault.budget = 0;
    fault.fail_errno = 0;
    assert_int_equal(register_one(0), JF_ENOSPC);
    assert_int_equal(valid_line_count(), 0);
    assert_int_equal(logged.disabled_messages, 1);
}

static void io_error_is_eio(void **state)
{
    (void)state;
    assert_int_equal(register_one(0), 0);
    fault.budget = 0;
    fault.fail_errno = EIO;
    assert_int_equal(register_one(1), JF_EIO);
    assert_int_equal(valid_line_count(), 1);
    assert_int_equal(logged.disabled_messages, 1);
    assert_non_null(strstr(logged.first, "JF_EIO"));
}

static void disabling_by_hand_logs_nothing(void **state)
{
    (void)state;
    assert_int_equal(register_one(0), 0);
    assert_int_equal(jf_disable(JF_SINK_PERFMAP), 0);
    assert_int_equal(register_one(1), 0);
    assert_int_equal(logged.calls, 0);
    jf_sink_stats st = perfmap_stats();
    assert_int_equal(st.failed, 0);
    assert_int_equal(st.errors, 0);
}

int main(void)
{
    unsetenv("JITFRAMES");
    unsetenv("JITFRAMES_LOG");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(interrupted_and_short_writes_are_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(full_disk_disables_the_sink_once_and_keeps_whole_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(full_disk_during_a_batch_keeps_whole_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(write_returning_zero_counts_as_a_full_disk, setup, teardown),
        cmocka_unit_test_setup_teardown(io_error_is_eio, setup, teardown),
        cmocka_unit_test_setup_teardown(disabling_by_hand_logs_nothing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
