/* The bounds-checked byte writer: encodings, and no write past the buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "byte_writer.h"

static void assert_encoding(const uint8_t *got, size_t got_len, const uint8_t *want, size_t want_len)
{
    assert_int_equal(got_len, want_len);
    assert_memory_equal(got, want, want_len);
}

#define ENCODES_IN(big_endian, put, value, ...)                    \
    do {                                                           \
        static const uint8_t want_[] = {__VA_ARGS__};              \
        uint8_t buf_[16];                                          \
        jf__writer w_;                                             \
        jf__writer_init_order(&w_, buf_, sizeof buf_, big_endian); \
        put(&w_, value);                                           \
        assert_true(jf__writer_ok(&w_));                           \
        assert_encoding(buf_, w_.pos, want_, sizeof want_);        \
    } while (0)
#define ENCODES(put, value, ...) ENCODES_IN(0, put, value, __VA_ARGS__)
#define ENCODES_BE(put, value, ...) ENCODES_IN(1, put, value, __VA_ARGS__)

/* Bytes an encoding takes, measured by a writer over nothing: how the
 * emitters size their output before writing it. */
static size_t uleb128_measured(uint64_t v)
{
    jf__writer w;
    jf__writer_init(&w, NULL, 0);
    jf__put_uleb128(&w, v);
    return w.pos;
}

static size_t sleb128_measured(int64_t v)
{
    jf__writer w;
    jf__writer_init(&w, NULL, 0);
    jf__put_sleb128(&w, v);
    return w.pos;
}

static void uleb128_matches_dwarf_examples(void **state)
{
    (void)state;
    ENCODES(jf__put_uleb128, 0, 0x00);
    ENCODES(jf__put_uleb128, 2, 0x02);
    ENCODES(jf__put_uleb128, 127, 0x7f);
    ENCODES(jf__put_uleb128, 128, 0x80, 0x01);
    ENCODES(jf__put_uleb128, 129, 0x81, 0x01);
    ENCODES(jf__put_uleb128, 12857, 0xb9, 0x64);
    ENCODES(jf__put_uleb128, 624485, 0xe5, 0x8e, 0x26);
    ENCODES(jf__put_uleb128, UINT64_MAX, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
    assert_int_equal(uleb128_measured(0), 1);
    assert_int_equal(uleb128_measured(128), 2);
    assert_int_equal(uleb128_measured(UINT64_MAX), 10);
}

static void sleb128_matches_dwarf_examples(void **state)
{
    (void)state;
    ENCODES(jf__put_sleb128, 0, 0x00);
    ENCODES(jf__put_sleb128, 2, 0x02);
    ENCODES(jf__put_sleb128, -2, 0x7e);
    ENCODES(jf__put_sleb128, 63, 0x3f);
    ENCODES(jf__put_sleb128, 64, 0xc0, 0x00);
    ENCODES(jf__put_sleb128, -64, 0x40);
    ENCODES(jf__put_sleb128, -65, 0xbf, 0x7f);
    ENCODES(jf__put_sleb128, 127, 0xff, 0x00);
    ENCODES(jf__put_sleb128, -127, 0x81, 0x7f);
    ENCODES(jf__put_sleb128, -128, 0x80, 0x7f);
    ENCODES(jf__put_sleb128, -129, 0xff, 0x7e);
    ENCODES(jf__put_sleb128, INT64_MAX, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00);
    ENCODES(jf__put_sleb128, INT64_MIN, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f);
    assert_int_equal(sleb128_measured(-64), 1);
    assert_int_equal(sleb128_measured(64), 2);
    assert_int_equal(sleb128_measured(INT64_MIN), 10);
}

static void integers_are_little_endian_in_a_little_endian_writer(void **state)
{
    (void)state;
    ENCODES(jf__put_u8, 0xab, 0xab);
    ENCODES(jf__put_u16, 0x1234, 0x34, 0x12);
    ENCODES(jf__put_u32, 0x12345678, 0x78, 0x56, 0x34, 0x12);
    ENCODES(jf__put_s32, -2, 0xfe, 0xff, 0xff, 0xff);
    ENCODES(jf__put_u64, 0x0102030405060708ull, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01);
    ENCODES(jf__put_cstr, "ab", 'a', 'b', 0);
}

/* What a big-endian host's writers (s390x) put out; LEB128 has no order. */
static void big_endian_writer_puts_the_most_significant_byte_first(void **state)
{
    (void)state;
    ENCODES_BE(jf__put_u16, 0x1234, 0x12, 0x34);
    ENCODES_BE(jf__put_u32, 0x12345678, 0x12, 0x34, 0x56, 0x78);
    ENCODES_BE(jf__put_s32, -2, 0xff, 0xff, 0xff, 0xfe);
    ENCODES_BE(jf__put_u64, 0x0102030405060708ull, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08);
    ENCODES_BE(jf__put_uleb128, 624485, 0xe5, 0x8e, 0x26);
    uint8_t buf[8] = {0};
    jf__writer w;
    jf__writer_init_order(&w, buf, sizeof buf, 1);
    jf__put_u64(&w, 0);
    jf__patch_u32(&w, 2, 0xa1b2c3d4);
    assert_int_equal(buf[2], 0xa1);
    assert_int_equal(buf[5], 0xd4);
}

/* The default order is the host's (src/arch/host.h), which the compiler knows. */
static void default_writer_uses_the_host_order(void **state)
{
    (void)state;
    uint8_t buf[4];
    jf__writer w;
    jf__writer_init(&w, buf, sizeof buf);
    jf__put_u32(&w, 0x01020304);
    uint32_t native = 0;
    memcpy(&native, buf, 4);
    assert_int_equal(native, 0x01020304);
}

static void overflow_is_recorded_and_nothing_is_written_past_cap(void **state)
{
    (void)state;
    uint8_t buf[16];
    memset(buf, 0xcc, sizeof buf);
    jf__writer w;
    jf__writer_init(&w, buf, 6);
    jf__put_u32(&w, 0x11111111);
    assert_true(jf__writer_ok(&w));
    jf__put_u32(&w, 0x22222222); /* needs bytes 4..7: does not fit */
    assert_false(jf__writer_ok(&w));
    assert_int_equal(w.pos, 8); /* still counts what was needed */
    jf__put_u8(&w, 0x33);       /* would fit, but the output is already broken */
    assert_int_equal(w.pos, 9);
    for (size_t i = 4; i < sizeof buf; i++)
        assert_int_equal(buf[i], 0xcc);
    jf__put_uleb128(&w, UINT64_MAX);
    jf__put_zeros(&w, 100);
    jf__put_bytes(&w, buf, 3);
    for (size_t i = 4; i < sizeof buf; i++)
        assert_int_equal(buf[i], 0xcc);
}

static void measuring_writer_counts_without_writing(void **state)
{
    (void)state;
    jf__writer w;
    jf__writer_init(&w, NULL, 100); /* NULL buffer: cap forced to 0 */
    jf__put_u64(&w, 1);
    jf__put_sleb128(&w, -129);
    jf__put_align(&w, 8);
    assert_int_equal(w.pos, 16);
    assert_false(jf__writer_ok(&w));
}

static void huge_sizes_saturate_instead_of_wrapping(void **state)
{
    (void)state;
    uint8_t buf[4];
    jf__writer w;
    jf__writer_init(&w, buf, sizeof buf);
    jf__put_u8(&w, 1);
    assert_null(jf__writer_reserve(&w, SIZE_MAX));
    assert_int_equal(w.pos, SIZE_MAX);
    assert_null(jf__writer_reserve(&w, 2));
    assert_int_equal(w.pos, SIZE_MAX);
}

static void align_pads_with_zeros_only_when_needed(void **state)
{
    (void)state;
    uint8_t buf[16];
    memset(buf, 0xcc, sizeof buf);
    jf__writer w;
    jf__writer_init(&w, buf, sizeof buf);
    jf__put_align(&w, 8);
    assert_int_equal(w.pos, 0);
    jf__put_u8(&w, 7);
    jf__put_align(&w, 4);
    assert_int_equal(w.pos, 4);
    assert_int_equal(buf[1] | buf[2] | buf[3], 0);
    jf__put_align(&w, 4);
    assert_int_equal(w.pos, 4);
    assert_int_equal(buf[4], 0xcc);
}

static void patch_overwrites_in_range_and_refuses_outside(void **state)
{
    (void)state;
    uint8_t buf[8] = {0};
    jf__writer w;
    jf__writer_init(&w, buf, sizeof buf);
    jf__put_u64(&w, 0);
    jf__patch_u32(&w, 2, 0xa1b2c3d4);
    assert_true(jf__writer_ok(&w));
    assert_int_equal(buf[2], 0xd4);
    assert_int_equal(buf[5], 0xa1);
    jf__patch_u32(&w, 5, 1); /* bytes 5..8: one past the end */
    assert_false(jf__writer_ok(&w));
    assert_int_equal(buf[5], 0xa1);
    jf__patch_u64(&w, SIZE_MAX - 2, 1);
    assert_false(jf__writer_ok(&w));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uleb128_matches_dwarf_examples),
        cmocka_unit_test(sleb128_matches_dwarf_examples),
        cmocka_unit_test(integers_are_little_endian_in_a_little_endian_writer),
        cmocka_unit_test(big_endian_writer_puts_the_most_significant_byte_first),
        cmocka_unit_test(default_writer_uses_the_host_order),
        cmocka_unit_test(overflow_is_recorded_and_nothing_is_written_past_cap),
        cmocka_unit_test(measuring_writer_counts_without_writing),
        cmocka_unit_test(huge_sizes_saturate_instead_of_wrapping),
        cmocka_unit_test(align_pads_with_zeros_only_when_needed),
        cmocka_unit_test(patch_overwrites_in_range_and_refuses_outside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
