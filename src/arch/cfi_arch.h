/*
 * What the CFI assembler (src/cfi.c) needs to know of each architecture it
 * can describe — the host's, and every other for the tests: the CIE, the
 * DWARF register numbers, the standard frame. With src/arch/host.h and the
 * trampoline templates, the architecture facts of the library live in
 * src/arch/ only.
 */
#ifndef JF_ARCH_CFI_ARCH_H
#define JF_ARCH_CFI_ARCH_H

#include <stdint.h>

/* Architectures the CFI assembler knows (the table in cfi_arch.c). */
typedef enum jf__cfi_arch {
    JF_CFI_ARCH_X86_64,
    JF_CFI_ARCH_AARCH64,
    JF_CFI_ARCH_RISCV64,
    JF_CFI_ARCH_PPC64LE,
    JF_CFI_ARCH_S390X,
    JF_CFI_ARCH_COUNT,
} jf__cfi_arch;

/* What differs between architectures: the CIE and the standard frame. */
typedef struct jf__cfi_arch_facts {
    const char *name;
    uint16_t elf_machine;
    uint32_t code_align;
    int32_t data_align;
    uint8_t sp, fp, ra;
    uint8_t entry_cfa_offset;  /* CFA = SP + this at function entry */
    uint8_t ra_rule_in_cie;    /* the CIE already says where RA is (x86_64: CFA-8) */
    uint8_t push_saves;        /* the push instruction itself stores FP and RA */
    uint8_t fp_cfa_offset;     /* CFA = FP + this once FP is set */
    uint8_t fp_reloaded_apart; /* FP is reloaded before SP pops: epilogue_start needed */
    /* The ABI has a 16-byte frame record {FP, RA} at FP that
     * jf_cfi_add_standard_frame describes. ppc64 saves LR in the caller's
     * frame (CFA+16) and s390x both into the caller's save area (CFA-48,
     * CFA-40): their code is described with the rules directly, and the
     * standard frame is JF_ENOTSUP there. */
    uint8_t has_frame_record;
    /* The caller's SP is CFA - this: s390x's 160 (the register save area
     * the caller provides above its SP), 0 elsewhere. Where it is not 0,
     * the unwinders do not derive the caller's SP from the CFA (libgcc does
     * only on targets with EH_RETURN_STACKADJ_RTX, s390 has none; gdb
     * counts r15 among the call-saved registers): they take an SP without
     * a rule as unchanged, so code that moves SP must describe it, as gcc
     * does. jf_cfi_add_frameless says CFA - this (DW_CFA_val_offset). */
    uint8_t caller_sp_below_cfa;
    uint8_t cie_insns_len;
    uint8_t cie_insns[6];
} jf__cfi_arch_facts;

extern const jf__cfi_arch_facts jf__cfi_arches[JF_CFI_ARCH_COUNT];

#endif
