/*
 * `jitframes check` on jitdumps crafted by a test-only writer: valid dumps
 * pass, and each rule perf relies on is broken once, expecting the right
 * message. `dump` output shows the decoded CFA rules and line tables.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitdump_builder.h"
#include "jitdump_reader.h"

/* Offsets in the standard dump, for the damaging functions. */
static struct {
    size_t debug, unwind, load0, load1, close;
    size_t eh_size, hdr_size;
} L;

#define A0 0x10000u       /* first region: 64 bytes, lines and unwind info */
#define A1 0x20000u       /* second region: 40 bytes, nothing else */
#define U (L.unwind + 40) /* .eh_frame in the file */
#define FDE (U + 24)      /* the FDE (after a 24-byte CIE) */
#define H (U + L.eh_size) /* .eh_frame_hdr in the file */

static const jdb_line std_lines[] = {{0, 10, "a.c"}, {16, 11, "a.c"}, {64, 12, "a.c"}};

static void add_unwind(jdb *b, uint64_t ts, uint64_t code_size, const jdb_fde *fdes, size_t n)
{
    uint8_t *data = jdb_unwind_data(code_size, fdes, n, &L.eh_size, &L.hdr_size, NULL);
    size_t mapped = (L.eh_size + L.hdr_size + 15) & ~(size_t)15;
    L.unwind = jdb_unwind(b, ts, data, L.eh_size, L.hdr_size, mapped);
    free(data);
}

static void build_with_fdes(jdb *b, const jdb_fde *fdes, size_t n)
{
    jdb_header(b, 1000);
    L.debug = jdb_debug(b, 1001, A0, std_lines, 3);
    add_unwind(b, 1001, 64, fdes, n);
    L.load0 = jdb_load(b, 1002, A0, 64, 0, "fn_a");
    L.load1 = jdb_load(b, 1003, A1, 40, 1, "fn_b");
    L.close = jdb_close(b, 1004);
}

static void build_good(jdb *b)
{
    jdb_fde fde = {0, 64, jdb_framed_insns, jdb_framed_insns_size};
    build_with_fdes(b, &fde, 1);
}

/* ---- valid dumps ------------------------------------------------------- */

static const uint8_t frameless_insns[] = {0x44, 0x0e, 0x20, 0x4c, 0x0e, 0x08}; /* sub/add rsp */
static const uint8_t remember_insns[] = {0x41, 0x0e, 0x10, 0x86, 0x02, 0x41, 0x0a, 0x0e, 0x08, 0x41, 0x0b};

static void build_multi_fde(jdb *b)
{
    jdb_fde fdes[] = {{32, 64, frameless_insns, sizeof frameless_insns},
                      {0, 32, remember_insns, sizeof remember_insns}};
    build_with_fdes(b, fdes, 2);
}

static void build_big_endian(jdb *b)
{
    jdb_init(b, 1);
    jdb_header(b, 5);
    jdb_load(b, 6, A0, 16, 3, "be");
    jdb_close(b, 7);
}

static void build_arch_timestamps_and_zero_tail(jdb *b)
{
    build_good(b);
    jdb_put_u64(b, 32, 1);
    jdb_zeros(b, 4096 + 5);
}

static void build_header_only(jdb *b)
{
    jdb_header(b, 1);
}

static void build_adjacent_without_unwind(jdb *b)
{
    jdb_header(b, 1);
    jdb_load(b, 2, A0, 64, 0, "a");
    jdb_load(b, 3, A0 + 64, 64, 1, "b");
    jdb_load(b, 3, A0 + 128, 1, 2, "c");
}

static void build_address_reuse(jdb *b)
{
    jdb_fde fde = {0, 64, NULL, 0};
    jdb_header(b, 1);
    add_unwind(b, 2, 64, &fde, 1);
    jdb_load(b, 2, A0, 64, 0, "old");
    jdb_load(b, 3, A0, 32, 1, "new_at_same_address");
    jdb_load(b, 4, A0 + 32, 32, 2, "new_after_it");
}

static void build_move(jdb *b)
{
    jdb_header(b, 1);
    jdb_load(b, 2, A0, 64, 0, "moving");
    jdb_move(b, 3, A0, A1, 64, 0);
    jdb_load(b, 4, A0, 64, 1, "in_the_old_place");
}

/* Unwinding info for n FDEs over a 64-byte code, with this mapped_size. */
static void add_unwind_mapped(jdb *b, uint64_t ts, const jdb_fde *fdes, size_t n, uint64_t mapped)
{
    size_t eh, hdr;
    uint8_t *data = jdb_unwind_data(64, fdes, n, &eh, &hdr, NULL);
    jdb_unwind(b, ts, data, eh, hdr, mapped);
    free(data);
}

/* What jitframes writes for a moved region with unwind data: its unwinding
 * info again (perf maps the moved .so with that mapped_size), then the move;
 * a later load without unwind data first gets one describing nothing (no
 * FDE, mapped_size 0), as perf keeps the moved region's until a load. */
/* One framed FDE over a 64-byte code. */
static jdb_fde framed_fde(void)
{
    return (jdb_fde){0, 64, jdb_framed_insns, jdb_framed_insns_size};
}

/* A region loaded with unwind data at A0, then moved to A1 with it. */
static void load_and_move_with_unwind(jdb *b)
{
    jdb_fde fde = framed_fde();
    jdb_header(b, 1);
    add_unwind_mapped(b, 2, &fde, 1, 80);
    jdb_load(b, 2, A0, 64, 0, "moving");
    add_unwind_mapped(b, 3, &fde, 1, 80);
    jdb_move(b, 3, A0, A1, 64, 0);
}

static void build_move_with_unwind(jdb *b)
{
    jdb_fde fde = framed_fde();
    load_and_move_with_unwind(b);
    add_unwind_mapped(b, 4, NULL, 0, 0);
    jdb_load(b, 4, A0, 64, 1, "in_the_old_place");
    add_unwind_mapped(b, 5, &fde, 1, 80);
    jdb_move(b, 5, A1, A1 + 0x1000, 64, 0);
}

typedef struct good_case {
    const char *name;
    void (*build)(jdb *b);
    uint64_t loads, unwinds;
} good_case;

static const good_case good_cases[] = {
    {"standard", build_good, 2, 1},
    {"multi_fde_with_remember_state", build_multi_fde, 2, 1},
    {"big_endian", build_big_endian, 1, 0},
    {"arch_timestamps_and_zero_tail", build_arch_timestamps_and_zero_tail, 2, 1},
    {"header_only", build_header_only, 0, 0},
    {"adjacent_without_unwind", build_adjacent_without_unwind, 3, 0},
    {"address_reuse", build_address_reuse, 3, 1},
    {"move_with_unwind", build_move_with_unwind, 2, 1},
    {"move", build_move, 2, 0},
};

static void valid_dumps_pass(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof good_cases / sizeof good_cases[0]; i++) {
        jdb b;
        jdb_init(&b, 0);
        good_cases[i].build(&b);
        jft_error err = {0};
        jd_summary s;
        int rc = jd_check(b.data, b.len, &s, &err);
        if (rc != 0 || s.loads != good_cases[i].loads || s.unwind_infos != good_cases[i].unwinds) {
            print_error("%s: rc %d at 0x%llx: %s (%llu loads)\n", good_cases[i].name, rc,
                        (unsigned long long)err.where, err.msg, (unsigned long long)s.loads);
            fail();
        }
        jdb_free(&b);
    }
}

/* ---- broken dumps -------------------------------------------------------- */

typedef struct bad_case {
    const char *name;
    void (*damage)(jdb *b); /* applied to the standard dump, or builds its own */
    int own_build;
    const char *message;
} bad_case;

/* A record of `size` bytes, zero after its prefix: too short or too long
 * for its id's fixed part. */
static void zero_record(jdb *b, uint32_t id, uint32_t size, uint64_t ts)
{
    jdb_u32(b, id);
    jdb_u32(b, size);
    jdb_u64(b, ts);
    jdb_zeros(b, size - 16);
}

#define DAMAGE(fn_name, body)   \
    static void fn_name(jdb *b) \
    {                           \
        body;                   \
    }

DAMAGE(short_file, b->len = 30)
DAMAGE(bad_magic, jdb_put_u32(b, 0, 0x12345678))
DAMAGE(version_2, jdb_put_u32(b, 4, 2))
DAMAGE(header_size_48, jdb_put_u32(b, 8, 48))
DAMAGE(unknown_machine, jdb_put_u32(b, 12, 9999))
DAMAGE(reserved_set, jdb_put_u32(b, 16, 1))
DAMAGE(flags_bit_1, jdb_put_u64(b, 32, 2))
DAMAGE(small_header_then_garbage, jdb_u32(b, 0); jdb_u32(b, 8); jdb_u64(b, 7))
DAMAGE(stray_bytes, jdb_bytes(b, "abcde", 5))
DAMAGE(truncated_record, b->len = L.close - 10)
DAMAGE(unknown_id, jdb_put_u32(b, L.close, 9))
DAMAGE(code_size_too_big, jdb_put_u64(b, L.load1 + 40, 1000))
DAMAGE(name_unterminated, b->data[L.load1 + 56 + 4] = 'x')
DAMAGE(junk_between_name_and_code, b->data[L.load1 + 57] = 0)
DAMAGE(control_char_in_name, b->data[L.load1 + 57] = '\n')
DAMAGE(pid_mismatch, jdb_put_u32(b, L.load1 + 16, 1))
DAMAGE(index_repeated, jdb_put_u64(b, L.load1 + 48, 0))
DAMAGE(index_decreasing, jdb_put_u64(b, L.load0 + 48, 5))
DAMAGE(code_wraps, jdb_put_u64(b, L.load1 + 32, 0xffffffffffffffe0u))
DAMAGE(timestamp_backwards, jdb_put_u64(b, L.load1 + 8, 500))
DAMAGE(timestamp_before_header, jdb_put_u64(b, L.debug + 8, 10))
DAMAGE(close_not_last, jdb_load(b, 1005, 0x90000, 8, 9, "late"))
DAMAGE(debug_code_addr, jdb_put_u64(b, L.debug + 16, A0 + 4))
DAMAGE(debug_no_entries, jdb_put_u64(b, L.debug + 24, 0))
DAMAGE(debug_too_many_entries, jdb_put_u64(b, L.debug + 24, 100))
DAMAGE(debug_name_unterminated, b->data[L.unwind - 1] = 'x')
DAMAGE(debug_bad_file_name, b->data[L.debug + 32 + 16] = 1)
DAMAGE(debug_decreasing, jdb_put_u64(b, L.debug + 32 + 20, A0 - 1))
DAMAGE(debug_outside, jdb_put_u64(b, L.debug + 32 + 40, A0 + 72))
DAMAGE(debug_not_closed, jdb_put_u64(b, L.debug + 32 + 40, A0 + 48))
DAMAGE(unwinding_size_too_big, jdb_put_u64(b, L.unwind + 16, 1000))
DAMAGE(hdr_bigger_than_data, jdb_put_u64(b, L.unwind + 24, L.eh_size + L.hdr_size + 8))
DAMAGE(unwind_padding_too_long, jdb_put_u64(b, L.unwind + 16, L.eh_size + L.hdr_size - 8);
       jdb_put_u64(b, L.unwind + 24, L.hdr_size - 8))
DAMAGE(mapped_size_zero, jdb_put_u64(b, L.unwind + 32, 0))
DAMAGE(cie_version, b->data[U + 8] = 2)
DAMAGE(cie_augmentation_unknown, b->data[U + 10] = 'Q')
DAMAGE(cie_augmentation_without_z, b->data[U + 9] = 'a')
DAMAGE(cie_code_align_zero, b->data[U + 12] = 0)
DAMAGE(cie_pointer_wrong, jdb_put_u32(b, FDE + 4, 999))
DAMAGE(fde_pc_begin_off_by_8, jdb_put_u32(b, FDE + 8, (uint32_t)(-96 + 8)))
DAMAGE(fde_not_pcrel, b->data[U + 16] = 0x03)
DAMAGE(entry_length_past_end, jdb_put_u32(b, FDE, 1000))
DAMAGE(entry_size_unaligned, jdb_put_u32(b, U, 19))
DAMAGE(unknown_cfa_opcode, b->data[FDE + 17] = 0x20)
DAMAGE(restore_state_alone, b->data[FDE + 17] = 0x0b)
DAMAGE(advance_past_fde, b->data[FDE + 17] = 0x7f)
DAMAGE(data_after_terminator, jdb_put_u32(b, FDE, 0))
DAMAGE(fde_range_zero, jdb_put_u32(b, FDE + 12, 0))
DAMAGE(hdr_version, b->data[H] = 2)
DAMAGE(hdr_ptr_encoding, b->data[H + 1] = 0x03)
DAMAGE(hdr_table_encoding, b->data[H + 3] = 0x3c)
DAMAGE(hdr_eh_frame_ptr, jdb_put_u32(b, H + 4, (uint32_t) - (int32_t)(L.eh_size + 4) + 4))
DAMAGE(hdr_count, jdb_put_u32(b, H + 8, 2))
DAMAGE(hdr_row_not_an_fde, jdb_put_u32(b, H + 16, (uint32_t)(24 - (int32_t)L.eh_size + 8)))
DAMAGE(hdr_row_wrong_start, jdb_put_u32(b, H + 12, (uint32_t)(-(int32_t)(64 + L.eh_size) + 4)))
DAMAGE(load_too_short, jdb_header(b, 1); zero_record(b, 0, 40, 2))
DAMAGE(debug_too_short, jdb_header(b, 1); zero_record(b, 2, 24, 2))
DAMAGE(unwind_too_short, jdb_header(b, 1); zero_record(b, 4, 32, 2))
DAMAGE(move_too_short, jdb_header(b, 1); zero_record(b, 1, 56, 2))
DAMAGE(move_too_long, jdb_header(b, 1); zero_record(b, 1, 72, 2))

static void hdr_rows_unsorted(jdb *b)
{
    jdb_fde fdes[] = {{0, 32, NULL, 0}, {32, 64, NULL, 0}};
    build_with_fdes(b, fdes, 2);
    uint8_t row[8];
    memcpy(row, b->data + H + 12, 8);
    memmove(b->data + H + 12, b->data + H + 20, 8);
    memcpy(b->data + H + 20, row, 8);
}

static void fdes_overlap(jdb *b)
{
    jdb_fde fdes[] = {{0, 32, NULL, 0}, {16, 64, NULL, 0}};
    build_with_fdes(b, fdes, 2);
}

static void register_out_of_range(jdb *b)
{
    static const uint8_t insns[] = {0x0d, 0x90, 0x03}; /* def_cfa_register 400 */
    jdb_fde fde = {0, 64, insns, sizeof insns};
    build_with_fdes(b, &fde, 1);
}

static void code_size_zero(jdb *b)
{
    jdb_header(b, 1);
    jdb_load(b, 2, A0, 0, 0, "empty");
}

static void debug_then_close(jdb *b)
{
    jdb_header(b, 1);
    jdb_debug(b, 2, A0, std_lines, 3);
    jdb_close(b, 3);
}

static void debug_at_end(jdb *b)
{
    jdb_header(b, 1);
    jdb_debug(b, 2, A0, std_lines, 3);
}

static void two_debug_records(jdb *b)
{
    jdb_header(b, 1);
    jdb_debug(b, 2, A0, std_lines, 3);
    jdb_debug(b, 2, A0, std_lines, 3);
    jdb_load(b, 3, A0, 64, 0, "a");
}

static void close_too_long(jdb *b)
{
    jdb_header(b, 1);
    jdb_u32(b, 3);
    jdb_u32(b, 24);
    jdb_u64(b, 2);
    jdb_u64(b, 0);
}

static void debug_trailing_bytes(jdb *b)
{
    jdb_header(b, 1);
    size_t at = jdb_debug(b, 2, A0, std_lines, 3);
    jdb_bytes(b, "\0\0\1", 3);
    jdb_put_u32(b, at + 4, (uint32_t)(b->len - at));
    jdb_load(b, 3, A0, 64, 0, "a");
}

static void no_eh_frame_hdr(jdb *b)
{
    jdb_fde fde = {0, 64, NULL, 0};
    size_t eh, hdr;
    uint8_t *data = jdb_unwind_data(64, &fde, 1, &eh, &hdr, NULL);
    jdb_header(b, 1);
    jdb_unwind(b, 2, data, eh, 0, 64);
    jdb_load(b, 3, A0, 64, 0, "a");
    free(data);
}

static void no_eh_frame(jdb *b)
{
    jdb_fde fde = {0, 64, NULL, 0};
    size_t eh, hdr;
    uint8_t *data = jdb_unwind_data(64, &fde, 1, &eh, &hdr, NULL);
    jdb_header(b, 1);
    jdb_unwind(b, 2, data + eh, 0, hdr, 64);
    jdb_load(b, 3, A0, 64, 0, "a");
    free(data);
}

/* The next region starts right after the code, inside the unwind room. */
static void synthesized_overlap(jdb *b)
{
    jdb_fde fde = {0, 64, NULL, 0};
    jdb_header(b, 1);
    add_unwind(b, 2, 64, &fde, 1);
    jdb_load(b, 2, A0, 64, 0, "a");
    jdb_load(b, 3, A0 + 64, 16, 1, "b");
}

/* A region with unwind info whose room covers older code. */
static void synthesized_overlap_backwards(jdb *b)
{
    jdb_fde fde = {0, 64, NULL, 0};
    jdb_header(b, 1);
    jdb_load(b, 2, A0 + 64, 16, 0, "b");
    add_unwind(b, 3, 64, &fde, 1);
    jdb_load(b, 3, A0, 64, 1, "a");
}

static void move_unknown_index(jdb *b)
{
    jdb_header(b, 1);
    jdb_load(b, 2, A0, 64, 0, "a");
    jdb_move(b, 3, A0, A1, 64, 7);
}

static void move_wrong_address(jdb *b)
{
    jdb_header(b, 1);
    jdb_load(b, 2, A0, 64, 0, "a");
    jdb_move(b, 3, A0 + 8, A1, 64, 0);
}

/* perf would give the load the moved region's unwind data. */
static void load_takes_moved_unwind(jdb *b)
{
    load_and_move_with_unwind(b);
    jdb_load(b, 4, A0, 64, 1, "without");
}

/* perf would map the second moved region with the first one's mapped_size. */
static void move_takes_moved_unwind(jdb *b)
{
    jdb_fde fde = framed_fde();
    jdb_header(b, 1);
    add_unwind_mapped(b, 2, &fde, 1, 80);
    jdb_load(b, 2, A0, 64, 0, "with");
    jdb_load(b, 2, A0 + 0x1000, 64, 1, "without");
    add_unwind_mapped(b, 3, &fde, 1, 80);
    jdb_move(b, 3, A0, A1, 64, 0);
    jdb_move(b, 3, A0 + 0x1000, A1 + 0x1000, 64, 1);
}

/* A move's code_size far beyond any load's, after unwinding info: refused
 * for not matching its load, never used to place the unwind data (that
 * overflowed: found by fuzz_parsers). */
static void move_huge_code_size(jdb *b)
{
    load_and_move_with_unwind(b);
    add_unwind_mapped(b, 4, NULL, 0, 0);
    jdb_load(b, 4, A0, 64, 1, "in_the_old_place");
    jdb_fde fde = framed_fde();
    add_unwind_mapped(b, 5, &fde, 1, 80);
    jdb_move(b, 5, A1, A1 + 0x1000, 0x7ffffffffffffff0u, 0);
}

static void no_fde_but_mapped(jdb *b)
{
    jdb_header(b, 1);
    add_unwind_mapped(b, 2, NULL, 0, 16);
    jdb_load(b, 2, A0, 64, 0, "a");
}

static const bad_case bad_cases[] = {
    {"short_file", short_file, 0, "file too short for a jitdump header"},
    {"bad_magic", bad_magic, 0, "not a jitdump (bad magic)"},
    {"version_2", version_2, 0, "header version 2"},
    {"header_size_48", header_size_48, 0, "header size 48 (expected 40)"},
    {"flags_bit_1", flags_bit_1, 0, "flags 0x2 have unknown bits"},
    {"small_header_then_garbage", small_header_then_garbage, 0, "size 8 (< 16) followed by non-zero bytes"},
    {"stray_bytes", stray_bytes, 0, "5 stray non-zero bytes"},
    {"truncated_record", truncated_record, 0, "CODE_LOAD record of 101 bytes runs past the end"},
    {"unknown_id", unknown_id, 0, "unknown record id 9"},
    {"load_too_short", load_too_short, 1, "CODE_LOAD of 40 bytes is shorter than its 56-byte fixed part"},
    {"debug_too_short", debug_too_short, 1,
     "CODE_DEBUG_INFO of 24 bytes is shorter than its 32-byte fixed part"},
    {"unwind_too_short", unwind_too_short, 1,
     "CODE_UNWINDING_INFO of 32 bytes is shorter than its 40-byte fixed part"},
    {"move_too_short", move_too_short, 1, "CODE_MOVE record is 56 bytes (expected 64)"},
    {"move_too_long", move_too_long, 1, "CODE_MOVE record is 72 bytes (expected 64)"},
    {"code_size_too_big", code_size_too_big, 0, "code_size 1000 does not fit in the record"},
    {"name_unterminated", name_unterminated, 0, "name is not NUL-terminated"},
    {"junk_between_name_and_code", junk_between_name_and_code, 0,
     "non-zero bytes between the name and the code"},
    {"control_char_in_name", control_char_in_name, 0, "name: control character 0x0a"},
    {"code_size_zero", code_size_zero, 1, "code_size is 0"},
    {"pid_mismatch", pid_mismatch, 0, "pid 1 differs from the header's pid 4242"},
    {"index_repeated", index_repeated, 0, "code_index 0 is not greater than the previous one (0)"},
    {"index_decreasing", index_decreasing, 0, "code_index 1 is not greater than the previous one (5)"},
    {"code_wraps", code_wraps, 0, "wraps past the end of the address space"},
    {"timestamp_backwards", timestamp_backwards, 0, "timestamp 500 is earlier"},
    {"close_too_long", close_too_long, 1, "CODE_CLOSE record is 24 bytes"},
    {"debug_then_close", debug_then_close, 1,
     "CODE_DEBUG_INFO at 0x28 must be followed by its CODE_LOAD, not by CODE_CLOSE"},
    {"debug_at_end", debug_at_end, 1, "CODE_DEBUG_INFO at the end of the dump has no CODE_LOAD"},
    {"two_debug_records", two_debug_records, 1, "second CODE_DEBUG_INFO before a CODE_LOAD"},
    {"debug_code_addr", debug_code_addr, 0, "code_addr 10004 differs from its CODE_LOAD's 10000"},
    {"debug_no_entries", debug_no_entries, 0, "CODE_DEBUG_INFO has no entries"},
    {"debug_too_many_entries", debug_too_many_entries, 0, "nr_entry 100 cannot fit"},
    {"debug_name_unterminated", debug_name_unterminated, 0, "line entry 2 runs past the record"},
    {"debug_bad_file_name", debug_bad_file_name, 0, "line entry 0 file name: control character 0x01"},
    {"debug_decreasing", debug_decreasing, 0,
     "line entry 1 address ffff is below the previous entry's 10000"},
    {"debug_outside", debug_outside, 0, "line entry 2 address 10048 lies outside the code 10000-10040"},
    {"debug_not_closed", debug_not_closed, 0, "last line entry at 10030 does not close the code at 10040"},
    {"debug_trailing_bytes", debug_trailing_bytes, 1, "3 bytes after the last line entry"},
    {"unwinding_size_too_big", unwinding_size_too_big, 0, "unwinding_size 1000 exceeds the record's"},
    {"hdr_bigger_than_data", hdr_bigger_than_data, 0, "exceeds unwinding_size"},
    {"unwind_padding_too_long", unwind_padding_too_long, 0, "bytes after the unwinding data"},
    {"mapped_size_zero", mapped_size_zero, 0, "mapped_size is 0"},
    {"no_eh_frame_hdr", no_eh_frame_hdr, 1, "no .eh_frame_hdr"},
    {"no_eh_frame", no_eh_frame, 1, "no .eh_frame data"},
    {"cie_version", cie_version, 0, "CIE version 2"},
    {"cie_augmentation_unknown", cie_augmentation_unknown, 0, "unknown CIE augmentation character 'Q'"},
    {"cie_augmentation_without_z", cie_augmentation_without_z, 0, "does not start with 'z'"},
    {"cie_code_align_zero", cie_code_align_zero, 0, "code alignment factor is 0"},
    {"cie_pointer_wrong", cie_pointer_wrong, 0, "CIE pointer 999 does not lead back to a CIE"},
    {"fde_pc_begin_off_by_8", fde_pc_begin_off_by_8, 0,
     "covers code offsets [8, 72), outside the code [0, 64)"},
    {"fde_not_pcrel", fde_not_pcrel, 0, "FDE pc_begin encoding 0x03 is not pc-relative"},
    {"entry_length_past_end", entry_length_past_end, 0, "entry length 1000 runs past the end of .eh_frame"},
    {"entry_size_unaligned", entry_size_unaligned, 0, "entry size 23 is not a multiple of 4"},
    {"unknown_cfa_opcode", unknown_cfa_opcode, 0, "unknown CFA instruction 0x20"},
    {"restore_state_alone", restore_state_alone, 0, "DW_CFA_restore_state without a remembered state"},
    {"advance_past_fde", advance_past_fde, 0, "moves past the end of the FDE's range"},
    {"register_out_of_range", register_out_of_range, 1, "register 400 out of range"},
    {"data_after_terminator", data_after_terminator, 0, "data after the .eh_frame zero terminator"},
    {"fde_range_zero", fde_range_zero, 0, "FDE covers no code (pc_range 0)"},
    {"fdes_overlap", fdes_overlap, 1, "FDEs at .eh_frame offsets 24 and 48 overlap"},
    {"hdr_version", hdr_version, 0, ".eh_frame_hdr version 2"},
    {"hdr_ptr_encoding", hdr_ptr_encoding, 0, "eh_frame_ptr encoding 0x03 (expected 0x1b)"},
    {"hdr_table_encoding", hdr_table_encoding, 0, "table encoding 0x3c (expected 0x3b)"},
    {"hdr_eh_frame_ptr", hdr_eh_frame_ptr, 0, "eh_frame_ptr -56 does not point at .eh_frame (expected -60)"},
    {"hdr_count", hdr_count, 0, "fde_count 2 but .eh_frame has 1 FDEs"},
    {"hdr_rows_unsorted", hdr_rows_unsorted, 1, ".eh_frame_hdr row 1 is not sorted"},
    {"hdr_row_not_an_fde", hdr_row_not_an_fde, 0, "which is not an FDE"},
    {"hdr_row_wrong_start", hdr_row_wrong_start, 0,
     "row says the FDE at offset 24 starts at 4, the FDE says 0"},
    {"synthesized_overlap", synthesized_overlap, 1,
     "synthesized mapping 10040-10050 overlaps the one of code_index 0 (10000-10090"},
    {"synthesized_overlap_backwards", synthesized_overlap_backwards, 1,
     "synthesized mapping 10000-10090 overlaps the one of code_index 0 (10040-10050"},
    {"move_unknown_index", move_unknown_index, 1, "CODE_MOVE of code_index 7, which no live CODE_LOAD has"},
    {"move_wrong_address", move_wrong_address, 1, "do not match code_index 0's 10000/64"},
    {"load_takes_moved_unwind", load_takes_moved_unwind, 1, "CODE_LOAD would take the unwinding info at 0x"},
    {"move_takes_moved_unwind", move_takes_moved_unwind, 1, "CODE_MOVE would take the unwinding info at 0x"},
    {"no_fde_but_mapped", no_fde_but_mapped, 1, ".eh_frame has no FDE (but mapped_size 16"},
    {"move_huge_code_size", move_huge_code_size, 1, "do not match code_index 0's 20000/64"},
};

/* What perf reads without complaint, and the checker accepts and reports:
 * loads after a CODE_CLOSE (a library shut down and initialised again: perf
 * reads on), a group whose first size is still 0 (a writer killed before
 * publishing it: perf stops there), a record older than the header's
 * timestamp (perf ignores that timestamp; CPython 3.13 writes wall-clock
 * time there): a warning. */
static void unpublished_group(jdb *b)
{
    size_t at = jdb_load(b, 1006, 0x90000, 8, 9, "being written");
    jdb_put_u32(b, at + 4, 0);
}

static void tolerated_states_are_reported(void **state)
{
    (void)state;
    struct {
        void (*damage)(jdb *b);
        uint64_t reopened, unpublished_min, warnings;
        const char *warning;
    } cases[] = {
        {close_not_last, 1, 0, 0, ""},
        {unpublished_group, 0, 16, 0, ""},
        {timestamp_before_header, 0, 0, 1, "timestamp 10 is earlier than the header's"},
        {unknown_machine, 0, 0, 1, "unknown ELF machine 9999 in the header (perf does not use it)"},
        {reserved_set, 0, 0, 1, "header reserved field is 0x1 (should be 0; perf does not read it)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        jdb b;
        jdb_init(&b, 0);
        build_good(&b);
        cases[i].damage(&b);
        jft_error err = {0};
        jd_summary s;
        int rc = jd_check(b.data, b.len, &s, &err);
        if (rc != 0)
            fail_msg("case %zu: %s", i, err.msg);
        assert_int_equal(s.reopened, cases[i].reopened);
        assert_true(s.unpublished >= cases[i].unpublished_min &&
                    (s.unpublished == 0) == (cases[i].unpublished_min == 0));
        assert_int_equal(s.warnings, cases[i].warnings);
        assert_non_null(strstr(s.warning.msg, cases[i].warning));
        jdb_free(&b);
    }
}

static void every_broken_rule_is_reported(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case *c = &bad_cases[i];
        jdb b;
        jdb_init(&b, 0);
        if (!c->own_build)
            build_good(&b);
        c->damage(&b);
        jft_error err = {0};
        int rc = jd_check(b.data, b.len, NULL, &err);
        if (rc != -1 || !strstr(err.msg, c->message)) {
            print_error("%s: rc %d at 0x%llx: \"%s\"; expected \"%s\"\n", c->name, rc,
                        (unsigned long long)err.where, err.msg, c->message);
            fail();
        }
        /* dump mode decodes as far as it can and reports the same first problem */
        jft_error dump_err = {0};
        FILE *devnull = fopen("/dev/null", "w");
        assert_non_null(devnull);
        assert_int_equal(jd_dump(b.data, b.len, devnull, NULL, &dump_err), -1);
        fclose(devnull);
        assert_string_equal(dump_err.msg, err.msg);
        jdb_free(&b);
    }
}

/* dump keeps going past records too short for their fixed part, each
 * dropped whole (a short CODE_LOAD takes no debug or unwinding info), and
 * decodes the next: the fields of the good load come out right. */
static void short_fixed_parts_are_reported_and_walked_past(void **state)
{
    (void)state;
    jdb b;
    jdb_init(&b, 0);
    jdb_header(&b, 1);
    zero_record(&b, 2, 24, 2);
    zero_record(&b, 4, 32, 3);
    zero_record(&b, 0, 40, 4);
    zero_record(&b, 1, 56, 5);
    jdb_load(&b, 6, A1, 40, 7, "after_them");
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    jd_summary s;
    jft_error err = {0};
    assert_int_equal(jd_dump(b.data, b.len, out, &s, &err), -1);
    fclose(out);
    assert_string_equal(err.msg, "CODE_DEBUG_INFO of 24 bytes is shorter than its 32-byte fixed part");
    assert_int_equal(s.records, 5);
    assert_int_equal(s.loads, 1);
    assert_int_equal(s.moves, 0);
    assert_int_equal(s.debug_infos + s.unwind_infos, 0);
    assert_non_null(strstr(text, "after_them"));
    assert_non_null(strstr(text, "20000"));
    free(text);
    jdb_free(&b);
}

/* The standard dump decoded: lines, CIE/FDE, CFA rows per pc range. */
static void dump_shows_cfa_rules_and_lines(void **state)
{
    (void)state;
    jdb b;
    jdb_init(&b, 0);
    build_multi_fde(&b);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    jft_error err = {0};
    assert_int_equal(jd_dump(b.data, b.len, out, NULL, &err), 0);
    fclose(out);
    static const char *const expected[] = {
        "header: little-endian, version 1, size 40, elf_mach 62 (x86_64)",
        "CODE_DEBUG_INFO",
        "0x10040 (+0x40)  a.c:12",
        "CIE @0 (24 bytes): version 1, \"zR\", code_align 1, data_align -8, return address rip, FDE encoding 0x1b",
        "FDE @24 (24 bytes, CIE @0): code [0x20, 0x40)",
        "[0x20, 0x24)  cfa=rsp+8  rip=[cfa-8]",
        "[0x24, 0x30)  cfa=rsp+32  rip=[cfa-8]",
        "[0x30, 0x40)  cfa=rsp+8  rip=[cfa-8]",
        "[0x1, 0x2)  cfa=rsp+16  rbp=[cfa-16]  rip=[cfa-8]",
        "[0x2, 0x3)  cfa=rsp+8  rbp=[cfa-16]  rip=[cfa-8]",
        "[0x3, 0x20)  cfa=rsp+16  rbp=[cfa-16]  rip=[cfa-8]",
        "code_addr 0x10000 code_size 64 code_index 0 name \"fn_a\"",
        "CODE_CLOSE",
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        if (!strstr(text, expected[i])) {
            print_error("missing \"%s\" in:\n%s\n", expected[i], text);
            fail();
        }
    free(text);
    jdb_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_dumps_pass),
        cmocka_unit_test(tolerated_states_are_reported),
        cmocka_unit_test(every_broken_rule_is_reported),
        cmocka_unit_test(dump_shows_cfa_rules_and_lines),
        cmocka_unit_test(short_fixed_parts_are_reported_and_walked_past),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
