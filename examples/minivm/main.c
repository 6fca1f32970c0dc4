/*
 * minivm: run a program of the minivm language (README.md).
 *
 *   minivm [--no-jitframes] [--max-depth N] FILE [ARG...]
 *
 * Exit status: 0 on success, 1 when the program is bad (syntax, names, a
 * runtime error) or output fails, 2 on a usage error.
 */
#include "arena.h"
#include "compiler.h"
#include "diag.h"
#include "jit.h"
#include "parser.h"
#include "source.h"
#include "vm.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct options {
    int use_jitframes;
    uint32_t max_depth;
    const char *file;
    int64_t *args;
    uint32_t n_args;
};

/* Print the usage (to stderr after an error, else to stdout); returns exit status 2. */
static int usage(const char *error)
{
    FILE *out = error ? stderr : stdout;
    if (error)
        fprintf(stderr, "minivm: %s\n", error);
    fprintf(out, "usage: minivm [--no-jitframes] [--max-depth N] FILE [ARG...]\n"
                 "  ARGs are integers, read by the program with argc() and arg(i).\n"
                 "  With $JITFRAMES set (e.g. JITFRAMES=perfmap), each interpreted function\n"
                 "  runs under its own native frame named mvm:<function>.\n");
    return 2;
}

/* A whole-string decimal int64 (optional sign). */
static int parse_int64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int parse_program_args(struct options *o, int argc, char **argv, int first)
{
    o->n_args = (uint32_t)(argc - first);
    o->args = calloc(o->n_args ? o->n_args : 1, sizeof *o->args);
    if (!o->args) {
        fprintf(stderr, "minivm: out of memory\n");
        return 1;
    }
    for (int i = first; i < argc; i++)
        if (parse_int64(argv[i], &o->args[i - first]) < 0) {
            fprintf(stderr, "minivm: program argument '%s' is not a 64-bit integer\n", argv[i]);
            return 2;
        }
    return 0;
}

/* Returns 0, or the exit status of a usage error. */
static int parse_options(struct options *o, int argc, char **argv)
{
    o->use_jitframes = 1;
    o->max_depth = MVM_DEFAULT_MAX_DEPTH;
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        int64_t depth;
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "--no-jitframes") == 0) {
            o->use_jitframes = 0;
        } else if (strcmp(argv[i], "--max-depth") == 0 && i + 1 < argc &&
                   parse_int64(argv[i + 1], &depth) == 0 && depth >= 1 && depth <= 1000000) {
            o->max_depth = (uint32_t)depth;
            i++;
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(NULL);
            exit(0);
        } else {
            char msg[128];
            snprintf(msg, sizeof msg, "bad option '%.64s'", argv[i]);
            return usage(msg);
        }
    }
    if (i >= argc)
        return usage("no program file given");
    o->file = argv[i];
    return parse_program_args(o, argc, argv, i + 1);
}

/* Source text to program; 0 or 1 (error printed). */
static int load_program(const char *file, struct mvm_program *prog, struct mvm_diag *diag)
{
    char why[512];
    struct mvm_source src;
    if (mvm_source_read(file, &src, why, sizeof why) < 0) {
        fprintf(stderr, "minivm: %s\n", why);
        return 1;
    }
    struct mvm_arena arena = MVM_ARENA_INIT;
    struct mvm_ast ast;
    int rc = mvm_parse(src.text, src.len, &arena, diag, &ast);
    if (rc == 0)
        rc = mvm_compile(&ast, diag, prog);
    mvm_arena_free(&arena);
    mvm_source_free(&src);
    if (rc < 0) {
        mvm_diag_print(diag, stderr);
        return 1;
    }
    return 0;
}

static void attach_jitframes(struct mvm_jit *jit, struct mvm_program *prog, const char *file)
{
    char why[512] = "";
    enum mvm_jit_status status = mvm_jit_attach(jit, prog, file, why, sizeof why);
    if (status == MVM_JIT_FAILED)
        fprintf(stderr, "minivm: warning: jitframes disabled (%s); calling the interpreter directly\n", why);
    else if (status == MVM_JIT_ON && why[0])
        fprintf(stderr, "minivm: warning: %s; the other jitframes sinks are on\n", why);
}

static int run_program(struct mvm_program *prog, const struct options *o, struct mvm_diag *diag)
{
    struct mvm_vm vm;
    if (mvm_vm_init(&vm, prog, o->max_depth, diag, stdout, o->args, o->n_args) < 0) {
        fprintf(stderr, "minivm: out of memory\n");
        return 1;
    }
    int64_t result;
    int rc = mvm_vm_run(&vm, &result);
    mvm_vm_free(&vm);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "minivm: error writing output: %s\n", strerror(errno));
        return 1;
    }
    if (rc < 0) {
        mvm_diag_print(diag, stderr);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct options o = {0};
    int rc = parse_options(&o, argc, argv);
    if (rc == 0) {
        struct mvm_diag diag;
        struct mvm_program prog;
        mvm_diag_init(&diag, o.file);
        rc = load_program(o.file, &prog, &diag);
        if (rc == 0) {
            struct mvm_jit jit = {0};
            if (o.use_jitframes)
                attach_jitframes(&jit, &prog, o.file);
            rc = run_program(&prog, &o, &diag);
            mvm_jit_detach(&jit, &prog);
            mvm_program_free(&prog);
        }
    }
    free(o.args);
    return rc;
}
