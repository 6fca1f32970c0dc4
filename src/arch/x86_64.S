/*
 * Trampoline template, x86_64 (System V). Copied byte for byte into the
 * trampoline arenas by src/trampoline.c; src/host/cfi-extract takes its unwind
 * rules from the .eh_frame the .cfi_* directives below produce.
 *
 * Shape: a standard frame record (push rbp; mov rbp,rsp) around one indirect
 * call whose target is loaded from the data slot jitframes_trampoline_slot. The
 * runtime re-links that one rip-relative reference per arena, so the slot
 * lives in read-write pages at a fixed distance after the read-only code.
 * Argument registers (rdi, rsi, rdx, rcx, r8, r9, xmm0-7, al for varargs) and
 * the return registers (rax, rdx, xmm0, xmm1) are never touched.
 * endbr64 makes each copy a valid indirect-call target under CET/IBT.
 */
    .text
    .globl jitframes_trampoline_template
    .type jitframes_trampoline_template, @function
    .p2align 4
jitframes_trampoline_template:
    .cfi_startproc
    /* remember/restore_state encode the epilogue in 1 byte instead of 3:
     * the unwind image is then 72 bytes, so a trampoline with jitdump
     * unwind info fits a 96-byte stride (104 bytes with its slot). */
    .cfi_remember_state
    endbr64
    push %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    mov %rsp, %rbp
    .cfi_def_cfa_register %rbp
    call *jitframes_trampoline_slot(%rip)
    pop %rbp
    .cfi_restore_state
    ret
    .cfi_endproc
    .size jitframes_trampoline_template, . - jitframes_trampoline_template

    .section .note.GNU-stack, "", @progbits
