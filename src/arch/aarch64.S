/*
 * Trampoline template, aarch64 (AAPCS64). Copied byte for byte into the
 * trampoline arenas by src/trampoline.c; src/host/cfi-extract takes its unwind
 * rules from the .eh_frame the .cfi_* directives below produce.
 *
 * Shape: a standard frame record (stp x29,x30; mov x29,sp) around one
 * indirect call whose target is loaded with a pc-relative literal load from
 * the data slot jitframes_trampoline_slot. The runtime re-links that reference per
 * arena (the literal reaches +-1 MiB, which bounds the arena layout).
 * Only x16 (IP0, the intra-procedure-call scratch register) is clobbered:
 * x0-x7, x8 (indirect result), v0-v7 and the return registers pass through.
 * `bti c` (spelled as its hint so any assembler accepts it) makes each copy a
 * valid indirect-call target when BTI is enforced; it is a no-op elsewhere.
 * The return address is not signed (no PAC), so no negate_ra_state is needed.
 */
    .text
    .globl jitframes_trampoline_template
    .type jitframes_trampoline_template, %function
    .p2align 4
jitframes_trampoline_template:
    .cfi_startproc
    hint #34
    stp x29, x30, [sp, #-16]!
    .cfi_def_cfa_offset 16
    .cfi_offset x29, -16
    .cfi_offset x30, -8
    mov x29, sp
    .cfi_def_cfa_register x29
    ldr x16, jitframes_trampoline_slot
    blr x16
    ldp x29, x30, [sp], #16
    .cfi_def_cfa sp, 0
    .cfi_restore x29
    .cfi_restore x30
    ret
    .cfi_endproc
    .size jitframes_trampoline_template, . - jitframes_trampoline_template

    .section .note.GNU-stack, "", %progbits
