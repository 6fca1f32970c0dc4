/*
 * Trampoline template, s390x (z/Architecture ELF ABI, big-endian). Copied
 * byte for byte into the trampoline arenas by src/trampoline.c;
 * src/host/cfi-extract takes its unwind rules from the .eh_frame the .cfi_*
 * directives below produce.
 *
 * Shape: the caller provides a 160-byte register save area at 0(r15); we
 * store r14 (return address) and r15 there (112 and 120, i.e. CFA-48 and
 * CFA-40 with the CIE's CFA = r15 + 160), then grow our own 160-byte frame
 * for our callee's save area, and call the target loaded pc-relatively from
 * the data slot jitframes_trampoline_slot (lgrl, R_390_PC32DBL: re-linked
 * per arena). No back chain is kept (the ABI makes it optional; perf cannot
 * walk s390x user stacks by frame pointers anyway: --call-graph dwarf uses
 * these rules). Clobbers r1 only: r2-r6, f0/f2/f4/f6 and the return
 * registers pass through.
 */
    .text
    .globl jitframes_trampoline_template
    .type jitframes_trampoline_template, @function
    .p2align 4
jitframes_trampoline_template:
    .cfi_startproc
    stmg %r14, %r15, 112(%r15)
    .cfi_offset %r14, -48
    .cfi_offset %r15, -40
    aghi %r15, -160
    .cfi_def_cfa_offset 320
    lgrl %r1, jitframes_trampoline_slot
    basr %r14, %r1
    lmg %r14, %r15, 272(%r15)
    .cfi_restore %r14
    .cfi_restore %r15
    .cfi_def_cfa_offset 160
    br %r14
    .cfi_endproc
    .size jitframes_trampoline_template, . - jitframes_trampoline_template

    .section .note.GNU-stack, "", @progbits
