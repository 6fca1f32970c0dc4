/* Refused: a personality routine adds a CIE augmentation (and an .eh_frame
 * relocation) that the extractor cannot carry over. (x86_64) */
    .text
    .globl jf__trampoline_template
    .type jf__trampoline_template, @function
jf__trampoline_template:
    .cfi_startproc
    .cfi_personality 0x9b, DW.ref.personality
    push %rbp
    .cfi_def_cfa_offset 16
    call *jf__trampoline_slot(%rip)
    pop %rbp
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size jf__trampoline_template, . - jf__trampoline_template
    .section .note.GNU-stack, "", @progbits
# expect: CIE augmentation "zPR" is not supported
