/*
 * ppc64le only: glibc backtrace() through a JIT frame that keeps its return
 * address in its own frame, not in the ABI's LR save word at 16(r1) of its
 * caller's frame, which then holds whatever an earlier call left there.
 *   main -> run_chain -> [jit frameless] -> callback -> backtrace()
 *
 * glibc 2.36's backtrace() is libgcc's _Unwind_Backtrace. With the unwind
 * sink it unwinds the JIT frame by its CFI and finds run_chain. Without it,
 * DWARF runs out at the JIT frame and libgcc (gcc 11 and later, glibc's
 * backtrace() only) falls back to the back chain, taking each return address
 * from that LR save word: here a stale one, planted by the JIT code from its
 * third argument so the test is deterministic. A stale code address names a
 * wrong frame; one that is not mapped makes libgcc fault reading the
 * instructions there (SIGSEGV). Each walk runs in a child process.
 *
 * Usage: backtrace_lr_slot_host with|without decoy|unmapped. Exit 0 when:
 *   with     the walk is right: callback, [jit frameless], run_chain, main,
 *            and the child exits normally, whatever the stale word;
 *   without  the walk is not right: the child died of SIGSEGV, or run_chain
 *            is missing (decoy: decoy_function stands in its place).
 */
#define _GNU_SOURCE
#include "frames.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* Exported (see tests/cross/CMakeLists.txt) so that dladdr names them. */
long callback(long x);
long run_chain(long x);
void decoy_function(void);

typedef long (*lr_slot_fn)(jit_callback cb, long arg, uintptr_t stale);

#if defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
#define INSN(w) (uint8_t)(w), (uint8_t)((w) >> 8), (uint8_t)((w) >> 16), (uint8_t)((w) >> 24)
enum { LR_REG = 65 };
static const uint8_t lr_in_own_frame_code[] = {
    INSN(0x7c0802a6u), /*  0: mflr  r0         */
    INSN(0xf8a10010u), /*  4: std   r5,16(r1)  the caller's LR save word: stale */
    INSN(0xf821ffd1u), /*  8: stdu  r1,-48(r1) */
    INSN(0xf8010020u), /* 12: std   r0,32(r1)  LR in our own frame (CFA - 16) */
    INSN(0xf8410018u), /* 16: std   r2,24(r1)  */
    INSN(0x7c6c1b78u), /* 20: mr    r12,r3     */
    INSN(0x7d8903a6u), /* 24: mtctr r12        */
    INSN(0x7c832378u), /* 28: mr    r3,r4      */
    INSN(0x4e800421u), /* 32: bctrl            */
    INSN(0xe8410018u), /* 36: ld    r2,24(r1)  */
    INSN(0xe8010020u), /* 40: ld    r0,32(r1)  */
    INSN(0x38210030u), /* 44: addi  r1,r1,48   */
    INSN(0x7c0803a6u), /* 48: mtlr  r0         */
    INSN(0x4e800020u), /* 52: blr              */
};

static int add_rules(jf_cfi *c)
{
    int rc = jf_cfi_begin_fde(c, 0, sizeof lr_in_own_frame_code);
    rc = rc ? rc : jf_cfi_advance_to(c, 12);
    rc = rc ? rc : jf_cfi_def_cfa_offset(c, 48);
    rc = rc ? rc : jf_cfi_advance_to(c, 16);
    rc = rc ? rc : jf_cfi_offset(c, LR_REG, -16);
    rc = rc ? rc : jf_cfi_advance_to(c, 48);
    rc = rc ? rc : jf_cfi_def_cfa_offset(c, 0);
    rc = rc ? rc : jf_cfi_advance_to(c, 52);
    return rc ? rc : jf_cfi_restore(c, LR_REG);
}
#else
#error "backtrace_lr_slot_host is ppc64le machine code"
#endif

static jit_function jit;
static lr_slot_fn jit_fn;
static uintptr_t stale_word;
static int with_sink;

__attribute__((noinline)) void decoy_function(void)
{
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) long callback(long x)
{
    frame_walk w;
    walk_with_backtrace(&w);
    static const char *const right[] = {"callback", "[jit frameless]", "run_chain", "main"};
    int is_right = walk_has_in_order(&w, "backtrace()", right, 4, &jit, NULL);
    int has_decoy = walk_has(&w, "decoy_function", &jit, NULL);
    fprintf(stderr, "backtrace() is %s%s\n", is_right ? "right" : "wrong",
            has_decoy ? ", names decoy_function" : "");
    /* Exit status for the parent: 0 right, 1 wrong. */
    fflush(stderr);
    _exit(is_right && !has_decoy ? 0 : 1);
    return x;
}

__attribute__((noinline)) long run_chain(long x)
{
    return jit_fn(callback, x, stale_word) + 1;
}

/* Write the code into executable memory and register it with its CFI. */
static int make_jit(void)
{
    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED || jf_cfi_new(&jit.cfi) != 0 || add_rules(jit.cfi) != 0) {
        fprintf(stderr, "FAIL: JIT code: %s\n", jf_last_error());
        return -1;
    }
    memcpy(page, lr_in_own_frame_code, sizeof lr_in_own_frame_code);
    __builtin___clear_cache((char *)page, (char *)page + 4096);
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
        return -1;
    void *p = page;
    memcpy(&jit_fn, &p, sizeof jit_fn);
    jit.addr = page;
    jit.size = sizeof lr_in_own_frame_code;
    jf_region r = jit_region(&jit, "jit_lr_in_own_frame");
    if (jf_register(&r) != 0) {
        fprintf(stderr, "FAIL: jf_register: %s\n", jf_last_error());
        return -1;
    }
    return 0;
}

/* A code address that is not run_chain's, or one nothing is mapped at. */
static uintptr_t stale_value(const char *kind)
{
    if (strcmp(kind, "decoy") == 0) {
        void (*f)(void) = decoy_function;
        uintptr_t a;
        memcpy(&a, &f, sizeof a);
        return a + 8; /* past the global entry point: inside decoy_function */
    }
    void *hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return hole == MAP_FAILED ? 0 : (uintptr_t)hole + 64;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "with") && strcmp(argv[1], "without")) ||
        (strcmp(argv[2], "decoy") && strcmp(argv[2], "unmapped"))) {
        fprintf(stderr, "usage: %s with|without decoy|unmapped\n", argv[0]);
        return 2;
    }
    with_sink = strcmp(argv[1], "with") == 0;
    stale_word = stale_value(argv[2]);
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV | JF_CONFIG_NO_TABLE;
    cfg.sinks = with_sink ? JF_SINK_UNWIND : 0;
    if (!stale_word || jf_init(&cfg) != 0 || make_jit() != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        struct rlimit no_core = {0, 0}; /* the expected SIGSEGV leaves no core file */
        setrlimit(RLIMIT_CORE, &no_core);
        run_chain(1);
        _exit(3); /* callback exits */
    }
    int status;
    if (child < 0 || waitpid(child, &status, 0) != child)
        return 1;
    int crashed = WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
    int right = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    int wrong = WIFEXITED(status) && WEXITSTATUS(status) == 1;
    fprintf(stderr, "child: %s\n", crashed ? "SIGSEGV" : right ? "right walk" : wrong ? "wrong walk" : "?");
    int ok = with_sink ? right : (crashed || wrong);
    fprintf(stderr, "%s: backtrace() %s the unwind sink, stale LR save word (%s)\n", ok ? "ok" : "FAIL",
            with_sink ? "with" : "without", argv[2]);
    jf_cfi_free(jit.cfi);
    jf_shutdown();
    return ok ? 0 : 1;
}
