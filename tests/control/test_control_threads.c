/* The control channel under concurrency (run under TSan: label threads):
 * four threads register and unregister their own regions while requests
 * from outside the registry (the tool's client code, here in the same
 * process) enable and disable the perf map and the jitdump 300 times; and
 * status requests race with the last jf_shutdown, which joins the
 * listener while it may be answering. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control_client.h"
#include "jitframes.h"
#include "map_util.h"

enum { THREADS = 4, REGIONS_EACH = 32, CYCLES = 300 };

static unsigned char code[THREADS][REGIONS_EACH * 16];
static int stop;
static char dump_dir[] = "/tmp/jf-control-threads.XXXXXX";

static void *churn(void *arg)
{
    unsigned char *mine = arg;
    char name[48];
    long failures = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        for (int i = 0; i < REGIONS_EACH; i++) {
            snprintf(name, sizeof name, "churn_%p_%d", (void *)mine, i);
            jf_region r = test_region(mine + 16 * i, 16, name);
            failures += jf_register(&r) != 0;
        }
        for (int i = 0; i < REGIONS_EACH; i++)
            failures += jf_unregister(mine + 16 * i) != 0;
    }
    return (void *)failures;
}

static int request(uint16_t op, uint32_t sinks, jf__ctl_reply *reply, jfc_error *err)
{
    jf__ctl_request req = {JF_CTL_VERSION, op, sinks};
    return jfc_request(getpid(), &req, reply, err);
}

static void enable_disable_while_four_threads_register(void **state)
{
    (void)state;
    assert_non_null(mkdtemp(dump_dir));
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV | JF_CONFIG_CONTROL;
    c.dump_dir = dump_dir;
    assert_int_equal(jf_init(&c), 0);
    pthread_t tids[THREADS];
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&tids[t], NULL, churn, code[t]), 0);
    static jf__ctl_reply r;
    jfc_error err;
    for (int i = 0; i < CYCLES; i++) {
        if (request(JF_CTL_ENABLE, JF_SINK_PERFMAP | JF_SINK_JITDUMP, &r, &err) != 0 || r.status != 0)
            fail_msg("cycle %d enable: %s %s", i, err.msg, r.message);
        assert_int_equal(r.enabled, JF_SINK_PERFMAP | JF_SINK_JITDUMP);
        if (request(JF_CTL_DISABLE, JF_SINK_ALL, &r, &err) != 0 || r.status != 0)
            fail_msg("cycle %d disable: %s %s", i, err.msg, r.message);
        assert_int_equal(r.enabled, 0);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int t = 0; t < THREADS; t++) {
        void *failures;
        pthread_join(tids[t], &failures);
        assert_int_equal((long)failures, 0);
    }
    assert_int_equal(request(JF_CTL_STATUS, 0, &r, &err), 0);
    assert_int_equal(r.live_regions, 0);
    assert_true(r.regions[0] > 0);
    assert_int_equal(jf_shutdown(), 0);
    char path[sizeof dump_dir + 32];
    snprintf(path, sizeof path, "%s/jit-%ld.dump", dump_dir, (long)getpid());
    unlink(path);
    rmdir(dump_dir);
    map_remove(getpid());
}

static void *ask_status_until_gone(void *arg)
{
    (void)arg;
    static jf__ctl_reply r;
    jfc_error err;
    long answered = 0;
    for (int i = 0; i < 200; i++) /* until the channel is gone, at most 200 */
        if (request(JF_CTL_STATUS, 0, &r, &err) == 0)
            answered++;
        else if (err.kind == JFC_NO_CHANNEL)
            break;
    return (void *)answered;
}

static void shutdown_races_with_requests(void **state)
{
    (void)state;
    for (int round = 0; round < 20; round++) {
        jf_config c = JF_CONFIG_INIT;
        c.flags = JF_CONFIG_IGNORE_ENV | JF_CONFIG_CONTROL;
        assert_int_equal(jf_init(&c), 0);
        pthread_t asker;
        assert_int_equal(pthread_create(&asker, NULL, ask_status_until_gone, NULL), 0);
        usleep(1000 * (unsigned)(round % 5)); /* vary where the shutdown lands */
        assert_int_equal(jf_shutdown(), 0);
        pthread_join(asker, NULL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(enable_disable_while_four_threads_register),
        cmocka_unit_test(shutdown_races_with_requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
