/*
 * A jitdump written by the library passes `jitframes check`: single and
 * batched regions, line tables, multi-FDE unwind info spaced by
 * jf_jitdump_footprint, address reuse after unregistering, CODE_CLOSE.
 * Negative control: regions placed inside each other's footprint make the
 * library count an overlap and the checker reject the dump. Built twice:
 * against the library and against its foreign-order variant (a big-endian
 * dump, .eh_frame included, on a little-endian machine).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitdump_reader.h"
#include "jitframes.h"
#include "written_order.h"

enum { CODE_SIZE = 64, SINGLES = 200, BATCH = 16 };

static char dir[64];
static char dump_path[128];
static uint8_t *arena; /* stands in for JIT code: readable bytes */

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/jf-tool-dump.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(dump_path, sizeof dump_path, "%s/jit-%ld.dump", dir, (long)getpid());
    arena = malloc(1 << 20);
    if (!arena)
        return -1;
    for (size_t i = 0; i < 1 << 20; i++)
        arena[i] = (uint8_t)(i * 7);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    while (jf_shutdown() == 0) {
    }
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char path[sizeof dir + 256 + 2];
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
    free(arena);
    return 0;
}

static jf_cfi *framed_then_frameless(void)
{
    jf_cfi *cfi = NULL;
    assert_int_equal(jf_cfi_new(&cfi), 0);
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.start = 0;
    f.end = 40;
    f.after_push = 4;
    f.after_fp_set = 8;
    f.epilogue_start = 32;
    f.after_pop = 36;
    assert_int_equal(jf_cfi_add_standard_frame(cfi, &f), 0);
    assert_int_equal(jf_cfi_add_frameless(cfi, 40, CODE_SIZE, 32), 0);
    return cfi;
}

static void start_jitdump(void)
{
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_JITDUMP;
    cfg.dump_dir = dir;
    assert_int_equal(jf_init(&cfg), 0);
}

static void fill_region(jf_region *r, size_t offset, const char *name, const jf_cfi *cfi)
{
    static const jf_line lines[] = {{0, 10, NULL}, {8, 11, NULL}, {40, 12, "other.c"}};
    jf_region init = JF_REGION_INIT;
    *r = init;
    r->addr = arena + offset;
    r->size = CODE_SIZE;
    r->name = name;
    r->file = "jit.c";
    r->line = 10;
    r->lines = lines;
    r->n_lines = 3;
    r->cfi = cfi;
}

static uint8_t *read_dump(size_t *len)
{
    FILE *f = fopen(dump_path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *len = (size_t)size;
    return buf;
}

static void library_dump_passes_check(void **state)
{
    (void)state;
    jf_cfi *cfi = framed_then_frameless();
    size_t stride = (jf_jitdump_footprint(CODE_SIZE, cfi) + 15) & ~(size_t)15;
    assert_true(stride >= CODE_SIZE);
    start_jitdump();

    char name[64];
    for (int i = 0; i < SINGLES; i++) {
        jf_region r;
        snprintf(name, sizeof name, "single_%d", i);
        fill_region(&r, (size_t)i * stride, name, i % 2 ? cfi : NULL);
        assert_int_equal(jf_register(&r), 0);
    }
    jf_region batch[BATCH];
    char names[BATCH][32];
    for (int i = 0; i < BATCH; i++) {
        snprintf(names[i], sizeof names[i], "batch_%d", i);
        fill_region(&batch[i], (size_t)(SINGLES + i) * stride, names[i], cfi);
    }
    assert_int_equal(jf_register_batch(batch, BATCH), 0);
    /* Reuse: unregister a region and put a new one at the same address. */
    assert_int_equal(jf_unregister(arena + 3 * stride), 0);
    jf_region again;
    fill_region(&again, 3 * stride, "reused_address", cfi);
    assert_int_equal(jf_register(&again), 0);
    assert_int_equal(jf_jitdump_overlaps(), 0);
    assert_int_equal(jf_shutdown(), 0);
    jf_cfi_free(cfi);

    size_t len;
    uint8_t *dump = read_dump(&len);
    jft_error err = {0};
    jd_summary s;
    assert_memory_equal(dump, WRITTEN_BIG_ENDIAN ? "JiTD" : "DTiJ", 4); /* the magic, in order */
    int rc = jd_check(dump, len, &s, &err);
    if (rc)
        print_error("%s:0x%llx: %s\n", dump_path, (unsigned long long)err.where, err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(s.loads, SINGLES + BATCH + 1);
    assert_int_equal(s.unwind_infos, SINGLES / 2 + BATCH + 1);
    assert_int_equal(s.debug_infos, SINGLES + BATCH + 1);
    assert_int_equal(s.closes, 1);
    free(dump);
}

static void overlapping_footprints_fail_check(void **state)
{
    (void)state;
    jf_cfi *cfi = framed_then_frameless();
    start_jitdump();
    jf_region a, b;
    fill_region(&a, 0, "first", cfi);
    fill_region(&b, CODE_SIZE + JF_JITDUMP_NONCE_SIZE, "inside_first_footprint", cfi);
    assert_int_equal(jf_register(&a), 0);
    assert_int_equal(jf_register(&b), 0);
    assert_true(jf_jitdump_overlaps() > 0);
    assert_int_equal(jf_shutdown(), 0);
    jf_cfi_free(cfi);

    size_t len;
    uint8_t *dump = read_dump(&len);
    jft_error err = {0};
    assert_int_equal(jd_check(dump, len, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "overlaps the one of code_index"));
    free(dump);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(library_dump_passes_check, setup, teardown),
        cmocka_unit_test_setup_teardown(overlapping_footprints_fail_check, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
