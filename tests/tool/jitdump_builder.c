/* Test-only jitdump writer (see jitdump_builder.h). */
#include "jitdump_builder.h"

#include <stdlib.h>
#include <string.h>

void jdb_init(jdb *b, int big_endian)
{
    memset(b, 0, sizeof *b);
    b->big_endian = big_endian;
}

void jdb_free(jdb *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void jdb_bytes(jdb *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *bigger = realloc(b->data, cap);
        if (!bigger)
            abort(); /* test helper: no way to go on */
        b->data = bigger;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

void jdb_zeros(jdb *b, size_t n)
{
    static const uint8_t zero[64];
    while (n) {
        size_t k = n < sizeof zero ? n : sizeof zero;
        jdb_bytes(b, zero, k);
        n -= k;
    }
}

static void encode(uint8_t *dst, uint64_t v, size_t n, int big_endian)
{
    for (size_t i = 0; i < n; i++)
        dst[big_endian ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

void jdb_u8(jdb *b, uint8_t v)
{
    jdb_bytes(b, &v, 1);
}

void jdb_u32(jdb *b, uint32_t v)
{
    uint8_t tmp[4];
    encode(tmp, v, 4, b->big_endian);
    jdb_bytes(b, tmp, 4);
}

void jdb_u64(jdb *b, uint64_t v)
{
    uint8_t tmp[8];
    encode(tmp, v, 8, b->big_endian);
    jdb_bytes(b, tmp, 8);
}

void jdb_put_u32(jdb *b, size_t offset, uint32_t v)
{
    encode(b->data + offset, v, 4, b->big_endian);
}

void jdb_put_u64(jdb *b, size_t offset, uint64_t v)
{
    encode(b->data + offset, v, 8, b->big_endian);
}

size_t jdb_header(jdb *b, uint64_t timestamp)
{
    size_t at = b->len;
    jdb_u32(b, 0x4A695444u);
    jdb_u32(b, 1);
    jdb_u32(b, 40);
    jdb_u32(b, JDB_MACH_X86_64);
    jdb_u32(b, 0);
    jdb_u32(b, JDB_PID);
    jdb_u64(b, timestamp);
    jdb_u64(b, 0);
    return at;
}

static size_t prefix(jdb *b, uint32_t id, size_t size, uint64_t ts)
{
    size_t at = b->len;
    jdb_u32(b, id);
    jdb_u32(b, (uint32_t)size);
    jdb_u64(b, ts);
    return at;
}

size_t jdb_load(jdb *b, uint64_t ts, uint64_t addr, uint64_t code_size, uint64_t index, const char *name)
{
    size_t name_size = strlen(name) + 1;
    size_t at = prefix(b, 0, 56 + name_size + code_size, ts);
    jdb_u32(b, JDB_PID);
    jdb_u32(b, JDB_PID + 1);
    jdb_u64(b, addr);
    jdb_u64(b, addr);
    jdb_u64(b, code_size);
    jdb_u64(b, index);
    jdb_bytes(b, name, name_size);
    for (uint64_t i = 0; i < code_size; i++)
        jdb_u8(b, (uint8_t)(0x90 + index + i));
    return at;
}

size_t jdb_close(jdb *b, uint64_t ts)
{
    return prefix(b, 3, 16, ts);
}

size_t jdb_move(jdb *b, uint64_t ts, uint64_t old_addr, uint64_t new_addr, uint64_t code_size, uint64_t index)
{
    size_t at = prefix(b, 1, 64, ts);
    jdb_u32(b, JDB_PID);
    jdb_u32(b, JDB_PID + 1);
    jdb_u64(b, new_addr);
    jdb_u64(b, old_addr);
    jdb_u64(b, new_addr);
    jdb_u64(b, code_size);
    jdb_u64(b, index);
    return at;
}

size_t jdb_debug(jdb *b, uint64_t ts, uint64_t code_addr, const jdb_line *lines, size_t n)
{
    size_t size = 32;
    for (size_t i = 0; i < n; i++)
        size += 16 + strlen(lines[i].file) + 1;
    size_t at = prefix(b, 2, size, ts);
    jdb_u64(b, code_addr);
    jdb_u64(b, n);
    for (size_t i = 0; i < n; i++) {
        jdb_u64(b, code_addr + lines[i].offset);
        jdb_u32(b, lines[i].line);
        jdb_u32(b, 0);
        jdb_bytes(b, lines[i].file, strlen(lines[i].file) + 1);
    }
    return at;
}

size_t jdb_unwind(jdb *b, uint64_t ts, const uint8_t *data, size_t eh_size, size_t hdr_size,
                  uint64_t mapped_size)
{
    size_t unwinding = eh_size + hdr_size;
    size_t padded = (unwinding + 7) & ~(size_t)7;
    size_t at = prefix(b, 4, 40 + padded, ts);
    jdb_u64(b, unwinding);
    jdb_u64(b, hdr_size);
    jdb_u64(b, mapped_size);
    jdb_bytes(b, data, unwinding);
    jdb_zeros(b, padded - unwinding);
    return at;
}

/* push rbp (1 byte); mov rbp, rsp (3 bytes) */
const uint8_t jdb_framed_insns[] = {
    0x41,       /* advance_loc 1 */
    0x0e, 0x10, /* def_cfa_offset 16 */
    0x86, 0x02, /* offset rbp, cfa-16 */
    0x43,       /* advance_loc 3 */
    0x0d, 0x06, /* def_cfa_register rbp */
};
const size_t jdb_framed_insns_size = sizeof jdb_framed_insns;

static void pad8(jdb *b, size_t entry_start)
{
    while ((b->len - entry_start) % 8)
        jdb_u8(b, 0); /* DW_CFA_nop */
}

static void put_cie(jdb *e)
{
    static const uint8_t cie_body[] = {
        0,    0,    0,    0, /* CIE id */
        1,    'z',  'R',  0, /* version, augmentation */
        1,    0x78, 16,      /* code_align 1, data_align -8, return address rip */
        1,    0x1b,          /* augmentation data: FDE pointers pcrel|sdata4 */
        0x0c, 0x07, 0x08,    /* def_cfa rsp+8 */
        0x90, 0x01,          /* offset rip, cfa-8 */
    };
    jdb_u32(e, 0);
    jdb_bytes(e, cie_body, sizeof cie_body);
    pad8(e, 0);
    jdb_put_u32(e, 0, (uint32_t)(e->len - 4));
}

uint8_t *jdb_unwind_data(uint64_t code_size, const jdb_fde *fdes, size_t n, size_t *eh_size, size_t *hdr_size,
                         size_t *fde_offsets)
{
    int64_t eh_addr = (int64_t)((code_size + 7) & ~(uint64_t)7);
    jdb e;
    jdb_init(&e, 0);
    put_cie(&e);
    size_t *offsets = calloc(n + 1, sizeof *offsets);
    if (!offsets)
        abort();
    for (size_t i = 0; i < n; i++) {
        size_t at = offsets[i] = e.len;
        jdb_u32(&e, 0);
        jdb_u32(&e, (uint32_t)(at + 4)); /* back to the CIE at 0 */
        jdb_u32(&e, (uint32_t)(int32_t)((int64_t)fdes[i].start - (eh_addr + (int64_t)at + 8)));
        jdb_u32(&e, (uint32_t)(fdes[i].end - fdes[i].start));
        jdb_u8(&e, 0); /* no augmentation data */
        jdb_bytes(&e, fdes[i].insns, fdes[i].n_insns);
        pad8(&e, at);
        jdb_put_u32(&e, at, (uint32_t)(e.len - at - 4));
        if (fde_offsets)
            fde_offsets[i] = at;
    }
    size_t eh = e.len;
    int64_t hdr_addr = eh_addr + (int64_t)eh;
    jdb_u8(&e, 1);
    jdb_u8(&e, 0x1b);
    jdb_u8(&e, 0x03);
    jdb_u8(&e, 0x3b);
    jdb_u32(&e, (uint32_t)(int32_t) - (int64_t)(eh + 4));
    jdb_u32(&e, (uint32_t)n);
    /* rows sorted by start: a simple selection over the (few) FDEs */
    uint8_t *done = calloc(n + 1, 1);
    if (!done)
        abort();
    for (size_t k = 0; k < n; k++) {
        size_t best = n;
        for (size_t i = 0; i < n; i++)
            if (!done[i] && (best == n || fdes[i].start < fdes[best].start))
                best = i;
        done[best] = 1;
        jdb_u32(&e, (uint32_t)(int32_t)((int64_t)fdes[best].start - hdr_addr));
        jdb_u32(&e, (uint32_t)(int32_t)((int64_t)offsets[best] - (int64_t)eh));
    }
    free(done);
    free(offsets);
    *eh_size = eh;
    *hdr_size = e.len - eh;
    return e.data;
}
