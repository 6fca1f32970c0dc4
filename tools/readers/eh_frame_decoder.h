/*
 * A small, independent .eh_frame / .eh_frame_hdr decoder: CIE and FDE
 * structure, pointer encodings, and a DWARF CFA interpreter that turns each
 * FDE's program into CFA rules per pc range. Used to validate the unwinding
 * info of jitdumps (and later of symfiles) without trusting our own emitter.
 */
#ifndef JFT_EH_FRAME_DECODER_H
#define JFT_EH_FRAME_DECODER_H

#include "jft_common.h"

/* Register columns tracked by the interpreter (covers the integer and
 * vector registers of x86_64, aarch64 and riscv64). */
#define EHF_MAX_REGS 128
/* Depth of DW_CFA_remember_state nesting accepted. */
#define EHF_MAX_STATE_DEPTH 16

/* Where the section sits, so pc-relative pointers can be resolved. */
typedef struct ehf_layout {
    int big_endian;
    unsigned address_size; /* 4 or 8 */
    int64_t section_addr;  /* address of byte 0 of .eh_frame in the chosen coordinates */
    uint64_t error_base;   /* added to section offsets in error reports */
} ehf_layout;

typedef struct ehf_cie {
    uint64_t offset, size; /* size includes the length field */
    uint8_t version;
    char augmentation[8];
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_encoding; /* 'R' (DW_EH_PE_absptr if absent) */
    uint8_t lsda_encoding;
    int signal_frame;
    uint64_t insns, insns_size; /* initial instructions (section offsets) */
} ehf_cie;

typedef struct ehf_fde {
    uint64_t offset, size;
    size_t cie;              /* index into the table's CIEs */
    uint64_t pc_begin_field; /* section offset of the pc_begin field */
    int64_t pc_begin;        /* resolved address */
    uint64_t pc_range;
    uint64_t insns, insns_size;
} ehf_fde;

typedef struct ehf_table {
    ehf_cie *cies;
    size_t n_cies;
    ehf_fde *fdes;
    size_t n_fdes;
    int terminated; /* a zero length word ended the section */
} ehf_table;

enum ehf_rule_kind {
    EHF_RULE_UNSPECIFIED = 0,
    EHF_RULE_UNDEFINED,
    EHF_RULE_SAME_VALUE,
    EHF_RULE_OFFSET,     /* saved at CFA + value */
    EHF_RULE_VAL_OFFSET, /* value is CFA + value */
    EHF_RULE_REGISTER,   /* in register `value` */
    EHF_RULE_EXPRESSION,
    EHF_RULE_VAL_EXPRESSION,
};

typedef struct ehf_rule {
    uint8_t kind;
    int64_t value;
} ehf_rule;

/* The unwind state over [start, end). */
typedef struct ehf_row {
    int64_t start, end;
    int cfa_is_expression;
    uint64_t cfa_reg;
    int64_t cfa_offset;
    ehf_rule regs[EHF_MAX_REGS];
} ehf_row;

typedef void (*ehf_row_fn)(void *ctx, const ehf_fde *fde, const ehf_row *row);

/*
 * Decode the structure of .eh_frame data[0..len) and run every FDE's CFA
 * program (catching bad opcodes, registers, state stack misuse, advances
 * past the FDE). Zero bytes after a zero terminator are accepted. Fills *out
 * (free with ehf_free) and returns 0, or -1 with err set (where = error_base +
 * section offset).
 */
int ehf_decode(const uint8_t *data, size_t len, const ehf_layout *layout, ehf_table *out, jft_error *err);

void ehf_free(ehf_table *t);

/* Run FDE `i`'s program, calling fn for each row. Returns 0 or -1. */
int ehf_rows(const uint8_t *data, size_t len, const ehf_layout *layout, const ehf_table *t, size_t i,
             ehf_row_fn fn, void *ctx, jft_error *err);

/*
 * Check an .eh_frame_hdr hdr[0..len) located at address hdr_addr (same
 * coordinates as the layout) describing `t`: version 1, encodings
 * 0x1b/0x03/0x3b, eh_frame_ptr pointing at the section, one row per FDE,
 * sorted by initial location, each row naming its FDE and start.
 */
int ehf_check_hdr(const uint8_t *hdr, size_t len, int64_t hdr_addr, const ehf_layout *layout,
                  const ehf_table *t, uint64_t error_base, jft_error *err);

/* "rsp", "x29", "ra"... for the ELF machine, or NULL if unknown. */
const char *ehf_register_name(uint32_t elf_mach, uint64_t reg);

#endif
