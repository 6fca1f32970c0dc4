/*
 * A C host walking its stack through JIT code:
 *   main -> run_chain -> [jit frameless] -> callback_a -> [jit trampoline]
 *        -> callback_b -> backtrace() / _Unwind_Backtrace
 *
 * and, as a crash reporter does, from a SIGSEGV handler after callback_b
 * faults (the walk crosses the signal frame, then the JIT frames).
 * Usage: backtrace_host with|without plain|llvm|any
 *   with     the unwind sink is on: every frame down to main is found, by
 *            glibc backtrace() and by the _Unwind_Backtrace in global scope
 *            (if any), and by backtrace() in the crash handler; again after
 *            the JIT function is moved (jf_move, old page PROT_NONE); disabling
 *            the sink cuts the walk again, re-enabling restores it.
 *   without  negative control: no sink, the walk stops at the JIT code.
 *   plain    assert no unwinder is in global scope (libgcc_s is private to
 *            glibc's backtrace(), the case docs/formats.md describes)
 *   llvm     assert _Unwind_Backtrace in global scope is LLVM libunwind's
 * Exit 0 when everything matches the mode.
 *
 * On powerpc64 glibc's backtrace() is libgcc's _Unwind_Backtrace (DWARF:
 * the unwind sink's rules), and where DWARF runs out at a frame with no
 * rules libgcc falls back, for glibc's backtrace() only, to the ABI's back
 * chain, taking each return address from the LR save word at 16 of the next
 * frame up. These JIT frames and the trampolines store LR there, so without
 * the sink the walk still reaches main here (backtrace_lr_slot_host.c shows
 * a JIT frame that does not: a wrong walk or a SIGSEGV without the sink).
 * Under qemu-user (no vDSO) it loses the interrupted frame at a signal
 * frame. The other DWARF walks there, the crash handler's included, are
 * libgcc's _Unwind_Backtrace called directly (no back chain fallback),
 * loaded privately when it is not in global scope. Neither crosses
 * qemu-user's signal trampoline there (li r0,172; sc, without the kernel
 * vDSO's leading addi r1,r1,128 both look for): the crash walk is checked
 * only behind the kernel's.
 */
#define _GNU_SOURCE
#include "frames.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* Exported (see CMakeLists.txt) so that dladdr names their frames. */
long callback_b(long x);
long callback_a(long x);
long run_chain(long x);

static jit_function jit, tramp;
static int check_with_sink = 1;
static int failures;
/* Crash-reporter check: callback_b faults, the handler walks the stack. */
static volatile int crash_now;
static int *volatile crash_address;
static sigjmp_buf after_crash;
static frame_walk crash_walk;
#if defined(__powerpc64__)
enum { BACKTRACE_FALLS_BACK_TO_BACK_CHAIN = 1 };
#else
enum { BACKTRACE_FALLS_BACK_TO_BACK_CHAIN = 0 };
#endif
static void *dwarf_scope = RTLD_DEFAULT; /* where _Unwind_Backtrace is looked up */
static const void *signal_return;        /* the crash handler's return address */

static const char *const full_chain[] = {"callback_b",      "[jit trampoline]", "callback_a",
                                         "[jit frameless]", "run_chain",        "main"};
enum { FULL_CHAIN = sizeof full_chain / sizeof full_chain[0] };

static void expect(int ok, const char *what)
{
    fprintf(stderr, "%s: %s\n", ok ? "ok" : "FAIL", what);
    failures += !ok;
}

/* The walk reaches main through both JIT frames (expect_full) or stops
 * inside the JIT code: main and the frames below the trampoline are absent. */
static void check_walk(const frame_walk *w, const char *title, int expect_full)
{
    if (expect_full) {
        expect(walk_has_in_order(w, title, full_chain, FULL_CHAIN, &jit, &tramp), title);
        return;
    }
    walk_has_in_order(w, title, full_chain, 1, &jit, &tramp);
    expect(walk_has(w, "callback_b", &jit, &tramp) && !walk_has(w, "callback_a", &jit, &tramp) &&
               !walk_has(w, "main", &jit, &tramp),
           title);
}

__attribute__((noinline)) long callback_b(long x)
{
    if (crash_now)
        *crash_address = 1; /* SIGSEGV: a PROT_NONE page */
    frame_walk w;
    walk_with_backtrace(&w);
    if (BACKTRACE_FALLS_BACK_TO_BACK_CHAIN && !check_with_sink)
        check_walk(&w, "backtrace() walks through the JIT frames by libgcc's back chain fallback", 1);
    else
        check_walk(&w,
                   check_with_sink ? "backtrace() walks through the JIT frames"
                                   : "backtrace() stops at the JIT frames (no sink)",
                   check_with_sink);
    if (walk_with_unwind_backtrace(&w, dwarf_scope) == 0)
        check_walk(&w,
                   check_with_sink ? "_Unwind_Backtrace walks through the JIT frames"
                                   : "_Unwind_Backtrace stops at the JIT frames (no sink)",
                   check_with_sink);
    return x + 1;
}

__attribute__((noinline)) long callback_a(long x)
{
    return tramp.call(x + 1) + 1;
}

__attribute__((noinline)) long run_chain(long x)
{
    return jit.fn(callback_a, x) + 1;
}

static void on_crash(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)info;
    (void)context;
    signal_return = __builtin_return_address(0);
    if (BACKTRACE_FALLS_BACK_TO_BACK_CHAIN)
        walk_with_unwind_backtrace(&crash_walk, dwarf_scope);
    else
        walk_with_backtrace(&crash_walk); /* libgcc_s is loaded already */
    siglongjmp(after_crash, 1);
}

/* powerpc64: the kernel's rt_sigreturn trampoline, as libgcc recognizes it:
 * addi r1,r1,128; li r0,172 (rt_sigreturn); sc. */
static int kernel_signal_trampoline(const void *ra)
{
    static const uint32_t kernel[] = {0x38210080u, 0x380000acu, 0x44000002u};
    return ra && memcmp(ra, kernel, sizeof kernel) == 0;
}

/* Fault in callback_b and walk the stack from the SIGSEGV handler. */
static void check_crash_handler(int with)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old);
    void *guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    crash_address = guard;
    if (guard != MAP_FAILED && sigsetjmp(after_crash, 1) == 0) {
        crash_now = 1;
        run_chain(1);
        expect(0, "callback_b did not crash");
    }
    crash_now = 0;
    sigaction(SIGSEGV, &old, NULL);
    if (guard != MAP_FAILED)
        munmap(guard, 4096);
    if (BACKTRACE_FALLS_BACK_TO_BACK_CHAIN && !kernel_signal_trampoline(signal_return)) {
        fprintf(stderr,
                "note: the signal return trampoline at %p is not the kernel's "
                "(qemu-user): no unwinder crosses it, the crash walk is not checked\n",
                signal_return);
        return;
    }
    const char *walker = BACKTRACE_FALLS_BACK_TO_BACK_CHAIN ? "_Unwind_Backtrace" : "backtrace()";
    char title[128];
    snprintf(title, sizeof title, "a SIGSEGV handler's %s %s", walker,
             with ? "walks through the JIT frames" : "stops at the JIT frames (no sink)");
    check_walk(&crash_walk, title, with);
}

static void check_scope(const char *scope)
{
    const char *lib = library_of(RTLD_DEFAULT, "_Unwind_Backtrace");
    fprintf(stderr, "_Unwind_Backtrace in global scope: %s\n", lib ? lib : "none");
    if (strcmp(scope, "plain") == 0)
        expect(!lib && !dlsym(RTLD_DEFAULT, "__register_frame"), "plain C host: no unwinder in global scope");
    else if (strcmp(scope, "llvm") == 0)
        expect(lib && strstr(lib, "libunwind.so.1") && dlsym(RTLD_DEFAULT, "__unw_add_dynamic_fde"),
               "LLVM libunwind is the unwinder in global scope");
}

/* Disable the sink: the walk is cut again (the tables are gone); enable it:
 * the live regions are replayed and the walk is whole again. */
static void check_disable_enable(void)
{
    struct jf_stats st = JF_STATS_INIT;
    jf_stats(&st);
    /* The JIT code and the trampoline arena are in different windows (the
     * arena is mapped near its target) or share one table. */
    expect(st.sink[3].objects >= 1 && st.sink[3].objects <= 2, "one table per code window");
    expect(jf_disable(JF_SINK_UNWIND) == 0, "jf_disable(unwind)");
    jf_stats(&st);
    expect(st.sink[3].objects == 0, "no table registered after jf_disable");
    check_with_sink = 0;
    run_chain(1);
    expect(jf_enable(JF_SINK_UNWIND) == 0, "jf_enable(unwind) replays the live regions");
    check_with_sink = 1;
    run_chain(1);
    expect(jf_unregister(jit.addr) == 0 && jf_trampoline_destroy((jf_fn)tramp.call) == 0,
           "jf_unregister, jf_trampoline_destroy");
    jf_stats(&st);
    expect(st.sink[3].objects == 0, "no table registered after unregistering");
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "with") && strcmp(argv[1], "without"))) {
        fprintf(stderr, "usage: %s with|without plain|llvm|any\n", argv[0]);
        return 2;
    }
    int with = strcmp(argv[1], "with") == 0;
    check_scope(argv[2]);
    if (BACKTRACE_FALLS_BACK_TO_BACK_CHAIN && !dlsym(RTLD_DEFAULT, "_Unwind_Backtrace")) {
        dwarf_scope = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!dwarf_scope) {
            fprintf(stderr, "FAIL: dlopen libgcc_s.so.1: %s\n", dlerror());
            return 1;
        }
    }
    if (jit_setup(with ? JF_SINK_UNWIND : 0, callback_b, &jit, &tramp) != 0)
        return 1;
    check_with_sink = with;
    expect(run_chain(1) == 5, "the JIT code returns the callbacks' result");
    check_crash_handler(with);
    /* A collector moves the code (jf_move): the walks follow it. */
    expect(jit_relocate(&jit) == 0, "the frameless function moved");
    expect(run_chain(1) == 5, "the moved JIT code returns the callbacks' result");
    if (with)
        check_disable_enable();
    jf_cfi_free(jit.cfi);
    jf_shutdown();
    fprintf(stderr, "%s\n", failures ? "FAILED" : "PASSED");
    return failures ? 1 : 0;
}
