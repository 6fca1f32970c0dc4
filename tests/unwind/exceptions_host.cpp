/*
 * A C++ exception thrown in a C++ callback travels through a frameless JIT
 * function and a trampoline and is caught by the C++ caller:
 *   main -> run_and_catch [try] -> [jit frameless] -> callback_a
 *        -> [jit trampoline] -> callback_b [throw]
 * Each case runs in a child process:
 *   with the unwind sink     the exception is caught (exit 0), and again
 *                            after the JIT function is moved (jf_move);
 *   without (negative)       the unwinder finds no FDE for the JIT frames and
 *                            calls std::terminate (SIGABRT).
 * Usage: exceptions_host [llvm]   (llvm: assert LLVM libunwind is the
 * unwinder in global scope, so the exceptions go through it)
 */
#include "jit_code.h"
#include "frames.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

static jit_function jit, tramp;

extern "C" __attribute__((noinline)) long callback_b(long x)
{
    if (x > 0)
        throw std::runtime_error("thrown below the JIT frames");
    return x;
}

extern "C" __attribute__((noinline)) long callback_a(long x)
{
    return tramp.call(x + 1) + 1;
}

/* 0 if the exception was caught here, 1 if the call returned normally. */
static __attribute__((noinline)) int run_and_catch(void)
{
    try {
        jit.fn(callback_a, 1);
    } catch (const std::runtime_error &e) {
        fprintf(stderr, "caught: %s\n", e.what());
        return 0;
    }
    return 1;
}

/* The child's whole life: set up, throw, exit 0 if caught. */
static int child_main(bool with_sink, bool moved)
{
    if (jit_setup(with_sink ? JF_SINK_UNWIND : 0, callback_b, &jit, &tramp) != 0)
        return 3;
    int rc = run_and_catch();
    if (rc == 0 && moved) { /* a collector moves the code: the rules follow it */
        if (jit_relocate(&jit) != 0)
            return 3;
        rc = run_and_catch();
    }
    jf_unregister(jit.addr);
    jf_trampoline_destroy(reinterpret_cast<jf_fn>(tramp.call));
    jf_shutdown();
    return rc;
}

/* Run one case in a child; returns its wait status. */
static int run_case(bool with_sink, bool moved)
{
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core); /* the negative case aborts on purpose */
        _exit(child_main(with_sink, moved));
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    return status;
}

int main(int argc, char **argv)
{
    int failures = 0;
    /* (Not _Unwind_RaiseException: ASan intercepts it in the executable.) */
    const char *lib = library_of(RTLD_DEFAULT, "_Unwind_GetIP");
    const char *reg = library_of(RTLD_DEFAULT, "__register_frame");
    fprintf(stderr, "_Unwind_GetIP in global scope: %s, __register_frame: %s\n", lib ? lib : "none",
            reg ? reg : "none");
    if (argc > 1 && strcmp(argv[1], "llvm") == 0 &&
        !(lib && strstr(lib, "libunwind.so.1") && reg && strstr(reg, "libunwind.so.1"))) {
        fprintf(stderr, "FAIL: LLVM libunwind is not the unwinder in global scope\n");
        failures++;
    }

    for (int moved = 0; moved < 2; moved++) {
        int st = run_case(true, moved);
        bool caught = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        fprintf(stderr, "%s: with the unwind sink the exception is caught%s (status 0x%x)\n",
                caught ? "ok" : "FAIL", moved ? ", also after jf_move" : "", st);
        failures += !caught;
    }

    int st = run_case(false, false);
    bool terminated = WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
    fprintf(stderr, "%s: without the sink std::terminate aborts (status 0x%x)\n", terminated ? "ok" : "FAIL",
            st);
    failures += !terminated;

    fprintf(stderr, "%s\n", failures ? "FAILED" : "PASSED");
    return failures ? 1 : 0;
}
