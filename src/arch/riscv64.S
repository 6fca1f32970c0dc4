/*
 * Trampoline template, riscv64 (LP64D). Copied byte for byte into the
 * trampoline arenas by src/trampoline.c; src/host/cfi-extract takes its unwind
 * rules from the .eh_frame the .cfi_* directives below produce.
 *
 * Shape: a standard frame record (ra and s0 saved, s0 = CFA) around one
 * indirect call whose target is loaded pc-relatively (auipc + ld) from the
 * data slot jitframes_trampoline_slot; the runtime re-links that pair per arena.
 * Saving s0 as well as ra keeps frame-pointer unwinders able to pass it.
 * Only t0 is clobbered: a0-a7, fa0-fa7 and the return registers pass through.
 * norelax: with relaxation gas encodes the .eh_frame advance deltas as
 * R_RISCV_SET6/SUB6 relocations, leaving the raw bytes wrong until linked,
 * and the linker could rewrite the auipc/ld pair. It stays in force to the
 * end of the file: gas decides how to encode .eh_frame when the file ends.
 */
    .option norelax
    .text
    .globl jitframes_trampoline_template
    .type jitframes_trampoline_template, @function
    .p2align 4
jitframes_trampoline_template:
    .cfi_startproc
    addi sp, sp, -16
    .cfi_def_cfa_offset 16
    sd ra, 8(sp)
    sd s0, 0(sp)
    .cfi_offset ra, -8
    .cfi_offset s0, -16
    addi s0, sp, 16
    .cfi_def_cfa s0, 0
.Lslot_hi:
    auipc t0, %pcrel_hi(jitframes_trampoline_slot)
    ld t0, %pcrel_lo(.Lslot_hi)(t0)
    jalr t0
    .cfi_def_cfa sp, 16
    ld ra, 8(sp)
    .cfi_restore ra
    ld s0, 0(sp)
    .cfi_restore s0
    addi sp, sp, 16
    .cfi_def_cfa_offset 0
    ret
    .cfi_endproc
    .size jitframes_trampoline_template, . - jitframes_trampoline_template

    .section .note.GNU-stack, "", @progbits
