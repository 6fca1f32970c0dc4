/* Refused: .eh_frame holds an FDE for another function too. (x86_64) */
    .text
    .globl jitframes_trampoline_template
    .type jitframes_trampoline_template, @function
jitframes_trampoline_template:
    .cfi_startproc
    push %rbp
    .cfi_def_cfa_offset 16
    call *jitframes_trampoline_slot(%rip)
    pop %rbp
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size jitframes_trampoline_template, . - jitframes_trampoline_template
other:
    .cfi_startproc
    ret
    .cfi_endproc
    .section .note.GNU-stack, "", @progbits
# expect: more than one FDE
