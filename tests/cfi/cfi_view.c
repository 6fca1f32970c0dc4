/* Tests only: emitted unwind images seen through libdw (see cfi_view.h). */
#include "cfi_view.h"

#include "elf_wrap.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>

int cfi_view_open(cfi_view *v, const jf_cfi *cfi, uint16_t machine, uint64_t code_addr, uint64_t code_size,
                  uint64_t image_addr)
{
    v->elf = NULL, v->cfi = NULL;
    size_t cap = jf__cfi_max_image_size(cfi);
    uint8_t *img = malloc(cap);
    v->file = malloc(cap + 1024);
    jf__eh_image out;
    int rc = img && v->file
                 ? jf__cfi_emit(cfi, JF_EH_LAYOUT_ABSOLUTE, code_addr, code_size, image_addr, img, cap, &out)
                 : JF_ENOMEM;
    if (rc != 0) {
        fprintf(stderr, "emit: %s\n", jf_last_error());
        free(img);
        return -1;
    }
    elf_wrap_input in = {machine, code_addr, code_size, image_addr, img, out.eh_frame_size, out.hdr_size, 1};
    size_t n = elf_wrap(&in, v->file, cap + 1024);
    free(img);
    elf_version(EV_CURRENT);
    v->elf = elf_memory((char *)v->file, n);
    v->cfi = v->elf ? dwarf_getcfi_elf(v->elf) : NULL;
    if (!v->cfi) {
        fprintf(stderr, "libdw cannot read the CFI: %s\n", dwarf_errmsg(-1));
        return -1;
    }
    return 0;
}

void cfi_view_close(cfi_view *v)
{
    if (v->cfi)
        dwarf_cfi_end(v->cfi);
    if (v->elf)
        elf_end(v->elf);
    free(v->file);
    v->cfi = NULL, v->elf = NULL, v->file = NULL;
}

int frame_rule(Dwarf_Frame *frame, unsigned reg, int64_t *at)
{
    Dwarf_Op mem[3], *ops;
    size_t nops;
    if (dwarf_frame_register(frame, (int)reg, mem, &ops, &nops) != 0)
        return FRAME_RULE_OTHER;
    if (nops == 0)
        return ops ? FRAME_RULE_UNDEFINED : FRAME_RULE_SAME;
    if (ops[0].atom != DW_OP_call_frame_cfa)
        return FRAME_RULE_OTHER;
    /* A value rule ends with DW_OP_stack_value. */
    int value = ops[nops - 1].atom == DW_OP_stack_value;
    nops -= (size_t)value;
    int kind = value ? FRAME_RULE_VAL : FRAME_RULE_AT;
    if (nops == 1) {
        *at = 0;
        return kind;
    }
    if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
        *at = (int64_t)ops[1].number;
        return kind;
    }
    return FRAME_RULE_OTHER;
}

int frame_cfa(Dwarf_Frame *frame, unsigned *reg, int64_t *off)
{
    Dwarf_Op *ops;
    size_t nops;
    if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1 || ops[0].atom != DW_OP_bregx)
        return -1;
    *reg = (unsigned)ops[0].number;
    *off = (int64_t)ops[0].number2;
    return 0;
}
