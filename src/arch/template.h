/*
 * What src/host/cfi-extract learns from an assembled trampoline template and
 * writes into a generated header: the code bytes, the one reference to the
 * data slot (to re-link per arena), and the unwind rules taken verbatim from
 * the object's .eh_frame. Nothing here is written by hand per architecture.
 */
#ifndef JF_ARCH_TEMPLATE_H
#define JF_ARCH_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

/* How the template's code refers to its data slot. Each kind is a standard
 * ELF relocation of its architecture, applied by the runtime once per arena
 * (a tiny linker for exactly one reference). */
typedef enum jf__slot_kind {
    /* R_X86_64_PC32: 32-bit field = slot + addend - field address. */
    JF_SLOT_X86_64_PC32 = 1,
    /* R_AARCH64_LD_PREL_LO19: imm19 (bits 5..23) of an LDR literal
     * = (slot + addend - instruction address) / 4; reach +-1 MiB. */
    JF_SLOT_AARCH64_LD_PREL_LO19 = 2,
    /* R_RISCV_PCREL_HI20 on an AUIPC at `at` plus R_RISCV_PCREL_LO12_I on
     * the load at `at_lo` = slot + addend - AUIPC address, split hi20/lo12. */
    JF_SLOT_RISCV_PCREL_HI20_LO12_I = 3,
    /* R_PPC64_REL16_HA on an ADDIS at `at` plus R_PPC64_REL16_LO on the
     * ADDI at `at_lo`: the low 16 bits of each instruction word get the
     * high-adjusted and low halves of slot + addend - `at` (the addend
     * makes that the distance from the label whose address the code holds). */
    JF_SLOT_PPC64_REL16_HA_LO = 4,
    /* R_390_PC32DBL: 32-bit big-endian field at `at` (inside an LGRL)
     * = (slot + addend - field address) / 2. */
    JF_SLOT_S390_PC32DBL = 5,
} jf__slot_kind;

typedef struct jf__template_slot_ref {
    jf__slot_kind kind;
    uint32_t at;    /* offset in the template of the relocated field/instruction */
    uint32_t at_lo; /* riscv, ppc64: offset of the low-half instruction; else 0 */
    int64_t addend;
} jf__template_slot_ref;

/* The CIE's parameters and initial instructions, as the assembler wrote them. */
typedef struct jf__template_cie {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_register;
    const uint8_t *insns;
    size_t n_insns;
} jf__template_cie;

typedef struct jf__template {
    const char *arch;     /* "x86_64", "aarch64", "riscv64", "ppc64le", "s390x" */
    uint16_t elf_machine; /* EM_* of the object */
    const uint8_t *code;  /* code bytes with the slot reference unrelocated */
    size_t code_size;     /* = the template symbol's size = the FDE's range */
    jf__template_slot_ref slot;
    jf__template_cie cie;
    const uint8_t *fde_insns; /* the FDE's CFA program, covering [0, code_size) */
    size_t n_fde_insns;
} jf__template;

#endif
