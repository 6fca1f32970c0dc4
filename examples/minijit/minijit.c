/*
 * minijit: a small x86_64 JIT that shows how a runtime describes its code to
 * jitframes — names, source lines and unwind rules (CFI) — so that perf,
 * through `perf inject --jit`, names the code, maps samples to source lines
 * and unwinds through functions that keep no frame pointer.
 *
 * It emits four regions into one executable arena:
 *   mj_frameless  a leaf with no frame pointer that moves the stack pointer
 *   mj_framed     a standard rbp frame
 *   mj_stencils   two "stencils" glued in one region: a framed part calling
 *                 a frameless part — one region, two FDEs
 *   mj_lines      three loops, each on its own source line (the last one
 *                 ends the region), with a line table
 * and calls them from noinline C functions for --seconds seconds of its
 * own CPU time (so a profile holds as many samples on a busy machine as on
 * a quiet one).
 *
 *   JITFRAMES=jitdump JITFRAMES_DIR=dir perf record -k 1 -e cpu-clock \
 *       --call-graph dwarf ./minijit
 *   perf inject --jit -i perf.data -o perf.jit.data
 *   perf report -i perf.jit.data
 *
 * Options: --workload frameless|framed|stencils|lines|all, --seconds S,
 * --no-unwind (register without CFI: perf then loses the callers of the
 * frameless code), --kill-self (end with SIGKILL instead of jf_shutdown),
 * --move (halfway through, move the whole module elsewhere as a compacting
 * collector would, and tell jitframes with one jf_move_batch; prints
 * "moved OLD NEW SIZE at SECONDS" on stdout, CLOCK_MONOTONIC as `perf script`
 * shows time with -k 1).
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)

#define SOURCE_FILE "minijit_program.mj"

/* ---- a tiny x86_64 assembler ------------------------------------------- */

typedef struct code_buf {
    uint8_t *base;
    size_t cap;
    size_t pos;
} code_buf;

static void emit(code_buf *b, const uint8_t *bytes, size_t n)
{
    if (b->pos + n > b->cap) {
        fprintf(stderr, "minijit: code buffer full\n");
        exit(1);
    }
    memcpy(b->base + b->pos, bytes, n);
    b->pos += n;
}

#define EMIT(b, ...)                                   \
    do {                                               \
        static const uint8_t bytes_[] = {__VA_ARGS__}; \
        emit((b), bytes_, sizeof bytes_);              \
    } while (0)

/* A backward `jnz` (short form) to `target`. */
static void emit_jnz_back(code_buf *b, size_t target)
{
    long rel = (long)target - (long)(b->pos + 2);
    uint8_t insn[2] = {0x75, (uint8_t)(int8_t)rel};
    emit(b, insn, 2);
}

static void emit_call_rel32(code_buf *b, size_t target)
{
    long rel = (long)target - (long)(b->pos + 5);
    uint8_t insn[5] = {0xe8, (uint8_t)rel, (uint8_t)(rel >> 8), (uint8_t)(rel >> 16), (uint8_t)(rel >> 24)};
    emit(b, insn, 5);
}

/* A count-down loop over %rcx (set from %rdi) that stores to the stack slot
 * at 0(%rsp) each round, so the frame is really used. */
static void emit_spin_loop_rsp(code_buf *b)
{
    EMIT(b, 0x48, 0x89, 0xf9); /* mov %rdi,%rcx */
    size_t loop = b->pos;
    EMIT(b, 0x48, 0x89, 0x0c, 0x24); /* mov %rcx,(%rsp) */
    EMIT(b, 0x48, 0xff, 0xc9);       /* dec %rcx */
    emit_jnz_back(b, loop);
}

static void align16(code_buf *b)
{
    while (b->pos % 16)
        EMIT(b, 0xcc); /* int3 */
}

/* ---- the functions and their unwind rules ------------------------------ */

typedef struct jit_function {
    const char *name;
    size_t start, size; /* offsets in the arena */
    jf_cfi *cfi;
    jf_line lines[4];
    size_t n_lines;
} jit_function;

static void check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "minijit: %s: %s (%s)\n", what, jf_strerror(rc), jf_last_error());
        exit(1);
    }
}

/* A frameless function that keeps `frame` bytes of stack:
 *   sub $frame,%rsp; loop; mov (%rsp),%rax; add $frame,%rsp; ret
 * One FDE: CFA = rsp+8 at entry, rsp+8+frame after the sub, rsp+8 again
 * after the add. */
static void emit_frameless(code_buf *b, size_t base, jf_cfi *cfi, uint8_t frame)
{
    size_t start = b->pos;
    uint8_t sub[4] = {0x48, 0x83, 0xec, frame}; /* sub $frame,%rsp */
    uint8_t add[4] = {0x48, 0x83, 0xc4, frame}; /* add $frame,%rsp */
    emit(b, sub, sizeof sub);
    size_t after_sub = b->pos;
    emit_spin_loop_rsp(b);
    EMIT(b, 0x48, 0x8b, 0x04, 0x24); /* mov (%rsp),%rax */
    emit(b, add, sizeof add);
    size_t after_add = b->pos;
    EMIT(b, 0xc3); /* ret */
    check(jf_cfi_begin_fde(cfi, start - base, b->pos - base), "begin_fde");
    check(jf_cfi_advance_to(cfi, after_sub - base), "advance");
    check(jf_cfi_def_cfa_offset(cfi, 8 + frame), "def_cfa_offset");
    check(jf_cfi_advance_to(cfi, after_add - base), "advance");
    check(jf_cfi_def_cfa_offset(cfi, 8), "def_cfa_offset");
}

/* push %rbp; mov %rsp,%rbp; sub $16,%rsp; loop on -8(%rbp); leave; ret */
static void emit_framed(code_buf *b, size_t base, jf_cfi *cfi)
{
    EMIT(b, 0x55); /* push %rbp */
    size_t after_push = b->pos;
    EMIT(b, 0x48, 0x89, 0xe5); /* mov %rsp,%rbp */
    size_t after_mov = b->pos;
    EMIT(b, 0x48, 0x83, 0xec, 0x10); /* sub $0x10,%rsp */
    EMIT(b, 0x48, 0x89, 0xf9);       /* mov %rdi,%rcx */
    size_t loop = b->pos;
    EMIT(b, 0x48, 0x89, 0x4d, 0xf8); /* mov %rcx,-8(%rbp) */
    EMIT(b, 0x48, 0xff, 0xc9);       /* dec %rcx */
    emit_jnz_back(b, loop);
    EMIT(b, 0x48, 0x8b, 0x45, 0xf8); /* mov -8(%rbp),%rax */
    EMIT(b, 0xc9);                   /* leave */
    size_t after_leave = b->pos;
    EMIT(b, 0xc3); /* ret */
    check(jf_cfi_begin_fde(cfi, 0, b->pos - base), "begin_fde");
    check(jf_cfi_advance_to(cfi, after_push - base), "advance");
    check(jf_cfi_def_cfa_offset(cfi, 16), "def_cfa_offset");
    check(jf_cfi_offset(cfi, JF_DWARF_FP, -16), "offset");
    check(jf_cfi_advance_to(cfi, after_mov - base), "advance");
    check(jf_cfi_def_cfa_register(cfi, JF_DWARF_FP), "def_cfa_register");
    check(jf_cfi_advance_to(cfi, after_leave - base), "advance");
    check(jf_cfi_def_cfa(cfi, JF_DWARF_SP, 8), "def_cfa");
    check(jf_cfi_restore(cfi, JF_DWARF_FP), "restore");
}

/* Offsets (from the region start) where stencil A's frame changes. */
typedef struct stencil_a_shape {
    size_t after_push, after_mov, after_rbx, after_rbx_restore, after_leave, end;
} stencil_a_shape;

/* Stencil A: a standard frame that also saves %rbx, spins, then calls the
 * code emitted next (stencil B: the call is patched once it exists). */
static stencil_a_shape emit_stencil_a(code_buf *b, size_t base, size_t *call_at)
{
    stencil_a_shape s;
    EMIT(b, 0x55); /* push %rbp */
    s.after_push = b->pos - base;
    EMIT(b, 0x48, 0x89, 0xe5); /* mov %rsp,%rbp */
    s.after_mov = b->pos - base;
    EMIT(b, 0x53); /* push %rbx */
    s.after_rbx = b->pos - base;
    EMIT(b, 0x48, 0x83, 0xec, 0x08); /* sub $8,%rsp (keeps the call aligned) */
    EMIT(b, 0x48, 0x89, 0xfb);       /* mov %rdi,%rbx */
    EMIT(b, 0x48, 0x89, 0xd9);       /* mov %rbx,%rcx */
    size_t loop = b->pos;
    EMIT(b, 0x48, 0xff, 0xc9); /* dec %rcx */
    emit_jnz_back(b, loop);
    EMIT(b, 0x48, 0x89, 0xdf); /* mov %rbx,%rdi */
    *call_at = b->pos;
    emit_call_rel32(b, b->pos);      /* patched once B's address is known */
    EMIT(b, 0x48, 0x8b, 0x5d, 0xf8); /* mov -8(%rbp),%rbx */
    s.after_rbx_restore = b->pos - base;
    EMIT(b, 0xc9); /* leave */
    s.after_leave = b->pos - base;
    EMIT(b, 0xc3); /* ret */
    s.end = b->pos - base;
    return s;
}

static void describe_stencil_a(jf_cfi *cfi, const stencil_a_shape *s)
{
    check(jf_cfi_begin_fde(cfi, 0, s->end), "begin_fde A");
    check(jf_cfi_advance_to(cfi, s->after_push), "advance");
    check(jf_cfi_def_cfa_offset(cfi, 16), "def_cfa_offset");
    check(jf_cfi_offset(cfi, JF_DWARF_FP, -16), "offset");
    check(jf_cfi_advance_to(cfi, s->after_mov), "advance");
    check(jf_cfi_def_cfa_register(cfi, JF_DWARF_FP), "def_cfa_register");
    check(jf_cfi_advance_to(cfi, s->after_rbx), "advance");
    check(jf_cfi_offset(cfi, 3 /* rbx */, -24), "offset rbx");
    check(jf_cfi_advance_to(cfi, s->after_rbx_restore), "advance");
    check(jf_cfi_restore(cfi, 3), "restore rbx");
    check(jf_cfi_advance_to(cfi, s->after_leave), "advance");
    check(jf_cfi_def_cfa(cfi, JF_DWARF_SP, 8), "def_cfa");
    check(jf_cfi_restore(cfi, JF_DWARF_FP), "restore");
}

/* Two stencils glued into one region, as a copy-and-patch JIT would: A
 * (framed) calls B (frameless, another frame size). One FDE each; the
 * padding between them has none. */
static void emit_stencils(code_buf *b, size_t base, jf_cfi *cfi)
{
    size_t call_at;
    stencil_a_shape a = emit_stencil_a(b, base, &call_at);
    describe_stencil_a(cfi, &a);
    align16(b);
    size_t b_start = b->pos;
    emit_frameless(b, base, cfi, 0x18);
    size_t end = b->pos;
    b->pos = call_at;
    emit_call_rel32(b, b_start);
    b->pos = end;
}

/* Three loops on lines 10, 20 and 30 of SOURCE_FILE; the last one ends the
 * region (its `ret` is the last instruction). No stack use: CFA = rsp + 8
 * throughout, which the FDE's initial state already says. */
static void emit_lines(code_buf *b, size_t base, jf_cfi *cfi, jit_function *f)
{
    static const uint32_t line_numbers[3] = {10, 20, 30};
    for (int i = 0; i < 3; i++) {
        f->lines[i].offset = b->pos - base;
        f->lines[i].line = line_numbers[i];
        f->lines[i].file = NULL;   /* the region's file */
        EMIT(b, 0x48, 0x89, 0xf9); /* mov %rdi,%rcx */
        size_t loop = b->pos;
        EMIT(b, 0x48, 0xff, 0xc9); /* dec %rcx */
        emit_jnz_back(b, loop);
    }
    f->n_lines = 3;
    EMIT(b, 0x48, 0x89, 0xf8); /* mov %rdi,%rax */
    EMIT(b, 0xc3);             /* ret */
    check(jf_cfi_begin_fde(cfi, 0, b->pos - base), "begin_fde");
}

/* ---- compiling, registering, running ----------------------------------- */

enum { FN_FRAMELESS, FN_FRAMED, FN_STENCILS, FN_LINES, FN_COUNT };

typedef uint64_t (*jit_entry)(uint64_t n);

typedef struct jit_module {
    uint8_t *arena;
    size_t arena_size;
    jit_function fn[FN_COUNT];
    jit_entry entry[FN_COUNT];
} jit_module;

/* Emit every function, each starting at a 16-byte boundary and at least
 * jf_jitdump_footprint() bytes after the previous start, so the mappings
 * perf synthesizes never overlap. */
static void compile_module(jit_module *m)
{
    static const char *const names[FN_COUNT] = {"mj_frameless", "mj_framed", "mj_stencils", "mj_lines"};
    m->arena_size = 64 * 1024;
    m->arena = mmap(NULL, m->arena_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m->arena == MAP_FAILED) {
        perror("minijit: mmap");
        exit(1);
    }
    code_buf b = {m->arena, m->arena_size, 0};
    for (int i = 0; i < FN_COUNT; i++) {
        jit_function *f = &m->fn[i];
        memset(f, 0, sizeof *f);
        f->name = names[i];
        f->start = b.pos;
        check(jf_cfi_new(&f->cfi), "jf_cfi_new");
        if (i == FN_FRAMELESS)
            emit_frameless(&b, f->start, f->cfi, 0x28);
        else if (i == FN_FRAMED)
            emit_framed(&b, f->start, f->cfi);
        else if (i == FN_STENCILS)
            emit_stencils(&b, f->start, f->cfi);
        else
            emit_lines(&b, f->start, f->cfi, f);
        f->size = b.pos - f->start;
        size_t footprint = jf_jitdump_footprint(f->size, f->cfi);
        if (footprint == 0)
            check(JF_EINVAL, "jf_jitdump_footprint");
        b.pos = f->start + footprint;
        align16(&b);
    }
    if (mprotect(m->arena, m->arena_size, PROT_READ | PROT_EXEC) != 0) {
        perror("minijit: mprotect");
        exit(1);
    }
    for (int i = 0; i < FN_COUNT; i++) {
        void *p = m->arena + m->fn[i].start;
        memcpy(&m->entry[i], &p, sizeof p); /* object pointer to function pointer */
    }
}

/* Register the module as one batch (one jitdump record group). */
static void register_module(jit_module *m, int with_unwind)
{
    jf_region regions[FN_COUNT];
    for (int i = 0; i < FN_COUNT; i++) {
        jit_function *f = &m->fn[i];
        jf_region r = JF_REGION_INIT;
        r.addr = m->arena + f->start;
        r.size = f->size;
        r.name = f->name;
        r.file = SOURCE_FILE;
        r.line = 1;
        r.lines = f->n_lines ? f->lines : NULL;
        r.n_lines = f->n_lines;
        r.cfi = with_unwind ? f->cfi : NULL;
        regions[i] = r;
    }
    check(jf_register_batch(regions, FN_COUNT), "jf_register_batch");
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time used so far: the run's length, however busy the machine. */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Move the module as a compacting collector would: copy the arena (the code
 * is position-independent: its one call is relative, within a region), say
 * so with one batch, and unmap the old copy. */
static void move_module(jit_module *m)
{
    uint8_t *to = mmap(NULL, m->arena_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (to == MAP_FAILED) {
        perror("minijit: mmap");
        exit(1);
    }
    memcpy(to, m->arena, m->arena_size);
    if (mprotect(to, m->arena_size, PROT_READ | PROT_EXEC) != 0) {
        perror("minijit: mprotect");
        exit(1);
    }
    jf_region_move moves[FN_COUNT];
    for (int i = 0; i < FN_COUNT; i++)
        moves[i] = (jf_region_move){m->arena + m->fn[i].start, to + m->fn[i].start};
    check(jf_move_batch(moves, FN_COUNT), "jf_move_batch");
    printf("moved %p %p %zu at %.6f\n", (void *)m->arena, (void *)to, m->arena_size, now_seconds());
    fflush(stdout);
    munmap(m->arena, m->arena_size);
    m->arena = to;
    for (int i = 0; i < FN_COUNT; i++) {
        void *p = to + m->fn[i].start;
        memcpy(&m->entry[i], &p, sizeof p);
    }
}

/* The C callers perf must find below the JIT frames. noinline and a use of
 * the result after the call keep them real frames (no tail call); the
 * iteration count comes from a volatile so the compiler cannot specialise
 * (and rename) them. ~0.3 ms of spinning per call: most samples land in JIT
 * code. */
static volatile uint64_t sink_value;
static volatile uint64_t iterations = 1000000;

void c_caller_frameless(jit_entry f);
void c_caller_framed(jit_entry f);
void c_caller_stencils(jit_entry f);
void c_caller_lines(jit_entry f);

__attribute__((noinline)) void c_caller_frameless(jit_entry f)
{
    sink_value += f(iterations) + 1;
}

__attribute__((noinline)) void c_caller_framed(jit_entry f)
{
    sink_value += f(iterations) + 2;
}

__attribute__((noinline)) void c_caller_stencils(jit_entry f)
{
    sink_value += f(iterations) + 3;
}

__attribute__((noinline)) void c_caller_lines(jit_entry f)
{
    sink_value += f(iterations) + 4;
}

typedef struct options {
    unsigned workloads; /* bit per FN_* */
    double seconds;
    int with_unwind;
    int kill_self;
    int move;
} options;

static int parse_workload(const char *w, unsigned *bits)
{
    static const char *const words[FN_COUNT] = {"frameless", "framed", "stencils", "lines"};
    if (strcmp(w, "all") == 0) {
        *bits = (1u << FN_COUNT) - 1;
        return 0;
    }
    for (int i = 0; i < FN_COUNT; i++)
        if (strcmp(w, words[i]) == 0) {
            *bits = 1u << i;
            return 0;
        }
    return -1;
}

static void usage(void)
{
    fprintf(stderr, "usage: minijit [--workload frameless|framed|stencils|lines|all] [--seconds S]\n"
                    "               [--no-unwind] [--kill-self] [--move]\n");
    exit(2);
}

static options parse_options(int argc, char **argv)
{
    options o = {(1u << FN_COUNT) - 1, 1.0, 1, 0, 0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--workload") == 0 && i + 1 < argc) {
            if (parse_workload(argv[++i], &o.workloads) != 0)
                usage();
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            o.seconds = atof(argv[++i]);
        } else if (strcmp(argv[i], "--no-unwind") == 0) {
            o.with_unwind = 0;
        } else if (strcmp(argv[i], "--kill-self") == 0) {
            o.kill_self = 1;
        } else if (strcmp(argv[i], "--move") == 0) {
            o.move = 1;
        } else {
            usage();
        }
    }
    return o;
}

int main(int argc, char **argv)
{
    options o = parse_options(argc, argv);
    jf_config cfg = JF_CONFIG_INIT;
    check(jf_init(&cfg), "jf_init (set JITFRAMES=jitdump,perfmap to pick sinks)");
    jit_module m;
    compile_module(&m);
    register_module(&m, o.with_unwind);

    double end = cpu_seconds() + o.seconds;
    double move_at = o.move ? end - o.seconds / 2 : end;
    while (cpu_seconds() < end) {
        if (cpu_seconds() >= move_at) {
            move_module(&m);
            move_at = end;
        }
        if (o.workloads & (1u << FN_FRAMELESS))
            c_caller_frameless(m.entry[FN_FRAMELESS]);
        if (o.workloads & (1u << FN_FRAMED))
            c_caller_framed(m.entry[FN_FRAMED]);
        if (o.workloads & (1u << FN_STENCILS))
            c_caller_stencils(m.entry[FN_STENCILS]);
        if (o.workloads & (1u << FN_LINES))
            c_caller_lines(m.entry[FN_LINES]);
    }
    if (o.kill_self)
        raise(SIGKILL);
    for (int i = 0; i < FN_COUNT; i++)
        jf_cfi_free(m.fn[i].cfi);
    check(jf_shutdown(), "jf_shutdown");
    return 0;
}

#else

int main(void)
{
    fprintf(stderr, "minijit emits x86_64 code only\n");
    return 77;
}

#endif
