/* Refused: assembled relaxable, the auipc/ld pair carries R_RISCV_RELAX and
 * the linker could rewrite it. (riscv64) */
    .option relax
    .text
    .globl jf__trampoline_template
    .type jf__trampoline_template, @function
jf__trampoline_template:
    .cfi_startproc
    addi sp, sp, -16
    .cfi_def_cfa_offset 16
    sd ra, 8(sp)
    .cfi_offset ra, -8
.Lhi:
    auipc t0, %pcrel_hi(jf__trampoline_slot)
    ld t0, %pcrel_lo(.Lhi)(t0)
    jalr t0
    ld ra, 8(sp)
    .cfi_restore ra
    addi sp, sp, 16
    .cfi_def_cfa_offset 0
    ret
    .cfi_endproc
    .size jf__trampoline_template, . - jf__trampoline_template
# expect: unexpected relocation type 51
