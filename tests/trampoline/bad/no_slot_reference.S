/* Refused: the template calls a fixed function, not its data slot. (x86_64) */
    .text
    .globl jf__trampoline_template
    .type jf__trampoline_template, @function
jf__trampoline_template:
    .cfi_startproc
    push %rbp
    .cfi_def_cfa_offset 16
    call elsewhere
    pop %rbp
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size jf__trampoline_template, . - jf__trampoline_template
    .section .note.GNU-stack, "", @progbits
# expect: unexpected relocation
