/* Refused: a personality routine adds a CIE augmentation (and an .eh_frame
 * relocation) that the extractor cannot carry over. (x86_64) */
    .text
    .globl jitframes_trampoline_template
    .type jitframes_trampoline_template, @function
jitframes_trampoline_template:
    .cfi_startproc
    .cfi_personality 0x9b, DW.ref.personality
    push %rbp
    .cfi_def_cfa_offset 16
    call *jitframes_trampoline_slot(%rip)
    pop %rbp
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size jitframes_trampoline_template, . - jitframes_trampoline_template
    .section .note.GNU-stack, "", @progbits
# expect: CIE augmentation "zPR" is not supported
