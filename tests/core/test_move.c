/* jf_move and jf_move_batch: what the registry accepts and refuses (and that
 * a refusal changes nothing), and what the perf map and the jitdump say of a
 * move, read back by independent readers (map_util, dump_parse and
 * `jitframes check`). The gdb sink's side is in tests/gdb/test_sink_gdb.c, the
 * unwind sink's in tests/unwind, the consumers' in tests/move. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump_parse.h"
#include "jitframes.h"
#include "map_util.h"

/* Addresses only: nothing here runs, the jitdump copies the bytes. */
static unsigned char code[1 << 16];
static char dir[32];

/* A fresh directory for a dump in dir. */
static void new_dump_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/jf-move-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

/* jitframes with the jitdump sink alone, writing into a fresh dir. */
static void init_jitdump(void)
{
    new_dump_dir();
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV;
    c.sinks = JF_SINK_JITDUMP;
    c.dump_dir = dir;
    assert_int_equal(jf_init(&c), 0);
}

/* `jitframes check` accepts this process's dump; then remove it and dir. */
static void check_and_remove_dump(void)
{
    assert_dump_checks(dump_path(dir, getpid()));
    unlink(dump_path(dir, getpid()));
    rmdir(dir);
}

static void reg(size_t offset, size_t size, const char *name)
{
    jf_region r = test_region(code + offset, size, name);
    assert_int_equal(jf_register(&r), 0);
}

static long live_regions(void)
{
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    return (long)st.live_regions;
}

static void refused_moves_change_nothing(void **state)
{
    (void)state;
    assert_int_equal(jf_move(code, code + 64), JF_ENOTINIT);
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    reg(0, 32, "a");
    reg(64, 32, "b");
    reg(128, 256, "big");
    size_t before;
    char *map = map_read(getpid(), &before);
    free(map);

    assert_int_equal(jf_move(code + 8, code + 1024), JF_ENOENT);
    assert_int_equal(jf_move(code, NULL), JF_EINVAL);
    assert_int_equal(jf_move(code, (void *)(UINTPTR_MAX - 8)), JF_EINVAL); /* wraps */
    /* Onto b's start, into b's middle, ending in b, and into the code of a
     * region that starts below the destination (big, 256 bytes from 128). */
    assert_int_equal(jf_move(code, code + 64), JF_EEXIST);
    assert_int_equal(jf_move(code, code + 80), JF_EEXIST);
    assert_int_equal(jf_move(code, code + 40), JF_EEXIST);
    assert_int_equal(jf_move(code, code + 300), JF_EEXIST);
    assert_non_null(strstr(jf_last_error(), "big"));
    /* A batch: one bad move (the same region twice; two regions onto one
     * range) and none happens. */
    jf_region_move twice[] = {{code, code + 1024}, {code + 64, code + 2048}, {code, code + 4096}};
    assert_int_equal(jf_move_batch(twice, 3), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "move 2"));
    jf_region_move clash[] = {{code, code + 1024}, {code + 64, code + 1040}};
    assert_int_equal(jf_move_batch(clash, 2), JF_EEXIST);
    jf_region_move unknown[] = {{code, code + 1024}, {code + 1, code + 2048}};
    assert_int_equal(jf_move_batch(unknown, 2), JF_ENOENT);
    assert_non_null(strstr(jf_last_error(), "move 1"));
    assert_int_equal(jf_move_batch(NULL, 1), JF_EINVAL);
    assert_int_equal(jf_move_batch(NULL, 0), 0);

    /* Nothing moved: every region still at its place, the map unchanged. */
    size_t after;
    map = map_read(getpid(), &after);
    assert_int_equal(after, before);
    free(map);
    assert_int_equal(live_regions(), 3);
    assert_int_equal(jf_register(&(jf_region){
                         .struct_size = sizeof(jf_region), .addr = code + 1024, .size = 16, .name = "free"}),
                     0);
    assert_int_equal(jf_unregister(code + 1024), 0);
    for (size_t off = 0; off <= 128; off += 64)
        assert_int_equal(jf_unregister(code + off), 0);
    test_reset(NULL);
}

static void moves_follow_the_batch_layout(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    reg(0, 64, "first");
    reg(64, 64, "second");
    /* Identity is a no-op; a region may slide within its own range. */
    assert_int_equal(jf_move(code, code), 0);
    assert_int_equal(jf_move(code + 64, code + 96), 0);
    /* A compaction: first moves to where second was, second further on. */
    jf_region_move compaction[] = {{code, code + 96}, {code + 96, code + 160}};
    assert_int_equal(jf_move_batch(compaction, 2), 0);
    assert_int_equal(live_regions(), 2);

    size_t len;
    char *map = map_read(getpid(), &len);
    assert_non_null(map);
    assert_true(map_has_line(map, (uintptr_t)code, 64, "first"));      /* stays: maps */
    assert_true(map_has_line(map, (uintptr_t)code + 96, 64, "first")); /* cannot forget */
    assert_true(map_has_line(map, (uintptr_t)code + 160, 64, "second"));
    assert_int_equal(map_count_name(map, "second"), 3);
    free(map);

    /* The old addresses are free, the new ones taken. */
    assert_int_equal(jf_unregister(code), JF_ENOENT);
    assert_int_equal(jf_unregister(code + 64), JF_ENOENT);
    reg(0, 64, "reused");
    jf_region clash = test_region(code + 96, 8, "clash");
    assert_int_equal(jf_register(&clash), JF_EEXIST);
    assert_int_equal(jf_unregister(code + 96), 0);
    assert_int_equal(jf_unregister(code + 160), 0);
    assert_int_equal(jf_unregister(code), 0);
    test_reset(NULL);
}

/* The CODE_MOVE of region `index` of the dump's loads. */
typedef struct move_rec {
    uint64_t old_addr, new_addr, code_size, code_index;
} move_rec;

static move_rec read_move(const dump_record *r)
{
    move_rec m = {dump_u64(r->body + 16), dump_u64(r->body + 24), dump_u64(r->body + 32),
                  dump_u64(r->body + 40)};
    assert_int_equal(r->size, 64);
    assert_int_equal(dump_u64(r->body + 8), m.new_addr); /* vma */
    return m;
}

static void jitdump_writes_code_move_with_the_original_index(void **state)
{
    (void)state;
    init_jitdump();
    reg(0, 40, "mover");
    reg(256, 40, "stayer");
    reg(512, 40, "batched");
    assert_int_equal(jf_move(code, code + 4096), 0);
    jf_region_move batch[] = {{code + 4096, code + 8192}, {code + 512, code + 12288}};
    assert_int_equal(jf_move_batch(batch, 2), 0);
    assert_int_equal(jf_shutdown(), 0);

    dump_file d;
    assert_int_equal(dump_load(dump_path(dir, getpid()), &d), 0);
    assert_int_equal(dump_count(&d, ID_LOAD), 3);
    assert_int_equal(dump_count(&d, ID_MOVE), 3);
    uint64_t index[3] = {0}, size[3] = {0};
    move_rec moves[3];
    size_t n_loads = 0, n_moves = 0;
    for (size_t i = 0; i < d.n_records; i++) {
        dump_load_info l;
        if (d.records[i].id == ID_LOAD && dump_code_load(&d.records[i], &l) == 0) {
            index[n_loads] = l.code_index;
            size[n_loads++] = l.code_size;
        } else if (d.records[i].id == ID_MOVE) {
            moves[n_moves++] = read_move(&d.records[i]);
        }
    }
    /* mover: code -> +4096 -> +8192, keeping its index and code_size; then
     * batched: +512 -> +12288 (its own index). */
    assert_int_equal(moves[0].old_addr, (uintptr_t)code);
    assert_int_equal(moves[0].new_addr, (uintptr_t)code + 4096);
    assert_int_equal(moves[1].old_addr, (uintptr_t)code + 4096);
    assert_int_equal(moves[1].new_addr, (uintptr_t)code + 8192);
    assert_int_equal(moves[0].code_index, index[0]);
    assert_int_equal(moves[1].code_index, index[0]);
    assert_int_equal(moves[0].code_size, size[0]);
    assert_int_equal(moves[2].old_addr, (uintptr_t)code + 512);
    assert_int_equal(moves[2].new_addr, (uintptr_t)code + 12288);
    assert_int_equal(moves[2].code_index, index[2]);
    dump_free(&d);
    check_and_remove_dump();
}

/* A moved region with unwind data: perf's CODE_MOVE maps the .so with the
 * last unwinding record's mapped_size, so the move repeats the region's; perf
 * keeps that record until a load, so the next load or move without its own
 * gets one that describes nothing (no FDE, mapped_size 0) first. */
static void moves_with_unwind_data_leave_perf_nothing_stale(void **state)
{
    (void)state;
    init_jitdump();
    jf_cfi *cfi;
    assert_int_equal(jf_cfi_new(&cfi), 0);
#if defined(__x86_64__)
    assert_int_equal(jf_cfi_add_frameless(cfi, 0, 40, 8), 0);
#else
    assert_int_equal(jf_cfi_add_frameless(cfi, 0, 40, 0), 0);
#endif
    jf_region with = test_region(code, 40, "with_cfi");
    with.cfi = cfi;
    assert_int_equal(jf_register(&with), 0);
    reg(1024, 40, "without_cfi");
    assert_int_equal(jf_move(code, code + 4096), 0);        /* unwinding info, move */
    assert_int_equal(jf_move(code + 1024, code + 8192), 0); /* nothing stale, move */
    assert_int_equal(jf_move(code + 4096, code + 12288), 0);
    reg(2048, 40, "later"); /* nothing stale, load */
    assert_int_equal(jf_shutdown(), 0);
    jf_cfi_free(cfi);

    dump_file d;
    assert_int_equal(dump_load(dump_path(dir, getpid()), &d), 0);
    /* Every record: L load, M move, C close, U unwinding info, u one that
     * describes nothing (mapped_size 0). */
    char seq[64] = "";
    for (size_t i = 0; i < d.n_records && i + 1 < sizeof seq; i++) {
        const dump_record *r = &d.records[i];
        seq[i] = r->id == ID_MOVE     ? 'M'
                 : r->id == ID_LOAD   ? 'L'
                 : r->id == ID_CLOSE  ? 'C'
                 : r->id == ID_UNWIND ? (dump_u64(r->body + 16) ? 'U' : 'u')
                                      : '?';
    }
    print_message("records: %s\n", seq);
    /* with_cfi, without_cfi; the three moves; later; the close. */
    assert_string_equal(seq, "ULL"
                             "UMuMUM"
                             "uL"
                             "C");
    dump_free(&d);
    check_and_remove_dump();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refused_moves_change_nothing),
        cmocka_unit_test(moves_follow_the_batch_layout),
        cmocka_unit_test(jitdump_writes_code_move_with_the_original_index),
        cmocka_unit_test(moves_with_unwind_data_leave_perf_nothing_stale),
    };
    return cmocka_run_group_tests(tests, test_reset, NULL);
}
