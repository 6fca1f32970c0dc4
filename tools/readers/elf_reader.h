/*
 * Reader and validator for GDB JIT symfiles (small ELF64 objects written
 * to memory and read by gdb/lldb): sections, FUNC symbols, and the
 * .eh_frame decoded at its sh_addr (docs/formats.md, "GDB JIT interface").
 */
#ifndef JFT_ELF_READER_H
#define JFT_ELF_READER_H

#include "eh_frame_decoder.h"
#include "jft_common.h"

typedef struct elf_info {
    int big_endian;
    uint16_t type, machine;
    uint16_t shnum, phnum, shstrndx;
} elf_info;

typedef struct elf_section {
    const char *name;
    uint32_t type, link, info;
    uint64_t flags, addr, offset, size, entsize;
} elf_section;

typedef struct elf_symbol {
    const char *name;
    uint8_t type, bind;
    uint16_t shndx;
    uint64_t value, size;
    uint64_t addr; /* value, plus the section address in an ET_REL file */
} elf_symbol;

typedef struct elf_visitor {
    void (*header)(void *ctx, const elf_info *info);
    void (*section)(void *ctx, size_t index, const elf_section *s);
    void (*symbol)(void *ctx, size_t index, const elf_symbol *sym);
    void (*eh_frame)(void *ctx, const uint8_t *data, size_t len, const ehf_layout *layout,
                     const ehf_table *table, uint16_t machine);
} elf_visitor;

typedef struct elf_summary {
    uint64_t sections, functions, fdes;
} elf_summary;

/* Walk and validate a symfile (see jitdump_reader.h for keep_going). */
int elf_walk(const uint8_t *buf, size_t len, const elf_visitor *v, void *ctx, int keep_going,
             elf_summary *summary, jft_error *err);
int elf_check(const uint8_t *buf, size_t len, elf_summary *summary, jft_error *err);
/* Print sections, symbols and CFA rules to out (a FILE *). */
int elf_dump(const uint8_t *buf, size_t len, void *out, elf_summary *summary, jft_error *err);

#endif
