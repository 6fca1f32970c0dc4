/*
 * The jitdump sink's records, read back with an independent reader: the
 * header, CODE_LOAD with its nonce, line tables, unwinding info and its
 * layout, group order, indices, timestamps, the footprint and overlap
 * report, resuming after disable/enable, the marker mapping, file safety.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dump_parse.h"
#include "jitframes.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

static void init_jitdump(void)
{
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_JITDUMP;
    cfg.dump_dir = test_dir;
    assert_int_equal(jf_init(&cfg), 0);
    assert_int_equal(jf_enabled_sinks(), JF_SINK_JITDUMP);
}

/* Read our dump back; it must also pass `jitframes check`. */
static void load_dump(dump_file *d)
{
    const char *path = dump_path(test_dir, (long)getpid());
    char msg[4096];
    if (dump_tool_check(path, msg, sizeof msg) == 1)
        fail_msg("jitframes check %s: %s", path, msg);
    assert_int_equal(dump_load(path, d), 0);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Code the tests register: readable bytes that never run. */
static uint8_t code_area[64 * 1024] __attribute__((aligned(64)));

static jf_region region_at(size_t offset, size_t size, const char *name)
{
    jf_region r = JF_REGION_INIT;
    r.addr = code_area + offset;
    r.size = size;
    r.name = name;
    return r;
}

/* x86_64-style frameless shape: CFA = SP + 48 after a 4-byte prologue. */
static jf_cfi *frameless_cfi(size_t size)
{
    jf_cfi *cfi;
    assert_int_equal(jf_cfi_new(&cfi), 0);
    assert_int_equal(jf_cfi_begin_fde(cfi, 0, size), 0);
    assert_int_equal(jf_cfi_advance_to(cfi, 4), 0);
    assert_int_equal(jf_cfi_def_cfa_offset(cfi, 48), 0);
    return cfi;
}

static void header_is_exactly_what_perf_reads(void **state)
{
    (void)state;
    uint64_t before = now_ns();
    init_jitdump();
    uint64_t after = now_ns();
    assert_int_equal(jf_shutdown(), 0);
    dump_file d;
    load_dump(&d);
    const uint8_t *h = d.data;
    assert_int_equal(dump_u32(h), 0x4A695444u);
    assert_int_equal(dump_u32(h + 4), 1);
    assert_int_equal(dump_u32(h + 8), 40);
#if defined(__x86_64__)
    assert_int_equal(dump_u32(h + 12), 62);
#endif
    assert_int_equal(dump_u32(h + 16), 0); /* reserved */
    assert_int_equal(dump_u32(h + 20), (uint32_t)getpid());
    assert_in_range(dump_u64(h + 24), before, after);
    assert_int_equal(dump_u64(h + 32), 0); /* flags */
    /* Shutdown wrote CODE_CLOSE and cut the reserved tail off. */
    assert_int_equal(d.n_records, 1);
    assert_int_equal(d.records[0].id, ID_CLOSE);
    assert_int_equal(d.records[0].size, 16);
    assert_int_equal(d.file_size, d.records_end);
    dump_free(&d);
}

static void code_load_holds_the_code_then_a_nonce(void **state)
{
    (void)state;
    for (size_t i = 0; i < 48; i++)
        code_area[i] = (uint8_t)(0x90 + i);
    init_jitdump();
    jf_region r = region_at(0, 48, "first\nname");
    uint64_t before = now_ns();
    assert_int_equal(jf_register(&r), 0);
    uint64_t after = now_ns();
    /* While running: complete records, then a zero-filled reserved tail. */
    dump_file d;
    load_dump(&d);
    assert_true(d.tail_is_zero);
    assert_true(d.file_size > d.records_end);
    assert_int_equal(d.n_records, 1);
    dump_load_info l;
    assert_int_equal(dump_code_load(&d.records[0], &l), 0);
    assert_int_equal(l.pid, (uint32_t)getpid());
    assert_int_equal(l.tid, (uint32_t)syscall(SYS_gettid));
    assert_int_equal(l.vma, (uintptr_t)code_area);
    assert_int_equal(l.code_addr, (uintptr_t)code_area);
    assert_int_equal(l.code_size, 48 + JF_JITDUMP_NONCE_SIZE);
    assert_true(l.code_index >= 1);
    assert_string_equal(l.name, "first?name");
    assert_memory_equal(l.code, code_area, 48);
    assert_in_range(d.records[0].timestamp, before, after);
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.sink[1].regions, 1);
    assert_int_equal(st.sink[1].bytes, d.records_end - 40);
    assert_int_equal(st.sink[1].enabled, 1);
    assert_int_equal(st.sink[1].errors, 0);
    dump_free(&d);
    assert_int_equal(jf_shutdown(), 0);
}

static int compare_nonce(const void *a, const void *b)
{
    return memcmp(a, b, JF_JITDUMP_NONCE_SIZE);
}

/* The build-id safety property: identical code, distinct code bytes. */
static void identical_code_gets_distinct_code_bytes(void **state)
{
    (void)state;
    enum { N = 200, SIZE = 32 };
    for (size_t i = 0; i < N; i++)
        memset(code_area + i * 64, 0xc3, SIZE);
    init_jitdump();
    char names[N][16];
    for (size_t i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "copy_%zu", i);
        jf_region r = region_at(i * 64, SIZE, names[i]);
        assert_int_equal(jf_register(&r), 0);
    }
    assert_int_equal(jf_shutdown(), 0);
    dump_file d;
    load_dump(&d);
    assert_int_equal(dump_count(&d, ID_LOAD), N);
    uint8_t nonces[N][JF_JITDUMP_NONCE_SIZE];
    size_t k = 0;
    uint64_t last_index = 0;
    for (size_t i = 0; i < d.n_records; i++) {
        dump_load_info l;
        if (d.records[i].id != ID_LOAD)
            continue;
        assert_int_equal(dump_code_load(&d.records[i], &l), 0);
        assert_string_equal(l.name, names[k]);
        assert_int_equal(l.code_size, SIZE + JF_JITDUMP_NONCE_SIZE);
        assert_memory_equal(l.code, code_area, SIZE); /* the real code, untouched */
        assert_true(l.code_index > last_index);
        last_index = l.code_index;
        memcpy(nonces[k++], l.code + SIZE, JF_JITDUMP_NONCE_SIZE);
    }
    qsort(nonces, N, JF_JITDUMP_NONCE_SIZE, compare_nonce);
    for (size_t i = 1; i < N; i++)
        assert_true(memcmp(nonces[i - 1], nonces[i], JF_JITDUMP_NONCE_SIZE) != 0);
    for (size_t i = 0; i < SIZE; i++)
        assert_int_equal(code_area[i], 0xc3); /* the live code, untouched */
    dump_free(&d);
}

static const uint8_t *debug_entry(const uint8_t *p, uint64_t *addr, uint32_t *line, const char **file)
{
    *addr = dump_u64(p);
    *line = dump_u32(p + 8);
    assert_int_equal(dump_u32(p + 12), 0); /* discriminator */
    *file = (const char *)(p + 16);
    return p + 16 + strlen(*file) + 1;
}

static void debug_info_is_absolute_with_a_closing_entry(void **state)
{
    (void)state;
    init_jitdump();
    jf_line lines[3] = {{0, 10, NULL}, {8, 20, "other.c"}, {40, 30, NULL}};
    jf_region r = region_at(256, 48, "with_lines");
    r.file = "main.mj";
    r.lines = lines;
    r.n_lines = 3;
    jf_region only_line = region_at(512, 16, "file_and_line");
    only_line.file = "one.mj";
    only_line.line = 7;
    jf_region no_file = region_at(768, 16, "no_lines");
    jf_region batch[3] = {r, only_line, no_file};
    assert_int_equal(jf_register_batch(batch, 3), 0);
    assert_int_equal(jf_shutdown(), 0);

    dump_file d;
    load_dump(&d);
    /* debug, load, debug, load, load, close */
    assert_int_equal(d.n_records, 6);
    static const uint32_t ids[6] = {ID_DEBUG, ID_LOAD, ID_DEBUG, ID_LOAD, ID_LOAD, ID_CLOSE};
    for (int i = 0; i < 6; i++)
        assert_int_equal(d.records[i].id, ids[i]);
    const dump_record *dbg = &d.records[0];
    assert_int_equal(dbg->size % 8, 0);
    uint64_t base = (uintptr_t)code_area + 256;
    assert_int_equal(dump_u64(dbg->body), base);
    assert_int_equal(dump_u64(dbg->body + 8), 4);
    static const struct {
        uint64_t off;
        uint32_t line;
        const char *file;
    } want[4] = {{0, 10, "main.mj"},
                 {8, 20, "other.c"},
                 {40, 30, "main.mj"},
                 {48 + JF_JITDUMP_NONCE_SIZE, 30, "main.mj"}}; /* closes the load's code */
    const uint8_t *p = dbg->body + 16;
    for (int i = 0; i < 4; i++) {
        uint64_t addr;
        uint32_t line;
        const char *file;
        p = debug_entry(p, &addr, &line, &file);
        assert_int_equal(addr, base + want[i].off);
        assert_int_equal(line, want[i].line);
        assert_string_equal(file, want[i].file);
    }
    assert_true(p <= d.data + dbg->offset + dbg->size);
    const dump_record *dbg2 = &d.records[2];
    assert_int_equal(dump_u64(dbg2->body + 8), 2);
    uint64_t addr;
    uint32_t line;
    const char *file;
    p = debug_entry(dbg2->body + 16, &addr, &line, &file);
    assert_int_equal(addr, (uintptr_t)code_area + 512);
    assert_int_equal(line, 7);
    assert_string_equal(file, "one.mj");
    debug_entry(p, &addr, &line, &file);
    assert_int_equal(addr, (uintptr_t)code_area + 512 + 16 + JF_JITDUMP_NONCE_SIZE);
    /* One group: every record of the batch has one timestamp. */
    for (int i = 1; i < 5; i++)
        assert_int_equal(d.records[i].timestamp, d.records[0].timestamp);
    dump_free(&d);
}

static int32_t s32_at(const uint8_t *p)
{
    return (int32_t)dump_u32(p);
}

/* CODE_UNWINDING_INFO: sizes, padding, mapped_size, and the pc-relative
 * fields computed for perf's layout, .eh_frame at round8(code_size) after
 * the code — with code_size including the nonce. */
static void unwinding_info_matches_perfs_layout(void **state)
{
    (void)state;
    init_jitdump();
    jf_cfi *cfi = frameless_cfi(37);
    jf_region r = region_at(1024, 37, "frameless");
    r.cfi = cfi;
    assert_int_equal(jf_register(&r), 0);
    size_t footprint = jf_jitdump_footprint(37, cfi);
    jf_cfi_free(cfi);
    assert_int_equal(jf_shutdown(), 0);

    dump_file d;
    load_dump(&d);
    assert_int_equal(d.n_records, 3);
    assert_int_equal(d.records[0].id, ID_UNWIND);
    assert_int_equal(d.records[1].id, ID_LOAD);
    const dump_record *u = &d.records[0];
    uint64_t data_size = dump_u64(u->body);
    uint64_t hdr_size = dump_u64(u->body + 8);
    uint64_t mapped = dump_u64(u->body + 16);
    assert_int_equal(hdr_size, 20); /* one FDE: 12 + 8 */
    assert_true(data_size > hdr_size);
    assert_int_equal(mapped, (data_size + 15) / 16 * 16);
    assert_true(mapped != 0);
    assert_int_equal(u->size, 16 + 24 + (data_size + 7) / 8 * 8);
    dump_load_info l;
    assert_int_equal(dump_code_load(&d.records[1], &l), 0);
    assert_int_equal(l.code_size, 37 + JF_JITDUMP_NONCE_SIZE);
    assert_int_equal(footprint, (l.code_size + 7) / 8 * 8 + mapped);

    uint64_t eh_size = data_size - hdr_size;
    const uint8_t *hdr = u->body + 24 + eh_size;
    assert_int_equal(hdr[0], 1);
    assert_int_equal(hdr[1], 0x1b);
    assert_int_equal(hdr[2], 0x03);
    assert_int_equal(hdr[3], 0x3b);
    assert_int_equal(s32_at(hdr + 4), -(int32_t)(eh_size + 4));
    assert_int_equal(dump_u32(hdr + 8), 1);
    int64_t text_from_hdr = -(int64_t)((l.code_size + 7) / 8 * 8 + eh_size);
    assert_int_equal(s32_at(hdr + 12), text_from_hdr);
    /* The FDE the row points at covers the real code from its start. */
    const uint8_t *fde = hdr + s32_at(hdr + 16);
    assert_true(fde >= u->body + 24 && fde < hdr);
    int64_t fde_field = (int64_t)(fde + 8 - hdr); /* pc_begin, relative to hdr */
    assert_int_equal(fde_field + s32_at(fde + 8), text_from_hdr);
    assert_int_equal(s32_at(fde + 12), 37);
    dump_free(&d);
}

static void footprint_covers_perfs_mapping(void **state)
{
    (void)state;
    assert_int_equal(jf_jitdump_footprint(100, NULL), 100 + JF_JITDUMP_NONCE_SIZE);
    assert_int_equal(jf_jitdump_footprint(0, NULL), 0);
    assert_true(strlen(jf_last_error()) > 0);
    jf_cfi *cfi = frameless_cfi(64);
    size_t f = jf_jitdump_footprint(64, cfi);
    assert_true(f >= 72 + 16);
    assert_int_equal(f % 8, 0);
    assert_int_equal(jf_jitdump_footprint(32, cfi), 0); /* FDE past the code */
    jf_cfi_free(cfi);
}

static int warnings;
static void count_warnings(void *ctx, int level, const char *message)
{
    (void)ctx;
    (void)message;
    warnings += level == JF_LOG_WARNING;
}

static void overlapping_synthesized_mappings_are_reported(void **state)
{
    (void)state;
    jf_set_log_callback(count_warnings, NULL);
    init_jitdump();
    jf_cfi *cfi = frameless_cfi(64);
    size_t stride = (jf_jitdump_footprint(64, cfi) + 15) / 16 * 16;
    uint64_t before = jf_jitdump_overlaps();

    /* Spaced by the footprint: fine. */
    for (int i = 0; i < 3; i++) {
        jf_region r = region_at(4096 + i * stride, 64, "spaced");
        r.cfi = cfi;
        assert_int_equal(jf_register(&r), 0);
    }
    assert_int_equal(jf_jitdump_overlaps(), before);
    /* Placed inside the previous region's synthesized .eh_frame area (past
     * its code and nonce): perf would cut its unwind data off. */
    jf_region packed = region_at(4096 + 2 * stride + 80, 64, "packed");
    packed.cfi = cfi;
    assert_int_equal(jf_register(&packed), 0);
    assert_int_equal(jf_jitdump_overlaps(), before + 1);
    assert_int_equal(warnings, 1);
    /* No unwind data: packing upwards only cuts the nonce off: fine. */
    jf_region a = region_at(8192, 64, "plain_a");
    jf_region b = region_at(8192 + 64, 64, "plain_b");
    assert_int_equal(jf_register(&a), 0);
    assert_int_equal(jf_register(&b), 0);
    assert_int_equal(jf_jitdump_overlaps(), before + 1);
    /* Below a live region, its nonce covering that region's first bytes. */
    jf_region c = region_at(12288, 64, "plain_c");
    jf_region below = region_at(12288 - 64 - 4, 64, "below");
    assert_int_equal(jf_register(&c), 0);
    assert_int_equal(jf_register(&below), 0);
    assert_int_equal(jf_jitdump_overlaps(), before + 2);
    /* Reusing the memory of an unregistered region is not an overlap. */
    assert_int_equal(jf_unregister(code_area + 12288 - 64 - 4), 0);
    jf_region reuse = region_at(12288 - 64 - 8, 64, "reuse");
    assert_int_equal(jf_register(&reuse), 0);
    assert_int_equal(jf_jitdump_overlaps(), before + 2);
    jf_cfi_free(cfi);
    assert_int_equal(jf_shutdown(), 0);
    jf_set_log_callback(NULL, NULL);
    /* The validator sees the overlap too (when it reads jitdumps). */
    char msg[4096];
    int verdict = dump_tool_check(dump_path(test_dir, (long)getpid()), msg, sizeof msg);
    assert_true(verdict != 0);
}

/* Code packed downwards (LuaJIT's traces): each new region ends right below
 * the previous one, so its unwind data would put perf's mapping over that
 * region's first bytes. It is written without it; the first keeps its own. */
static void unwind_data_covering_another_region_is_left_out(void **state)
{
    (void)state;
    jf_set_log_callback(count_warnings, NULL);
    warnings = 0;
    init_jitdump();
    jf_cfi *cfi = frameless_cfi(64);
    uint64_t before = jf_jitdump_overlaps();
    for (int i = 0; i < 4; i++) {
        jf_region r = region_at(16384 - (i + 1) * 72, 64, "downwards");
        r.cfi = cfi;
        assert_int_equal(jf_register(&r), 0);
    }
    assert_int_equal(jf_jitdump_overlaps(), before + 3);
    /* A gap after the code (16 bytes) smaller than the unwind data: known
     * only once the data is emitted, and taken out again. */
    jf_region above = region_at(20000, 64, "above");
    above.cfi = cfi;
    assert_int_equal(jf_register(&above), 0);
    jf_region below = region_at(20000 - 72 - 16, 64, "below_with_gap");
    below.cfi = cfi;
    assert_int_equal(jf_register(&below), 0);
    assert_int_equal(jf_jitdump_overlaps(), before + 4);
    assert_true(warnings >= 1); /* logged at the 1st, 2nd, 4th... overlap of the process */
    jf_cfi_free(cfi);
    assert_int_equal(jf_shutdown(), 0);
    jf_set_log_callback(NULL, NULL);
    dump_file d;
    assert_int_equal(dump_load(dump_path(test_dir, (long)getpid()), &d), 0);
    assert_int_equal(dump_count(&d, ID_LOAD), 6);
    assert_int_equal(dump_count(&d, ID_UNWIND), 2); /* the first region's, and above's */
    dump_free(&d);
    char msg[4096];
    assert_int_equal(dump_tool_check(dump_path(test_dir, (long)getpid()), msg, sizeof msg), 0);
}

static void disable_then_enable_resumes_the_same_file(void **state)
{
    (void)state;
    init_jitdump();
    jf_region r = region_at(0, 16, "kept");
    assert_int_equal(jf_register(&r), 0);
    assert_int_equal(jf_disable(JF_SINK_JITDUMP), 0);
    dump_file d;
    load_dump(&d);
    assert_int_equal(d.file_size, d.records_end); /* trimmed */
    assert_int_equal(d.n_records, 1);
    dump_free(&d);
    assert_int_equal(jf_enable(JF_SINK_JITDUMP), 0); /* replays "kept" */
    jf_region r2 = region_at(64, 16, "later");
    assert_int_equal(jf_register(&r2), 0);
    assert_int_equal(jf_shutdown(), 0);
    load_dump(&d);
    assert_int_equal(d.n_records, 4);
    dump_load_info l[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(dump_code_load(&d.records[i], &l[i]), 0);
    assert_string_equal(l[0].name, "kept");
    assert_string_equal(l[1].name, "kept");
    assert_string_equal(l[2].name, "later");
    assert_true(l[0].code_index < l[1].code_index && l[1].code_index < l[2].code_index);
    assert_true(d.records[0].timestamp <= d.records[1].timestamp);
    assert_int_equal(d.records[3].id, ID_CLOSE);
    dump_free(&d);
}

/* The marker: the dump's first page mapped r-x private, kept after shutdown. */
static void marker_mapping_stays_for_the_process_life(void **state)
{
    (void)state;
    init_jitdump();
    assert_int_equal(jf_shutdown(), 0);
    FILE *maps = fopen("/proc/self/maps", "r");
    assert_non_null(maps);
    char line[8192];
    int found = 0;
    const char *path = dump_path(test_dir, (long)getpid());
    while (fgets(line, sizeof line, maps))
        if (strstr(line, path) && strstr(line, " r-xp "))
            found++;
    fclose(maps);
    assert_int_equal(found, 1);
}

/* init, register, shutdown, init, register in one process: the second
 * library instance appends to the same jit-<pid>.dump after the first's
 * CODE_CLOSE (perf requires that name, and reads on past a CODE_CLOSE);
 * `jitframes check` accepts it (it used to reject "CODE_LOAD after
 * CODE_CLOSE") and both loads are there. */
static void reinitialised_library_appends_after_close(void **state)
{
    (void)state;
    init_jitdump();
    jf_region first = region_at(0, 64, "before_shutdown");
    assert_int_equal(jf_register(&first), 0);
    assert_int_equal(jf_shutdown(), 0);
    init_jitdump();
    jf_region second = region_at(128, 64, "after_reinit");
    assert_int_equal(jf_register(&second), 0);
    dump_file d;
    load_dump(&d); /* runs `jitframes check` */
    assert_int_equal(dump_count(&d, ID_LOAD), 2);
    assert_int_equal(dump_count(&d, ID_CLOSE), 1);
    dump_free(&d);
    assert_int_equal(jf_shutdown(), 0);
}

/* A region perf's int code_size cannot hold is not written (never
 * truncated): jf_register says so with JF_ERANGE, the region stays
 * registered, the sink stays on and writes the rest of the group. */
static void region_too_large_for_a_record_is_reported(void **state)
{
    (void)state;
    init_jitdump();
    jf_region group[2] = {region_at(0, 64, "fits"), JF_REGION_INIT};
    group[1].addr = (const void *)(uintptr_t)0x100000000000u; /* never read */
    group[1].size = (size_t)3 << 30;
    group[1].name = "three gigabytes";
    assert_int_equal(jf_register_batch(group, 2), JF_ERANGE);
    assert_non_null(strstr(jf_last_error(), "three gigabytes"));
    assert_non_null(strstr(jf_last_error(), "too large for a jitdump record"));
    assert_int_equal(jf_enabled_sinks(), JF_SINK_JITDUMP);
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.live_regions, 2);
    assert_int_equal(st.sink[1].errors, 1);
    assert_int_equal(st.sink[1].regions, 1);
    jf_region next = region_at(64, 64, "after");
    assert_int_equal(jf_register(&next), 0);
    dump_file d;
    load_dump(&d);
    assert_int_equal(dump_count(&d, ID_LOAD), 2);
    dump_free(&d);
    assert_int_equal(jf_shutdown(), 0);
}

static void another_writer_in_this_process_is_refused(void **state)
{
    (void)state;
    const char *path = dump_path(test_dir, (long)getpid());
    unlink(path);
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "JiTD", 4), 4);
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_JITDUMP;
    cfg.dump_dir = test_dir;
    assert_int_equal(jf_init(&cfg), JF_ESINK);
    assert_non_null(strstr(jf_last_error(), "JF_EUNSAFE"));
    assert_int_equal(jf_enabled_sinks(), 0);
    assert_int_equal(jf_shutdown(), 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, 4); /* untouched */
    close(fd);
    unlink(path);
}

static void stale_dump_of_a_dead_process_is_replaced(void **state)
{
    (void)state;
    const char *path = dump_path(test_dir, (long)getpid());
    unlink(path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("garbage from a dead process with our pid", f);
    fclose(f);
    struct utimbuf old = {time(NULL) - 3600, time(NULL) - 3600};
    assert_int_equal(utime(path, &old), 0);
    /* Our own marker from earlier tests must not make it look like ours. */
    init_jitdump();
    assert_int_equal(jf_shutdown(), 0);
    dump_file d;
    load_dump(&d);
    assert_int_equal(d.n_records, 1);
    assert_int_equal(d.records[0].id, ID_CLOSE);
    dump_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(header_is_exactly_what_perf_reads, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(code_load_holds_the_code_then_a_nonce, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(identical_code_gets_distinct_code_bytes, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(debug_info_is_absolute_with_a_closing_entry, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(unwinding_info_matches_perfs_layout, make_dir, remove_dir),
        cmocka_unit_test(footprint_covers_perfs_mapping),
        cmocka_unit_test_setup_teardown(overlapping_synthesized_mappings_are_reported, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(disable_then_enable_resumes_the_same_file, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(marker_mapping_stays_for_the_process_life, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(region_too_large_for_a_record_is_reported, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(unwind_data_covering_another_region_is_left_out, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(reinitialised_library_appends_after_close, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(another_writer_in_this_process_is_refused, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(stale_dump_of_a_dead_process_is_replaced, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
