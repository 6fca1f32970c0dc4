/*
 * minivm's call path, in process: every interpreted call goes through the
 * callee's entry pointer (so a trampoline there sees every call), runtime
 * errors unwind through entries, and jit.c attaches trampolines only when a
 * sink is on, falling back to direct calls when jitframes cannot start.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "arena.h"
#include "compiler.h"
#include "jit.h"
#include "parser.h"
#include "vm.h"

#include <jitframes.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char fib_program[] = "fn fib(n) {\n"
                                  "    if (n < 2) { return n; }\n"
                                  "    return fib(n - 1) + fib(n - 2);\n"
                                  "}\n"
                                  "fn main() { print(fib(arg(0))); return 7; }\n";

static const char failing_program[] = "fn inner(x) { return 10 / x; }\n"
                                      "fn outer(x) { return inner(x - 1); }\n"
                                      "fn main() { return outer(1); }\n";

static void compile(const char *text, struct mvm_program *prog, struct mvm_diag *diag)
{
    struct mvm_arena arena = MVM_ARENA_INIT;
    struct mvm_ast ast;
    mvm_diag_init(diag, "test.mvm");
    assert_int_equal(mvm_parse(text, strlen(text), &arena, diag, &ast), 0);
    assert_int_equal(mvm_compile(&ast, diag, prog), 0);
    mvm_arena_free(&arena);
}

/* Run main() with one argument, output to a memory stream; returns main's result. */
static int run(struct mvm_program *prog, struct mvm_diag *diag, int64_t arg, char *out, size_t out_size,
               int64_t *result)
{
    FILE *f = fmemopen(out, out_size, "w");
    assert_non_null(f);
    struct mvm_vm vm;
    assert_int_equal(mvm_vm_init(&vm, prog, MVM_DEFAULT_MAX_DEPTH, diag, f, &arg, 1), 0);
    int rc = mvm_vm_run(&vm, result);
    mvm_vm_free(&vm);
    fclose(f);
    return rc;
}

/* A stand-in for a trampoline: counts calls per function, then evaluates. */
static uint64_t calls_seen[8];
static const struct mvm_program *counted_program;

static int64_t counting_entry(struct mvm_vm *vm, const struct mvm_function *fn, int64_t *args)
{
    calls_seen[fn - counted_program->functions]++;
    return mvm_eval_function(vm, fn, args);
}

/* Compile `text` with every function entered through counting_entry. */
static void compile_counted(const char *text, struct mvm_program *prog, struct mvm_diag *diag)
{
    compile(text, prog, diag);
    counted_program = prog;
    memset(calls_seen, 0, sizeof calls_seen);
    for (uint32_t i = 0; i < prog->n_functions; i++)
        prog->functions[i].entry = counting_entry;
}

static void every_interpreted_call_goes_through_the_entry(void **state)
{
    (void)state;
    struct mvm_program prog;
    struct mvm_diag diag;
    compile_counted(fib_program, &prog, &diag);
    char out[64] = {0};
    int64_t result;
    assert_int_equal(run(&prog, &diag, 10, out, sizeof out, &result), 0);
    assert_string_equal(out, "55\n");
    assert_int_equal(result, 7);
    assert_int_equal(calls_seen[0], 177); /* fib(10) makes 177 calls of fib */
    assert_int_equal(calls_seen[prog.main_index], 1);
    mvm_program_free(&prog);
}

static void runtime_error_unwinds_through_entries(void **state)
{
    (void)state;
    struct mvm_program prog;
    struct mvm_diag diag;
    compile_counted(failing_program, &prog, &diag);
    char out[64] = {0};
    int64_t result;
    assert_int_equal(run(&prog, &diag, 0, out, sizeof out, &result), -1);
    assert_int_equal(diag.kind, MVM_DIAG_RUNTIME);
    assert_string_equal(diag.message, "division by zero: 10 / 0");
    assert_int_equal(diag.pos.line, 1);
    assert_int_equal(diag.n_trace, 2);
    assert_string_equal(diag.trace[0].function, "outer");
    assert_string_equal(diag.trace[1].function, "main");
    assert_int_equal(calls_seen[0] + calls_seen[1] + calls_seen[2], 3);
    mvm_program_free(&prog);
}

/* No sink: the published table can still show the trampolines to a reader
 * outside (`jitframes record PID`), so they are made. */
static void jit_without_sinks_makes_trampolines_for_the_published_table(void **state)
{
    (void)state;
    struct mvm_program prog;
    struct mvm_diag diag;
    compile(fib_program, &prog, &diag);
    unsetenv("JITFRAMES");
    struct mvm_jit jit;
    char why[256] = "";
#ifdef MVM_HAVE_TRAMPOLINES
    assert_int_equal(mvm_jit_attach(&jit, &prog, "test.mvm", why, sizeof why), MVM_JIT_ON);
    assert_string_equal(why, "");
    assert_int_equal(jit.n_trampolines, prog.n_functions);
    for (uint32_t i = 0; i < prog.n_functions; i++)
        assert_ptr_not_equal(prog.functions[i].entry, mvm_eval_function);
#else
    assert_int_equal(mvm_jit_attach(&jit, &prog, "test.mvm", why, sizeof why), MVM_JIT_OFF);
#endif
    mvm_jit_detach(&jit, &prog);
    mvm_program_free(&prog);
}

static void jit_falls_back_when_jitframes_cannot_start(void **state)
{
    (void)state;
    struct mvm_program prog;
    struct mvm_diag diag;
    compile(fib_program, &prog, &diag);
    setenv("JITFRAMES", "no-such-sink", 1);
    struct mvm_jit jit;
    char why[256] = "";
    assert_int_equal(mvm_jit_attach(&jit, &prog, "test.mvm", why, sizeof why), MVM_JIT_FAILED);
    assert_non_null(strstr(why, "jf_init failed"));
    for (uint32_t i = 0; i < prog.n_functions; i++)
        assert_ptr_equal(prog.functions[i].entry, mvm_eval_function);
    char out[64] = {0};
    int64_t result;
    assert_int_equal(run(&prog, &diag, 12, out, sizeof out, &result), 0);
    assert_string_equal(out, "144\n");
    mvm_jit_detach(&jit, &prog);
    unsetenv("JITFRAMES");
    mvm_program_free(&prog);
}

#ifdef MVM_HAVE_TRAMPOLINES
/* With a sink on, each function gets its own trampoline; results do not change. */
static void jit_with_perfmap_calls_through_trampolines(void **state)
{
    (void)state;
    struct mvm_program prog;
    struct mvm_diag diag;
    compile(fib_program, &prog, &diag);
    setenv("JITFRAMES", "perfmap", 1);
    struct mvm_jit jit;
    char why[256] = "";
    assert_int_equal(mvm_jit_attach(&jit, &prog, "test.mvm", why, sizeof why), MVM_JIT_ON);
    assert_int_equal(jit.n_trampolines, prog.n_functions);
    assert_ptr_not_equal(prog.functions[0].entry, mvm_eval_function);
    assert_ptr_not_equal(prog.functions[1].entry, mvm_eval_function);
    assert_ptr_not_equal(prog.functions[0].entry, prog.functions[1].entry);
    char out[64] = {0};
    int64_t result;
    assert_int_equal(run(&prog, &diag, 20, out, sizeof out, &result), 0);
    assert_string_equal(out, "6765\n");
    assert_int_equal(result, 7);
    mvm_jit_detach(&jit, &prog);
    for (uint32_t i = 0; i < prog.n_functions; i++)
        assert_ptr_equal(prog.functions[i].entry, mvm_eval_function);
    unsetenv("JITFRAMES");
    char map[64];
    snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
    unlink(map);
    mvm_program_free(&prog);
}

/* JITFRAMES=perfmap,jitdump with a missing JITFRAMES_DIR: jitframes is
 * initialised with the perf map (JF_ESINK): minivm goes on with it, says
 * which sink is off, writes its map, and balances jf_init on detach. */
static void jit_goes_on_with_the_sinks_that_started(void **state)
{
    (void)state;
    struct mvm_program prog;
    struct mvm_diag diag;
    compile(fib_program, &prog, &diag);
    setenv("JITFRAMES", "perfmap,jitdump", 1);
    setenv("JITFRAMES_DIR", "/nonexistent-minivm-dir", 1);
    char map[64];
    snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
    unlink(map);
    struct mvm_jit jit;
    char why[256] = "";
    assert_int_equal(mvm_jit_attach(&jit, &prog, "test.mvm", why, sizeof why), MVM_JIT_ON);
    assert_non_null(strstr(why, "jitdump"));
    assert_int_equal(jit.n_trampolines, prog.n_functions);
    assert_int_equal(jf_enabled_sinks(), JF_SINK_PERFMAP);
    mvm_jit_detach(&jit, &prog);
    assert_int_equal(jf_shutdown(), JF_ENOTINIT); /* balanced by detach */
    FILE *f = fopen(map, "r");
    assert_non_null(f);
    char line[256] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_non_null(strstr(line, "mvm:"));
    unsetenv("JITFRAMES");
    unsetenv("JITFRAMES_DIR");
    unlink(map);
    mvm_program_free(&prog);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_interpreted_call_goes_through_the_entry),
        cmocka_unit_test(runtime_error_unwinds_through_entries),
        cmocka_unit_test(jit_without_sinks_makes_trampolines_for_the_published_table),
        cmocka_unit_test(jit_falls_back_when_jitframes_cannot_start),
#ifdef MVM_HAVE_TRAMPOLINES
        cmocka_unit_test(jit_with_perfmap_calls_through_trampolines),
        cmocka_unit_test(jit_goes_on_with_the_sinks_that_started),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
