/*
 * Tests only: look at an emitted unwind image through elfutils' libdw, the
 * independent reader the CFI tests compare against.
 */
#ifndef JF_TEST_CFI_VIEW_H
#define JF_TEST_CFI_VIEW_H

#include "cfi.h"

#include <elfutils/libdw.h>
#include <gelf.h>

typedef struct cfi_view {
    Elf *elf;
    Dwarf_CFI *cfi;
    uint8_t *file; /* the ELF image libdw reads */
} cfi_view;

/* Emit `cfi` (absolute layout, code at code_addr, image at image_addr), wrap
 * it into an ELF file for `machine` and open it. 0, or -1 with a message on
 * stderr. */
int cfi_view_open(cfi_view *v, const jf_cfi *cfi, uint16_t machine, uint64_t code_addr, uint64_t code_size,
                  uint64_t image_addr);
void cfi_view_close(cfi_view *v);

/* Rule kinds frame_rule reports. */
enum {
    FRAME_RULE_SAME = 1,
    FRAME_RULE_AT = 2,
    FRAME_RULE_VAL = 3,
    FRAME_RULE_UNDEFINED = -1,
    FRAME_RULE_OTHER = -2
};

/* libdw's rule for DWARF register reg in frame: same value, saved at
 * CFA + *at, the value CFA + *at itself (DW_CFA_val_offset), or undefined /
 * something else. */
int frame_rule(Dwarf_Frame *frame, unsigned reg, int64_t *at);

/* The CFA rule as reg + off; -1 if it is not of that form. */
int frame_cfa(Dwarf_Frame *frame, unsigned *reg, int64_t *off);

#endif
