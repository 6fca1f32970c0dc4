/*
 * The CFI assembler's encodings, its two image layouts checked field by field
 * against docs/formats.md's formulas, and its error paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "arch/host.h"
#include "cfi.h"

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static int32_t rds32(const uint8_t *p)
{
    uint32_t v = rd32(p);
    return v <= INT32_MAX ? (int32_t)v : (int32_t)(v - 0x80000000u) + INT32_MIN;
}

static uint64_t round8(uint64_t n)
{
    return (n + 7) & ~(uint64_t)7;
}

static jf_cfi *new_arch(jf__cfi_arch arch)
{
    jf_cfi *c = NULL;
    assert_int_equal(jf__cfi_new_arch(arch, &c), 0);
    assert_non_null(c);
    return c;
}

/* What gcc -O2 -fno-omit-frame-pointer emits for a small x86_64 function. */
static const uint8_t gcc_x86_64_cie[] = {0x14, 0,    0,    0,    0,    0,    0,    0,    1,    'z',  'R', 0,
                                         0x01, 0x78, 0x10, 0x01, 0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01, 0,   0};
static const uint8_t gcc_x86_64_fde_insns[] = {0x41, 0x0e, 0x10, 0x86, 0x02, 0x43,
                                               0x0d, 0x06, 0x46, 0x0c, 0x07, 0x08};

static jf_cfi *x86_standard_frame(void)
{
    jf_cfi *c = new_arch(JF_CFI_ARCH_X86_64);
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.start = 0, f.end = 15, f.after_push = 1, f.after_fp_set = 4, f.after_pop = 10;
    assert_int_equal(jf_cfi_add_standard_frame(c, &f), 0);
    return c;
}

static size_t emit(const jf_cfi *c, jf__eh_layout layout, uint64_t code_addr, uint64_t code_size,
                   uint64_t image_addr, uint8_t *buf, size_t cap, jf__eh_image *out)
{
    int rc = jf__cfi_emit(c, layout, code_addr, code_size, image_addr, buf, cap, out);
    if (rc)
        fail_msg("emit: %s", jf_last_error());
    return out->eh_frame_size + out->hdr_size;
}

static void x86_64_cie_and_frame_match_gcc(void **state)
{
    (void)state;
    jf_cfi *c = x86_standard_frame();
    uint8_t buf[256];
    jf__eh_image out;
    emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, 15, 0, buf, sizeof buf, &out);
    assert_memory_equal(buf, gcc_x86_64_cie, sizeof gcc_x86_64_cie);
    const uint8_t *fde = buf + sizeof gcc_x86_64_cie;
    /* gcc's rules, plus a restore of rbp after the pop */
    assert_int_equal(fde[16], 0); /* augmentation data length */
    assert_memory_equal(fde + 17, gcc_x86_64_fde_insns, sizeof gcc_x86_64_fde_insns);
    assert_int_equal(fde[17 + sizeof gcc_x86_64_fde_insns], 0xc6);
    assert_int_equal(rd32(fde + 12), 15); /* pc_range */
    jf_cfi_free(c);
}

/* Instruction bytes of the only FDE of c (x86_64 CIE: 24 bytes). */
static const uint8_t *first_fde_insns(const jf_cfi *c, uint8_t *buf, size_t cap, size_t *len)
{
    jf__eh_image out;
    emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, 1u << 20, 0, buf, cap, &out);
    uint32_t cie_len = rd32(buf);
    const uint8_t *fde = buf + 4 + cie_len;
    *len = rd32(fde) + 4 - 17;
    return fde + 17;
}

static void advances_use_the_smallest_form(void **state)
{
    (void)state;
    static const uint8_t want[] = {0x40 | 63, 0x02, 64,   0x02, 255,  0x03, 0x00,
                                   0x01,      0x04, 0x00, 0x00, 0x01, 0x00};
    jf_cfi *c = new_arch(JF_CFI_ARCH_X86_64);
    assert_int_equal(jf_cfi_begin_fde(c, 100, 100 + (1u << 19)), 0);
    size_t loc = 100;
    const size_t deltas[] = {0, 63, 64, 255, 256, 65536};
    for (size_t i = 0; i < sizeof deltas / sizeof deltas[0]; i++)
        assert_int_equal(jf_cfi_advance_to(c, loc += deltas[i]), 0);
    uint8_t buf[256];
    size_t len;
    const uint8_t *insns = first_fde_insns(c, buf, sizeof buf, &len);
    assert_true(len >= sizeof want);
    assert_memory_equal(insns, want, sizeof want);
    for (size_t i = sizeof want; i < len; i++)
        assert_int_equal(insns[i], 0); /* nop padding */
    jf_cfi_free(c);
}

static void aarch64_advances_count_instructions(void **state)
{
    (void)state;
    jf_cfi *c = new_arch(JF_CFI_ARCH_AARCH64);
    assert_int_equal(jf_cfi_begin_fde(c, 0, 64), 0);
    assert_int_equal(jf_cfi_advance_to(c, 2), JF_EINVAL); /* not a multiple of 4 */
    jf_cfi_free(c);
    c = new_arch(JF_CFI_ARCH_AARCH64);
    assert_int_equal(jf_cfi_begin_fde(c, 0, 64), 0);
    assert_int_equal(jf_cfi_advance_to(c, 8), 0);
    assert_int_equal(jf_cfi_offset(c, 29, -16), 0);
    uint8_t buf[128];
    jf__eh_image out;
    emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, 64, 0, buf, sizeof buf, &out);
    assert_int_equal(rd32(buf), 16);           /* CIE: 20 bytes, as gas emits */
    assert_int_equal(buf[12], 4);              /* code alignment */
    assert_int_equal(buf[13], 0x78);           /* data alignment -8 */
    assert_int_equal(buf[14], 30);             /* return address column */
    assert_int_equal(buf[20 + 17], 0x42);      /* advance 2 units */
    assert_int_equal(buf[20 + 18], 0x80 | 29); /* offset x29 */
    assert_int_equal(buf[20 + 19], 2);         /* -16 / -8 */
    jf_cfi_free(c);
}

static void riscv64_cie_matches_gas_factors(void **state)
{
    (void)state;
    jf_cfi *c = new_arch(JF_CFI_ARCH_RISCV64);
    assert_int_equal(jf_cfi_add_frameless(c, 0, 8, 16), 0);
    assert_int_equal(jf_cfi_offset(c, 1, -6), JF_EINVAL); /* not a multiple of 4 */
    jf_cfi_free(c);
    c = new_arch(JF_CFI_ARCH_RISCV64);
    assert_int_equal(jf_cfi_add_frameless(c, 0, 8, 16), 0);
    uint8_t buf[128];
    jf__eh_image out;
    emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, 8, 0, buf, sizeof buf, &out);
    assert_int_equal(buf[12], 1);    /* code alignment */
    assert_int_equal(buf[13], 0x7c); /* data alignment -4 */
    assert_int_equal(buf[14], 1);    /* ra */
    jf_cfi_free(c);
}

/* docs/formats.md: perf places .eh_frame at round8(code_size) after the code. */
static void perf_layout_single_fde_fields_follow_formats_md(void **state)
{
    (void)state;
    jf_cfi *c = x86_standard_frame();
    const uint64_t code_size = 15 + 8; /* code + nonce, as the jitdump sink records it */
    uint8_t buf[256];
    jf__eh_image out;
    size_t total = emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0x7f0000001000, code_size, 0, buf, sizeof buf, &out);
    const size_t eh = out.eh_frame_size, cie = 4 + rd32(buf);
    assert_int_equal(out.hdr_size, 20);
    assert_int_equal(total, eh + 20);
    assert_int_equal(eh, cie + 4 + rd32(buf + cie)); /* no terminator in this layout */
    /* FDE pc_begin = -(round8(code_size) + offset of that field in .eh_frame) */
    assert_int_equal(rds32(buf + cie + 8), -(int64_t)(round8(code_size) + cie + 8));
    assert_int_equal(rd32(buf + cie + 4), cie + 4); /* CIE pointer */
    const uint8_t *hdr = buf + eh;
    assert_int_equal(hdr[0], 1);
    assert_int_equal(hdr[1], 0x1b);
    assert_int_equal(hdr[2], 0x03);
    assert_int_equal(hdr[3], 0x3b);
    assert_int_equal(rds32(hdr + 4), -(int64_t)(eh + 4));
    assert_int_equal(rd32(hdr + 8), 1);
    assert_int_equal(rds32(hdr + 12), -(int64_t)(round8(code_size) + eh));
    assert_int_equal(rds32(hdr + 16), -(int64_t)(eh - cie));
    jf_cfi_free(c);
}

static void perf_layout_rows_are_sorted_and_point_at_their_fdes(void **state)
{
    (void)state;
    jf_cfi *c = new_arch(JF_CFI_ARCH_X86_64);
    assert_int_equal(jf_cfi_add_frameless(c, 200, 300, 40), 0);
    assert_int_equal(jf_cfi_add_frameless(c, 0, 100, 16), 0);
    assert_int_equal(jf_cfi_begin_fde(c, 100, 200), 0);
    assert_int_equal(jf_cfi_advance_to(c, 150), 0);
    assert_int_equal(jf_cfi_def_cfa_offset(c, 24), 0);
    const uint64_t code_size = 333;
    uint8_t buf[512];
    jf__eh_image out;
    emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, code_size, 0, buf, sizeof buf, &out);
    const size_t eh = out.eh_frame_size;
    assert_int_equal(out.hdr_size, 12 + 3 * 8);
    const uint8_t *hdr = buf + eh;
    assert_int_equal(rd32(hdr + 8), 3);
    const int64_t hdr_addr = (int64_t)(round8(code_size) + eh);
    const size_t starts[] = {0, 100, 200}, ends[] = {100, 200, 300};
    for (size_t i = 0; i < 3; i++) {
        int64_t start_rel = rds32(hdr + 12 + 8 * i), fde_rel = rds32(hdr + 16 + 8 * i);
        assert_int_equal(start_rel, (int64_t)starts[i] - hdr_addr);
        size_t fde_off = (size_t)((int64_t)eh + fde_rel);
        assert_true(fde_off < eh);
        /* the FDE the row points at starts where the row says */
        int64_t pc_begin = rds32(buf + fde_off + 8);
        assert_int_equal((int64_t)round8(code_size) + (int64_t)fde_off + 8 + pc_begin, (int64_t)starts[i]);
        assert_int_equal(rd32(buf + fde_off + 12), ends[i] - starts[i]);
        assert_int_equal(rd32(buf + fde_off + 4), fde_off + 4); /* CIE at 0 */
    }
    jf_cfi_free(c);
}

/* The CIE's FDE pointer encoding: the byte after the augmentation length. */
static uint8_t cie_pointer_encoding(const uint8_t *cie)
{
    size_t p = 9;                           /* length, id, version */
    p += strlen((const char *)cie + p) + 1; /* "zR" */
    while (cie[p++] & 0x80) {
    } /* code alignment */
    while (cie[p++] & 0x80) {
    }       /* data alignment */
    p += 1; /* return address register (version 1) */
    while (cie[p++] & 0x80) {
    } /* augmentation length */
    return cie[p];
}

static void absolute_layout_uses_absolute_addresses_and_is_terminated(void **state)
{
    (void)state;
    jf_cfi *c = x86_standard_frame();
    const uint64_t code = 0x7f0000001000, image = code + 0x2000;
    uint8_t buf[256];
    jf__eh_image out;
    emit(c, JF_EH_LAYOUT_ABSOLUTE, code, 15, image, buf, sizeof buf, &out);
    const size_t eh = out.eh_frame_size, cie = 4 + rd32(buf);
    assert_int_equal(cie_pointer_encoding(buf), 0x00); /* DW_EH_PE_absptr */
    assert_int_equal(rd32(buf + eh - 4), 0);           /* terminator */
    assert_int_equal(eh, cie + 4 + rd32(buf + cie) + 4);
    assert_true(rd64(buf + cie + 8) == code); /* pc_begin */
    assert_true(rd64(buf + cie + 16) == 15);  /* pc_range */
    /* Code within reach of the header: the sorted search table is there. */
    const uint8_t *hdr = buf + eh;
    const int64_t hdr_addr = (int64_t)(image + eh);
    assert_int_equal(out.hdr_size, 20);
    assert_int_equal(hdr[2], 0x03);
    assert_int_equal(hdr[3], 0x3b);
    assert_int_equal(rds32(hdr + 4), -(int64_t)(eh + 4));
    assert_int_equal(rds32(hdr + 12), (int64_t)code - hdr_addr);
    assert_int_equal(rds32(hdr + 16), (int64_t)(image + cie) - hdr_addr);
    jf_cfi_free(c);
}

static void absolute_layout_describes_code_far_from_the_image(void **state)
{
    /* A symfile on the heap, code in mmap'ed memory terabytes away. */
    (void)state;
    jf_cfi *c = x86_standard_frame();
    const uint64_t code = 0x7f0000001000, image = 0x555500000000;
    uint8_t buf[256];
    jf__eh_image out;
    emit(c, JF_EH_LAYOUT_ABSOLUTE, code, 15, image, buf, sizeof buf, &out);
    const size_t cie = 4 + rd32(buf);
    assert_true(rd64(buf + cie + 8) == code);
    /* Out of 32-bit reach of the header: no search table, readers scan. */
    const uint8_t *hdr = buf + out.eh_frame_size;
    assert_int_equal(out.hdr_size, 8);
    assert_int_equal(hdr[0], 1);
    assert_int_equal(hdr[2], 0xff); /* DW_EH_PE_omit */
    assert_int_equal(hdr[3], 0xff);
    assert_int_equal(rds32(hdr + 4), -(int64_t)(out.eh_frame_size + 4));
    jf_cfi_free(c);
}

static void image_sizes_are_exact_and_small_buffers_are_refused(void **state)
{
    (void)state;
    jf_cfi *c = x86_standard_frame();
    size_t max = jf__cfi_max_image_size(c);
    uint8_t buf[256];
    jf__eh_image out;
    assert_int_equal(emit(c, JF_EH_LAYOUT_ABSOLUTE, 0x1000, 15, 0x2000, buf, sizeof buf, &out), max);
    /* perf's layout: no terminator and 4-byte pc_begin and pc_range */
    const size_t perf = max - 4 - 8;
    assert_int_equal(emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, 15, 0, buf, sizeof buf, &out), perf);
    memset(buf, 0xcc, sizeof buf);
    assert_int_equal(jf__cfi_emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, 15, 0, buf, perf - 1, &out), JF_ERANGE);
    for (size_t i = 0; i < sizeof buf; i++)
        assert_int_equal(buf[i], 0xcc); /* refused before writing anything */
    assert_int_equal(jf__cfi_emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, 14, 0, buf, sizeof buf, &out), JF_EINVAL);
    assert_int_equal(jf__cfi_emit(c, (jf__eh_layout)7, 0, 15, 0, buf, sizeof buf, &out), JF_EINVAL);
    assert_int_equal(jf__cfi_emit(NULL, JF_EH_LAYOUT_PERF_JITDUMP, 0, 15, 0, buf, sizeof buf, &out),
                     JF_EINVAL);
    assert_int_equal(jf__cfi_emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, 15, 0, NULL, 64, &out), JF_EINVAL);
    assert_int_equal(jf__cfi_emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, 15, 0, buf, sizeof buf, NULL), JF_EINVAL);
    assert_int_equal(jf__cfi_max_image_size(NULL), 0);
    assert_int_equal(jf__cfi_emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, UINT64_MAX - 3, 0, buf, sizeof buf, &out),
                     JF_ERANGE);
    jf_cfi_free(c);
}

static void clone_emits_the_same_bytes_and_is_read_only(void **state)
{
    (void)state;
    jf_cfi *c = x86_standard_frame();
    assert_int_equal(jf_cfi_add_frameless(c, 20, 30, 24), 0);
    jf_cfi *k = jf__cfi_clone(c);
    assert_non_null(k);
    uint8_t a[256], b[256];
    jf__eh_image oa, ob;
    size_t na = emit(c, JF_EH_LAYOUT_ABSOLUTE, 0x1000, 30, 0x9000, a, sizeof a, &oa);
    jf_cfi_free(c); /* the clone owns everything it needs */
    size_t nb = emit(k, JF_EH_LAYOUT_ABSOLUTE, 0x1000, 30, 0x9000, b, sizeof b, &ob);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    assert_int_equal(jf_cfi_begin_fde(k, 40, 50), JF_EINVAL);
    assert_int_equal(jf_cfi_def_cfa_offset(k, 8), JF_EINVAL);
    assert_int_equal(jf__cfi_validate(k, 30), 0);
    jf__cfi_free(k);
    assert_null(jf__cfi_clone(NULL));
}

static void builder_rejects_bad_calls_without_crashing(void **state)
{
    (void)state;
    /* NULL everywhere */
    assert_int_equal(jf_cfi_new(NULL), JF_EINVAL);
    assert_int_equal(jf_cfi_begin_fde(NULL, 0, 4), JF_EINVAL);
    assert_int_equal(jf_cfi_advance_to(NULL, 0), JF_EINVAL);
    assert_int_equal(jf_cfi_def_cfa(NULL, 7, 8), JF_EINVAL);
    assert_int_equal(jf_cfi_def_cfa_offset(NULL, 8), JF_EINVAL);
    assert_int_equal(jf_cfi_def_cfa_register(NULL, 7), JF_EINVAL);
    assert_int_equal(jf_cfi_offset(NULL, 6, -16), JF_EINVAL);
    assert_int_equal(jf_cfi_val_offset(NULL, 7, -16), JF_EINVAL);
    assert_int_equal(jf_cfi_restore(NULL, 6), JF_EINVAL);
    assert_int_equal(jf_cfi_same_value(NULL, 6), JF_EINVAL);
    assert_int_equal(jf_cfi_remember_state(NULL), JF_EINVAL);
    assert_int_equal(jf_cfi_restore_state(NULL), JF_EINVAL);
    assert_int_equal(jf_cfi_add_frameless(NULL, 0, 4, 8), JF_EINVAL);
    assert_int_equal(jf_cfi_add_standard_frame(NULL, NULL), JF_EINVAL);
    jf_cfi_free(NULL);
    assert_int_equal(jf__cfi_validate(NULL, 4), JF_EINVAL);
    assert_int_equal(jf__cfi_new_arch(JF_CFI_ARCH_COUNT, NULL), JF_EINVAL);

    jf_cfi *d = NULL;
    assert_int_equal(jf__cfi_new_arch((jf__cfi_arch)99, &d), JF_ENOTSUP);
    assert_null(d);

    /* rules before any FDE */
    d = new_arch(JF_CFI_ARCH_X86_64);
    assert_int_equal(jf_cfi_def_cfa_offset(d, 16), JF_EINVAL);
    assert_int_equal(jf_cfi_advance_to(d, 0), JF_EINVAL);
    assert_int_equal(jf_cfi_remember_state(d), JF_EINVAL);
    assert_true(strlen(jf_last_error()) > 0);
    jf_cfi_free(d);

#define EXPECT_STICKY_FAILURE(setup, bad_call, err)                  \
    do {                                                             \
        jf_cfi *c_ = new_arch(JF_CFI_ARCH_X86_64);                   \
        jf_cfi *c = c_;                                              \
        setup;                                                       \
        assert_int_equal(bad_call, err);                             \
        assert_int_equal(jf__cfi_validate(c_, 1u << 20), JF_EINVAL); \
        jf_cfi_free(c_);                                             \
    } while (0)

    EXPECT_STICKY_FAILURE(assert_int_equal(jf_cfi_begin_fde(c, 0, 32), 0);
                          assert_int_equal(jf_cfi_advance_to(c, 8), 0), jf_cfi_advance_to(c, 4), JF_EINVAL);
    EXPECT_STICKY_FAILURE(assert_int_equal(jf_cfi_begin_fde(c, 0, 32), 0), jf_cfi_advance_to(c, 32),
                          JF_EINVAL);
    EXPECT_STICKY_FAILURE(assert_int_equal(jf_cfi_begin_fde(c, 0, 32), 0), jf_cfi_advance_to(c, 1000),
                          JF_EINVAL);
    EXPECT_STICKY_FAILURE(assert_int_equal(jf_cfi_begin_fde(c, 0, 32), 0), jf_cfi_restore_state(c),
                          JF_EINVAL);
    EXPECT_STICKY_FAILURE(assert_int_equal(jf_cfi_begin_fde(c, 0, 32), 0), jf_cfi_offset(c, 6, -12),
                          JF_EINVAL);
    EXPECT_STICKY_FAILURE(assert_int_equal(jf_cfi_begin_fde(c, 0, 32), 0), jf_cfi_def_cfa(c, 7, -4),
                          JF_EINVAL);
    EXPECT_STICKY_FAILURE(assert_int_equal(jf_cfi_begin_fde(c, 0, 32), 0), jf_cfi_def_cfa_register(c, 5000),
                          JF_EINVAL);
    /* remembered states nest 16 deep, not 17 */
    EXPECT_STICKY_FAILURE(assert_int_equal(jf_cfi_begin_fde(c, 0, 32), 0);
                          for (int i = 0; i < 16; i++) assert_int_equal(jf_cfi_remember_state(c), 0),
                          jf_cfi_remember_state(c), JF_EINVAL);
    /* 127 is the highest register any of the three psABIs numbers; 128 is refused. */
    EXPECT_STICKY_FAILURE(assert_int_equal(jf_cfi_begin_fde(c, 0, 32), 0);
                          assert_int_equal(jf_cfi_same_value(c, 127), 0), jf_cfi_same_value(c, 128),
                          JF_EINVAL);
    EXPECT_STICKY_FAILURE(assert_int_equal(jf_cfi_begin_fde(c, 0, 32), 0), jf_cfi_offset(c, 6, INT64_MIN + 1),
                          JF_EINVAL);
    EXPECT_STICKY_FAILURE(assert_int_equal(jf_cfi_begin_fde(c, 0, 32), 0), jf_cfi_val_offset(c, 7, -12),
                          JF_EINVAL);
    EXPECT_STICKY_FAILURE(assert_int_equal(jf_cfi_begin_fde(c, 0, 32), 0), jf_cfi_begin_fde(c, 16, 48),
                          JF_EINVAL);
    EXPECT_STICKY_FAILURE(assert_int_equal(jf_cfi_begin_fde(c, 16, 32), 0), jf_cfi_begin_fde(c, 0, 17),
                          JF_EINVAL);
    EXPECT_STICKY_FAILURE((void)0, jf_cfi_begin_fde(c, 8, 8), JF_EINVAL);
    EXPECT_STICKY_FAILURE((void)0, jf_cfi_begin_fde(c, 0, (size_t)UINT32_MAX + 1), JF_ERANGE);
    EXPECT_STICKY_FAILURE((void)0, jf_cfi_add_frameless(c, 0, 8, -8), JF_EINVAL);
    /* remember/restore state is per FDE */
    EXPECT_STICKY_FAILURE(
        assert_int_equal(jf_cfi_begin_fde(c, 0, 8), 0); assert_int_equal(jf_cfi_remember_state(c), 0);
        assert_int_equal(jf_cfi_begin_fde(c, 8, 16), 0), jf_cfi_restore_state(c), JF_EINVAL);
#undef EXPECT_STICKY_FAILURE
}

static void validate_checks_completeness_and_range(void **state)
{
    (void)state;
    jf_cfi *c = new_arch(JF_CFI_ARCH_X86_64);
    assert_int_equal(jf__cfi_validate(c, 64), JF_EINVAL); /* no FDE */
    assert_int_equal(jf_cfi_add_frameless(c, 32, 64, 16), 0);
    assert_int_equal(jf_cfi_add_frameless(c, 0, 16, 16), 0);
    assert_int_equal(jf__cfi_validate(c, 64), 0);
    assert_int_equal(jf__cfi_validate(c, 63), JF_EINVAL); /* an FDE past the region */
    jf_cfi_free(c);
}

static void standard_frame_checks_its_offsets(void **state)
{
    (void)state;
    const struct {
        jf__cfi_arch arch;
        size_t start, end, push, fp_set, epilogue, pop;
        int rc;
    } cases[] = {
        {JF_CFI_ARCH_X86_64, 0, 16, 1, 4, 0, 14, 0},
        {JF_CFI_ARCH_X86_64, 0, 16, 0, 4, 0, 14, JF_EINVAL},  /* push at start */
        {JF_CFI_ARCH_X86_64, 0, 16, 4, 4, 0, 14, JF_EINVAL},  /* fp set before push ends */
        {JF_CFI_ARCH_X86_64, 0, 16, 1, 4, 0, 4, JF_EINVAL},   /* pop in the prologue */
        {JF_CFI_ARCH_X86_64, 0, 16, 1, 4, 0, 17, JF_EINVAL},  /* pop past end */
        {JF_CFI_ARCH_X86_64, 0, 16, 1, 4, 14, 14, JF_EINVAL}, /* epilogue at the pop's end */
        {JF_CFI_ARCH_X86_64, 0, 16, 1, 4, 9, 0, JF_EINVAL},   /* epilogue without pop */
        {JF_CFI_ARCH_X86_64, 0, 4, 1, 4, 0, 0, 0},            /* frame up to the end */
        {JF_CFI_ARCH_AARCH64, 0, 24, 4, 8, 0, 20, 0},
        {JF_CFI_ARCH_AARCH64, 0, 24, 4, 6, 0, 20, JF_EINVAL}, /* not instruction aligned */
        {JF_CFI_ARCH_RISCV64, 0, 44, 4, 16, 28, 40, 0},
        {JF_CFI_ARCH_RISCV64, 0, 44, 4, 16, 0, 40, JF_EINVAL}, /* riscv64 needs epilogue_start */
        {JF_CFI_ARCH_RISCV64, 0, 44, 4, 16, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        jf_cfi *c = new_arch(cases[i].arch);
        jf_standard_frame f = JF_STANDARD_FRAME_INIT;
        f.start = cases[i].start, f.end = cases[i].end, f.after_push = cases[i].push;
        f.after_fp_set = cases[i].fp_set, f.epilogue_start = cases[i].epilogue, f.after_pop = cases[i].pop;
        int rc = jf_cfi_add_standard_frame(c, &f);
        if (rc != cases[i].rc)
            fail_msg("case %zu: %d, expected %d (%s)", i, rc, cases[i].rc, jf_last_error());
        assert_int_equal(jf__cfi_validate(c, 64), rc ? JF_EINVAL : 0);
        jf_cfi_free(c);
    }
    jf_cfi *c = new_arch(JF_CFI_ARCH_X86_64);
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.struct_size = 8;
    assert_int_equal(jf_cfi_add_standard_frame(c, &f), JF_EINVAL);
    jf_cfi_free(c);
    /* A struct without the optional epilogue fields (garbage past its
     * struct_size is not read): a frame up to `end`, as with 0, 0. */
    c = new_arch(JF_CFI_ARCH_X86_64);
    jf_cfi *same = new_arch(JF_CFI_ARCH_X86_64);
    f = (jf_standard_frame)JF_STANDARD_FRAME_INIT;
    f.start = 0, f.end = 16, f.after_push = 1, f.after_fp_set = 4;
    assert_int_equal(jf_cfi_add_standard_frame(same, &f), 0);
    f.epilogue_start = 999, f.after_pop = 999;
    f.struct_size = offsetof(jf_standard_frame, epilogue_start);
    assert_int_equal(jf_cfi_add_standard_frame(c, &f), 0);
    uint8_t a[256], b[256];
    jf__eh_image ia, ib;
    emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, 16, 0, a, sizeof a, &ia);
    emit(same, JF_EH_LAYOUT_PERF_JITDUMP, 0, 16, 0, b, sizeof b, &ib);
    assert_int_equal(ia.eh_frame_size, ib.eh_frame_size);
    assert_memory_equal(a, b, ia.eh_frame_size);
    jf_cfi_free(c);
    jf_cfi_free(same);
}

static void raw_bytes_are_checked(void **state)
{
    (void)state;
    static const uint8_t cie_insns[] = {0x0c, 0x07, 0x08, 0x90, 0x01, 0x00, 0x00};
    jf__raw_cie cie = {1, -8, 16, cie_insns, sizeof cie_insns};
    jf_cfi *c = jf__cfi_from_raw(&cie, gcc_x86_64_fde_insns, sizeof gcc_x86_64_fde_insns, 0, 15);
    assert_non_null(c);
    assert_int_equal(jf__cfi_validate(c, 15), 0);
    uint8_t buf[256];
    jf__eh_image out;
    emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, 15, 0, buf, sizeof buf, &out);
    assert_memory_equal(buf, gcc_x86_64_cie, sizeof gcc_x86_64_cie); /* same CIE from raw params */
    assert_int_equal(jf_cfi_def_cfa_offset(c, 8), JF_EINVAL);        /* closed */
    assert_int_equal(jf_cfi_add_frameless(c, 20, 30, 8), JF_EINVAL); /* no known architecture */
    jf_cfi_free(c);

    static const struct {
        const char *why;
        uint8_t insns[17];
        size_t len;
    } bad[] = {
        {"remember_state 17 deep",
         {0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a,
          0x0a},
         17},
        {"set_loc", {0x01, 0, 0, 0, 0}, 5},
        {"truncated uleb", {0x0e, 0x80}, 2},
        {"truncated offset", {0x86}, 1},
        {"truncated advance_loc2", {0x03, 0x01}, 2},
        {"unknown opcode", {0x3f}, 1},
        {"advance past the end", {0x4f, 0x4f}, 2},
        {"advance_loc1 past the end", {0x02, 0x20}, 2},
        {"restore_state first", {0x0b}, 1},
        {"expression past the end", {0x0f, 0x05, 0x70}, 3},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (jf__cfi_from_raw(&cie, bad[i].insns, bad[i].len, 0, 16) != NULL)
            fail_msg("raw FDE instructions accepted: %s", bad[i].why);
    static const uint8_t advance_in_cie[] = {0x41};
    jf__raw_cie bad_cie = {1, -8, 16, advance_in_cie, 1};
    assert_null(jf__cfi_from_raw(&bad_cie, NULL, 0, 0, 16));
    jf__raw_cie zero_align = {0, -8, 16, NULL, 0};
    assert_null(jf__cfi_from_raw(&zero_align, NULL, 0, 0, 16));
    assert_null(jf__cfi_from_raw(NULL, NULL, 0, 0, 16));
    assert_null(jf__cfi_from_raw(&cie, NULL, 3, 0, 16));
    assert_null(jf__cfi_from_raw(&cie, NULL, 0, 16, 16));
    /* return address columns: 127 (the highest any psABI numbers) in a version 1 CIE; 128 refused */
    jf__raw_cie wide = {1, -8, 127, cie_insns, sizeof cie_insns};
    c = jf__cfi_from_raw(&wide, NULL, 0, 0, 16);
    assert_non_null(c);
    emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, 16, 0, buf, sizeof buf, &out);
    assert_int_equal(buf[8], 1);
    assert_memory_equal(buf + 12, "\x01\x78\x7f\x01\x1b", 5); /* factors, RA 127, aug */
    jf_cfi_free(c);
    wide.ra_reg = 128;
    assert_null(jf__cfi_from_raw(&wide, NULL, 0, 0, 16));
    /* an empty FDE program (the CIE state throughout) is fine */
    c = jf__cfi_from_raw(&cie, NULL, 0, 0, 16);
    assert_non_null(c);
    jf_cfi_free(c);
}

/* Arbitrary bytes never crash the raw constructor; whatever it accepts emits. */
static void random_raw_bytes_are_rejected_or_emitted(void **state)
{
    (void)state;
    static const uint8_t cie_insns[] = {0x0c, 0x07, 0x08};
    jf__raw_cie cie = {1, -8, 16, cie_insns, sizeof cie_insns};
    uint32_t seed = 12345;
    size_t accepted = 0;
    for (int iter = 0; iter < 20000; iter++) {
        uint8_t insns[24];
        size_t len = (size_t)(iter % (int)sizeof insns);
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            insns[i] = (uint8_t)(seed >> 16);
        }
        jf_cfi *c = jf__cfi_from_raw(&cie, insns, len, 0, 64);
        if (!c)
            continue;
        accepted++;
        uint8_t buf[128];
        jf__eh_image out;
        assert_true(jf__cfi_max_image_size(c) <= sizeof buf);
        assert_int_equal(jf__cfi_emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, 64, 0, buf, sizeof buf, &out), 0);
        jf_cfi_free(c);
    }
    assert_true(accepted > 100); /* the generator does produce valid programs */
}

/* A typical trampoline: standard frame around one indirect call. The perf
 * image (CIE + FDE + hdr) must fit the ~80 bytes the trampoline arena leaves. */
static void trampoline_images_fit_80_bytes(void **state)
{
    (void)state;
    const struct {
        jf__cfi_arch arch;
        size_t end, push, fp_set, epilogue, pop;
    } shapes[] = {
        /* push rbp; mov rbp,rsp; call *d(%rip); pop rbp; ret */
        {JF_CFI_ARCH_X86_64, 12, 1, 4, 0, 11},
        /* stp; mov x29,sp; ldr x16,lit; blr x16; ldp; ret */
        {JF_CFI_ARCH_AARCH64, 24, 4, 8, 0, 20},
        /* addi; sd ra; sd s0; addi s0; auipc; ld; jalr; ld ra; ld s0; addi; ret */
        {JF_CFI_ARCH_RISCV64, 44, 4, 16, 28, 40},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        jf_cfi *c = new_arch(shapes[i].arch);
        jf_standard_frame f = JF_STANDARD_FRAME_INIT;
        f.end = shapes[i].end, f.after_push = shapes[i].push, f.after_fp_set = shapes[i].fp_set;
        f.epilogue_start = shapes[i].epilogue, f.after_pop = shapes[i].pop;
        assert_int_equal(jf_cfi_add_standard_frame(c, &f), 0);
        uint8_t buf[256];
        jf__eh_image out;
        size_t total = emit(c, JF_EH_LAYOUT_PERF_JITDUMP, 0, shapes[i].end + 8, 0, buf, sizeof buf, &out);
        size_t cie = 4 + rd32(buf);
        printf("trampoline %zu: CIE %zu + FDE %zu + hdr %zu = %zu bytes\n", i, cie, out.eh_frame_size - cie,
               out.hdr_size, total);
        assert_true(total <= 80);
        jf_cfi_free(c);
    }
}

static void host_builder_uses_the_host_registers(void **state)
{
    (void)state;
    jf_cfi *c = NULL;
    int arch = jf__cfi_host_arch();
    if (arch < 0) {
        assert_int_equal(jf_cfi_new(&c), JF_ENOTSUP);
        return;
    }
    assert_int_equal(jf_cfi_new(&c), 0);
#ifdef JF_DWARF_SP
    assert_int_equal(jf_cfi_begin_fde(c, 0, 16), 0);
    assert_int_equal(jf_cfi_def_cfa(c, JF_DWARF_SP, 32), 0);
    assert_int_equal(jf_cfi_offset(c, JF_DWARF_FP, -16), 0);
    assert_int_equal(jf_cfi_offset(c, JF_DWARF_RA, -8), 0);
    assert_int_equal(jf__cfi_validate(c, 16), 0);
#endif
    assert_int_equal(jf__cfi_arches[arch].elf_machine, JF_HOST_ELF_MACHINE);
    jf_cfi_free(c);
}

/* Through the public API: a region's description is validated at registration. */
static void register_validates_the_description(void **state)
{
    (void)state;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    assert_int_equal(jf_init(&cfg), 0);
    static const unsigned char code[32];
    jf_cfi *c = NULL;
    if (jf_cfi_new(&c) != 0) {
        assert_int_equal(jf_shutdown(), 0);
        skip();
    }
    assert_int_equal(jf_cfi_add_frameless(c, 0, 48, 16), 0);
    jf_region r = JF_REGION_INIT;
    r.addr = code, r.size = sizeof code, r.name = "cfi_too_long", r.cfi = c;
    assert_int_equal(jf_register(&r), JF_EINVAL);
    jf_cfi_free(c);
    assert_int_equal(jf_cfi_new(&c), 0);
    assert_int_equal(jf_cfi_add_frameless(c, 0, 32, 16), 0);
    r.cfi = c;
    assert_int_equal(jf_register(&r), 0);
    jf_cfi_free(c); /* the registry holds its own copy */
    assert_int_equal(jf_unregister(code), 0);
    assert_int_equal(jf_shutdown(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(x86_64_cie_and_frame_match_gcc),
        cmocka_unit_test(advances_use_the_smallest_form),
        cmocka_unit_test(aarch64_advances_count_instructions),
        cmocka_unit_test(riscv64_cie_matches_gas_factors),
        cmocka_unit_test(perf_layout_single_fde_fields_follow_formats_md),
        cmocka_unit_test(perf_layout_rows_are_sorted_and_point_at_their_fdes),
        cmocka_unit_test(absolute_layout_uses_absolute_addresses_and_is_terminated),
        cmocka_unit_test(absolute_layout_describes_code_far_from_the_image),
        cmocka_unit_test(image_sizes_are_exact_and_small_buffers_are_refused),
        cmocka_unit_test(clone_emits_the_same_bytes_and_is_read_only),
        cmocka_unit_test(builder_rejects_bad_calls_without_crashing),
        cmocka_unit_test(validate_checks_completeness_and_range),
        cmocka_unit_test(standard_frame_checks_its_offsets),
        cmocka_unit_test(raw_bytes_are_checked),
        cmocka_unit_test(random_raw_bytes_are_rejected_or_emitted),
        cmocka_unit_test(trampoline_images_fit_80_bytes),
        cmocka_unit_test(host_builder_uses_the_host_registers),
        cmocka_unit_test(register_validates_the_description),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
