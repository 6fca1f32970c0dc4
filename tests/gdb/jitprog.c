/*
 * The program the gdb/lldb tests debug: a tiny "JIT" that copies
 * hand-assembled functions into executable memory, describes them to
 * jitframes (names, lines, CFI) with the gdb sink on, and calls them from
 * noinline C functions. Stops come from int3 in the JIT code, or from a
 * signal delivered while JIT code spins.
 *
 * Before each call it sets `expect_tail` to the C frames a correct backtrace
 * must show under the JIT frames (down to main), and exports the regions in
 * `jit_regions` so the gdb scripts can check every frame without guessing.
 *
 * Usage: jitprog MODE   (see the modes table at the bottom)
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))

/* ---- what the debugger scripts read ------------------------------------ */

/* A JIT region, or (end == start) a trampoline, whose size the library
 * keeps to itself: the scripts know those by name. */
typedef struct jit_region_info {
    uintptr_t start;
    uintptr_t end;
    const char *name;
} jit_region_info;

enum { MAX_REGIONS = 32 };
jit_region_info jit_regions[MAX_REGIONS];
int n_jit_regions;
/* Entry points of every JIT function (a region may hold several). */
uintptr_t jit_entries[MAX_REGIONS];
int n_jit_entries;
/* C frames expected under the JIT frames, innermost first. */
const char *volatile expect_tail = "";
/* An address whose region was unregistered. */
void *volatile jit_dead_addr;
/* Where jit_frameless was before jf_move took it elsewhere. */
void *volatile jit_moved_from;
volatile long spin_flag;
/* Wrong-CFI negative control (JITPROG_WRONG_CFI): the frameless function's
 * early exit is described wrongly. */
static int wrong_early_exit_cfi;

void checkpoint(const char *what);
long call_jit(void *code, long arg);
void run_one(void *code, long arg, const char *what);
void run_spin(void *code);
int run(const char *mode);

/* A place for gdb breakpoints between phases. */
NOINLINE void checkpoint(const char *what)
{
    __asm__ volatile("" ::"r"(what) : "memory");
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "jitprog: %s: %s (%s)\n", what, jf_strerror(rc), jf_last_error());
    exit(2);
}

/* ---- the JIT's code ----------------------------------------------------- */

/* One function template: bytes (TRAP_MARK where a breakpoint may go) and a
 * routine describing its CFI at a given offset. */
typedef struct fn_template {
    const char *name;
    const uint8_t *code;
    size_t size;
    size_t trap_at; /* offset of the trap-or-nop byte */
    void (*cfi)(jf_cfi *cfi, size_t at);
} fn_template;

static void check(int rc, const char *what)
{
    if (rc)
        die(what, rc);
}

#if defined(__x86_64__)
#define TRAP 0xcc
#define NOP 0x90

/* Framed: push rbp; mov rbp,rsp; <trap>; pop rbp; ret */
static const uint8_t framed_code[] = {0x55, 0x48, 0x89, 0xe5, NOP, 0x5d, 0xc3};

static void framed_cfi(jf_cfi *c, size_t at)
{
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.start = at;
    f.end = at + sizeof framed_code;
    f.after_push = at + 1;
    f.after_fp_set = at + 4;
    f.epilogue_start = at + 5;
    f.after_pop = at + 6;
    check(jf_cfi_add_standard_frame(c, &f), "framed cfi");
}

/* Frameless, callee-saved pushes, two exits (rdi == 0 takes the early one):
 *  0 push rbx; 1 push r12; 3 sub rsp,24; 7 <trap>; 8 test rdi,rdi; b je 15
 *  d add rsp,24; 11 pop r12; 13 pop rbx; 14 ret
 * 15 add rsp,24; 19 pop r12; 1b pop rbx; 1c ret */
static const uint8_t frameless_code[] = {
    0x53, 0x41, 0x54, 0x48, 0x83, 0xec, 0x18, NOP,  0x48, 0x85, 0xff, 0x74, 0x08, 0x48, 0x83,
    0xc4, 0x18, 0x41, 0x5c, 0x5b, 0xc3, 0x48, 0x83, 0xc4, 0x18, 0x41, 0x5c, 0x5b, 0xc3,
};

/* The unwind rules after the epilogue's stack pops. */
static void frameless_epilogue(jf_cfi *c, size_t at)
{
    check(jf_cfi_advance_to(c, at + 4), "advance");
    check(jf_cfi_def_cfa_offset(c, 24), "cfa");
    check(jf_cfi_advance_to(c, at + 6), "advance");
    check(jf_cfi_def_cfa_offset(c, 16), "cfa");
    check(jf_cfi_restore(c, 12), "restore r12");
    check(jf_cfi_advance_to(c, at + 7), "advance");
    check(jf_cfi_def_cfa_offset(c, 8), "cfa");
    check(jf_cfi_restore(c, 3), "restore rbx");
}

/* Negative control: describe the early exit wrongly (no remember/restore). */
static void frameless_cfi(jf_cfi *c, size_t at)
{
    check(jf_cfi_begin_fde(c, at, at + sizeof frameless_code), "fde");
    check(jf_cfi_advance_to(c, at + 1), "advance");
    check(jf_cfi_def_cfa_offset(c, 16), "cfa");
    check(jf_cfi_offset(c, 3, -16), "rbx");
    check(jf_cfi_advance_to(c, at + 3), "advance");
    check(jf_cfi_def_cfa_offset(c, 24), "cfa");
    check(jf_cfi_offset(c, 12, -24), "r12");
    check(jf_cfi_advance_to(c, at + 7), "advance");
    check(jf_cfi_def_cfa_offset(c, 48), "cfa");
    check(jf_cfi_advance_to(c, at + 0xd), "advance");
    if (!wrong_early_exit_cfi)
        check(jf_cfi_remember_state(c), "remember");
    frameless_epilogue(c, at + 0xd);
    if (!wrong_early_exit_cfi) {
        check(jf_cfi_advance_to(c, at + 0x15), "advance");
        check(jf_cfi_restore_state(c), "restore state");
    }
    frameless_epilogue(c, at + 0x15);
}

/* Two functions in one region, one FDE each: A (frameless) calls B (framed).
 *  0 sub rsp,8; 4 call B(0x20); 9 add rsp,8; d ret; ... 20: B = framed_code */
static const uint8_t multi_code[] = {
    0x48, 0x83, 0xec, 0x08, 0xe8, 0x17, 0x00, 0x00, 0x00, 0x48, 0x83, 0xc4, 0x08,
    0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
    0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0x55, 0x48, 0x89, 0xe5, NOP,  0x5d, 0xc3,
};
#define MULTI_B 0x20

static void multi_cfi(jf_cfi *c, size_t at)
{
    check(jf_cfi_add_frameless(c, at, at + 4, 8), "multi A entry");
    check(jf_cfi_add_frameless(c, at + 4, at + 9, 16), "multi A body");
    check(jf_cfi_add_frameless(c, at + 9, at + 0xd, 16), "multi A epilogue");
    check(jf_cfi_add_frameless(c, at + 0xd, at + 0xe, 8), "multi A ret");
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.start = at + MULTI_B;
    f.end = at + sizeof multi_code;
    f.after_push = at + MULTI_B + 1;
    f.after_fp_set = at + MULTI_B + 4;
    f.epilogue_start = at + MULTI_B + 5;
    f.after_pop = at + MULTI_B + 6;
    check(jf_cfi_add_standard_frame(c, &f), "multi B");
}

/* Spins while *rdi == 0, frameless with a callee-saved push:
 *  0 push rbx; 1 sub rsp,16; 5 mov rax,[rdi]; 8 test rax,rax; b je 5
 *  d add rsp,16; 11 pop rbx; 12 ret */
static const uint8_t spin_code[] = {
    0x53, 0x48, 0x83, 0xec, 0x10, 0x48, 0x8b, 0x07, 0x48, 0x85,
    0xc0, 0x74, 0xf8, 0x48, 0x83, 0xc4, 0x10, 0x5b, 0xc3,
};

static void spin_cfi(jf_cfi *c, size_t at)
{
    check(jf_cfi_begin_fde(c, at, at + sizeof spin_code), "fde");
    check(jf_cfi_advance_to(c, at + 1), "advance");
    check(jf_cfi_def_cfa_offset(c, 16), "cfa");
    check(jf_cfi_offset(c, 3, -16), "rbx");
    check(jf_cfi_advance_to(c, at + 5), "advance");
    check(jf_cfi_def_cfa_offset(c, 32), "cfa");
    check(jf_cfi_advance_to(c, at + 0x11), "advance");
    check(jf_cfi_def_cfa_offset(c, 16), "cfa");
    check(jf_cfi_advance_to(c, at + 0x12), "advance");
    check(jf_cfi_def_cfa_offset(c, 8), "cfa");
    check(jf_cfi_restore(c, 3), "rbx");
}

#define FRAMED_TRAP 4
#define FRAMELESS_TRAP 7
#define MULTI_TRAP (MULTI_B + 4)
#define HAVE_JIT 1
#endif

/* The other architectures run under qemu for the single-step test only: no
 * trap slots (TRAP_NONE); the instructions as 32-bit little-endian words,
 * s390x's as big-endian bytes. */
#define TRAP_NONE ((size_t)-1)

#if defined(__aarch64__)
#define TRAP 0
#define NOP 0
#define FRAMED_TRAP TRAP_NONE
#define FRAMELESS_TRAP TRAP_NONE
#define MULTI_TRAP TRAP_NONE
enum { X19 = 19, X20 = 20, X29 = 29, X30 = 30 };

/* stp x29,x30,[sp,#-16]!; mov x29,sp; nop; ldp x29,x30,[sp],#16; ret */
static const uint32_t framed_words[] = {0xa9bf7bfd, 0x910003fd, 0xd503201f, 0xa8c17bfd, 0xd65f03c0};

static void standard_frame_at(jf_cfi *c, size_t at)
{
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.start = at;
    f.end = at + sizeof framed_words;
    f.after_push = at + 4;
    f.after_fp_set = at + 8;
    f.epilogue_start = at + 12;
    f.after_pop = at + 16;
    check(jf_cfi_add_standard_frame(c, &f), "standard frame");
}

/*  0 stp x19,x20,[sp,#-32]!; 4 sub sp,sp,#16; 8 nop; c cbz x0,1c
 * 10 add sp,sp,#16; 14 ldp x19,x20,[sp],#32; 18 ret
 * 1c add sp,sp,#16; 20 ldp x19,x20,[sp],#32; 24 ret */
static const uint32_t frameless_words[] = {
    0xa9be53f3, 0xd10043ff, 0xd503201f, 0xb4000080, 0x910043ff,
    0xa8c253f3, 0xd65f03c0, 0x910043ff, 0xa8c253f3, 0xd65f03c0,
};

static void frameless_epilogue(jf_cfi *c, size_t at)
{
    check(jf_cfi_advance_to(c, at + 4), "advance");
    check(jf_cfi_def_cfa_offset(c, 32), "cfa");
    check(jf_cfi_advance_to(c, at + 8), "advance");
    check(jf_cfi_def_cfa_offset(c, 0), "cfa");
    check(jf_cfi_restore(c, X19), "restore");
    check(jf_cfi_restore(c, X20), "restore");
}

static void frameless_prologue(jf_cfi *c, size_t at)
{
    check(jf_cfi_advance_to(c, at + 4), "advance");
    check(jf_cfi_def_cfa_offset(c, 32), "cfa");
    check(jf_cfi_offset(c, X19, -32), "x19");
    check(jf_cfi_offset(c, X20, -24), "x20");
    check(jf_cfi_advance_to(c, at + 8), "advance");
    check(jf_cfi_def_cfa_offset(c, 48), "cfa");
}
#define FRAMELESS_EPILOGUES 0x10, 0x1c

/* A: 0 stp x29,x30,[sp,#-16]!; 4 bl B; 8 ldp x29,x30,[sp],#16; c ret; brk x4
 * B (0x20): the framed function */
static const uint32_t multi_words[] = {
    0xa9bf7bfd, 0x94000007, 0xa8c17bfd, 0xd65f03c0, 0xd4200000, 0xd4200000, 0xd4200000,
    0xd4200000, 0xa9bf7bfd, 0x910003fd, 0xd503201f, 0xa8c17bfd, 0xd65f03c0,
};
#define MULTI_B 0x20

static void multi_a_cfi(jf_cfi *c, size_t at)
{
    check(jf_cfi_begin_fde(c, at, at + 16), "fde");
    check(jf_cfi_advance_to(c, at + 4), "advance");
    check(jf_cfi_def_cfa_offset(c, 16), "cfa");
    check(jf_cfi_offset(c, X29, -16), "x29");
    check(jf_cfi_offset(c, X30, -8), "x30");
    check(jf_cfi_advance_to(c, at + 12), "advance");
    check(jf_cfi_def_cfa_offset(c, 0), "cfa");
    check(jf_cfi_restore(c, X29), "restore");
    check(jf_cfi_restore(c, X30), "restore");
}

/* 0 sub sp,sp,#16; 4 ldr x1,[x0]; 8 cbz x1,4; c add sp,sp,#16; 10 ret */
static const uint32_t spin_words[] = {0xd10043ff, 0xf9400001, 0xb4ffffe1, 0x910043ff, 0xd65f03c0};
#define SPIN_POP 0xc
#define SPIN_END 0x14
#define HAVE_WORD_JIT 1
#endif

#if defined(__riscv) && __riscv_xlen == 64
#define TRAP 0
#define NOP 0
#define FRAMED_TRAP TRAP_NONE
#define FRAMELESS_TRAP TRAP_NONE
#define MULTI_TRAP TRAP_NONE
enum { RA = 1, S1 = 9, S2 = 18 };

/* addi sp,sp,-16; sd ra,8(sp); sd s0,0(sp); addi s0,sp,16; nop;
 * ld ra,8(sp); ld s0,0(sp); addi sp,sp,16; ret */
static const uint32_t framed_words[] = {0xff010113, 0x00113423, 0x00813023, 0x01010413, 0x00000013,
                                        0x00813083, 0x00013403, 0x01010113, 0x00008067};

static void standard_frame_at(jf_cfi *c, size_t at)
{
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.start = at;
    f.end = at + sizeof framed_words;
    f.after_push = at + 4;
    f.after_fp_set = at + 16;
    f.epilogue_start = at + 20;
    f.after_pop = at + 32;
    check(jf_cfi_add_standard_frame(c, &f), "standard frame");
}

/*  0 addi sp,sp,-32; 4 sd s1,24(sp); 8 sd s2,16(sp); c nop; 10 beqz a0,24
 * 14 ld s1,24(sp); 18 ld s2,16(sp); 1c addi sp,sp,32; 20 ret
 * 24 ld s1,24(sp); 28 ld s2,16(sp); 2c addi sp,sp,32; 30 ret */
static const uint32_t frameless_words[] = {
    0xfe010113, 0x00913c23, 0x01213823, 0x00000013, 0x00050a63, 0x01813483, 0x01013903,
    0x02010113, 0x00008067, 0x01813483, 0x01013903, 0x02010113, 0x00008067,
};

/* Frame size, the two saved registers and their CFA offsets (see below). */
enum { FL_FRAME = 32, FL_REG_A = S1, FL_OFF_A = -8, FL_REG_B = S2, FL_OFF_B = -16 };
#define FRAMELESS_EPILOGUES 0x14, 0x24
#define HAVE_PAIR_FRAMELESS 1

/* A: 0 addi sp,sp,-16; 4 sd ra,8(sp); 8 jal B; c ld ra,8(sp); 10 addi sp,sp,16;
 * 14 ret; ebreak x2. B (0x20): the framed function */
static const uint32_t multi_words[] = {
    0xff010113, 0x00113423, 0x018000ef, 0x00813083, 0x01010113, 0x00008067,
    0x00100073, 0x00100073, 0xff010113, 0x00113423, 0x00813023, 0x01010413,
    0x00000013, 0x00813083, 0x00013403, 0x01010113, 0x00008067,
};
#define MULTI_B 0x20

static void multi_a_cfi(jf_cfi *c, size_t at)
{
    check(jf_cfi_begin_fde(c, at, at + 0x18), "fde");
    check(jf_cfi_advance_to(c, at + 4), "advance");
    check(jf_cfi_def_cfa_offset(c, 16), "cfa");
    check(jf_cfi_advance_to(c, at + 8), "advance");
    check(jf_cfi_offset(c, RA, -8), "ra");
    check(jf_cfi_advance_to(c, at + 0x10), "advance");
    check(jf_cfi_restore(c, RA), "restore");
    check(jf_cfi_advance_to(c, at + 0x14), "advance");
    check(jf_cfi_def_cfa_offset(c, 0), "cfa");
}

/* 0 addi sp,sp,-16; 4 ld a1,0(a0); 8 beqz a1,4; c addi sp,sp,16; 10 ret */
static const uint32_t spin_words[] = {0xff010113, 0x00053583, 0xfe058ee3, 0x01010113, 0x00008067};
#define SPIN_POP 0xc
#define SPIN_END 0x14
#define HAVE_WORD_JIT 1
#endif

#if defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
#define TRAP 0
#define NOP 0
#define FRAMED_TRAP TRAP_NONE
#define FRAMELESS_TRAP TRAP_NONE
#define MULTI_TRAP TRAP_NONE
enum { R30 = 30, R31 = 31, LR = 65 };

/* The ELFv2 frame: LR into the caller's frame at 16(r1), a back chain.
 * mflr r0; std r0,16(r1); stdu r1,-32(r1); nop; addi r1,r1,32;
 * ld r0,16(r1); mtlr r0; blr */
static const uint32_t framed_words[] = {0x7c0802a6, 0xf8010010, 0xf821ffe1, 0x60000000,
                                        0x38210020, 0xe8010010, 0x7c0803a6, 0x4e800020};

/* jf_cfi_add_standard_frame has no ppc64le shape (no frame record): the
 * rules by hand. The saved LR stays valid until mtlr puts it back. */
static void ppc_frame_at(jf_cfi *c, size_t at)
{
    size_t pop = at + 16; /* the addi r1 */
    check(jf_cfi_advance_to(c, at + 8), "advance");
    check(jf_cfi_offset(c, LR, 16), "lr");
    check(jf_cfi_advance_to(c, at + 12), "advance");
    check(jf_cfi_def_cfa_offset(c, 32), "cfa");
    check(jf_cfi_advance_to(c, pop + 4), "advance");
    check(jf_cfi_def_cfa_offset(c, 0), "cfa");
    check(jf_cfi_advance_to(c, pop + 12), "advance");
    check(jf_cfi_restore(c, LR), "restore");
}

static void standard_frame_at(jf_cfi *c, size_t at)
{
    check(jf_cfi_begin_fde(c, at, at + sizeof framed_words), "fde");
    ppc_frame_at(c, at);
}

/*  0 addi r1,r1,-48; 4 std r30,32(r1); 8 std r31,40(r1); c nop; 10 cmpdi r3,0;
 * 14 beq 28; 18 ld r30,32(r1); 1c ld r31,40(r1); 20 addi r1,r1,48; 24 blr
 * 28 ld r30,32(r1); 2c ld r31,40(r1); 30 addi r1,r1,48; 34 blr */
static const uint32_t frameless_words[] = {
    0x3821ffd0, 0xfbc10020, 0xfbe10028, 0x60000000, 0x2c230000, 0x41820014, 0xebc10020,
    0xebe10028, 0x38210030, 0x4e800020, 0xebc10020, 0xebe10028, 0x38210030, 0x4e800020,
};

enum { FL_FRAME = 48, FL_REG_A = R30, FL_OFF_A = -16, FL_REG_B = R31, FL_OFF_B = -8 };
#define FRAMELESS_EPILOGUES 0x18, 0x28
#define HAVE_PAIR_FRAMELESS 1

/* A: the framed shape with bl B (0x20) in place of its nop. B: the framed function */
static const uint32_t multi_words[] = {
    0x7c0802a6, 0xf8010010, 0xf821ffe1, 0x48000015, 0x38210020, 0xe8010010, 0x7c0803a6, 0x4e800020,
    0x7c0802a6, 0xf8010010, 0xf821ffe1, 0x60000000, 0x38210020, 0xe8010010, 0x7c0803a6, 0x4e800020,
};
#define MULTI_B 0x20

static void multi_a_cfi(jf_cfi *c, size_t at)
{
    check(jf_cfi_begin_fde(c, at, at + MULTI_B), "fde");
    ppc_frame_at(c, at);
}

/* 0 addi r1,r1,-16; 4 ld r4,0(r3); 8 cmpdi r4,0; c beq 4; 10 addi r1,r1,16; 14 blr */
static const uint32_t spin_words[] = {0x3821fff0, 0xe8830000, 0x2c240000, 0x4182fff8, 0x38210010, 0x4e800020};
#define SPIN_POP 0x10
#define SPIN_END 0x18
#define HAVE_WORD_JIT 1
#endif

#ifdef HAVE_PAIR_FRAMELESS
/* riscv64 and ppc64le's frameless shape: the stack pointer moved by FL_FRAME,
 * then two registers stored one instruction apart; restored in the same
 * order, then the stack pointer. */
static void frameless_epilogue(jf_cfi *c, size_t at)
{
    check(jf_cfi_advance_to(c, at + 4), "advance");
    check(jf_cfi_restore(c, FL_REG_A), "restore");
    check(jf_cfi_advance_to(c, at + 8), "advance");
    check(jf_cfi_restore(c, FL_REG_B), "restore");
    check(jf_cfi_advance_to(c, at + 12), "advance");
    check(jf_cfi_def_cfa_offset(c, 0), "cfa");
}

static void frameless_prologue(jf_cfi *c, size_t at)
{
    check(jf_cfi_advance_to(c, at + 4), "advance");
    check(jf_cfi_def_cfa_offset(c, FL_FRAME), "cfa");
    check(jf_cfi_advance_to(c, at + 8), "advance");
    check(jf_cfi_offset(c, FL_REG_A, FL_OFF_A), "first saved register");
    check(jf_cfi_advance_to(c, at + 12), "advance");
    check(jf_cfi_offset(c, FL_REG_B, FL_OFF_B), "second saved register");
}
#endif

#if defined(__s390x__)
#define TRAP 0
#define NOP 0
#define FRAMED_TRAP TRAP_NONE
#define FRAMELESS_TRAP TRAP_NONE
#define MULTI_TRAP TRAP_NONE
enum { R14 = 14, R15 = 15 };
/* Big-endian instructions of 2, 4 or 6 bytes. The functions with a frame
 * store r15 (stmg ..%r15) and describe it; the frameless one moves r15
 * without storing it. */

/* 0 stmg r14,r15,112(r15); 6 aghi r15,-160; a nop; e lmg r14,r15,272(r15); 14 br r14 */
static const uint8_t framed_code[] = {
    0xeb, 0xef, 0xf0, 0x70, 0x00, 0x24, 0xa7, 0xfb, 0xff, 0x60, 0x47,
    0x00, 0x00, 0x00, 0xeb, 0xef, 0xf1, 0x10, 0x00, 0x04, 0x07, 0xfe,
};

/* r14, r15 in the caller's save area, a 160-byte frame until after the lmg
 * at `lmg` (which ends at + lmg + 6); the FDE covers [at, at + size). */
static void save_area_frame(jf_cfi *c, size_t at, size_t size, size_t lmg)
{
    check(jf_cfi_begin_fde(c, at, at + size), "fde");
    check(jf_cfi_advance_to(c, at + 6), "advance");
    check(jf_cfi_offset(c, R14, -48), "r14");
    check(jf_cfi_offset(c, R15, -40), "r15");
    check(jf_cfi_advance_to(c, at + 10), "advance");
    check(jf_cfi_def_cfa_offset(c, 320), "cfa");
    check(jf_cfi_advance_to(c, at + lmg + 6), "advance");
    check(jf_cfi_def_cfa_offset(c, 160), "cfa");
    check(jf_cfi_restore(c, R14), "restore");
    check(jf_cfi_restore(c, R15), "restore");
}

static void standard_frame_at(jf_cfi *c, size_t at)
{
    save_area_frame(c, at, sizeof framed_code, 0xe);
}

/* Frameless: r15 moved by 48 and never stored, as a leaf that needs a little
 * stack does. 0 aghi r15,-48; 4 nopr; 6 cghi r2,0; a je 14; e aghi r15,48;
 * 12 br r14; 14 aghi r15,48; 18 br r14 */
static const uint8_t frameless_code[] = {
    0xa7, 0xfb, 0xff, 0xd0, 0x07, 0x00, 0xa7, 0x2f, 0x00, 0x00, 0xa7, 0x84, 0x00,
    0x05, 0xa7, 0xfb, 0x00, 0x30, 0x07, 0xfe, 0xa7, 0xfb, 0x00, 0x30, 0x07, 0xfe,
};

/* jf_cfi_add_frameless per stretch of one stack depth: with r15 moved it
 * gives the caller's r15 as CFA - 160 (s390x's unwinders take an r15
 * without a rule as unchanged). The wrong-CFI control describes the early
 * exit's aghi as if r15 were back already. */
static void frameless_cfi(jf_cfi *c, size_t at)
{
    static const struct {
        size_t from, to, moved;
    } spans[] = {{0, 4, 0}, {4, 0x12, 48}, {0x12, 0x14, 0}, {0x14, 0x18, 48}, {0x18, 0x1a, 0}};
    for (size_t i = 0; i < sizeof spans / sizeof spans[0]; i++) {
        size_t moved = wrong_early_exit_cfi && spans[i].from == 0x14 ? 0 : spans[i].moved;
        check(jf_cfi_add_frameless(c, at + spans[i].from, at + spans[i].to, 160 + (int64_t)moved),
              "frameless");
    }
}
#define HAVE_ARCH_FRAMELESS_CFI 1

/* A: 0 stmg r14,r15,112(r15); 6 aghi r15,-160; a brasl r14,B; 10 lmg; 16 br r14;
 * 18 four illegal halfwords. B (0x20): the framed function */
static const uint8_t multi_code[] = {
    0xeb, 0xef, 0xf0, 0x70, 0x00, 0x24, 0xa7, 0xfb, 0xff, 0x60, 0xc0, 0xe5, 0x00, 0x00,
    0x00, 0x0b, 0xeb, 0xef, 0xf1, 0x10, 0x00, 0x04, 0x07, 0xfe, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0xeb, 0xef, 0xf0, 0x70, 0x00, 0x24, 0xa7, 0xfb, 0xff, 0x60,
    0x47, 0x00, 0x00, 0x00, 0xeb, 0xef, 0xf1, 0x10, 0x00, 0x04, 0x07, 0xfe,
};
#define MULTI_B 0x20

static void multi_a_cfi(jf_cfi *c, size_t at)
{
    save_area_frame(c, at, 0x18, 0x10);
}

/* 0 stmg r14,r15,112(r15); 6 aghi r15,-160; a lg r3,0(r2); 10 cghi r3,0; 14 je a;
 * 18 lmg r14,r15,272(r15); 1e br r14 */
static const uint8_t spin_code[] = {
    0xeb, 0xef, 0xf0, 0x70, 0x00, 0x24, 0xa7, 0xfb, 0xff, 0x60, 0xe3, 0x30, 0x20, 0x00, 0x00, 0x04,
    0xa7, 0x3f, 0x00, 0x00, 0xa7, 0x84, 0xff, 0xfb, 0xeb, 0xef, 0xf1, 0x10, 0x00, 0x04, 0x07, 0xfe,
};

static void spin_cfi(jf_cfi *c, size_t at)
{
    save_area_frame(c, at, sizeof spin_code, 0x18);
}
#define HAVE_ARCH_SPIN_CFI 1
#define HAVE_SHAPED_JIT 1
#endif

#ifdef HAVE_WORD_JIT
/* Instructions as bytes (these targets are little-endian). */
#define framed_code ((const uint8_t *)framed_words)
#define frameless_code ((const uint8_t *)frameless_words)
#define multi_code ((const uint8_t *)multi_words)
#define spin_code ((const uint8_t *)spin_words)
#define CODE_SIZE(name) sizeof name##_words
#define HAVE_SHAPED_JIT 1
#else
#define CODE_SIZE(name) sizeof name##_code
#endif

#ifdef HAVE_SHAPED_JIT
static void framed_cfi(jf_cfi *c, size_t at)
{
    standard_frame_at(c, at);
}

#ifndef HAVE_ARCH_FRAMELESS_CFI
static void frameless_cfi(jf_cfi *c, size_t at)
{
    static const size_t epilogues[2] = {FRAMELESS_EPILOGUES};
    check(jf_cfi_begin_fde(c, at, at + CODE_SIZE(frameless)), "fde");
    frameless_prologue(c, at);
    check(jf_cfi_advance_to(c, at + epilogues[0]), "advance");
    if (!wrong_early_exit_cfi)
        check(jf_cfi_remember_state(c), "remember");
    frameless_epilogue(c, at + epilogues[0]);
    if (!wrong_early_exit_cfi) {
        check(jf_cfi_advance_to(c, at + epilogues[1]), "advance");
        check(jf_cfi_restore_state(c), "restore state");
    }
    frameless_epilogue(c, at + epilogues[1]);
}
#endif

static void multi_cfi(jf_cfi *c, size_t at)
{
    multi_a_cfi(c, at);
    standard_frame_at(c, at + MULTI_B);
}

#ifndef HAVE_ARCH_SPIN_CFI
static void spin_cfi(jf_cfi *c, size_t at)
{
    check(jf_cfi_begin_fde(c, at, at + SPIN_END), "fde");
    check(jf_cfi_advance_to(c, at + 4), "advance");
    check(jf_cfi_def_cfa_offset(c, 16), "cfa");
    check(jf_cfi_advance_to(c, at + SPIN_POP + 4), "advance");
    check(jf_cfi_def_cfa_offset(c, 0), "cfa");
}
#endif
#define HAVE_JIT 1
#endif

#ifdef HAVE_JIT
static const fn_template framed_fn = {"jit_framed", framed_code, CODE_SIZE(framed), FRAMED_TRAP, framed_cfi};
static const fn_template frameless_fn = {"jit_frameless", frameless_code, CODE_SIZE(frameless),
                                         FRAMELESS_TRAP, frameless_cfi};
static const fn_template multi_fn = {"jit_multi", multi_code, CODE_SIZE(multi), MULTI_TRAP, multi_cfi};
static const fn_template spin_fn = {"jit_spin", spin_code, CODE_SIZE(spin), TRAP_NONE, spin_cfi};

/* ---- the code arena ------------------------------------------------------ */

static uint8_t *arena;
static size_t arena_used;
enum { ARENA_SIZE = 64 * 1024 };

static void arena_open(void)
{
    void *p = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    arena = p;
}

static void arena_seal(void)
{
    if (mprotect(arena, ARENA_SIZE, PROT_READ | PROT_EXEC) != 0) {
        perror("mprotect");
        exit(2);
    }
    __builtin___clear_cache((char *)arena, (char *)arena + ARENA_SIZE);
}

/* Copy a template into the arena (16-byte aligned), with a trap or not. */
static uint8_t *place(const fn_template *t, int trap)
{
    arena_used = (arena_used + 15) & ~(size_t)15;
    uint8_t *code = arena + arena_used;
    memcpy(code, t->code, t->size);
    if (t->trap_at != TRAP_NONE)
        code[t->trap_at] = trap ? TRAP : NOP;
    arena_used += t->size;
    return code;
}

static void note_region(const uint8_t *code, size_t size, const char *name)
{
    jit_region_info *i = &jit_regions[n_jit_regions++];
    i->start = (uintptr_t)code;
    i->end = (uintptr_t)code + size;
    i->name = name;
}

/* A region for template t placed at code, with its CFI (and lines if any). */
static jf_region region_for(const fn_template *t, const uint8_t *code, const char *name, jf_cfi **cfi)
{
    check(jf_cfi_new(cfi), "cfi");
    t->cfi(*cfi, 0);
    jf_region r = JF_REGION_INIT;
    r.addr = code;
    r.size = t->size;
    r.name = name;
    r.cfi = *cfi;
    note_region(code, t->size, name);
    jit_entries[n_jit_entries++] = (uintptr_t)code;
    return r;
}

/* A trampoline named `name` in front of JIT code. */
static void *trampoline_to(const uint8_t *code, const char *name)
{
    jf_fn entry;
    check(jf_trampoline_create((jf_fn)(uintptr_t)code, name, NULL, &entry), "trampoline");
    jit_region_info *i = &jit_regions[n_jit_regions++];
    i->start = i->end = (uintptr_t)entry;
    i->name = name;
    jit_entries[n_jit_entries++] = (uintptr_t)entry;
    return (void *)(uintptr_t)entry;
}

/* Enough single registrations that the sink merges the symfiles so far
 * (the line table's included): every check then runs on merged symfiles,
 * and the unregistration rebuilds one. */
enum { FILLERS = 8 };
static char filler_names[FILLERS][16];

static void register_fillers(uint8_t **fillers)
{
    for (int i = 0; i < FILLERS; i++) {
        snprintf(filler_names[i], sizeof filler_names[i], "jit_filler_%d", i);
        jf_cfi *cfi;
        jf_region r = region_for(&framed_fn, fillers[i], filler_names[i], &cfi);
        check(jf_register(&r), "register filler");
        jf_cfi_free(cfi);
    }
    struct jf_stats st = JF_STATS_INIT;
    check(jf_stats(&st), "stats");
    if (st.sink[2].objects >= 8) {
        fprintf(stderr, "jitprog: %llu symfiles: nothing was merged\n",
                (unsigned long long)st.sink[2].objects);
        exit(2);
    }
}

/* ---- callers ------------------------------------------------------------- */

typedef long (*jit_fn)(long arg);

NOINLINE long call_jit(void *code, long arg)
{
    long v = ((jit_fn)code)(arg);
    __asm__ volatile("" ::: "memory");
    return v;
}

NOINLINE void run_one(void *code, long arg, const char *what)
{
    expect_tail = "call_jit,run_one,run,main";
    checkpoint(what);
    call_jit(code, arg);
    __asm__ volatile("" ::: "memory");
}

static void *sender(void *arg)
{
    usleep(100 * 1000);
    pthread_kill(*(pthread_t *)arg, SIGUSR1);
    return NULL;
}

static void on_usr1(int sig)
{
    (void)sig;
    spin_flag = 1;
}

/* Run the spinning function until a signal (from another thread) stops it. */
NOINLINE void run_spin(void *code)
{
    signal(SIGUSR1, on_usr1);
    pthread_t self = pthread_self(), t;
    pthread_create(&t, NULL, sender, &self);
    expect_tail = "call_jit,run_spin,run,main";
    call_jit(code, (long)(uintptr_t)&spin_flag);
    pthread_join(t, NULL);
}

/* A collector moves a function: its code is copied into fresh memory (with
 * a trap in the copy when asked), jf_move says so, and the region table the
 * scripts read follows. Returns the new copy. */
static uint8_t *move_function(const fn_template *t, uint8_t *old, int trap)
{
    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    uint8_t *to = page + 256;
    memcpy(to, old, t->size);
    if (trap && t->trap_at != TRAP_NONE)
        to[t->trap_at] = TRAP;
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0) {
        perror("mprotect");
        exit(2);
    }
    __builtin___clear_cache((char *)page, (char *)page + 4096);
    check(jf_move(old, to), "jf_move");
    for (int i = 0; i < n_jit_regions; i++)
        if (jit_regions[i].start == (uintptr_t)old)
            jit_regions[i] = (jit_region_info){(uintptr_t)to, (uintptr_t)to + t->size, t->name};
    for (int i = 0; i < n_jit_entries; i++)
        if (jit_entries[i] == (uintptr_t)old)
            jit_entries[i] = (uintptr_t)to;
    jit_moved_from = old;
    return to;
}

/* A region with a line table: file jitprog.mini, lines 10-13. */
static void add_lines(jf_region *r)
{
    static const jf_line lines[] = {
        {0, 10, NULL},
        {4, 11, NULL},
        {5, 12, NULL},
        {6, 13, NULL},
    };
    r->file = "jitprog.mini";
    r->line = 10;
    r->lines = lines;
    r->n_lines = sizeof lines / sizeof lines[0];
}

NOINLINE int run(const char *mode)
{
    /* "traps": every function traps; "trap:NAME": only NAME; "step": none. */
    const char *only = strncmp(mode, "trap:", 5) == 0 ? mode + 5 : NULL;
    int traps = strcmp(mode, "traps") == 0;
    wrong_early_exit_cfi = getenv("JITPROG_WRONG_CFI") != NULL;
    arena_open();
    jf_config cfg = JF_CONFIG_INIT;
    cfg.sinks = getenv("JITPROG_NO_GDB") ? 0 : JF_SINK_GDB; /* negative controls */
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    check(jf_init(&cfg), "jf_init");

    uint8_t *framed = place(&framed_fn, traps || (only && !strcmp(only, "jit_framed")));
    uint8_t *frameless = place(&frameless_fn, traps || (only && !strcmp(only, "jit_frameless")));
    uint8_t *multi = place(&multi_fn, traps || (only && !strcmp(only, "jit_multi")));
    uint8_t *spin = place(&spin_fn, 0);
    uint8_t *doomed = place(&framed_fn, 0);
    uint8_t *fillers[FILLERS];
    for (int i = 0; i < FILLERS; i++)
        fillers[i] = place(&framed_fn, 0);
    arena_seal();

    jf_cfi *cfi[5];
    jf_region regions[4] = {
        region_for(&framed_fn, framed, "jit_framed", &cfi[0]),
        region_for(&frameless_fn, frameless, "jit_frameless", &cfi[1]),
        region_for(&multi_fn, multi, "jit_multi", &cfi[2]),
        region_for(&spin_fn, spin, "jit_spin", &cfi[3]),
    };
    jit_entries[n_jit_entries++] = (uintptr_t)multi + MULTI_B;
    add_lines(&regions[0]);
    check(jf_register_batch(regions, 2), "register batch");
    check(jf_register(&regions[2]), "register multi");
    check(jf_register(&regions[3]), "register spin");
    jf_region dead = region_for(&framed_fn, doomed, "jit_doomed", &cfi[4]);
    check(jf_register(&dead), "register doomed");
    register_fillers(fillers);
    for (int i = 0; i < 5; i++)
        jf_cfi_free(cfi[i]);

    void *tramp_framed = trampoline_to(framed, "tramp_framed");
    void *tramp_frameless = trampoline_to(frameless, "tramp_frameless");
    void *tramp_spin = trampoline_to(spin, "tramp_spin");

    run_one(framed, 0, "framed");
    run_one(frameless, 1, "frameless-main-exit");
    run_one(frameless, 0, "frameless-early-exit");
    run_one(multi, 0, "multi");
    if (strcmp(mode, "step") == 0) {
        run_one(tramp_frameless, 0, "trampoline-frameless");
    } else {
        run_one(tramp_framed, 0, "trampoline-framed");
        run_spin(tramp_spin);
    }

    check(jf_unregister(doomed), "unregister");
    jit_dead_addr = doomed;
    checkpoint("unregistered");
    if (strcmp(mode, "step") != 0) { /* "trap:moved": only the moved copy traps */
        uint8_t *moved = move_function(&frameless_fn, frameless, only && !strcmp(only, "moved"));
        run_one(moved, 1, "moved");
    }
    check(jf_shutdown(), "jf_shutdown");
    printf("jitprog: done\n");
    return 0;
}
#else
NOINLINE int run(const char *mode)
{
    (void)mode;
    fprintf(stderr, "jitprog: no JIT code for this architecture\n");
    return 77;
}
#endif

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "traps";
    if (strcmp(mode, "traps") != 0 && strcmp(mode, "step") != 0 && strncmp(mode, "trap:", 5) != 0) {
        fprintf(stderr, "usage: jitprog traps|trap:NAME|trap:moved|step\n");
        return 2;
    }
    int rc = run(mode);
    __asm__ volatile("" : "+r"(rc)); /* no tail call: main stays on the stack */
    return rc;
}
