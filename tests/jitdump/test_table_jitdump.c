/*
 * The jitdump `jitframes perfmap --jitdump` and `record` write from a
 * published table (tools/cli/table_jitdump.c) is made of the sink's own records
 * (src/jitdump_encode.h): for the same region, its DEBUG_INFO is the sink's
 * byte for byte (padding included) and its CODE_LOAD differs only in the
 * timestamp and the nonce.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dump_parse.h"
#include "jitframes.h"
#include "table_jitdump.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static uint8_t code_area[256] __attribute__((aligned(64)));

/* Line entries whose record is not a multiple of 8 bytes before padding
 * (3 entries: 32 + 3 * 16 + 6 + 8 + 8 = 102 bytes). */
static const jf_line lines[2] = {{0, 10, NULL}, {32, 11, "other.c"}};

static const dump_record *find(const dump_file *d, uint32_t id)
{
    for (size_t i = 0; i < d->n_records; i++)
        if (d->records[i].id == id)
            return &d->records[i];
    fail_msg("no record %u", id);
    return NULL;
}

/* The sink's dump of one region with a line table and no unwind rules. */
static void sink_dump(dump_file *d)
{
    memset(code_area, 0x90, sizeof code_area);
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_JITDUMP;
    cfg.dump_dir = test_dir;
    assert_int_equal(jf_init(&cfg), 0);
    jf_region r = JF_REGION_INIT;
    r.addr = code_area;
    r.size = 64;
    r.name = "table_fn";
    r.file = "t.jit";
    r.line = 10;
    r.lines = lines;
    r.n_lines = 2;
    assert_int_equal(jf_register(&r), 0);
    assert_int_equal(jf_shutdown(), 0);
    assert_int_equal(dump_load(dump_path(test_dir, (long)getpid()), d), 0);
}

/* The same region as the table would hold it, written by the table's writer. */
static void table_dump(dump_file *d, uint64_t ts)
{
    tr_line table_lines[2] = {{0, 10, NULL}, {32, 11, (char *)"other.c"}};
    tr_region r = {.start = (uintptr_t)code_area,
                   .size = 64,
                   .name = (char *)"table_fn",
                   .file = (char *)"t.jit",
                   .line = 10,
                   .lines = table_lines,
                   .n_lines = 2};
    tj_entry e = {.r = &r, .code = code_area, .ts = ts, .unwind_ok = 1};
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/table.dump", test_dir);
    FILE *out = fopen(path, "wbx");
    assert_non_null(out);
    assert_int_equal(tj_write_entries(out, getpid(), &e, 1, err, sizeof err), 1);
    assert_int_equal(fclose(out), 0);
    assert_dump_checks(path);
    assert_int_equal(dump_load(path, d), 0);
    unlink(path);
}

static void table_jitdump_writes_the_sinks_records(void **state)
{
    (void)state;
    dump_file sink, table;
    sink_dump(&sink);
    const dump_record *sink_debug = find(&sink, ID_DEBUG), *sink_load = find(&sink, ID_LOAD);
    table_dump(&table, sink_load->timestamp);
    const dump_record *table_debug = find(&table, ID_DEBUG), *table_load = find(&table, ID_LOAD);

    assert_int_equal(sink_debug->size % 8, 0);
    assert_int_equal(table_debug->size, sink_debug->size);
    assert_memory_equal(table_debug->body, sink_debug->body, sink_debug->size - 16);

    /* pid, tid, vma, code_addr, code_size, index, name, code; then the nonce. */
    assert_int_equal(table_load->size, sink_load->size);
    assert_memory_equal(table_load->body, sink_load->body, sink_load->size - 16 - JF_JITDUMP_NONCE_SIZE);
    dump_free(&sink);
    dump_free(&table);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_jitdump_writes_the_sinks_records),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
