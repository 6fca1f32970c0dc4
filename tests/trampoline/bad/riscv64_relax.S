/* Refused: assembled relaxable, the auipc/ld pair carries R_RISCV_RELAX and
 * the linker could rewrite it. (riscv64) */
    .option relax
    .text
    .globl jitframes_trampoline_template
    .type jitframes_trampoline_template, @function
jitframes_trampoline_template:
    .cfi_startproc
    addi sp, sp, -16
    .cfi_def_cfa_offset 16
    sd ra, 8(sp)
    .cfi_offset ra, -8
.Lhi:
    auipc t0, %pcrel_hi(jitframes_trampoline_slot)
    ld t0, %pcrel_lo(.Lhi)(t0)
    jalr t0
    ld ra, 8(sp)
    .cfi_restore ra
    addi sp, sp, 16
    .cfi_def_cfa_offset 0
    ret
    .cfi_endproc
    .size jitframes_trampoline_template, . - jitframes_trampoline_template
# expect: unexpected relocation type 51
