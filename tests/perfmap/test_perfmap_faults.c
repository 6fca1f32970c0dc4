/* Faults injected under the library (linked with -Wl,--wrap=writev,
 * --wrap=fallocate and --wrap=mmap): the perf map reserves space with
 * writev, allocates it with fallocate and maps it with mmap. Interrupted and
 * short reserves are retried; a full disk, an I/O error or a failed mapping
 * makes the call fail, disables the sink once with one log message, leaves
 * only complete lines, and the host keeps running. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "jitframes.h"
#include "map_util.h"

/* ---- the fault injector ------------------------------------------------ */

static struct {
    int eintr_every_other; /* fail every other call with EINTR */
    size_t max_chunk;      /* 0: no limit; else short writes of at most this */
    long budget;           /* < 0: unlimited; else bytes left before `fail_errno` */
    int fail_errno;        /* errno once the budget is spent; 0: return 0 */
    int fallocate_errno;   /* fallocate fails with this (0: it works) */
    int mmap_errno;        /* shared file mappings fail with this (0: they work) */
    long calls;            /* writev calls seen on fds > 2 */
    long interrupted;      /* EINTR failures injected */
} fault;

ssize_t __real_writev(int fd, const struct iovec *iov, int iovcnt);
ssize_t __wrap_writev(int fd, const struct iovec *iov, int iovcnt);
int __real_fallocate(int fd, int mode, off_t offset, off_t len);
int __wrap_fallocate(int fd, int mode, off_t offset, off_t len);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset);

/* The first `len` bytes of iov as at most 64 entries. */
static int cut_iov(const struct iovec *iov, int iovcnt, size_t len, struct iovec *out)
{
    int n = 0;
    for (int i = 0; i < iovcnt && len > 0 && n < 64; i++, n++) {
        out[n] = iov[i];
        if (out[n].iov_len > len)
            out[n].iov_len = len;
        len -= out[n].iov_len;
    }
    return n;
}

ssize_t __wrap_writev(int fd, const struct iovec *iov, int iovcnt)
{
    if (fd <= 2)
        return __real_writev(fd, iov, iovcnt);
    fault.calls++;
    if (fault.eintr_every_other && (fault.calls & 1)) {
        fault.interrupted++;
        errno = EINTR;
        return -1;
    }
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
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
    struct iovec cut[64];
    ssize_t n = __real_writev(fd, cut, cut_iov(iov, iovcnt, len, cut));
    if (n > 0 && fault.budget >= 0)
        fault.budget -= n;
    return n;
}

int __wrap_fallocate(int fd, int mode, off_t offset, off_t len)
{
    if (fault.fallocate_errno) {
        errno = fault.fallocate_errno;
        return -1;
    }
    return __real_fallocate(fd, mode, offset, len);
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
    if (fault.mmap_errno && fd > 2 && (flags & MAP_SHARED)) {
        errno = fault.mmap_errno;
        return MAP_FAILED;
    }
    return __real_mmap(addr, len, prot, flags, fd, offset);
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

static void interrupted_and_short_reserves_are_retried(void **state)
{
    (void)state;
    fault.eintr_every_other = 1;
    fault.max_chunk = 1000; /* less than the 4 KiB the writer asks for */
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
    assert_true(fault.interrupted >= 5); /* the faults really happened */
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
    fault.budget = 1000; /* the first reserve is short, the second fails */
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
    fault.budget = 100000; /* past the first 64 KiB of lines, inside the second */
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

static void reserve_returning_zero_counts_as_a_full_disk(void **state)
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
    fault.budget = 0;
    fault.fail_errno = EIO;
    assert_int_equal(register_one(0), JF_EIO);
    assert_int_equal(valid_line_count(), 0);
    assert_int_equal(logged.disabled_messages, 1);
    assert_non_null(strstr(logged.first, "JF_EIO"));
}

static void unallocatable_space_is_enospc_and_never_mapped(void **state)
{
    (void)state;
    fault.fallocate_errno = ENOSPC;
    assert_int_equal(register_one(0), JF_ENOSPC);
    assert_non_null(strstr(jf_last_error(), "cannot allocate"));
    assert_int_equal(valid_line_count(), 0); /* the reserved newlines only */
    assert_int_equal(logged.disabled_messages, 1);
    fault.fallocate_errno = 0;
    assert_int_equal(jf_enable(JF_SINK_PERFMAP), 0);
    assert_int_equal(register_one(1), 0);
    assert_true(map_has_region(0) && map_has_region(1));
}

static void failed_mapping_is_reported_and_the_host_goes_on(void **state)
{
    (void)state;
    fault.mmap_errno = ENOMEM;
    assert_int_equal(register_one(0), JF_ENOMEM);
    assert_int_equal(valid_line_count(), 0);
    assert_int_equal(logged.disabled_messages, 1);
    assert_int_equal(register_one(1), 0);
    fault.mmap_errno = 0;
    assert_int_equal(jf_enable(JF_SINK_PERFMAP), 0);
    assert_true(map_has_region(0) && map_has_region(1));
    assert_int_equal(valid_line_count(), 2);
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
        cmocka_unit_test_setup_teardown(interrupted_and_short_reserves_are_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(full_disk_disables_the_sink_once_and_keeps_whole_lines, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(full_disk_during_a_batch_keeps_whole_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(reserve_returning_zero_counts_as_a_full_disk, setup, teardown),
        cmocka_unit_test_setup_teardown(io_error_is_eio, setup, teardown),
        cmocka_unit_test_setup_teardown(unallocatable_space_is_enospc_and_never_mapped, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_mapping_is_reported_and_the_host_goes_on, setup, teardown),
        cmocka_unit_test_setup_teardown(disabling_by_hand_logs_nothing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
