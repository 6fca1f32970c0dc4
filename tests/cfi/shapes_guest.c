/*
 * Guest half of the cross-architecture shape test (aarch64, riscv64,
 * ppc64le, s390x; built static, run under qemu-user). For each sample function and each of its
 * instructions k, run a copy whose instruction k is replaced by a trap: the
 * handler records the machine state just before instruction k (pc, sp, fp,
 * return-address register and 16 stack words from sp) and jumps back out.
 * The host half (test_cfi_shapes_check) unwinds each state with the CFI
 * the shape helpers build and compares against the state at entry.
 *
 * call_code (assembly too) records the caller's sp, fp and return address
 * right before each call: what unwinding the function must give back.
 *
 * Output, one line per state: NAME OFFSET SP FP RA ENTRY_SP ENTRY_FP ENTRY_RA
 * W0..W15 (hex), OFFSET the instruction's byte offset in the function.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#if defined(__aarch64__)
#define TRAP_INSN 0xd4200000u /* brk #0 */
__asm__(".text\n.balign 4\n"
        ".globl shape_framed\nshape_framed:\n"
        "  stp x29, x30, [sp, #-16]!\n"
        "  mov x29, sp\n"
        "  sub sp, sp, #32\n"
        "  mov x0, #7\n"
        "  mov sp, x29\n"
        "  ldp x29, x30, [sp], #16\n"
        "  ret\n"
        ".globl shape_framed_end\nshape_framed_end:\n"
        ".globl shape_frameless\nshape_frameless:\n"
        "  sub sp, sp, #48\n"
        "  mov x0, #9\n"
        "  nop\n"
        "  add sp, sp, #48\n"
        "  ret\n"
        ".globl shape_frameless_end\nshape_frameless_end:\n"
        ".globl call_code\ncall_code:\n"
        "  stp x29, x30, [sp, #-16]!\n"
        "  mov x29, sp\n"
        "  adrp x1, entry_state\n"
        "  add x1, x1, :lo12:entry_state\n"
        "  mov x2, sp\n"
        "  str x2, [x1]\n"
        "  str x29, [x1, #8]\n"
        "  adr x3, 1f\n"
        "  str x3, [x1, #16]\n"
        "  blr x0\n"
        "1: ldp x29, x30, [sp], #16\n"
        "  ret\n");
#elif defined(__riscv) && __riscv_xlen == 64
#define TRAP_INSN 0x00100073u /* ebreak */
__asm__(".text\n.balign 4\n.option push\n.option norvc\n"
        ".globl shape_framed\nshape_framed:\n"
        "  addi sp, sp, -16\n"
        "  sd ra, 8(sp)\n"
        "  sd s0, 0(sp)\n"
        "  addi s0, sp, 16\n"
        "  addi sp, sp, -32\n"
        "  li a0, 7\n"
        "  addi sp, s0, -16\n"
        "  ld ra, 8(sp)\n"
        "  ld s0, 0(sp)\n"
        "  addi sp, sp, 16\n"
        "  ret\n"
        ".globl shape_framed_end\nshape_framed_end:\n"
        ".globl shape_frameless\nshape_frameless:\n"
        "  addi sp, sp, -48\n"
        "  li a0, 9\n"
        "  nop\n"
        "  addi sp, sp, 48\n"
        "  ret\n"
        ".globl shape_frameless_end\nshape_frameless_end:\n"
        ".globl call_code\ncall_code:\n"
        "  addi sp, sp, -16\n"
        "  sd ra, 8(sp)\n"
        "  sd s0, 0(sp)\n"
        "  addi s0, sp, 16\n"
        "  la t0, entry_state\n"
        "  sd sp, 0(t0)\n"
        "  sd s0, 8(t0)\n"
        "  la t1, 1f\n"
        "  sd t1, 16(t0)\n"
        "  jalr ra, 0(a0)\n"
        "1: ld ra, 8(sp)\n"
        "  ld s0, 0(sp)\n"
        "  addi sp, sp, 16\n"
        "  ret\n"
        ".option pop\n");
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
/* No framed shape: ppc64le has no frame record for jf_cfi_add_standard_frame
 * (JF_ENOTSUP there). call_code finds entry_state through the TOC (r2). */
#define TRAP_INSN 0x7fe00008u /* trap */
__asm__(".text\n.balign 4\n"
        ".globl shape_framed\nshape_framed:\n"
        ".globl shape_framed_end\nshape_framed_end:\n"
        ".globl shape_frameless\nshape_frameless:\n"
        "  addi 1, 1, -48\n"
        "  li 3, 9\n"
        "  nop\n"
        "  addi 1, 1, 48\n"
        "  blr\n"
        ".globl shape_frameless_end\nshape_frameless_end:\n"
        ".globl call_code\ncall_code:\n"
        "  mflr 0\n"
        "  std 0, 16(1)\n"
        "  stdu 1, -32(1)\n"
        "  addis 5, 2, entry_state@toc@ha\n"
        "  addi 5, 5, entry_state@toc@l\n"
        "  std 1, 0(5)\n"
        "  std 31, 8(5)\n"
        "  bcl 20, 31, 1f\n"
        "1: mflr 6\n"
        "  addi 6, 6, 2f - 1b\n"
        "  std 6, 16(5)\n"
        "  mr 12, 3\n"
        "  mtctr 12\n"
        "  bctrl\n"
        "2: addi 1, 1, 32\n"
        "  ld 0, 16(1)\n"
        "  mtlr 0\n"
        "  blr\n");
#elif defined(__s390x__)
/* No framed shape either. Instructions of 2 and 4 bytes: the trap is the
 * 2-byte illegal opcode 0x0000 over the instruction's first halfword, and
 * INSN_OFFSETS says where each instruction starts. */
#define TRAP_INSN 0x0000u
#define TRAP_SIZE 2
#define TRAP_PC_AFTER 1 /* the PSW in the signal context points past it */
static const size_t frameless_offsets[] = {0, 4, 8, 10, 14};
#define INSN_OFFSETS frameless_offsets
__asm__(".text\n.balign 8\n"
        ".globl shape_framed\nshape_framed:\n"
        ".globl shape_framed_end\nshape_framed_end:\n"
        ".globl shape_frameless\nshape_frameless:\n"
        "  aghi %r15, -48\n"
        "  lghi %r2, 9\n"
        "  nopr %r0\n"
        "  aghi %r15, 48\n"
        "  br %r14\n"
        ".globl shape_frameless_end\nshape_frameless_end:\n"
        ".globl call_code\ncall_code:\n"
        "  stmg %r14, %r15, 112(%r15)\n"
        "  aghi %r15, -160\n"
        "  larl %r1, entry_state\n"
        "  stg %r15, 0(%r1)\n"
        "  stg %r11, 8(%r1)\n"
        "  larl %r3, 1f\n"
        "  stg %r3, 16(%r1)\n"
        "  basr %r14, %r2\n"
        "1: lmg %r14, %r15, 272(%r15)\n"
        "  br %r14\n");
#else
#error "shapes_guest: aarch64, riscv64, ppc64le or s390x only"
#endif
#ifndef TRAP_SIZE
#define TRAP_SIZE 4
#define TRAP_PC_AFTER 0
#endif

extern const uint8_t shape_framed[], shape_framed_end[], shape_frameless[], shape_frameless_end[];
extern void call_code(void (*fn)(void));
uint64_t entry_state[3]; /* sp, fp, return address at the call; written by call_code */

#define WORDS 16

static sigjmp_buf back;
static struct {
    uint64_t pc, sp, fp, ra;
    uint64_t words[WORDS];
} state;

static void on_trap(int sig, siginfo_t *info, void *ctx)
{
    (void)sig, (void)info;
    ucontext_t *uc = ctx;
#if defined(__aarch64__)
    state.pc = uc->uc_mcontext.pc;
    state.sp = uc->uc_mcontext.sp;
    state.fp = uc->uc_mcontext.regs[29];
    state.ra = uc->uc_mcontext.regs[30];
#elif defined(__powerpc64__)
    state.pc = uc->uc_mcontext.gp_regs[32]; /* PT_NIP */
    state.sp = uc->uc_mcontext.gp_regs[1];
    state.fp = uc->uc_mcontext.gp_regs[31];
    state.ra = uc->uc_mcontext.gp_regs[36]; /* PT_LNK */
#elif defined(__s390x__)
    state.pc = uc->uc_mcontext.psw.addr;
    state.sp = uc->uc_mcontext.gregs[15];
    state.fp = uc->uc_mcontext.gregs[11];
    state.ra = uc->uc_mcontext.gregs[14];
#else
    state.pc = uc->uc_mcontext.__gregs[REG_PC];
    state.sp = uc->uc_mcontext.__gregs[REG_SP];
    state.fp = uc->uc_mcontext.__gregs[REG_S0];
    state.ra = uc->uc_mcontext.__gregs[REG_RA];
#endif
    memcpy(state.words, (const void *)(uintptr_t)state.sp, sizeof state.words);
    siglongjmp(back, 1);
}

/* Byte offset of instruction k, or -1 past the last one. */
static long insn_offset(size_t k, size_t size)
{
#ifdef INSN_OFFSETS
    return k < sizeof INSN_OFFSETS / sizeof INSN_OFFSETS[0] && INSN_OFFSETS[k] < size ? (long)INSN_OFFSETS[k]
                                                                                      : -1;
#else
    return 4 * k < size ? (long)(4 * k) : -1;
#endif
}

static int run_with_trap(uint8_t *page, const uint8_t *code, size_t size, size_t at)
{
    uint32_t trap = TRAP_INSN;
    if (mprotect(page, 4096, PROT_READ | PROT_WRITE) != 0)
        return -1;
    memcpy(page, code, size);
    memcpy(page + at, &trap, TRAP_SIZE); /* s390x: 0x0000 either way round */
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
        return -1;
    __builtin___clear_cache((char *)page, (char *)page + size);
    if (sigsetjmp(back, 1) == 0) {
        call_code((void (*)(void))(uintptr_t)page);
        return -1; /* the trap was not reached */
    }
    return state.pc == (uint64_t)(uintptr_t)(page + at + TRAP_PC_AFTER * TRAP_SIZE) ? 0 : -1;
}

static int record(const char *name, uint8_t *page, const uint8_t *code, size_t size)
{
    long at;
    for (size_t k = 0; (at = insn_offset(k, size)) >= 0; k++) {
        if (run_with_trap(page, code, size, (size_t)at) != 0) {
            fprintf(stderr, "%s: trap at offset %ld not taken where expected (pc %#llx, page %p)\n", name, at,
                    (unsigned long long)state.pc, (void *)page);
            return -1;
        }
        printf("%s %ld %llx %llx %llx %llx %llx %llx", name, at, (unsigned long long)state.sp,
               (unsigned long long)state.fp, (unsigned long long)state.ra, (unsigned long long)entry_state[0],
               (unsigned long long)entry_state[1], (unsigned long long)entry_state[2]);
        for (int i = 0; i < WORDS; i++)
            printf(" %llx", (unsigned long long)state.words[i]);
        printf("\n");
    }
    return 0;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGTRAP, &sa, NULL);
    sigaction(SIGILL, &sa, NULL);
    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 1;
    if (record("framed", page, shape_framed, (size_t)(shape_framed_end - shape_framed)) != 0 ||
        record("frameless", page, shape_frameless, (size_t)(shape_frameless_end - shape_frameless)) != 0)
        return 1;
    return 0;
}
