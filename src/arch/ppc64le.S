/*
 * Trampoline template, ppc64le (ELFv2). Copied byte for byte into the
 * trampoline arenas by src/trampoline.c; src/host/cfi-extract takes its unwind
 * rules from the .eh_frame the .cfi_* directives below produce.
 *
 * Shape: LR saved in the caller's frame at 16(r1) (the slot the ABI gives
 * every callee: not in our own frame, where our callee saves its LR), a
 * 96-byte frame — the 32-byte minimum plus the 64-byte parameter save area
 * a variadic target stores r3-r10 into — with the back chain (stdu: perf -g
 * walks it) and our
 * TOC pointer (r2) in its save slot 24(r1), restored after the call: the
 * target may be another module's and change r2, and our caller may have
 * entered us without planning to restore it. The target is loaded from the
 * data slot jitframes_trampoline_slot pc-relatively (bcl 20,31 gives our own
 * address without relying on r12; addis/addi REL16_HA/LO, re-linked per
 * arena) and called through ctr with its own address in r12, as a global
 * entry point requires. Clobbers r0, r12, ctr only: r3-r10, f1-f13, v2-v13
 * and the return registers pass through.
 * DWARF: the return address column is 65 (LR), saved at CFA+16, which gas
 * encodes as DW_CFA_offset_extended_sf.
 */
    .abiversion 2
    .text
    .globl jitframes_trampoline_template
    .type jitframes_trampoline_template, @function
    .p2align 4
jitframes_trampoline_template:
    .cfi_startproc
    mflr 0
    std 0, 16(1)
    .cfi_offset lr, 16
    stdu 1, -96(1)
    .cfi_def_cfa_offset 96
    std 2, 24(1)
    bcl 20, 31, .Lhere
.Lhere:
    mflr 12
    addis 12, 12, jitframes_trampoline_slot-.Lhere@ha
    addi 12, 12, jitframes_trampoline_slot-.Lhere@l
    ld 12, 0(12)
    mtctr 12
    bctrl
    ld 2, 24(1)
    addi 1, 1, 96
    .cfi_def_cfa_offset 0
    ld 0, 16(1)
    mtlr 0
    .cfi_restore lr
    blr
    .cfi_endproc
    .size jitframes_trampoline_template, . - jitframes_trampoline_template

    .section .note.GNU-stack, "", @progbits
