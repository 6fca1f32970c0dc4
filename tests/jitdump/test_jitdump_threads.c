/*
 * Record groups stay whole under concurrency: threads registering single
 * regions and batches at once never interleave records, every CODE_LOAD is
 * directly preceded by its own DEBUG_INFO and UNWINDING_INFO, code indices
 * increase, timestamps never go back, and each load names the thread that
 * registered it. Also run under TSan (label "threads").
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dump_parse.h"
#include "jitframes.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { THREADS = 4, PER_THREAD = 1500, BATCH = 5, SIZE = 32, STRIDE = 256 };
static uint8_t code_area[THREADS * PER_THREAD * STRIDE] __attribute__((aligned(64)));
static jf_cfi *shared_cfi;
static uint32_t thread_tids[THREADS];

static void *registering_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    thread_tids[t] = (uint32_t)syscall(SYS_gettid);
    jf_line lines[2] = {{0, 1, NULL}, {SIZE / 2, 2, NULL}};
    for (int i = 0; i < PER_THREAD; i += BATCH) {
        jf_region batch[BATCH];
        char names[BATCH][32];
        for (int k = 0; k < BATCH; k++) {
            int index = t * PER_THREAD + i + k;
            snprintf(names[k], sizeof names[k], "t%d_fn_%d", t, i + k);
            jf_region r = JF_REGION_INIT;
            r.addr = code_area + (size_t)index * STRIDE;
            r.size = SIZE;
            r.name = names[k];
            r.file = "threads.mj";
            r.lines = lines;
            r.n_lines = 2;
            r.cfi = shared_cfi;
            batch[k] = r;
        }
        /* Alternate single registrations and batches. */
        int rc = 0;
        if ((i / BATCH) % 2)
            rc = jf_register_batch(batch, BATCH);
        else
            for (int k = 0; k < BATCH && rc == 0; k++)
                rc = jf_register(&batch[k]);
        if (rc)
            return (void *)1;
    }
    return NULL;
}

static void groups_never_interleave(void **state)
{
    (void)state;
    char dir[] = "/tmp/jf-jitdump-threads.XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(jf_cfi_new(&shared_cfi), 0);
    assert_int_equal(jf_cfi_begin_fde(shared_cfi, 0, SIZE), 0);
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_JITDUMP;
    cfg.dump_dir = dir;
    assert_int_equal(jf_init(&cfg), 0);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, registering_thread, (void *)(intptr_t)t), 0);
    for (int t = 0; t < THREADS; t++) {
        void *ret;
        assert_int_equal(pthread_join(th[t], &ret), 0);
        assert_null(ret);
    }
    assert_int_equal(jf_shutdown(), 0);
    jf_cfi_free(shared_cfi);

    const char *path = dump_path(dir, (long)getpid());
    char msg[4096];
    if (dump_tool_check(path, msg, sizeof msg) == 1)
        fail_msg("jitframes check: %s", msg);
    dump_file d;
    assert_int_equal(dump_load(path, &d), 0);
    assert_int_equal(dump_count(&d, ID_LOAD), THREADS * PER_THREAD);
    uint64_t last_index = 0, last_ts = 0;
    for (size_t i = 0; i < d.n_records; i++) {
        assert_true(d.records[i].timestamp >= last_ts);
        last_ts = d.records[i].timestamp;
        if (d.records[i].id != ID_LOAD)
            continue;
        assert_true(i >= 2);
        const dump_record *dbg = &d.records[i - 2], *unw = &d.records[i - 1];
        assert_int_equal(dbg->id, ID_DEBUG);
        assert_int_equal(unw->id, ID_UNWIND);
        dump_load_info l;
        assert_int_equal(dump_code_load(&d.records[i], &l), 0);
        assert_int_equal(dump_u64(dbg->body), l.code_addr);
        assert_true(l.code_index > last_index);
        last_index = l.code_index;
        int t, n;
        assert_int_equal(sscanf(l.name, "t%d_fn_%d", &t, &n), 2);
        assert_in_range(t, 0, THREADS - 1);
        assert_int_equal(l.code_addr, (uintptr_t)(code_area + (size_t)(t * PER_THREAD + n) * STRIDE));
        assert_int_equal(l.tid, thread_tids[t]);
    }
    dump_free(&d);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(groups_never_interleave),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
