/*
 * s390x: the caller's r15 past frameless JIT code that moved r15 without
 * storing it, as libgcc's _Unwind_Backtrace finds it from a signal handler
 * (the only way such code is under other frames: it calls nothing).
 * There the caller's r15 is CFA - 160, and libgcc does not derive it from
 * the CFA (it does only on targets with EH_RETURN_STACKADJ_RTX, s390 has
 * none): an r15 without a rule is taken as unchanged, wrong by the frame.
 *   code: aghi %r15,-48; an illegal instruction (SIGILL, r15 moved);
 *         aghi %r15,48; br %r14
 * Usage: frameless_signal_host helper|raw
 *   helper  described with jf_cfi_add_frameless: the handler's walk must go
 *           [jit frameless] -> call_frameless -> main
 *   raw     negative control: the same CFA rules from the raw rule calls,
 *           without r15's: the walk must lose main
 */
#define _GNU_SOURCE
#include "frames.h"

#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

long call_frameless(long (*code)(long)); /* exported: dladdr names it */

static const uint8_t code[] = {
    0xa7, 0xfb, 0xff, 0xd0, /* 0: aghi %r15,-48 */
    0x00, 0x00,             /* 4: illegal       */
    0xa7, 0xfb, 0x00, 0x30, /* 6: aghi %r15,48  */
    0x07, 0xfe,             /* a: br   %r14     */
};
enum { MOVED_FROM = 4, MOVED_TO = 0xa, ENTRY_CFA = 160, FRAME = 48 };

static jit_function jit;
static sigjmp_buf after_fault;
static frame_walk fault_walk;

static _Unwind_Reason_Code record(struct _Unwind_Context *ctx, void *arg)
{
    frame_walk *w = arg;
    if (w->n == MAX_FRAMES)
        return _URC_END_OF_STACK;
    w->pcs[w->n++] = (void *)_Unwind_GetIP(ctx);
    return _URC_NO_REASON;
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
    (void)sig, (void)info, (void)context;
    fault_walk.n = 0;
    _Unwind_Backtrace(record, &fault_walk);
    siglongjmp(after_fault, 1);
}

__attribute__((noinline)) long call_frameless(long (*fn)(long))
{
    return fn(1) + 1;
}

/* Entry and exit at the entry CFA, the stretch between with r15 moved. */
static int describe(jf_cfi *c, int raw)
{
    if (!raw)
        return jf_cfi_add_frameless(c, 0, MOVED_FROM, ENTRY_CFA) ||
               jf_cfi_add_frameless(c, MOVED_FROM, MOVED_TO, ENTRY_CFA + FRAME) ||
               jf_cfi_add_frameless(c, MOVED_TO, sizeof code, ENTRY_CFA);
    return jf_cfi_begin_fde(c, 0, sizeof code) || jf_cfi_advance_to(c, MOVED_FROM) ||
           jf_cfi_def_cfa_offset(c, ENTRY_CFA + FRAME) || jf_cfi_advance_to(c, MOVED_TO) ||
           jf_cfi_def_cfa_offset(c, ENTRY_CFA);
}

/* The code in an executable page, registered with the unwind sink. */
static int make_code(int raw)
{
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_UNWIND;
    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (jf_init(&cfg) != 0 || page == MAP_FAILED)
        return -1;
    memcpy(page, code, sizeof code);
    __builtin___clear_cache((char *)page, (char *)page + sizeof code);
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0 || jf_cfi_new(&jit.cfi) != 0 ||
        describe(jit.cfi, raw))
        return -1;
    jit.addr = page;
    jit.size = sizeof code;
    jf_region r = jit_region(&jit, "jit_frameless");
    return jf_register(&r);
}

int main(int argc, char **argv)
{
    int raw = argc > 1 && strcmp(argv[1], "raw") == 0;
    if (make_code(raw) != 0) {
        fprintf(stderr, "FAIL: setting up the JIT code: %s\n", jf_last_error());
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGILL, &sa, NULL);
    long (*fn)(long);
    const void *entry = jit.addr;
    memcpy(&fn, &entry, sizeof fn);
    if (!sigsetjmp(after_fault, 1))
        call_frameless(fn);
    static const char *const chain[] = {"[jit frameless]", "call_frameless", "main"};
    int full = walk_has_in_order(&fault_walk, raw ? "without r15's rule" : "jf_cfi_add_frameless", chain, 3,
                                 &jit, NULL);
    if (raw ? full || !walk_has(&fault_walk, "call_frameless", &jit, NULL) : !full) {
        fprintf(stderr, "FAIL: _Unwind_Backtrace from the SIGILL handler %s main\n",
                full ? "reached" : "lost");
        return 1;
    }
    fprintf(stderr, "ok: _Unwind_Backtrace past frameless code with r15 moved %s\n",
            raw ? "loses main without r15's rule (negative control)" : "reaches main");
    return 0;
}
