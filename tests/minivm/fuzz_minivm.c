/*
 * A small deterministic fuzzer for minivm: mutate the seed programs given on
 * the command line and check that every mutant
 *   - either compiles, or fails with one diagnostic at a position inside the
 *     text (line >= 1, col >= 1, line <= lines + 1) and a non-empty message;
 *   - when it compiles, yields bytecode whose operands are all in range;
 *   - when run (a sample, in a child process with a time limit and a small
 *     call depth limit), exits normally: no crash, no sanitizer report.
 * Usage: fuzz_minivm [-n ITERATIONS] [-s SEED] FILE...
 */
#define _POSIX_C_SOURCE 200809L
#include "arena.h"
#include "compiler.h"
#include "parser.h"
#include "source.h"
#include "vm.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_RUNS 150 /* mutants executed in a child */
#define RUN_TIME_LIMIT_US 100000

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng(void) /* xorshift64* */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

static size_t rng_below(size_t n)
{
    return n ? (size_t)(rng() % n) : 0;
}

struct buf {
    char *data;
    size_t len, cap;
};

static void buf_reserve(struct buf *b, size_t extra)
{
    if (b->len + extra <= b->cap)
        return;
    b->cap = (b->len + extra) * 2;
    b->data = realloc(b->data, b->cap);
    if (!b->data) {
        perror("fuzz_minivm");
        exit(2);
    }
}

static void buf_insert(struct buf *b, size_t at, const char *s, size_t n)
{
    buf_reserve(b, n);
    memmove(b->data + at + n, b->data + at, b->len - at);
    memcpy(b->data + at, s, n);
    b->len += n;
}

static const char *const fragments[] = {
    "fn ",
    "var ",
    "if ",
    "else ",
    "while ",
    "return ",
    "print",
    "(",
    ")",
    "{",
    "}",
    ",",
    ";",
    "=",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "!",
    "&&",
    "||",
    "+",
    "-",
    "*",
    "/",
    "%",
    "\"",
    "\\",
    "//",
    "\n",
    " ",
    "0",
    "1",
    "-1",
    "9223372036854775807",
    "9223372036854775808",
    "2147483648",
    "x",
    "n",
    "main",
    "fib",
    "arg(0)",
    "argc()",
    "f(",
    "@",
    "\t",
    "\x01",
    "\xff",
};

/* One random edit: replace, insert a fragment, delete or duplicate a range, truncate. */
static void mutate(struct buf *b)
{
    size_t at = rng_below(b->len + 1);
    switch (rng_below(5)) {
    case 0:
        if (b->len)
            b->data[rng_below(b->len)] = (char)rng_below(256);
        break;
    case 1: {
        const char *f = fragments[rng_below(sizeof fragments / sizeof fragments[0])];
        buf_insert(b, at, f, strlen(f));
        break;
    }
    case 2: {
        size_t n = rng_below(b->len - at + 1) % 16;
        memmove(b->data + at, b->data + at + n, b->len - at - n);
        b->len -= n;
        break;
    }
    case 3: {
        size_t n = rng_below(b->len - at + 1) % 64;
        char *copy = malloc(n + 1);
        memcpy(copy, b->data + at, n);
        buf_insert(b, rng_below(b->len + 1), copy, n);
        free(copy);
        break;
    }
    default:
        if (rng_below(8) == 0)
            b->len = at;
        break;
    }
}

static size_t count_lines(const char *s, size_t len)
{
    size_t n = 1;
    for (size_t i = 0; i < len; i++)
        n += s[i] == '\n';
    return n;
}

static int check_insn(const struct mvm_program *p, const struct mvm_function *f, const struct mvm_insn *in)
{
    switch (in->op) {
    case OP_LOAD:
    case OP_STORE: return in->arg >= 0 && (uint32_t)in->arg < f->n_slots;
    case OP_JUMP:
    case OP_JUMP_IF_FALSE: return in->arg >= 0 && (uint32_t)in->arg < f->n_code;
    case OP_CALL: return in->arg >= 0 && (uint32_t)in->arg < p->n_functions;
    case OP_PRINT_STR: return in->arg >= 0 && (uint32_t)in->arg < p->n_strings;
    case OP_PRINT_INT: return in->arg >= 1 && (uint32_t)in->arg <= f->frame_size - f->n_slots;
    default: return in->op <= OP_PRINT_END;
    }
}

static int check_program(const struct mvm_program *p)
{
    if (p->main_index >= p->n_functions)
        return 0;
    for (uint32_t i = 0; i < p->n_functions; i++) {
        const struct mvm_function *f = &p->functions[i];
        if (f->n_code == 0 || f->code[f->n_code - 1].op != OP_RETURN || f->n_params > f->n_slots ||
            f->frame_size < f->n_slots || f->entry != mvm_eval_function)
            return 0;
        for (uint32_t k = 0; k < f->n_code; k++)
            if (!check_insn(p, f, &f->code[k]))
                return 0;
    }
    return 1;
}

/* Run the program in a child with a time limit; 1 if it ended normally or timed out. */
static int run_in_child(const struct mvm_program *prog)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return 1; /* cannot test; not a failure of minivm */
    if (pid == 0) {
        struct itimerval limit = {{0, 0}, {0, RUN_TIME_LIMIT_US}};
        signal(SIGALRM, SIG_DFL);
        setitimer(ITIMER_REAL, &limit, NULL);
        FILE *null = fopen("/dev/null", "w");
        struct mvm_diag diag;
        mvm_diag_init(&diag, "mutant.mvm");
        struct mvm_vm vm;
        static const int64_t args[] = {3, -2};
        if (!null || mvm_vm_init(&vm, prog, 100, &diag, null, args, 2) < 0)
            _exit(0);
        int64_t result;
        int rc = mvm_vm_run(&vm, &result);
        _exit(rc == 0 || (diag.set && diag.kind == MVM_DIAG_RUNTIME) ? 0 : 4);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0)
        return 0;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        return 1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void report(const char *what, const struct buf *b, uint64_t iteration)
{
    fprintf(stderr, "fuzz_minivm: iteration %llu: %s; the mutant:\n-----\n%.*s\n-----\n",
            (unsigned long long)iteration, what, (int)b->len, b->data);
}

/* Parse, compile, check, maybe run one mutant. Returns 1 if all is well. */
static int try_mutant(const struct buf *b, uint64_t iteration, int *runs, int *n_compiled)
{
    struct mvm_diag diag;
    mvm_diag_init(&diag, "mutant.mvm");
    struct mvm_arena arena = MVM_ARENA_INIT;
    struct mvm_ast ast;
    struct mvm_program prog;
    int rc = mvm_parse(b->data, b->len, &arena, &diag, &ast);
    int compiled = rc == 0 && mvm_compile(&ast, &diag, &prog) == 0;
    mvm_arena_free(&arena);
    int ok = 1;
    *n_compiled += compiled;
    if (compiled != !diag.set) {
        report("result and diagnostic disagree", b, iteration), ok = 0;
    } else if (!compiled) {
        size_t lines = count_lines(b->data, b->len);
        if (diag.pos.line < 1 || diag.pos.line > lines + 1 || diag.pos.col < 1 || !diag.message[0])
            report("diagnostic outside the text", b, iteration), ok = 0;
    } else {
        if (!check_program(&prog))
            report("bytecode operand out of range", b, iteration), ok = 0;
        else if (*runs < MAX_RUNS && rng_below(4) == 0 && (++*runs, !run_in_child(&prog)))
            report("crashed or failed while running", b, iteration), ok = 0;
        mvm_program_free(&prog);
    }
    return ok;
}

int main(int argc, char **argv)
{
    unsigned long iterations = 20000;
    int opt;
    while ((opt = getopt(argc, argv, "n:s:")) != -1) {
        if (opt == 'n')
            iterations = strtoul(optarg, NULL, 10);
        else if (opt == 's')
            rng_state = strtoull(optarg, NULL, 10) | 1;
        else
            return 2;
    }
    int n_seeds = argc - optind;
    if (n_seeds <= 0) {
        fprintf(stderr, "usage: fuzz_minivm [-n N] [-s SEED] FILE...\n");
        return 2;
    }
    struct mvm_source *seeds = calloc((size_t)n_seeds, sizeof *seeds);
    for (int i = 0; i < n_seeds; i++) {
        char why[256];
        if (mvm_source_read(argv[optind + i], &seeds[i], why, sizeof why) < 0) {
            fprintf(stderr, "fuzz_minivm: %s\n", why);
            return 2;
        }
    }
    int runs = 0, failures = 0, compiled = 0;
    struct buf b = {0};
    for (unsigned long it = 0; it < iterations && failures < 5; it++) {
        const struct mvm_source *s = &seeds[rng_below((size_t)n_seeds)];
        b.len = 0;
        buf_reserve(&b, s->len + 1);
        memcpy(b.data, s->text, s->len);
        b.len = s->len;
        for (size_t m = 1 + rng_below(4); m > 0; m--)
            mutate(&b);
        failures += !try_mutant(&b, it, &runs, &compiled);
    }
    printf("fuzz_minivm: %lu mutants, %d compiled, %d run, %d failures\n", iterations, compiled, runs,
           failures);
    free(b.data);
    for (int i = 0; i < n_seeds; i++)
        mvm_source_free(&seeds[i]);
    free(seeds);
    return failures ? 1 : 0;
}
