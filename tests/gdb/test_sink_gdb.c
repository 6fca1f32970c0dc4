/*
 * The gdb sink's invariants, read back the way a debugger reads them: walk
 * __jit_debug_descriptor, parse every symfile's section headers and symbols.
 *   - every live region is named by exactly one FUNC symbol, at its address
 *     and with its size (its new one after jf_move); unregistered regions by none;
 *   - no two .text sections (in any symfiles) overlap: gdb keeps only one
 *     of two overlapping sections, and the other's names vanish;
 *   - a batch is one symfile; symfiles stay few (levels) and jf_stats
 *     counts them; none grows past 32,767 regions (unregistering rebuilds
 *     the symfile holding the region, so its size bounds that cost).
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "gdb_jit_view.h"

/* ---- reading symfiles ---------------------------------------------------- */

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

typedef struct text_range {
    uint64_t lo, hi;
} text_range;

typedef struct func_sym {
    uint64_t addr, size;
    char name[64];
} func_sym;

enum { MAX_TEXT = 40000, MAX_SYMS = 40000 };
static text_range texts[MAX_TEXT];
static size_t n_texts;
static func_sym syms[MAX_SYMS];
static size_t n_syms;
static size_t largest_symfile; /* most FUNC symbols in one symfile */

/* Collect one symfile's .text sections and FUNC symbols. */
static void read_symfile(const uint8_t *f, uint64_t size)
{
    assert_true(size >= 64);
    assert_memory_equal(f, "\177ELF\2\1\1", 7);
    assert_int_equal(le(f + 16, 2), 1); /* ET_REL */
    uint64_t shoff = le(f + 40, 8);
    unsigned shnum = (unsigned)le(f + 60, 2);
    assert_true(shoff + 64ull * shnum <= size);
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = f + shoff + 64ull * i;
        uint32_t type = (uint32_t)le(sh + 4, 4);
        uint64_t flags = le(sh + 8, 8), addr = le(sh + 16, 8);
        if (flags & 2) /* SHF_ALLOC */
            assert_true(addr != 0);
        if (type == 8) { /* SHT_NOBITS: a .text span */
            assert_true(n_texts < MAX_TEXT);
            texts[n_texts].lo = addr;
            texts[n_texts++].hi = addr + le(sh + 32, 8);
        }
    }
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = f + shoff + 64ull * i;
        if (le(sh + 4, 4) != 2) /* SHT_SYMTAB */
            continue;
        const uint8_t *strsh = f + shoff + 64ull * le(sh + 40, 4);
        const char *strtab = (const char *)f + le(strsh + 24, 8);
        uint64_t off = le(sh + 24, 8), count = le(sh + 32, 8) / 24;
        if (count - 1 > largest_symfile)
            largest_symfile = count - 1;
        for (uint64_t k = 1; k < count; k++) {
            const uint8_t *s = f + off + 24 * k;
            assert_int_equal(s[4] & 0xf, 2); /* STT_FUNC */
            unsigned shndx = (unsigned)le(s + 6, 2);
            assert_true(shndx >= 1 && shndx < shnum);
            const uint8_t *tsh = f + shoff + 64ull * shndx;
            assert_int_equal(le(tsh + 4, 4), 8);
            func_sym *fs = &syms[n_syms++];
            fs->addr = le(tsh + 16, 8) + le(s + 8, 8); /* ET_REL: section-relative */
            fs->size = le(s + 16, 8);
            snprintf(fs->name, sizeof fs->name, "%s", strtab + le(s, 4));
            assert_true(fs->addr + fs->size <= le(tsh + 16, 8) + le(tsh + 32, 8));
        }
    }
}

static int by_lo(const void *a, const void *b)
{
    const text_range *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Read every live symfile; returns how many there are. */
static size_t read_all(void)
{
    n_texts = n_syms = largest_symfile = 0;
    size_t n = 0;
    jf__jit_code_entry *prev = NULL;
    for (jf__jit_code_entry *e = __jit_debug_descriptor.first_entry; e; e = e->next_entry, n++) {
        assert_ptr_equal(e->prev_entry, prev);
        prev = e;
        read_symfile((const uint8_t *)e->symfile_addr, e->symfile_size);
    }
    assert_int_equal(__jit_debug_descriptor.version, 1);
    assert_int_equal(__jit_debug_descriptor.action_flag, 0);
    qsort(texts, n_texts, sizeof texts[0], by_lo);
    for (size_t i = 1; i < n_texts; i++)
        if (texts[i].lo < texts[i - 1].hi)
            fail_msg(".text [%#llx,%#llx) overlaps [%#llx,%#llx)", (unsigned long long)texts[i].lo,
                     (unsigned long long)texts[i].hi, (unsigned long long)texts[i - 1].lo,
                     (unsigned long long)texts[i - 1].hi);
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.sink[2].objects, n);
    return n;
}

/* ---- the JIT under test ------------------------------------------------- */

typedef struct model_region {
    uint8_t *addr;
    size_t size;
    int live;
    char name[32];
} model_region;

enum { MAX_MODEL = 40000 };
static model_region model[MAX_MODEL];
static size_t n_model;
static uint8_t *arena;
enum { ARENA = 4 << 20 };

static int setup(void **state)
{
    (void)state;
    arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(arena != MAP_FAILED);
    jf_config cfg = JF_CONFIG_INIT;
    cfg.sinks = JF_SINK_GDB;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    n_model = 0;
    return jf_init(&cfg);
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(jf_shutdown(), 0);
    assert_null(__jit_debug_descriptor.first_entry);
    munmap(arena, ARENA);
    return 0;
}

static jf_region model_add(size_t offset, size_t size)
{
    model_region *m = &model[n_model];
    m->addr = arena + offset;
    m->size = size;
    m->live = 1;
    snprintf(m->name, sizeof m->name, "fn_%zu", n_model);
    n_model++;
    jf_region r = JF_REGION_INIT;
    r.addr = m->addr;
    r.size = size;
    r.name = m->name;
    return r;
}

/* Every live region named exactly once, at its address with its size. */
static void check_names(void)
{
    size_t live = 0;
    for (size_t i = 0; i < n_model; i++) {
        int found = 0;
        for (size_t k = 0; k < n_syms; k++)
            if (strcmp(syms[k].name, model[i].name) == 0) {
                found++;
                assert_int_equal(syms[k].addr, (uintptr_t)model[i].addr);
                assert_int_equal(syms[k].size, model[i].size);
            }
        assert_int_equal(found, model[i].live);
        live += model[i].live;
    }
    assert_int_equal(n_syms, live);
}

static void a_batch_is_one_symfile(void **state)
{
    (void)state;
    jf_region batch[300];
    for (size_t i = 0; i < 300; i++)
        batch[i] = model_add(64 * i, 40 + i % 20);
    assert_int_equal(jf_register_batch(batch, 300), 0);
    assert_int_equal(read_all(), 1);
    check_names();
}

static void singles_merge_into_few_symfiles(void **state)
{
    (void)state;
    size_t at = 0;
    for (size_t i = 0; i < 5000; i++) {
        at = (at + 15) & ~(size_t)15; /* packed like a JIT: gaps under 16 bytes */
        jf_region r = model_add(at, 20 + i % 37);
        at += r.size;
        assert_int_equal(jf_register(&r), 0);
    }
    size_t n = read_all();
    print_message("5000 single registrations: %zu live symfiles, %zu .text sections\n", n, n_texts);
    assert_true(n <= 7 * 5);
    check_names();
}

/* 8^5 regions from batches of 8 would merge into one symfile of 32,768;
 * merging stops one level below, so they stay in 8 symfiles of 4,096. */
static void merging_stops_at_4096_region_symfiles(void **state)
{
    (void)state;
    enum { N = 8 * 4096, BATCH = 8 };
    for (size_t i = 0; i < N; i += BATCH) {
        jf_region batch[BATCH];
        for (size_t k = 0; k < BATCH; k++)
            batch[k] = model_add(32 * (i + k), 24);
        assert_int_equal(jf_register_batch(batch, BATCH), 0);
    }
    size_t n = read_all();
    print_message("%d regions in batches of %d: %zu live symfiles, the largest holds %zu\n", N, BATCH, n,
                  largest_symfile);
    assert_int_equal(n_syms, N);
    assert_int_equal(n, 8);
    assert_int_equal(largest_symfile, 4096);
    /* Unregistering one region rebuilds only its 4,096-region symfile. */
    assert_int_equal(jf_unregister(model[5].addr), 0);
    assert_int_equal(read_all(), 8);
    assert_int_equal(n_syms, N - 1);
}

static void unregistered_regions_disappear(void **state)
{
    (void)state;
    size_t at = 0;
    for (size_t i = 0; i < 600; i++) {
        jf_region r = model_add(at, 48);
        at += 56;
        assert_int_equal(jf_register(&r), 0);
    }
    for (size_t i = 0; i < n_model; i += 3) {
        assert_int_equal(jf_unregister(model[i].addr), 0);
        model[i].live = 0;
    }
    read_all();
    check_names();
    /* Unregister the rest: no symfile is left. */
    for (size_t i = 0; i < n_model; i++) {
        if (model[i].live) {
            assert_int_equal(jf_unregister(model[i].addr), 0);
            model[i].live = 0;
        }
    }
    assert_int_equal(read_all(), 0);
}

/* Regions registered while the sink is off are described once it is
 * enabled, and removed like any other: the sink makes its note of a region
 * (a name-only record has no room for one) when it first sees it. */
static void regions_registered_before_enable_are_described(void **state)
{
    (void)state;
    assert_int_equal(jf_disable(JF_SINK_GDB), 0);
    for (size_t i = 0; i < 900; i++) {
        jf_region r = model_add(64 * i, 40);
        assert_int_equal(jf_register(&r), 0);
    }
    for (size_t i = 0; i < n_model; i += 4) {
        assert_int_equal(jf_unregister(model[i].addr), 0);
        model[i].live = 0;
    }
    assert_int_equal(read_all(), 0);
    assert_int_equal(jf_enable(JF_SINK_GDB), 0);
    read_all();
    check_names();
    for (size_t i = 1; i < n_model; i += 2) {
        assert_int_equal(jf_unregister(model[i].addr), 0);
        model[i].live = 0;
    }
    read_all();
    check_names();
    assert_int_equal(jf_disable(JF_SINK_GDB), 0);
    assert_int_equal(read_all(), 0);
    assert_int_equal(jf_enable(JF_SINK_GDB), 0); /* described again: each note was cleared */
    read_all();
    check_names();
}

/* Moved regions (jf_move, jf_move_batch) are named at their new address
 * only, with no overlapping .text left behind; a batch may move a region
 * into the range another one of the batch leaves. */
static void moved_regions_are_named_at_their_new_address(void **state)
{
    (void)state;
    enum { N = 400 };
    jf_region batch[N];
    for (size_t i = 0; i < N; i++)
        batch[i] = model_add(64 * i, 48);
    assert_int_equal(jf_register_batch(batch, N), 0);
    /* One at a time, to free space past the batch. */
    for (size_t i = 0; i < N; i += 7) {
        uint8_t *to = arena + (1 << 20) + 64 * i;
        assert_int_equal(jf_move(model[i].addr, to), 0);
        model[i].addr = to;
    }
    read_all();
    check_names();
    /* A compaction: every odd region slides down into its even neighbour's
     * place, which the even one leaves for the far end. */
    jf_region_move moves[N];
    size_t n = 0;
    for (size_t i = 0; i + 1 < N; i += 2) {
        if (i % 7 == 0 || (i + 1) % 7 == 0)
            continue;
        moves[n++] = (jf_region_move){model[i].addr, arena + (2 << 20) + 64 * i};
        moves[n++] = (jf_region_move){model[i + 1].addr, model[i].addr};
        model[i + 1].addr = model[i].addr;
        model[i].addr = arena + (2 << 20) + 64 * i;
    }
    assert_int_equal(jf_move_batch(moves, n), 0);
    read_all();
    check_names();
    print_message("%zu regions moved in one batch: %zu live symfiles\n", n, read_all());
}

/* A region registered in the padding a merged span covers (or where a dead
 * region was) must not leave two overlapping .text sections. */
static void new_code_inside_an_old_span_splits_it(void **state)
{
    (void)state;
    size_t at = 0;
    for (size_t i = 0; i < 400; i++) {
        jf_region r = model_add(at, 40);
        at += 48; /* 8-byte gaps: one span covers them all */
        assert_int_equal(jf_register(&r), 0);
    }
    read_all();
    size_t spans_before = n_texts;
    /* Tiny regions in the gaps, and reuse of freed slots. */
    for (size_t i = 0; i < 50; i++) {
        jf_region r = model_add(48 * (7 * i + 3) + 40, 8);
        assert_int_equal(jf_register(&r), 0);
    }
    for (size_t i = 100; i < 120; i++) {
        assert_int_equal(jf_unregister(model[i].addr), 0);
        model[i].live = 0;
        jf_region r = model_add((size_t)(model[i].addr - arena) + 4, 16);
        assert_int_equal(jf_register(&r), 0);
    }
    read_all();
    print_message(".text sections: %zu before, %zu after\n", spans_before, n_texts);
    check_names();
}

/* FUNC symbols in every live symfile, without cmocka (for a forked child);
 * -1 if a symfile looks wrong. */
static long count_symbols(void)
{
    long n = 0;
    for (jf__jit_code_entry *e = __jit_debug_descriptor.first_entry; e; e = e->next_entry) {
        const uint8_t *f = (const uint8_t *)e->symfile_addr;
        if (e->symfile_size < 64 || memcmp(f, "\177ELF", 4) != 0)
            return -1;
        uint64_t shoff = le(f + 40, 8);
        unsigned shnum = (unsigned)le(f + 60, 2);
        for (unsigned i = 0; i < shnum; i++)
            if (le(f + shoff + 64ull * i + 4, 4) == 2) /* SHT_SYMTAB */
                n += (long)(le(f + shoff + 64ull * i + 32, 8) / 24) - 1;
    }
    return n;
}

/* The child of a fork gets its own symfiles, built from the regions it
 * inherited, and the parent's stay untouched. */
static void a_forked_child_describes_every_region(void **state)
{
    (void)state;
    jf_region batch[200];
    for (size_t i = 0; i < 200; i++)
        batch[i] = model_add(64 * i, 48);
    assert_int_equal(jf_register_batch(batch, 200), 0);
    for (size_t i = 0; i < 20; i++) {
        jf_region r = model_add(64 * (300 + i), 48);
        assert_int_equal(jf_register(&r), 0);
    }
    size_t before = read_all();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct jf_stats st = JF_STATS_INIT;
        long n = count_symbols();
        _exit(n == 220 && jf_stats(&st) == 0 && st.sink[2].objects >= 1 ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(read_all(), before);
    check_names();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_batch_is_one_symfile, setup, teardown),
        cmocka_unit_test_setup_teardown(singles_merge_into_few_symfiles, setup, teardown),
        cmocka_unit_test_setup_teardown(merging_stops_at_4096_region_symfiles, setup, teardown),
        cmocka_unit_test_setup_teardown(unregistered_regions_disappear, setup, teardown),
        cmocka_unit_test_setup_teardown(new_code_inside_an_old_span_splits_it, setup, teardown),
        cmocka_unit_test_setup_teardown(a_forked_child_describes_every_region, setup, teardown),
        cmocka_unit_test_setup_teardown(moved_regions_are_named_at_their_new_address, setup, teardown),
        cmocka_unit_test_setup_teardown(regions_registered_before_enable_are_described, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
