/* See jit_code.h. The byte sequences are spelled out with their offsets so
 * that the CFI rules below can name the instruction boundaries. */
#define _GNU_SOURCE
#include "jit_code.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int jit_supported(void)
{
#if defined(__x86_64__) || defined(__aarch64__) || (defined(__riscv) && __riscv_xlen == 64) || \
    (defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)) || defined(__s390x__)
    return 1;
#else
    return 0;
#endif
}

/*
 * The frameless function: no frame pointer, the stack adjusted by a
 * non-zero amount around an indirect call of its first argument with its
 * second. Its CFI is built with the public assembler, per architecture.
 */
static int add_frameless_rules(jf_cfi *c);

#if defined(__x86_64__)
/* CFA = rsp + 8 at entry, rsp + 16 after the sub, rsp + 8 after the add. */
static const uint8_t frameless_code[] = {
    0x48, 0x83, 0xec, 0x08, /*  0: sub  $8, %rsp   */
    0x48, 0x89, 0xf8,       /*  4: mov  %rdi, %rax */
    0x48, 0x89, 0xf7,       /*  7: mov  %rsi, %rdi */
    0xff, 0xd0,             /* 10: call *%rax      */
    0x48, 0x83, 0xc4, 0x08, /* 12: add  $8, %rsp   */
    0xc3,                   /* 16: ret             */
};

static int add_frameless_rules(jf_cfi *c)
{
    int rc = jf_cfi_begin_fde(c, 0, sizeof frameless_code);
    rc = rc ? rc : jf_cfi_advance_to(c, 4);
    rc = rc ? rc : jf_cfi_def_cfa_offset(c, 16);
    rc = rc ? rc : jf_cfi_advance_to(c, 16);
    return rc ? rc : jf_cfi_def_cfa_offset(c, 8);
}
#elif defined(__aarch64__) || defined(__riscv)
/* Both: CFA = sp at entry and after the epilogue, sp + 16 in between; the
 * return address register (x30 / ra, DWARF 30 / 1) saved at CFA - 8 while
 * the callee may clobber it. Instructions are little-endian words. */
#define INSN(w) (uint8_t)(w), (uint8_t)((w) >> 8), (uint8_t)((w) >> 16), (uint8_t)((w) >> 24)
#if defined(__aarch64__)
enum { RA_REG = 30 };
static const uint8_t frameless_code[] = {
    INSN(0xd10043ffu), /*  0: sub sp, sp, #16     */
    INSN(0xf90007feu), /*  4: str x30, [sp, #8]   */
    INSN(0xaa0003e2u), /*  8: mov x2, x0          */
    INSN(0xaa0103e0u), /* 12: mov x0, x1          */
    INSN(0xd63f0040u), /* 16: blr x2              */
    INSN(0xf94007feu), /* 20: ldr x30, [sp, #8]   */
    INSN(0x910043ffu), /* 24: add sp, sp, #16     */
    INSN(0xd65f03c0u), /* 28: ret                 */
};
#else
enum { RA_REG = 1 };
static const uint8_t frameless_code[] = {
    INSN(0xff010113u), /*  0: addi sp, sp, -16    */
    INSN(0x00113423u), /*  4: sd   ra, 8(sp)      */
    INSN(0x00050313u), /*  8: mv   t1, a0         */
    INSN(0x00058513u), /* 12: mv   a0, a1         */
    INSN(0x000300e7u), /* 16: jalr t1             */
    INSN(0x00813083u), /* 20: ld   ra, 8(sp)      */
    INSN(0x01010113u), /* 24: addi sp, sp, 16     */
    INSN(0x00008067u), /* 28: ret                 */
};
#endif

static int add_frameless_rules(jf_cfi *c)
{
    int rc = jf_cfi_begin_fde(c, 0, sizeof frameless_code);
    rc = rc ? rc : jf_cfi_advance_to(c, 4);
    rc = rc ? rc : jf_cfi_def_cfa_offset(c, 16);
    rc = rc ? rc : jf_cfi_advance_to(c, 8);
    rc = rc ? rc : jf_cfi_offset(c, RA_REG, -8);
    rc = rc ? rc : jf_cfi_advance_to(c, 24);
    rc = rc ? rc : jf_cfi_restore(c, RA_REG);
    rc = rc ? rc : jf_cfi_advance_to(c, 28);
    return rc ? rc : jf_cfi_def_cfa_offset(c, 0);
}
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
/* ELFv2: LR saved in the caller's frame at CFA + 16, a 32-byte frame of our
 * own (back chain by stdu), the target called through ctr with its address
 * in r12 and our TOC saved at 24(r1) and reloaded after the call. */
#define INSN(w) (uint8_t)(w), (uint8_t)((w) >> 8), (uint8_t)((w) >> 16), (uint8_t)((w) >> 24)
enum { LR_REG = 65 };
static const uint8_t frameless_code[] = {
    INSN(0x7c0802a6u), /*  0: mflr  r0            */
    INSN(0xf8010010u), /*  4: std   r0,16(r1)     */
    INSN(0xf821ffe1u), /*  8: stdu  r1,-32(r1)    */
    INSN(0xf8410018u), /* 12: std   r2,24(r1)     */
    INSN(0x7c6c1b78u), /* 16: mr    r12,r3        */
    INSN(0x7d8903a6u), /* 20: mtctr r12           */
    INSN(0x7c832378u), /* 24: mr    r3,r4         */
    INSN(0x4e800421u), /* 28: bctrl               */
    INSN(0xe8410018u), /* 32: ld    r2,24(r1)     */
    INSN(0x38210020u), /* 36: addi  r1,r1,32      */
    INSN(0xe8010010u), /* 40: ld    r0,16(r1)     */
    INSN(0x7c0803a6u), /* 44: mtlr  r0            */
    INSN(0x4e800020u), /* 48: blr                 */
};

static int add_frameless_rules(jf_cfi *c)
{
    int rc = jf_cfi_begin_fde(c, 0, sizeof frameless_code);
    rc = rc ? rc : jf_cfi_advance_to(c, 8);
    rc = rc ? rc : jf_cfi_offset(c, LR_REG, 16);
    rc = rc ? rc : jf_cfi_advance_to(c, 12);
    rc = rc ? rc : jf_cfi_def_cfa_offset(c, 32);
    rc = rc ? rc : jf_cfi_advance_to(c, 40);
    rc = rc ? rc : jf_cfi_def_cfa_offset(c, 0);
    rc = rc ? rc : jf_cfi_advance_to(c, 48);
    return rc ? rc : jf_cfi_restore(c, LR_REG);
}
#elif defined(__s390x__)
/* r14 and r15 stored into the caller's register save area (CFA - 48 and
 * CFA - 40; CFA = r15 + 160 at entry), a 160-byte frame of our own, the
 * target called with basr. Instructions are big-endian, 2, 4 or 6 bytes. */
static const uint8_t frameless_code[] = {
    0xeb, 0xef, 0xf0, 0x70, 0x00, 0x24, /*  0: stmg %r14,%r15,112(%r15) */
    0xa7, 0xfb, 0xff, 0x60,             /*  6: aghi %r15,-160           */
    0xb9, 0x04, 0x00, 0x12,             /* 10: lgr  %r1,%r2             */
    0xb9, 0x04, 0x00, 0x23,             /* 14: lgr  %r2,%r3             */
    0x0d, 0xe1,                         /* 18: basr %r14,%r1            */
    0xeb, 0xef, 0xf1, 0x10, 0x00, 0x04, /* 20: lmg  %r14,%r15,272(%r15) */
    0x07, 0xfe,                         /* 26: br   %r14                */
};

static int add_frameless_rules(jf_cfi *c)
{
    int rc = jf_cfi_begin_fde(c, 0, sizeof frameless_code);
    rc = rc ? rc : jf_cfi_advance_to(c, 6);
    rc = rc ? rc : jf_cfi_offset(c, 14, -48);
    rc = rc ? rc : jf_cfi_offset(c, 15, -40);
    rc = rc ? rc : jf_cfi_advance_to(c, 10);
    rc = rc ? rc : jf_cfi_def_cfa_offset(c, 320);
    rc = rc ? rc : jf_cfi_advance_to(c, 26);
    rc = rc ? rc : jf_cfi_def_cfa_offset(c, 160);
    rc = rc ? rc : jf_cfi_restore(c, 14);
    return rc ? rc : jf_cfi_restore(c, 15);
}
#else
static const uint8_t frameless_code[] = {0};

static int add_frameless_rules(jf_cfi *c)
{
    (void)c;
    return -1;
}
#endif

static int frameless_cfi(jf_cfi **out)
{
    jf_cfi *c;
    if (jf_cfi_new(&c) != 0)
        return -1;
    if (add_frameless_rules(c) != 0) {
        fprintf(stderr, "frameless CFI: %s\n", jf_last_error());
        jf_cfi_free(c);
        return -1;
    }
    *out = c;
    return 0;
}

#if defined(__x86_64__)
/* Framed: the standard frame record, like a trampoline. */
static const uint8_t framed_code[] = {
    0x55,             /*  0: push %rbp       */
    0x48, 0x89, 0xe5, /*  1: mov  %rsp, %rbp */
    0x48, 0x89, 0xf8, /*  4: mov  %rdi, %rax */
    0x48, 0x89, 0xf7, /*  7: mov  %rsi, %rdi */
    0xff, 0xd0,       /* 10: call *%rax      */
    0x5d,             /* 12: pop  %rbp       */
    0xc3,             /* 13: ret             */
};

static int framed_cfi(jf_cfi **out)
{
    jf_cfi *c;
    if (jf_cfi_new(&c) != 0)
        return -1;
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.start = 0;
    f.end = sizeof framed_code;
    f.after_push = 1;
    f.after_fp_set = 4;
    f.epilogue_start = 12;
    f.after_pop = 13;
    if (jf_cfi_add_standard_frame(c, &f) != 0) {
        fprintf(stderr, "framed CFI: %s\n", jf_last_error());
        jf_cfi_free(c);
        return -1;
    }
    *out = c;
    return 0;
}
#endif

static void set_function(jit_function *f, uint8_t *at, size_t size)
{
    jit_call_fn fn;
    void *p = at;
    memcpy(&fn, &p, sizeof fn);
    f->fn = fn;
    f->addr = at;
    f->size = size;
}

int jit_make(jit_function *frameless, jit_function *framed)
{
    memset(frameless, 0, sizeof *frameless);
    memset(framed, 0, sizeof *framed);
    if (!jit_supported()) {
        fprintf(stderr, "the test JIT code is x86_64, aarch64, riscv64, ppc64le or s390x machine code\n");
        return -1;
    }
    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        perror("mmap");
        return -1;
    }
    memcpy(page, frameless_code, sizeof frameless_code);
#if defined(__x86_64__)
    memcpy(page + 64, framed_code, sizeof framed_code);
#endif
    __builtin___clear_cache((char *)page, (char *)page + 4096);
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0) {
        perror("mprotect");
        return -1;
    }
    set_function(frameless, page, sizeof frameless_code);
    if (frameless_cfi(&frameless->cfi) != 0)
        return -1;
#if defined(__x86_64__)
    set_function(framed, page + 64, sizeof framed_code);
    if (framed_cfi(&framed->cfi) != 0)
        return -1;
#endif
    return 0;
}

int jit_relocate(jit_function *f)
{
    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        perror("mmap");
        return -1;
    }
    uint8_t *at = page + 128; /* not the old page offset: a real move */
    memcpy(at, f->addr, f->size);
    __builtin___clear_cache((char *)page, (char *)page + 4096);
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0) {
        perror("mprotect");
        return -1;
    }
    if (jf_move(f->addr, at) != 0) {
        fprintf(stderr, "jf_move: %s\n", jf_last_error());
        return -1;
    }
    uintptr_t old_page = (uintptr_t)f->addr & ~(uintptr_t)4095;
    if (mprotect((void *)old_page, 4096, PROT_NONE) != 0) {
        perror("mprotect old page");
        return -1;
    }
    set_function(f, at, f->size);
    return 0;
}

jf_region jit_region(const jit_function *f, const char *name)
{
    jf_region r = JF_REGION_INIT;
    r.addr = f->addr;
    r.size = f->size;
    r.name = name;
    r.cfi = f->cfi;
    return r;
}

int jit_contains(const jit_function *f, const void *pc)
{
    uintptr_t p = (uintptr_t)pc, a = (uintptr_t)f->addr;
    return p >= a && p < a + f->size;
}

int jit_setup(unsigned sinks, jit_callback tramp_target, jit_function *frameless, jit_function *tramp)
{
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = sinks;
    if (jf_init(&cfg) != 0) {
        fprintf(stderr, "jf_init: %s\n", jf_last_error());
        return -1;
    }
    jit_function framed;
    if (jit_make(frameless, &framed) != 0)
        return -1;
    jf_cfi_free(framed.cfi); /* only the frameless one is used here */
    jf_region r = jit_region(frameless, "jit_frameless");
    if (jf_register(&r) != 0) {
        fprintf(stderr, "jf_register: %s\n", jf_last_error());
        return -1;
    }
    jf_fn target, entry;
    memcpy(&target, &tramp_target, sizeof target);
    if (jf_trampoline_create(target, "jit_trampoline", NULL, &entry) != 0) {
        fprintf(stderr, "jf_trampoline_create: %s\n", jf_last_error());
        return -1;
    }
    memset(tramp, 0, sizeof *tramp);
    memcpy(&tramp->call, &entry, sizeof tramp->call);
    memcpy(&tramp->addr, &entry, sizeof tramp->addr);
    tramp->size = JIT_TRAMPOLINE_CODE;
    return 0;
}
