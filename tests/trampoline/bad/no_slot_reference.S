/* Refused: the template calls a fixed function, not its data slot. (x86_64) */
    .text
    .globl jitframes_trampoline_template
    .type jitframes_trampoline_template, @function
jitframes_trampoline_template:
    .cfi_startproc
    push %rbp
    .cfi_def_cfa_offset 16
    call elsewhere
    pop %rbp
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size jitframes_trampoline_template, . - jitframes_trampoline_template
    .section .note.GNU-stack, "", @progbits
# expect: unexpected relocation
