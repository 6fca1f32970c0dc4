/*
 * The CFI assembler's facts per architecture (see cfi_arch.h).
 */
#include "arch/cfi_arch.h"

#include "dwarf_cfa.h"

const jf__cfi_arch_facts jf__cfi_arches[JF_CFI_ARCH_COUNT] = {
    [JF_CFI_ARCH_X86_64] =
        {
            .name = "x86_64",
            .elf_machine = 62,
            .code_align = 1,
            .data_align = -8,
            .sp = 7,
            .fp = 6,
            .ra = 16,
            .entry_cfa_offset = 8,
            .ra_rule_in_cie = 1,
            .push_saves = 1,
            .fp_cfa_offset = 16,
            .fp_reloaded_apart = 0,
            .has_frame_record = 1,
            .cie_insns_len = 5,
            .cie_insns = {DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1},
        },
    [JF_CFI_ARCH_AARCH64] =
        {
            .name = "aarch64",
            .elf_machine = 183,
            .code_align = 4,
            .data_align = -8,
            .sp = 31,
            .fp = 29,
            .ra = 30,
            .entry_cfa_offset = 0,
            .ra_rule_in_cie = 0,
            .push_saves = 1,
            .fp_cfa_offset = 16,
            .fp_reloaded_apart = 0,
            .has_frame_record = 1,
            .cie_insns_len = 3,
            .cie_insns = {DW_CFA_def_cfa, 31, 0},
        },
    /* gas on riscv64 uses code alignment 1 and data alignment -4. */
    [JF_CFI_ARCH_RISCV64] =
        {
            .name = "riscv64",
            .elf_machine = 243,
            .code_align = 1,
            .data_align = -4,
            .sp = 2,
            .fp = 8,
            .ra = 1,
            .entry_cfa_offset = 0,
            .ra_rule_in_cie = 0,
            .push_saves = 0,
            .fp_cfa_offset = 0,
            .fp_reloaded_apart = 1,
            .has_frame_record = 1,
            .cie_insns_len = 3,
            .cie_insns = {DW_CFA_def_cfa, 2, 0},
        },
    /* ELFv2: the return address is LR (DWARF 65), CFA = r1 at entry. */
    [JF_CFI_ARCH_PPC64LE] =
        {
            .name = "ppc64le",
            .elf_machine = 21,
            .code_align = 4,
            .data_align = -8,
            .sp = 1,
            .fp = 31,
            .ra = 65,
            .entry_cfa_offset = 0,
            .ra_rule_in_cie = 0,
            .cie_insns_len = 3,
            .cie_insns = {DW_CFA_def_cfa, 1, 0},
        },
    /* The caller's 160-byte register save area is above SP at entry: CFA = r15 + 160. */
    [JF_CFI_ARCH_S390X] =
        {
            .name = "s390x",
            .elf_machine = 22,
            .code_align = 1,
            .data_align = -8,
            .sp = 15,
            .fp = 11,
            .ra = 14,
            .entry_cfa_offset = 160,
            .ra_rule_in_cie = 0,
            .caller_sp_below_cfa = 160,
            .cie_insns_len = 4,
            .cie_insns = {DW_CFA_def_cfa, 15, 0xa0, 0x01},
        },
};
