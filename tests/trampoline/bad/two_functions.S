/* Refused: .eh_frame holds an FDE for another function too. (x86_64) */
    .text
    .globl jf__trampoline_template
    .type jf__trampoline_template, @function
jf__trampoline_template:
    .cfi_startproc
    push %rbp
    .cfi_def_cfa_offset 16
    call *jf__trampoline_slot(%rip)
    pop %rbp
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size jf__trampoline_template, . - jf__trampoline_template
other:
    .cfi_startproc
    ret
    .cfi_endproc
    .section .note.GNU-stack, "", @progbits
# expect: more than one FDE
