/* The published table, read back from this process's memory with the
 * CLI's reader (tools/readers/table_reader.c) through process_vm_readv, as another
 * process would: what standby publishes (names, files, lines), the removed
 * ring with removal times, moves, heap blocks reused under churn, the mapping's name
 * in /proc/self/maps and the exported symbol, a forked child's own table,
 * registration that goes on when the table cannot be made, address order
 * that changes neither the table nor the work per registration,
 * generations that name a pc as of a moment, and unwind data. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cfi.h"
#include "jitframes.h"
#include "pub_layout.h"
#include "seccomp_refuse.h"
#include "table_lookup.h"
#include "table_reader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

static uint8_t code[1 << 16] __attribute__((aligned(64)));

/* A child this test forked ends with status 0. */
static void expect_exit_0(pid_t child)
{
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void init_standby(void)
{
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV;
    assert_int_equal(jf_init(&c), 0);
}

static void register_at(size_t off, size_t size, const char *name, const char *file, unsigned line)
{
    jf_region r = JF_REGION_INIT;
    r.addr = code + off;
    r.size = size;
    r.name = name;
    r.file = file;
    r.line = line;
    assert_int_equal(jf_register(&r), 0);
}

/* Read this process's table as an outside reader would. */
static void read_own(tr_snapshot *s)
{
    pid_t self = getpid();
    uint64_t base, size;
    char err[256];
    int rc = tr_find_table(self, &base, &size, err, sizeof err);
    if (rc)
        fail_msg("%s", err);
    rc = tr_read_table(tr_read_process, &self, base, size, NULL, s, err, sizeof err);
    if (rc)
        fail_msg("%s", err);
    assert_true(s->consistent);
    assert_int_equal(s->pid, (uint32_t)self);
}

static void standby_publishes_names_files_and_lines(void **state)
{
    (void)state;
    init_standby();
    register_at(256, 64, "second", NULL, 0);
    register_at(0, 128, "first", "prog.mvm", 12);
    tr_snapshot s;
    read_own(&s);
    assert_int_equal(s.n_live, 2);
    assert_int_equal(s.live[0].start, (uintptr_t)code);
    assert_int_equal(s.live[0].size, 128);
    assert_string_equal(s.live[0].name, "first");
    assert_string_equal(s.live[0].file, "prog.mvm");
    assert_int_equal(s.live[0].line, 12);
    assert_string_equal(s.live[1].name, "second");
    assert_null(s.live[1].file);
    assert_ptr_equal(tr_lookup(&s, (uintptr_t)code + 300), &s.live[1]);
    assert_null(tr_lookup(&s, (uintptr_t)code + 200));
    tr_snapshot_free(&s);
    assert_int_equal(jf_shutdown(), 0);
}

/* A line table is published with its files, kept in the ring after removal
 * and while other regions' heap blocks are freed and reused. */
static void line_tables_are_published_and_survive_removal(void **state)
{
    (void)state;
    init_standby();
    jf_line lines[] = {{0, 10, "a.mvm"}, {8, 11, NULL}, {16, 20, "b.mvm"}};
    jf_region r = JF_REGION_INIT;
    r.addr = code;
    r.size = 32;
    r.name = "with_lines";
    r.file = "a.mvm";
    r.line = 10;
    r.lines = lines;
    r.n_lines = 3;
    assert_int_equal(jf_register(&r), 0);
    tr_snapshot s;
    read_own(&s);
    assert_int_equal(s.n_live, 1);
    assert_int_equal(s.live[0].n_lines, 3);
    assert_int_equal(s.live[0].lines[1].offset, 8);
    assert_int_equal(s.live[0].lines[1].line, 11);
    assert_null(s.live[0].lines[1].file);
    assert_string_equal(s.live[0].lines[2].file, "b.mvm");
    tr_snapshot_free(&s);
    /* Enough churn with long names to wrap the ring: blocks freed and reused. */
    char name[600];
    for (int i = 0; i < 3000; i++) {
        snprintf(name, sizeof name, "filler_%d_%0500d", i, 0);
        register_at(1024, 64, name, NULL, 0);
        assert_int_equal(jf_unregister(code + 1024), 0);
    }
    read_own(&s);
    assert_int_equal(s.live[0].n_lines, 3);
    assert_string_equal(s.live[0].lines[0].file, "a.mvm");
    assert_string_equal(s.live[0].lines[2].file, "b.mvm");
    tr_snapshot_free(&s);
    assert_int_equal(jf_unregister(code), 0);
    read_own(&s);
    assert_string_equal(s.removed[s.n_removed - 1].name, "with_lines");
    assert_int_equal(s.removed[s.n_removed - 1].n_lines, 3);
    assert_string_equal(s.removed[s.n_removed - 1].lines[2].file, "b.mvm");
    tr_snapshot_free(&s);
    assert_int_equal(jf_shutdown(), 0);
}

static void removed_regions_go_to_the_ring_with_their_removal_time(void **state)
{
    (void)state;
    init_standby();
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t before = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    register_at(0, 64, "dies", "f.lua", 3);
    register_at(64, 64, "stays", NULL, 0);
    assert_int_equal(jf_unregister(code), 0);
    tr_snapshot s;
    read_own(&s);
    assert_int_equal(s.n_live, 1);
    assert_string_equal(s.live[0].name, "stays");
    assert_int_equal(s.n_removed, 1);
    assert_string_equal(s.removed[0].name, "dies");
    assert_string_equal(s.removed[0].file, "f.lua");
    assert_true(s.removed[0].removed_ns >= before);
    /* A pc in the dead code is still named (a sample taken before it died). */
    assert_ptr_equal(tr_lookup(&s, (uintptr_t)code + 10), &s.removed[0]);
    tr_snapshot_free(&s);
    assert_int_equal(jf_shutdown(), 0);
}

static void a_moved_region_is_published_at_its_new_address(void **state)
{
    (void)state;
    init_standby();
    register_at(0, 64, "mover", NULL, 0);
    assert_int_equal(jf_move(code, code + 1024), 0);
    tr_snapshot s;
    read_own(&s);
    assert_int_equal(s.n_live, 1);
    assert_int_equal(s.live[0].start, (uintptr_t)code + 1024);
    assert_string_equal(s.live[0].name, "mover");
    assert_int_equal(s.n_removed, 1); /* the old address, for samples taken before */
    assert_int_equal(s.removed[0].start, (uintptr_t)code);
    tr_snapshot_free(&s);
    assert_int_equal(jf_shutdown(), 0);
}

/* Register and unregister far more than the ring and the garbage slack
 * hold, out of address order: compaction keeps exactly the live set. */
static void churn_keeps_exactly_the_live_regions(void **state)
{
    (void)state;
    init_standby();
    enum { SLOTS = 512, ROUNDS = 40 };
    char name[600];
    for (int round = 0; round < ROUNDS; round++)
        for (int k = 0; k < SLOTS; k++) {
            int slot = (k * 37 + round) % SLOTS; /* scattered addresses */
            if (round > 0 && (slot + round) % 3 != 0)
                continue;
            if (round > 0)
                jf_unregister(code + slot * 64);
            snprintf(name, sizeof name, "r%d_s%d_%0500d", round, slot, 0);
            register_at((size_t)slot * 64, 64, name, NULL, (unsigned)slot);
        }
    tr_snapshot s;
    read_own(&s);
    assert_int_equal(s.n_live, SLOTS);
    for (size_t i = 0; i < s.n_live; i++) {
        int slot = (int)((s.live[i].start - (uintptr_t)code) / 64);
        assert_int_equal(s.live[i].line, slot);
        char want[32];
        snprintf(want, sizeof want, "_s%d_", slot);
        assert_non_null(strstr(s.live[i].name, want));
    }
    const void *addr;
    size_t size;
    assert_int_equal(jf_published_table(&addr, &size), 0);
    tr_snapshot_free(&s);
    assert_int_equal(jf_shutdown(), 0);
}

static uint64_t monotonic_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

enum { ORDERED = 300 };

/* Register ORDERED regions of code in the order `order` gives and read
 * the table back. */
static void register_in_order(const size_t *order, tr_snapshot *s)
{
    init_standby();
    char name[32];
    for (size_t i = 0; i < ORDERED; i++) {
        snprintf(name, sizeof name, "fn_%zu", order[i]);
        register_at(order[i] * 64, 32 + order[i] % 32, name, order[i] % 2 ? "odd.lua" : NULL,
                    (unsigned)order[i]);
    }
    read_own(s);
    assert_int_equal(jf_shutdown(), 0);
}

/* Ascending, descending and shuffled registration give the same table:
 * the reader sorts, whatever slots the writer used. */
static void registration_order_does_not_change_the_table(void **state)
{
    (void)state;
    size_t up[ORDERED], down[ORDERED], shuffled[ORDERED];
    for (size_t i = 0; i < ORDERED; i++)
        up[i] = shuffled[i] = i, down[i] = ORDERED - 1 - i;
    srand(25);
    for (size_t i = ORDERED - 1; i > 0; i--) {
        size_t j = (size_t)rand() % (i + 1), t = shuffled[i];
        shuffled[i] = shuffled[j];
        shuffled[j] = t;
    }
    tr_snapshot a, b, c;
    register_in_order(up, &a);
    register_in_order(down, &b);
    register_in_order(shuffled, &c);
    assert_int_equal(a.n_live, ORDERED);
    assert_int_equal(b.n_live, ORDERED);
    assert_int_equal(c.n_live, ORDERED);
    for (size_t i = 0; i < ORDERED; i++) {
        const tr_region *r[3] = {&a.live[i], &b.live[i], &c.live[i]};
        assert_int_equal(r[0]->start, (uintptr_t)code + i * 64);
        for (int k = 1; k < 3; k++) {
            assert_int_equal(r[k]->start, r[0]->start);
            assert_int_equal(r[k]->size, r[0]->size);
            assert_string_equal(r[k]->name, r[0]->name);
            assert_int_equal(r[k]->file != NULL, r[0]->file != NULL);
            assert_int_equal(r[k]->line, r[0]->line);
        }
    }
    tr_snapshot_free(&a);
    tr_snapshot_free(&b);
    tr_snapshot_free(&c);
}

/* Writes of entries so far: every write of a slot adds 2 to its sequence
 * lock. Read from the mapping itself, for slots [0, n). */
static uint64_t entry_writes(const void *table, uint32_t n)
{
    const jf__pub_header *h = table;
    const unsigned char *slots = (const unsigned char *)table + h->entries_off;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n && i < h->entries_capacity; i++)
        sum += *(const uint32_t *)(const void *)(slots + (size_t)i * h->entry_size) / 2;
    return sum;
}

/* Registering in descending address order (the worst case of a sorted
 * array, which shifted every entry up per registration) writes each new
 * entry once: counted by the entries' sequence locks, not timed. */
static void out_of_order_registration_writes_one_entry_each(void **state)
{
    (void)state;
    enum { N = 1000 };
    init_standby();
    const void *table;
    assert_int_equal(jf_published_table(&table, NULL), 0);
    uint64_t before = entry_writes(table, 2 * N);
    for (size_t i = 0; i < N; i++)
        register_at((N - 1 - i) * 64, 64, "down", NULL, 0);
    uint64_t writes = entry_writes(table, 2 * N) - before;
    printf("%d registrations in descending order wrote %llu entries\n", N, (unsigned long long)writes);
    assert_int_equal(writes, N);
    /* Unregistering and registering again, in any order, reuses the slots. */
    for (size_t i = 0; i < N; i += 2)
        assert_int_equal(jf_unregister(code + i * 64), 0);
    for (size_t i = N; i > 0; i -= 2)
        register_at((i - 2) * 64, 64, "again", NULL, 0);
    assert_int_equal(((const jf__pub_header *)table)->entries_used, N);
    assert_int_equal(jf_shutdown(), 0);
}

static uint64_t table_generation(void)
{
    const void *table;
    assert_int_equal(jf_published_table(&table, NULL), 0);
    return __atomic_load_n(&((const jf__pub_header *)table)->generation, __ATOMIC_ACQUIRE);
}

/* A pc noted with the table's generation at sample time is named afterwards
 * by the region live then, even when another took its address since (the
 * eBPF sampler's design); each region says when it was published. */
static void a_pc_is_named_by_the_region_live_at_its_generation(void **state)
{
    (void)state;
    init_standby();
    uint64_t t0 = monotonic_ns(CLOCK_MONOTONIC);
    uint64_t g0 = table_generation();
    register_at(0, 64, "old_code", NULL, 0);
    uint64_t g_old = table_generation();
    assert_int_equal(jf_unregister(code), 0);
    uint64_t g_gap = table_generation();
    register_at(0, 32, "new_code", NULL, 0);
    uint64_t g_new = table_generation();
    uint64_t t1 = monotonic_ns(CLOCK_MONOTONIC);
    tr_snapshot s;
    read_own(&s);
    uintptr_t pc = (uintptr_t)code + 8;
    assert_null(tr_resolve(&s, pc, g0));
    assert_string_equal(tr_resolve(&s, pc, g_old)->name, "old_code");
    assert_null(tr_resolve(&s, pc, g_gap));
    assert_string_equal(tr_resolve(&s, pc, g_new)->name, "new_code");
    assert_null(tr_resolve(&s, (uintptr_t)code + 40, g_new)); /* only the old one was that big */
    /* Sampled during a change (odd): named as just before it. */
    assert_string_equal(tr_resolve(&s, pc, g_gap - 1)->name, "old_code");
    assert_string_equal(tr_resolve(&s, pc, g_new - 1)->name, "new_code");
    const tr_region *live = &s.live[0];
    assert_int_equal(live->published_gen, g_new);
    assert_int_equal(live->removed_gen, 0);
    assert_int_equal(s.removed[0].removed_gen, g_gap);
    /* The coarse clock: never after the precise one, at most a few ticks before. */
    assert_true(live->published_ns <= t1);
    assert_true(live->published_ns + 100000000u >= t0);
    assert_true(s.removed[0].published_ns <= live->published_ns);
    /* Published after that removal: never stamped before it (a jitdump's
     * CODE_LOAD must not precede the CODE_UNLOAD of the code it replaced). */
    assert_true(live->published_ns >= s.removed[0].removed_ns);
    tr_snapshot_free(&s);
    uint64_t g;
    const void *table;
    size_t size;
    assert_int_equal(jf_published_table(&table, &size), 0);
    pid_t self = getpid();
    assert_int_equal(tr_sample_generation(tr_read_process, &self, (uintptr_t)table, size, &g), TR_FOUND);
    assert_int_equal(g, g_new);
    assert_int_equal(jf_shutdown(), 0);
}

/* A region registered with CFI carries the unwinding data of a jitdump
 * CODE_UNWINDING_INFO for its size, byte for byte what the library's
 * emitter gives for the caller's description, in the ring too; every
 * region sharing one description carries it. */
static void unwind_data_is_published_where_registered(void **state)
{
    (void)state;
    init_standby();
    jf_cfi *cfi;
    if (jf_cfi_new(&cfi) != 0)
        skip(); /* an architecture without unwind descriptions */
    assert_int_equal(jf_cfi_add_frameless(cfi, 0, 16, 8), 0);
    assert_int_equal(jf_cfi_add_frameless(cfi, 16, 48, 24), 0);
    jf_region r = JF_REGION_INIT;
    r.addr = code;
    r.size = 64;
    r.name = "with_cfi";
    r.cfi = cfi;
    assert_int_equal(jf_register(&r), 0);
    r.addr = code + 128;
    r.name = "same_cfi";
    assert_int_equal(jf_register(&r), 0);
    register_at(256, 64, "no_cfi", NULL, 0);
    uint8_t want[1024];
    jf__eh_image img;
    assert_int_equal(
        jf__cfi_emit(cfi, JF_EH_LAYOUT_PERF_JITDUMP, (uintptr_t)code, 64, 0, want, sizeof want, &img), 0);
    tr_snapshot s;
    read_own(&s);
    assert_int_equal(s.n_live, 3);
    for (int i = 0; i < 2; i++) {
        assert_non_null(s.live[i].unwind);
        assert_int_equal(s.live[i].unwind_len, img.eh_frame_size + img.hdr_size);
        assert_int_equal(s.live[i].unwind_hdr_len, img.hdr_size);
        assert_memory_equal(s.live[i].unwind, want, s.live[i].unwind_len);
    }
    assert_null(s.live[2].unwind);
    assert_int_equal(s.live[2].unwind_len, 0);
    tr_snapshot_free(&s);
    /* A lying description (as a hostile target could write): an FDE past
     * the region, then an opcode the checks refuse. The region keeps its
     * name; its unwind data is left out. */
    const void *table;
    assert_int_equal(jf_published_table(&table, NULL), 0);
    const jf__pub_header *h = table;
    jf__pub_entry *e = (jf__pub_entry *)(void *)((char *)table + h->entries_off); /* slot 0: "with_cfi" */
    assert_int_equal(e->start, (uintptr_t)code);
    uint8_t *blob = (uint8_t *)table + h->heap_off + e->cfi_off;
    uint32_t cie_len;
    memcpy(&cie_len, blob + 12, 4);
    uint8_t *fde = blob + sizeof(jf__pub_cfi) + cie_len;
    uint32_t end = 4096, saved_end;
    memcpy(&saved_end, fde + 4, 4);
    memcpy(fde + 4, &end, 4);
    read_own(&s);
    assert_string_equal(s.live[0].name, "with_cfi");
    assert_null(s.live[0].unwind);
    tr_snapshot_free(&s);
    memcpy(fde + 4, &saved_end, 4);
    blob[sizeof(jf__pub_cfi)] = 0x16; /* the CIE's first opcode: DW_CFA_val_expression, its block cut short */
    read_own(&s);
    assert_null(s.live[0].unwind);
    assert_non_null(s.live[1].unwind); /* its own copy is sound */
    tr_snapshot_free(&s);
    /* Shared, as trampolines share their template's: serialized once, the
     * same bytes for every region. */
    assert_int_equal(jf__cfi_share(cfi), 0);
    for (int i = 0; i < 3; i++) {
        r.addr = code + 512 + 128 * i;
        r.name = "shared_cfi";
        assert_int_equal(jf_register(&r), 0);
    }
    read_own(&s);
    assert_int_equal(s.n_live, 6);
    for (size_t i = 3; i < 6; i++) {
        assert_string_equal(s.live[i].name, "shared_cfi");
        assert_int_equal(s.live[i].unwind_len, img.eh_frame_size + img.hdr_size);
        assert_memory_equal(s.live[i].unwind, want, s.live[i].unwind_len);
    }
    tr_snapshot_free(&s);
    assert_int_equal(jf_unregister(code), 0);
    read_own(&s);
    assert_string_equal(s.removed[0].name, "with_cfi");
    assert_memory_equal(s.removed[0].unwind, want, s.removed[0].unwind_len);
    tr_snapshot_free(&s);
    jf_cfi_free(cfi);
    assert_int_equal(jf_shutdown(), 0);
}

/* The table starts smaller (~28 MiB of address space, not ~200) and
 * grows eightfold into a new mapping when full: every region stays published, the
 * old mapping is gone, and a reader holding its address finds the new one. */
static void a_full_table_grows_into_a_new_mapping(void **state)
{
    (void)state;
    enum { MANY = 140000, SMALL = 16 };
    uint8_t *many = calloc(MANY, SMALL);
    assert_non_null(many);
    init_standby();
    const void *first;
    size_t first_size;
    assert_int_equal(jf_published_table(&first, &first_size), 0);
    assert_true(first_size < (32u << 20));
    char name[32];
    for (size_t i = 0; i < MANY; i++) {
        jf_region r = JF_REGION_INIT;
        r.addr = many + (MANY - 1 - i) * SMALL; /* descending, for good measure */
        r.size = SMALL;
        snprintf(name, sizeof name, "many_%zu", MANY - 1 - i);
        r.name = name;
        assert_int_equal(jf_register(&r), 0);
    }
    const void *now;
    size_t now_size;
    assert_int_equal(jf_published_table(&now, &now_size), 0);
    assert_ptr_equal(jf_region_table, now);
    printf("table: %zu bytes at first, %zu after %d registrations\n", first_size, now_size, MANY);
    assert_true(now_size > first_size);
    pid_t self = getpid();
    tr_snapshot s;
    char err[256];
    /* A reader still holding the first address: no table there now. */
    assert_int_not_equal(
        tr_read_table(tr_read_process, &self, (uintptr_t)first, first_size, NULL, &s, err, sizeof err), 0);
    assert_int_equal(tr_read_pid(self, NULL, &s, err, sizeof err), 0);
    assert_int_equal(s.n_live, MANY);
    for (size_t i = 0; i < MANY; i += 9973) {
        snprintf(name, sizeof name, "many_%zu", i);
        assert_string_equal(s.live[i].name, name);
    }
    tr_snapshot_free(&s);
    /* One mapping of that name only. */
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    int mappings = 0;
    while (maps && fgets(line, sizeof line, maps))
        mappings += strstr(line, "jitframes-regions") != NULL;
    if (maps)
        fclose(maps);
    assert_true(mappings <= 1);
    assert_int_equal(jf_shutdown(), 0);
    free(many);
}

/* The name /proc/self/maps gives the mapping that starts at `start` ("" for
 * none); -1 if no mapping starts there. */
static int name_of_mapping_at(uintptr_t start, char *name, size_t cap)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    int rc = -1;
    while (rc && maps && fgets(line, sizeof line, maps)) {
        unsigned long lo;
        int name_at = 0;
        if (sscanf(line, "%lx-%*x %*s %*x %*x:%*x %*u %n", &lo, &name_at) < 1 || lo != start || !name_at)
            continue;
        line[strcspn(line, "\n")] = '\0';
        snprintf(name, cap, "%s", line + name_at);
        rc = 0;
    }
    if (maps)
        fclose(maps);
    return rc;
}

/* Whether this kernel names anonymous mappings (5.17+, CONFIG_ANON_VMA_NAME). */
static int kernel_names_anonymous_mappings(void)
{
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    int named = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, 4096UL, (unsigned long)"probe") ==
                0;
    munmap(p, 4096);
    return named;
}

/* The name of this process's table's mapping (a fresh jf_init in it). */
static void first_table_name(char *name, size_t cap)
{
    init_standby();
    register_at(0, 64, "first", NULL, 0);
    const void *addr;
    assert_int_equal(jf_published_table(&addr, NULL), 0);
    assert_int_equal(name_of_mapping_at((uintptr_t)addr, name, cap), 0);
    uint64_t base, size;
    char err[256];
    if (tr_find_table(getpid(), &base, &size, err, sizeof err) != 0) /* as a reader finds it */
        fail_msg("%s", err);
    assert_int_equal(base, (uintptr_t)addr);
    assert_int_equal(jf_shutdown(), 0);
}

/* The table is anonymous memory (half a memfd's cost a page), named where
 * the kernel can name it, so readers find it by that name; else unnamed,
 * and readers find it by its header. Each in a fresh child: a table is kept
 * for the process's next jf_init. */
static void the_first_table_is_anonymous_and_named_where_the_kernel_can(void **state)
{
    (void)state;
    pid_t child = fork();
    if (child == 0) {
        char name[256];
        first_table_name(name, sizeof name);
        const char *want = kernel_names_anonymous_mappings() ? "[anon:" JF_PUB_NAME "]" : "";
        printf("first table: '%s'\n", name);
        fflush(stdout);
        _exit(strcmp(name, want) == 0 ? 0 : 1);
    }
    expect_exit_0(child);
}

/* An older kernel (naming an anonymous mapping fails with EINVAL), and
 * RLIMIT_FSIZE below the table's size (a file that big, a memfd, would
 * raise SIGXFSZ and kill the host): an unnamed anonymous table that a
 * reader finds by its header and reads. */
static void a_kernel_that_cannot_name_mappings_gets_an_unnamed_table_readers_find(void **state)
{
    (void)state;
    pid_t child = fork();
    if (child == 0) {
        struct rlimit small = {4096, 4096};
        if (setrlimit(RLIMIT_FSIZE, &small) != 0 ||
            test_seccomp_refuse(__NR_prctl, 0, UINT32_MAX, PR_SET_VMA, EINVAL) != 0)
            _exit(3);
        if (kernel_names_anonymous_mappings())
            _exit(4);
        char name[256];
        first_table_name(name, sizeof name); /* tr_find_table finds it */
        if (name[0])
            _exit(7);
        init_standby();
        register_at(0, 64, "unnamed_table", NULL, 0);
        tr_snapshot s;
        char err[256];
        int ok = tr_read_pid(getpid(), NULL, &s, err, sizeof err) == 0 && s.n_live == 1 &&
                 strcmp(s.live[0].name, "unnamed_table") == 0;
        _exit(ok ? 0 : 6);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    if (WIFSIGNALED(status))
        fail_msg("killed by signal %d", WTERMSIG(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void the_mapping_is_named_and_the_symbol_points_at_it(void **state)
{
    (void)state;
    init_standby();
    const void *addr;
    size_t size;
    assert_int_equal(jf_published_table(&addr, &size), 0);
    assert_ptr_equal(jf_region_table, addr);
    assert_memory_equal(addr, JF_PUB_SIGNATURE, 8);
    uint64_t base, found_size;
    char err[256];
    assert_int_equal(tr_find_table(getpid(), &base, &found_size, err, sizeof err), 0);
    assert_int_equal(base, (uintptr_t)addr);
    assert_int_equal(found_size, size);
    assert_int_equal(jf_shutdown(), 0);
    /* Unpublished (kept for a later jf_init): no symbol, no signature. */
    assert_null(jf_region_table);
    tr_snapshot s;
    pid_t self = getpid();
    assert_int_not_equal(tr_read_table(tr_read_process, &self, base, found_size, NULL, &s, err, sizeof err),
                         0);
    assert_non_null(strstr(err, "signature"));
    /* A later jf_init publishes again, empty. */
    init_standby();
    read_own(&s);
    assert_int_equal(s.n_live, 0);
    assert_int_equal(s.n_removed, 0);
    tr_snapshot_free(&s);
    assert_int_equal(jf_shutdown(), 0);
}

static void a_forked_child_publishes_its_own_table(void **state)
{
    (void)state;
    init_standby();
    register_at(0, 64, "inherited", NULL, 0);
    const void *parent_table = jf_region_table;
    pid_t child = fork();
    if (child == 0) {
        register_at(64, 64, "child_only", NULL, 0);
        tr_snapshot s;
        pid_t self = getpid();
        uint64_t base, size;
        char err[256];
        int ok = tr_find_table(self, &base, &size, err, sizeof err) == 0 &&
                 tr_read_table(tr_read_process, &self, base, size, NULL, &s, err, sizeof err) == 0 &&
                 s.pid == (uint32_t)self && s.n_live == 2 && strcmp(s.live[0].name, "inherited") == 0 &&
                 strcmp(s.live[1].name, "child_only") == 0;
        _exit(ok ? 0 : 1);
    }
    expect_exit_0(child);
    tr_snapshot s;
    read_own(&s); /* the parent's own, untouched */
    assert_ptr_equal(jf_region_table, parent_table);
    assert_int_equal(s.n_live, 1);
    tr_snapshot_free(&s);
    assert_int_equal(jf_shutdown(), 0);
}

/* No address space for the table: jf_init and registration still succeed,
 * and jf_published_table says why there is no table. */
static void registration_works_when_the_table_cannot_be_made(void **state)
{
    (void)state;
    pid_t child = fork();
    if (child == 0) {
        struct rlimit tight = {0};
        getrlimit(RLIMIT_AS, &tight);
        /* Just above what the process already uses: no room for the table. */
        FILE *f = fopen("/proc/self/statm", "r");
        unsigned long pages = 0;
        if (!f || fscanf(f, "%lu", &pages) != 1)
            _exit(3);
        fclose(f);
        tight.rlim_cur = pages * (unsigned long)getpagesize() +
                         (2u << 20); /* the smallest table is 2.9 MiB */
        if (setrlimit(RLIMIT_AS, &tight) != 0)
            _exit(3);
        jf_config c = JF_CONFIG_INIT;
        c.flags = JF_CONFIG_IGNORE_ENV;
        if (jf_init(&c) != 0)
            _exit(4);
        jf_region r = JF_REGION_INIT;
        r.addr = code;
        r.size = 64;
        r.name = "still_registered";
        if (jf_register(&r) != 0 || jf_unregister(code) != 0)
            _exit(5);
        const void *addr = (void *)1;
        int rc = jf_published_table(&addr, NULL);
        _exit(rc == JF_ENOMEM && addr == NULL && strstr(jf_last_error(), "published table") ? 0 : 6);
    }
    expect_exit_0(child);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(standby_publishes_names_files_and_lines),
        cmocka_unit_test(line_tables_are_published_and_survive_removal),
        cmocka_unit_test(removed_regions_go_to_the_ring_with_their_removal_time),
        cmocka_unit_test(a_moved_region_is_published_at_its_new_address),
        cmocka_unit_test(churn_keeps_exactly_the_live_regions),
        cmocka_unit_test(registration_order_does_not_change_the_table),
        cmocka_unit_test(out_of_order_registration_writes_one_entry_each),
        cmocka_unit_test(a_pc_is_named_by_the_region_live_at_its_generation),
        cmocka_unit_test(unwind_data_is_published_where_registered),
        cmocka_unit_test(a_full_table_grows_into_a_new_mapping),
        cmocka_unit_test(the_mapping_is_named_and_the_symbol_points_at_it),
        cmocka_unit_test(a_forked_child_publishes_its_own_table),
        cmocka_unit_test(registration_works_when_the_table_cannot_be_made),
        cmocka_unit_test(the_first_table_is_anonymous_and_named_where_the_kernel_can),
        cmocka_unit_test(a_kernel_that_cannot_name_mappings_gets_an_unnamed_table_readers_find),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
