/*
 * Trampolines: forwarding of register arguments and return values, naming,
 * lifecycle, arena layout (W^X, memory per trampoline), threads and fork.
 * Built natively and, with tests/trampoline/cross, for aarch64 and riscv64
 * under qemu (there cmocka.h is a small stand-in with the same API).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jitframes.h"
#include "trampoline.h"

/* ---- targets: every register-passed shape the ABIs have -------------------- */

typedef int64_t (*fn_i0)(void);
typedef int64_t (*fn_i1)(int64_t);
typedef int64_t (*fn_i2)(int64_t, int64_t);
typedef int64_t (*fn_i3)(int64_t, int64_t, int64_t);
typedef int64_t (*fn_i4)(int64_t, int64_t, int64_t, int64_t);
typedef int64_t (*fn_i5)(int64_t, int64_t, int64_t, int64_t, int64_t);
typedef int64_t (*fn_i6)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);
typedef double (*fn_d8)(double, double, double, double, double, double, double, double);
typedef float (*fn_f2)(float, float);
typedef double (*fn_mixed)(int32_t, double, int64_t, float, const char *, double);
typedef uint64_t (*fn_u64)(uint64_t);
typedef struct pair {
    int64_t a, b;
} pair;
typedef pair (*fn_pair)(int64_t, int64_t);
typedef int (*fn_var)(int, ...);

/* noinline: keep real calls so the trampolines really forward. */
#define TARGET __attribute__((noinline))

TARGET static int64_t t_i0(void)
{
    return 0x1234567890abcdefLL;
}
/* Order-sensitive hash in unsigned arithmetic (wraps, never overflows). */
static int64_t mix(int64_t h, int64_t v)
{
    return (int64_t)((uint64_t)h * 31u + (uint64_t)v);
}

TARGET static int64_t t_i1(int64_t a)
{
    return mix(a, 1);
}
TARGET static int64_t t_i2(int64_t a, int64_t b)
{
    return mix(a, b);
}
TARGET static int64_t t_i3(int64_t a, int64_t b, int64_t c)
{
    return mix(mix(a, b), c);
}
TARGET static int64_t t_i4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    return mix(mix(mix(a, b), c), d);
}
TARGET static int64_t t_i5(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e)
{
    return mix(mix(mix(mix(a, b), c), d), e);
}
TARGET static int64_t t_i6(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f)
{
    return mix(mix(mix(mix(mix(a, b), c), d), e), f);
}
TARGET static double t_d8(double a, double b, double c, double d, double e, double f, double g, double h)
{
    return a + 2 * b + 4 * c + 8 * d + 16 * e + 32 * f + 64 * g + 128 * h;
}
TARGET static float t_f2(float a, float b)
{
    return a * b - 0.5f;
}
TARGET static double t_mixed(int32_t i, double d, int64_t l, float f, const char *s, double e)
{
    return (double)i * d + (double)l - (double)f + (double)strlen(s) * e;
}
TARGET static uint64_t t_u64(uint64_t x)
{
    return ~x ^ 0xfedcba9876543210ULL;
}
TARGET static pair t_pair(int64_t a, int64_t b)
{
    return (pair){b, a};
}
TARGET static int t_var(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += va_arg(ap, double);
    va_end(ap);
    return (int)sum;
}

static int init_perfmap(void **state)
{
    (void)state;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_PERFMAP;
    return jf_init(&cfg);
}

/* Remove this process's perf map: a leftover one would be taken for a later,
 * unrelated process's once the pid is reused. */
static void remove_own_map(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
    unlink(path);
}

static int remove_map_fixture(void **state)
{
    (void)state;
    remove_own_map();
    return 0;
}

static int shutdown_lib(void **state)
{
    (void)state;
    int rc = jf_shutdown();
    remove_own_map();
    return rc;
}

static jf_fn make(jf_fn target, const char *name)
{
    jf_fn entry = NULL;
    int rc = jf_trampoline_create(target, name, NULL, &entry);
    if (rc)
        fprintf(stderr, "create %s: %s (%s)\n", name, jf_strerror(rc), jf_last_error());
    assert_int_equal(rc, 0);
    assert_non_null(entry);
    assert_true(entry != target);
    return entry;
}

static void destroy_all(const jf_fn *entries, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert_int_equal(jf_trampoline_destroy(entries[i]), 0);
}

static void forwards_integer_arguments_0_to_6(void **state)
{
    (void)state;
    fn_i0 f0 = (fn_i0)make((jf_fn)t_i0, "i0");
    fn_i1 f1 = (fn_i1)make((jf_fn)t_i1, "i1");
    fn_i2 f2 = (fn_i2)make((jf_fn)t_i2, "i2");
    fn_i3 f3 = (fn_i3)make((jf_fn)t_i3, "i3");
    fn_i4 f4 = (fn_i4)make((jf_fn)t_i4, "i4");
    fn_i5 f5 = (fn_i5)make((jf_fn)t_i5, "i5");
    fn_i6 f6 = (fn_i6)make((jf_fn)t_i6, "i6");
    assert_true(f0() == t_i0());
    assert_true(f1(-7) == t_i1(-7));
    assert_true(f2(INT64_MAX, 5) == t_i2(INT64_MAX, 5));
    assert_true(f3(1, -2, 3) == t_i3(1, -2, 3));
    assert_true(f4(4, 3, 2, 1) == t_i4(4, 3, 2, 1));
    assert_true(f5(9, 8, 7, 6, 5) == t_i5(9, 8, 7, 6, 5));
#if !defined(__s390x__) /* s390x passes the 6th integer on the stack: not forwarded */
    assert_true(f6(1, 2, 3, 4, 5, INT64_MIN) == t_i6(1, 2, 3, 4, 5, INT64_MIN));
#endif
    jf_fn all[] = {(jf_fn)f0, (jf_fn)f1, (jf_fn)f2, (jf_fn)f3, (jf_fn)f4, (jf_fn)f5, (jf_fn)f6};
    destroy_all(all, sizeof all / sizeof all[0]);
}

static void forwards_floating_point_mixed_and_wide_returns(void **state)
{
    (void)state;
    fn_d8 d8 = (fn_d8)make((jf_fn)t_d8, "d8");
    fn_f2 f2 = (fn_f2)make((jf_fn)t_f2, "f2");
    fn_mixed mx = (fn_mixed)make((jf_fn)t_mixed, "mixed");
    fn_u64 u = (fn_u64)make((jf_fn)t_u64, "u64");
    fn_pair p = (fn_pair)make((jf_fn)t_pair, "pair");
    fn_var var = (fn_var)make((jf_fn)t_var, "variadic");
    /* Exact equality: the same computation on the same bits. */
#if !defined(__s390x__) /* s390x passes the 5th double on the stack: not forwarded */
    assert_true(d8(1.5, -2.25, 3e10, 4e-10, 5, 6, 7, 8.125) == t_d8(1.5, -2.25, 3e10, 4e-10, 5, 6, 7, 8.125));
#endif
    assert_true(f2(3.25f, -1.5f) == t_f2(3.25f, -1.5f));
    assert_true(mx(-3, 0.1, 1LL << 40, 2.5f, "hello", 1e-3) ==
                t_mixed(-3, 0.1, 1LL << 40, 2.5f, "hello", 1e-3));
    assert_true(u(0x0123456789abcdefULL) == t_u64(0x0123456789abcdefULL));
    pair got = p(11, -22), want = t_pair(11, -22);
    assert_true(got.a == want.a && got.b == want.b);
    assert_int_equal(var(3, 1.0, 2.0, 3.5), t_var(3, 1.0, 2.0, 3.5));
    jf_fn all[] = {(jf_fn)d8, (jf_fn)f2, (jf_fn)mx, (jf_fn)u, (jf_fn)p, (jf_fn)var};
    destroy_all(all, sizeof all / sizeof all[0]);
}

/* A trampoline calling a trampoline calling the target: frames nest. */
static void trampolines_nest(void **state)
{
    (void)state;
    fn_i3 inner = (fn_i3)make((jf_fn)t_i3, "inner");
    fn_i3 outer = (fn_i3)make((jf_fn)inner, "outer");
    assert_true(outer(5, 6, 7) == t_i3(5, 6, 7));
    assert_int_equal(jf_trampoline_destroy((jf_fn)outer), 0);
    assert_int_equal(jf_trampoline_destroy((jf_fn)inner), 0);
}

/*
 * The frame the trampoline keeps (include/jitframes.h, "Trampolines"), walked
 * from its target the way the ABI's frame walkers walk it: the frame-pointer
 * chain on x86_64, aarch64 (the saved FP at FP + 0) and riscv64 (at FP - 16),
 * the back chain on ppc64le (at SP + 0): two steps up from the target reach
 * the trampoline's caller. s390x keeps no back chain: the trampoline leaves
 * the word one would occupy in its frame as it was.
 */
#if !defined(__s390x__)
static void *volatile chain_reached;

__attribute__((noinline)) static void chain_sink(void)
{
    __asm__ volatile("" ::: "memory");
}

#if defined(__riscv)
#define CALLER_FRAME(f) (((void **)(f))[-2])
#else
#define CALLER_FRAME(f) (((void **)(f))[0])
#endif

__attribute__((noinline)) static int64_t walk_two_frames_up(int64_t x)
{
    void *own = __builtin_frame_address(0);
    chain_sink(); /* not a leaf: the target has a frame of its own */
    void *trampoline = CALLER_FRAME(own);
    chain_reached = trampoline ? CALLER_FRAME(trampoline) : NULL;
    return x + 1;
}
#endif

#if defined(__s390x__)
static void trampoline_keeps_no_back_chain_on_s390x(void **state)
{
    (void)state;
    fn_i1 f = (fn_i1)make((jf_fn)t_i1, "no_back_chain");
    uint64_t *sp;
    __asm__ volatile("lgr %0, %%r15" : "=r"(sp));
    /* The trampoline's frame is the 160 bytes below our r15; a back chain
     * would be its first word. */
    volatile uint64_t *slot = sp - 20;
    *slot = 0x5a5a5a5a5a5a5a5aull;
    assert_true(f(3) == t_i1(3));
    assert_true(*slot == 0x5a5a5a5a5a5a5a5aull);
    assert_int_equal(jf_trampoline_destroy((jf_fn)f), 0);
}
#else
static void frame_chain_walks_through_the_trampoline(void **state)
{
    (void)state;
    fn_i1 f = (fn_i1)make((jf_fn)walk_two_frames_up, "frame_chain");
    void *self = __builtin_frame_address(0);
    chain_reached = NULL;
    assert_true(f(1) == 2);
    assert_ptr_equal(chain_reached, self);
    /* Control: called directly, two steps up from the target pass us. */
    chain_reached = NULL;
    assert_true(walk_two_frames_up(1) == 2);
    assert_true(chain_reached != self);
    assert_int_equal(jf_trampoline_destroy((jf_fn)f), 0);
}
#endif

static void each_trampoline_is_a_named_region(void **state)
{
    (void)state;
    struct jf_stats before = JF_STATS_INIT, after = JF_STATS_INIT;
    assert_int_equal(jf_stats(&before), 0);
    jf_trampoline_options o = JF_TRAMPOLINE_OPTIONS_INIT;
    o.file = "prog.mini";
    o.line = 12;
    jf_fn e = NULL;
    assert_int_equal(jf_trampoline_create((jf_fn)t_i1, "named", &o, &e), 0);
    assert_int_equal(jf_stats(&after), 0);
    assert_int_equal(after.live_regions, before.live_regions + 1);
    assert_int_equal(after.sink[0].regions, before.sink[0].regions + 1);
    /* The region is registered at the entry: registering it again clashes. */
    jf_region r = JF_REGION_INIT;
    r.addr = (const void *)e;
    r.size = 1;
    r.name = "clash";
    assert_int_equal(jf_register(&r), JF_EEXIST);
    assert_int_equal(jf_trampoline_destroy(e), 0);
    assert_int_equal(jf_stats(&after), 0);
    assert_int_equal(after.live_regions, before.live_regions);
}

static void rejects_bad_arguments(void **state)
{
    (void)state;
    jf_fn e = NULL;
    assert_int_equal(jf_trampoline_create(NULL, "x", NULL, &e), JF_EINVAL);
    assert_int_equal(jf_trampoline_create((jf_fn)t_i0, NULL, NULL, &e), JF_EINVAL);
    assert_int_equal(jf_trampoline_create((jf_fn)t_i0, "", NULL, &e), JF_EINVAL);
    assert_int_equal(jf_trampoline_create((jf_fn)t_i0, "x", NULL, NULL), JF_EINVAL);
    jf_trampoline_options o = JF_TRAMPOLINE_OPTIONS_INIT;
    o.struct_size = 3;
    assert_int_equal(jf_trampoline_create((jf_fn)t_i0, "x", &o, &e), JF_EINVAL);
    o = (jf_trampoline_options)JF_TRAMPOLINE_OPTIONS_INIT;
    o.align = 24;
    assert_int_equal(jf_trampoline_create((jf_fn)t_i0, "x", &o, &e), JF_EINVAL);
    o.align = 128;
    assert_int_equal(jf_trampoline_create((jf_fn)t_i0, "x", &o, &e), JF_EINVAL);
    assert_null(e);
    /* Not a trampoline, twice destroyed, inside a copy. */
    assert_int_equal(jf_trampoline_destroy((jf_fn)t_i0), JF_ENOENT);
    e = make((jf_fn)t_i0, "twice");
    assert_int_equal(jf_trampoline_destroy((jf_fn)((uintptr_t)e + 4)), JF_ENOENT);
    assert_int_equal(jf_trampoline_destroy(e), 0);
    assert_int_equal(jf_trampoline_destroy(e), JF_ENOENT);
}

static void destroyed_copies_are_reused(void **state)
{
    (void)state;
    jf_fn a = make((jf_fn)t_i1, "a");
    assert_int_equal(jf_trampoline_destroy(a), 0);
    jf_fn b = make((jf_fn)t_i2, "b");
    assert_ptr_equal(a, b);
    assert_true(((fn_i2)b)(2, 3) == t_i2(2, 3));
    assert_int_equal(jf_trampoline_destroy(b), 0);
}

static void alignment_option_aligns_entries(void **state)
{
    (void)state;
    jf_trampoline_options o = JF_TRAMPOLINE_OPTIONS_INIT;
    o.align = 64;
    for (int i = 0; i < 5; i++) {
        jf_fn e = NULL;
        assert_int_equal(jf_trampoline_create((jf_fn)t_i4, "aligned", &o, &e), 0);
        assert_int_equal((uintptr_t)e % 64, 0);
        assert_true(((fn_i4)e)(1, 2, 3, i) == t_i4(1, 2, 3, i));
        assert_int_equal(jf_trampoline_destroy(e), 0);
    }
}

/* The permissions of the mapping holding addr, from /proc/self/maps. */
static void mapping_perms(const void *addr, char perms[5])
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[512];
    strcpy(perms, "????");
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char p[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) == 3 && (uintptr_t)addr >= lo && (uintptr_t)addr < hi)
            memcpy(perms, p, 5);
    }
    fclose(f);
}

/* Code is read+execute, never writable; the slot is read-write, never
 * executable, and holds the target. */
static void code_is_never_writable_and_slots_never_executable(void **state)
{
    (void)state;
    jf_fn e = make((jf_fn)t_i1, "wx");
    void *slot = jf__trampoline_slot_of(e);
    assert_non_null(slot);
    char perms[5];
    mapping_perms((const void *)e, perms);
    assert_string_equal(perms, "r-xp");
    mapping_perms(slot, perms);
    assert_string_equal(perms, "rw-p");
    uintptr_t target;
    memcpy(&target, slot, sizeof target);
    assert_true(target == (uintptr_t)t_i1);
    assert_int_equal(jf_trampoline_destroy(e), 0);
    assert_null(jf__trampoline_slot_of(e));
}

/* Calls to a far target cost more (x86_64): arenas are mapped near it. */
static void trampolines_are_placed_near_their_target(void **state)
{
    (void)state;
    jf_fn e = make((jf_fn)t_i1, "near");
    uintptr_t a = (uintptr_t)e, b = (uintptr_t)t_i1;
    uintptr_t d = a > b ? a - b : b - a;
    assert_true(d < ((uintptr_t)1 << 31));
    assert_int_equal(jf_trampoline_destroy(e), 0);
}

/* Memory per trampoline: stride + 8 (the K code blocks' slots interleave). */
static void memory_per_trampoline_is_stride_plus_8(void **state)
{
    (void)state;
    jf__trampoline_layout l;
    assert_int_equal(jf__trampoline_layout_for(JF_SINK_PERFMAP, 0, &l), 0);
    double per = (double)l.group_bytes / (double)l.per_group;
    printf("# %s: template %zu bytes, stride %zu, %u blocks of %zu, %.2f bytes per trampoline (perf map)\n",
           l.arch, l.code_size, l.stride, l.variants, l.block, per);
    assert_true(l.stride % 8 == 0 && l.stride >= l.code_size && l.stride < l.code_size + 8);
    assert_true(per <= (double)l.stride + 8.0 + 0.01);
#if defined(__x86_64__)
    assert_true(per <= 24.0);
#endif
    jf__trampoline_layout j;
    assert_int_equal(jf__trampoline_layout_for(JF_SINK_PERFMAP | JF_SINK_JITDUMP, 0, &j), 0);
    double per_j = (double)j.group_bytes / (double)j.per_group;
    printf("# %s: stride %zu, %.2f bytes per trampoline (jitdump with unwind info)\n", j.arch, j.stride,
           per_j);
    assert_true(j.stride >= jf_jitdump_footprint(j.code_size, NULL));
    assert_true(per_j <= (double)j.stride + 8.0 + 1.0);
}

/* ---- threads ------------------------------------------------------------------ */

enum { THREADS = 4, PER_THREAD = 3000 };

static void *create_call_destroy(void *arg)
{
    intptr_t id = (intptr_t)arg;
    static jf_fn entries[THREADS][PER_THREAD];
    char name[32];
    for (int i = 0; i < PER_THREAD; i++) {
        snprintf(name, sizeof name, "t%ld_%d", (long)id, i);
        jf_fn target = i % 2 ? (jf_fn)t_i2 : (jf_fn)t_i3;
        if (jf_trampoline_create(target, name, NULL, &entries[id][i]) != 0)
            return (void *)1;
    }
    for (int i = 0; i < PER_THREAD; i++) {
        int64_t got = i % 2 ? ((fn_i2)entries[id][i])(id, i) : ((fn_i3)entries[id][i])(id, i, 7);
        int64_t want = i % 2 ? t_i2(id, i) : t_i3(id, i, 7);
        if (got != want)
            return (void *)2;
    }
    for (int i = 0; i < PER_THREAD; i += 2)
        if (jf_trampoline_destroy(entries[id][i]) != 0)
            return (void *)3;
    for (int i = 1; i < PER_THREAD; i += 2)
        if (jf_trampoline_destroy(entries[id][i]) != 0)
            return (void *)4;
    return NULL;
}

static void many_threads_create_call_and_destroy(void **state)
{
    (void)state;
    struct jf_stats before = JF_STATS_INIT, after = JF_STATS_INIT;
    assert_int_equal(jf_stats(&before), 0);
    pthread_t th[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, create_call_destroy, (void *)i), 0);
    for (int i = 0; i < THREADS; i++) {
        void *ret;
        assert_int_equal(pthread_join(th[i], &ret), 0);
        assert_null(ret);
    }
    assert_int_equal(jf_stats(&after), 0);
    assert_int_equal(after.live_regions, before.live_regions);
}

/* ---- fork ------------------------------------------------------------------------ */

static void trampolines_work_in_a_forked_child(void **state)
{
    (void)state;
    fn_i2 f = (fn_i2)make((jf_fn)t_i2, "before_fork");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        jf_fn g = NULL;
        int ok = f(3, 4) == t_i2(3, 4) && jf_trampoline_create((jf_fn)t_i1, "in_child", NULL, &g) == 0 &&
                 ((fn_i1)g)(9) == t_i1(9) && jf_trampoline_destroy((jf_fn)f) == 0;
        remove_own_map();
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(f(5, 6) == t_i2(5, 6)); /* the child's destroy did not affect us */
    assert_int_equal(jf_trampoline_destroy((jf_fn)f), 0);
}

/* A sink that fails while a trampoline is created disables itself (logged
 * once, visible in jf_stats); the trampoline is still made, registered and
 * named in the other sinks. Runs in a child: it lowers RLIMIT_FSIZE to the
 * child's own perf map size so the next perf map write fails. */
static int create_with_failing_perfmap(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
    struct stat st;
    if (stat(path, &st) != 0)
        return 10;
    struct rlimit lim = {(rlim_t)st.st_size, (rlim_t)st.st_size};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
        return 11;
    /* Lines go into space the writer already reserved: create trampolines
     * until it needs more, which the limit refuses (bounded). */
    struct jf_stats stats = JF_STATS_INIT;
    int ok = 0;
    for (int i = 0; i < 200000 && !ok; i++) {
        jf_fn g = NULL;
        int rc = jf_trampoline_create((jf_fn)t_i1, "sink_fails_here", NULL, &g);
        if (rc != 0 || !g || ((fn_i1)g)(7) != t_i1(7) || jf_stats(&stats) != 0)
            break;
        ok = stats.sink[0].failed == 1 && stats.live_regions >= 2;
    }
    unlink(path);
    return ok ? 0 : 12;
}

static void a_failing_sink_does_not_fail_trampoline_creation(void **state)
{
    (void)state;
    jf_fn f = make((jf_fn)t_i1, "registered_before");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(create_with_failing_perfmap());
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(jf_trampoline_destroy(f), 0);
}

/* ---- without jf_init ----------------------------------------------------------- */

static void create_without_init_fails_cleanly(void **state)
{
    (void)state;
    jf_fn e = NULL;
    assert_int_equal(jf_trampoline_create((jf_fn)t_i1, "early", NULL, &e), JF_ENOTINIT);
    assert_null(e);
    assert_int_equal(init_perfmap(NULL), 0);
    jf_fn a = make((jf_fn)t_i1, "after_init");
    assert_true(((fn_i1)a)(2) == t_i1(2));
    assert_int_equal(jf_shutdown(), 0);
    /* After shutdown the registry forgot the region; destroy still frees it. */
    assert_int_equal(jf_trampoline_destroy(a), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(forwards_integer_arguments_0_to_6),
        cmocka_unit_test(forwards_floating_point_mixed_and_wide_returns),
        cmocka_unit_test(trampolines_nest),
#if defined(__s390x__)
        cmocka_unit_test(trampoline_keeps_no_back_chain_on_s390x),
#else
        cmocka_unit_test(frame_chain_walks_through_the_trampoline),
#endif
        cmocka_unit_test(each_trampoline_is_a_named_region),
        cmocka_unit_test(rejects_bad_arguments),
        cmocka_unit_test(destroyed_copies_are_reused),
        cmocka_unit_test(alignment_option_aligns_entries),
        cmocka_unit_test(code_is_never_writable_and_slots_never_executable),
        cmocka_unit_test(trampolines_are_placed_near_their_target),
        cmocka_unit_test(memory_per_trampoline_is_stride_plus_8),
        cmocka_unit_test(many_threads_create_call_and_destroy),
        cmocka_unit_test(trampolines_work_in_a_forked_child),
        cmocka_unit_test(a_failing_sink_does_not_fail_trampoline_creation),
    };
    const struct CMUnitTest lifecycle[] = {
        cmocka_unit_test(create_without_init_fails_cleanly),
    };
    int failed = cmocka_run_group_tests(tests, init_perfmap, shutdown_lib);
    return failed + cmocka_run_group_tests(lifecycle, NULL, remove_map_fixture);
}
