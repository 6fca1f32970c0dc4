/*
 * A small test-only jitdump writer, independent of the library's sink, to
 * craft valid dumps and damage them one rule at a time. The unwinding info
 * is x86_64-shaped DWARF laid out as perf's synthesized DSO expects
 * (docs/formats.md).
 */
#ifndef JF_TEST_JITDUMP_BUILDER_H
#define JF_TEST_JITDUMP_BUILDER_H

#include <stddef.h>
#include <stdint.h>

typedef struct jdb {
    uint8_t *data;
    size_t len, cap;
    int big_endian;
} jdb;

void jdb_init(jdb *b, int big_endian);
void jdb_free(jdb *b);
void jdb_u8(jdb *b, uint8_t v);
void jdb_u32(jdb *b, uint32_t v);
void jdb_u64(jdb *b, uint64_t v);
void jdb_bytes(jdb *b, const void *p, size_t n);
void jdb_zeros(jdb *b, size_t n);
/* Overwrite a u32/u64 at `offset` in the builder's byte order. */
void jdb_put_u32(jdb *b, size_t offset, uint32_t v);
void jdb_put_u64(jdb *b, size_t offset, uint64_t v);

enum { JDB_PID = 4242, JDB_MACH_X86_64 = 62 };

/* Each returns the record's offset. Timestamps are the caller's. */
size_t jdb_header(jdb *b, uint64_t timestamp);
size_t jdb_load(jdb *b, uint64_t ts, uint64_t addr, uint64_t code_size, uint64_t index, const char *name);
size_t jdb_close(jdb *b, uint64_t ts);
size_t jdb_move(jdb *b, uint64_t ts, uint64_t old_addr, uint64_t new_addr, uint64_t code_size,
                uint64_t index);

typedef struct jdb_line {
    uint64_t offset; /* from code_addr */
    uint32_t line;
    const char *file;
} jdb_line;
size_t jdb_debug(jdb *b, uint64_t ts, uint64_t code_addr, const jdb_line *lines, size_t n);

/* One FDE over code offsets [start, end) with raw CFA instructions. */
typedef struct jdb_fde {
    uint64_t start, end;
    const uint8_t *insns;
    size_t n_insns;
} jdb_fde;

/* .eh_frame (CIE + FDEs, 8-aligned, no terminator) followed by the
 * .eh_frame_hdr (rows sorted by start) for a code of code_size bytes.
 * Returns the unwinding data in a malloc'd buffer; *eh_size and *hdr_size get
 * the two parts' sizes, fde_offsets[i] (if not NULL) each FDE's offset. */
uint8_t *jdb_unwind_data(uint64_t code_size, const jdb_fde *fdes, size_t n, size_t *eh_size, size_t *hdr_size,
                         size_t *fde_offsets);

/* A CODE_UNWINDING_INFO record holding data (eh_size + hdr_size bytes),
 * zero padded to 8. */
size_t jdb_unwind(jdb *b, uint64_t ts, const uint8_t *data, size_t eh_size, size_t hdr_size,
                  uint64_t mapped_size);

/* A typical framed x86_64 function's CFA program (push rbp; mov rbp,rsp). */
extern const uint8_t jdb_framed_insns[];
extern const size_t jdb_framed_insns_size;

#endif
