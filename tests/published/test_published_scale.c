/* The published table at scale (issue 31): a table filled far past the old
 * 64 MiB heap keeps every region published and takes each change with O(1)
 * entry writes (counted by the entries' sequence locks, not timed; a
 * whole-heap compaction rewrote every entry per change); a removed region's
 * unwind description and lines stay readable in the ring until its ring
 * slot is reused; and when memory truly runs out, the oldest removed
 * regions give their heap up first and what is still refused is counted
 * (jf_stats, the header) instead of vanishing. Read back with the CLI's
 * reader (tools/readers/table_reader.c) as another process would. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cfi.h"
#include "jitframes.h"
#include "pub_layout.h"
#include "table_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

enum { SPACING = 16 };

static void init_standby(void)
{
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV;
    assert_int_equal(jf_init(&c), 0);
}

static const jf__pub_header *table_header(void)
{
    const void *table = NULL;
    assert_int_equal(jf_published_table(&table, NULL), 0);
    return table;
}

/* Writes of entries so far, live array and ring: every write of a slot
 * adds 2 to its sequence lock (a growth copies the locks with the slots). */
static uint64_t entry_writes(void)
{
    const jf__pub_header *h = table_header();
    const unsigned char *base = (const unsigned char *)h;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < h->entries_used; i++)
        sum += *(const uint32_t *)(const void *)(base + h->entries_off + (size_t)i * h->entry_size) / 2;
    for (uint32_t i = 0; i < h->ring_capacity; i++)
        sum += *(const uint32_t *)(const void *)(base + h->ring_off + (size_t)i * h->entry_size) / 2;
    return sum;
}

/* The shapes a filled table is tried with. */
typedef struct shape {
    size_t n;        /* live regions */
    size_t name_len; /* bytes of each name */
    size_t n_lines;  /* rows of each line table */
} shape;

/* Region i's name in its version v (0: first registration): name_len bytes. */
static void name_of(const shape *sh, size_t i, unsigned v, char *buf)
{
    int n = snprintf(buf, sh->name_len + 1, "r%zu_v%u_", i, v);
    memset(buf + n, 'x', sh->name_len - (size_t)n);
    buf[sh->name_len] = '\0';
}

static void register_version(const shape *sh, uint8_t *code, size_t i, unsigned v, const jf_line *lines)
{
    char name[512];
    name_of(sh, i, v, name);
    jf_region r = JF_REGION_INIT;
    r.addr = code + i * SPACING;
    r.size = SPACING;
    r.name = name;
    r.file = sh->n_lines ? "prog.mvm" : NULL; /* a line table needs a file */
    r.lines = sh->n_lines ? lines : NULL;
    r.n_lines = sh->n_lines;
    assert_int_equal(jf_register(&r), 0);
}

/* Every live region read back as registered, nothing dropped. */
static void check_all_published(const shape *sh, const uint8_t *code, const unsigned *version)
{
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.table_dropped, 0);
    tr_snapshot s;
    char err[256];
    if (tr_read_pid(getpid(), NULL, &s, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_true(s.consistent);
    assert_int_equal(s.flags & JF_PUB_INCOMPLETE, 0);
    assert_int_equal(s.dropped, 0);
    assert_int_equal(s.n_live, sh->n);
    char name[512];
    for (size_t i = 0; i < sh->n; i++) { /* sorted by address: region i is live[i] */
        assert_int_equal(s.live[i].start, (uintptr_t)(code + i * SPACING));
        name_of(sh, i, version[i], name);
        assert_string_equal(s.live[i].name, name);
        assert_int_equal(s.live[i].n_lines, sh->n_lines);
        if (sh->n_lines)
            assert_int_equal(s.live[i].lines[sh->n_lines - 1].line, sh->n_lines);
    }
    tr_snapshot_free(&s);
}

/* Fill the table with sh->n regions, then make `rings` times as many
 * changes as the ring holds (a region unregistered, another version
 * registered at its address) in scattered order: every change writes O(1)
 * entries and the heap stops growing once the ring recycles blocks. */
static void fill_and_churn(const shape *sh, size_t rings)
{
    uint8_t *code = calloc(sh->n, SPACING);
    unsigned *version = calloc(sh->n, sizeof *version);
    jf_line *lines = calloc(sh->n_lines ? sh->n_lines : 1, sizeof *lines);
    assert_non_null(code);
    assert_non_null(version);
    assert_non_null(lines);
    for (size_t k = 0; k < sh->n_lines; k++)
        lines[k] = (jf_line){k * SPACING / sh->n_lines, (unsigned)k + 1, NULL}; /* sorted by offset */
    init_standby();
    for (size_t i = 0; i < sh->n; i++)
        register_version(sh, code, i, 0, lines);
    const jf__pub_header *h = table_header();
    printf("%zu regions (%zu-byte names, %zu-row line tables): heap %u of %u bytes, %u slots\n", sh->n,
           sh->name_len, sh->n_lines, h->heap_used, h->heap_capacity, h->entries_capacity);
    assert_true(h->heap_used > (64u << 20)); /* past the old heap's cap */
    check_all_published(sh, code, version);
    uint64_t writes_before = entry_writes();
    uint64_t heap_before = table_header()->heap_used;
    uint32_t ring = table_header()->ring_capacity; /* it grows with the slots */
    size_t changes = rings * ring;
    for (size_t k = 0; k < changes; k++) {
        size_t i = (k * 7919) % sh->n;
        assert_int_equal(jf_unregister(code + i * SPACING), 0);
        register_version(sh, code, i, ++version[i], lines);
    }
    uint64_t writes = entry_writes() - writes_before;
    h = table_header();
    printf("%zu changes wrote %llu entries (%.2f per change); heap %llu -> %u bytes\n", changes,
           (unsigned long long)writes, (double)writes / (double)changes, (unsigned long long)heap_before,
           h->heap_used);
    /* A change: its ring entry, its emptied slot, its new entry. */
    assert_true(writes <= 3 * changes);
    /* Blocks are reused: the heap grew by at most what the ring holds. */
    size_t block = sh->name_len + 1 + (sh->n_lines ? 4 + 16 * sh->n_lines : 0);
    assert_true(h->heap_used <= heap_before + (uint64_t)(ring + 1) * (block + block / 4 + 16));
    check_all_published(sh, code, version);
    assert_int_equal(jf_shutdown(), 0);
    free(lines);
    free(version);
    free(code);
}

static void a_table_of_line_tables_past_64_mib_takes_changes_in_o1_writes(void **state)
{
    (void)state;
    shape sh = {45000, 24, 100};
    fill_and_churn(&sh, 3);
}

static void a_table_of_long_names_past_64_mib_takes_changes_in_o1_writes(void **state)
{
    (void)state;
    shape sh = {220000, 300, 0};
    fill_and_churn(&sh, 3);
}

/* A description with two FDEs, or NULL where there are none. */
static jf_cfi *two_fde_cfi(void)
{
    jf_cfi *cfi;
    if (jf_cfi_new(&cfi) != 0)
        return NULL;
    assert_int_equal(jf_cfi_add_frameless(cfi, 0, 16, 8), 0);
    assert_int_equal(jf_cfi_add_frameless(cfi, 16, 48, 24), 0);
    return cfi;
}

static void register_with(uint8_t *addr, const char *name, const char *file, jf_cfi *cfi,
                          const jf_line *lines, size_t n_lines)
{
    jf_region r = JF_REGION_INIT;
    r.addr = addr;
    r.size = 64;
    r.name = name;
    r.file = file;
    r.cfi = cfi;
    r.lines = lines;
    r.n_lines = n_lines;
    if (jf_register(&r) != 0)
        fail_msg("%s", jf_last_error());
}

/* The ring entry named `name`, or NULL. */
static const tr_region *removed_named(const tr_snapshot *s, const char *name)
{
    for (size_t i = 0; i < s->n_removed; i++)
        if (strcmp(s->removed[i].name, name) == 0)
            return &s->removed[i];
    return NULL;
}

/* What `record` takes of a region that died between two reads: its ring
 * entry keeps its unwind description and lines while others churn (their
 * blocks freed and reused all along), until its own ring slot is reused. */
static void a_removed_regions_unwind_rules_and_lines_stay_until_its_ring_slot_is_reused(void **state)
{
    (void)state;
    static uint8_t code[2 * 64] __attribute__((aligned(64)));
    jf_cfi *cfi = two_fde_cfi();
    if (!cfi)
        skip(); /* an architecture without unwind descriptions */
    jf_line lines[] = {{0, 10, "a.mvm"}, {8, 11, NULL}, {16, 20, "b.mvm"}};
    init_standby();
    const int ring = (int)table_header()->ring_capacity; /* a table kept from a test before may have grown */
    char name[64];
    /* The ring full already: every removal from here frees the oldest block. */
    for (int k = 0; k < 2 * ring; k++) {
        snprintf(name, sizeof name, "before_%05d", k);
        register_with(code + 64, name, "a.mvm", cfi, lines, 3);
        assert_int_equal(jf_unregister(code + 64), 0);
    }
    register_with(code, "dies_young_x", "a.mvm", cfi, lines, 3);
    assert_int_equal(jf_unregister(code), 0);
    for (int k = 0; k < ring - 1; k++) { /* names of one length: one block class, dies_young's */
        snprintf(name, sizeof name, "after_%06d", k);
        register_with(code + 64, name, "a.mvm", cfi, lines, 3);
        assert_int_equal(jf_unregister(code + 64), 0);
    }
    uint8_t want[1024];
    jf__eh_image img;
    assert_int_equal(
        jf__cfi_emit(cfi, JF_EH_LAYOUT_PERF_JITDUMP, (uintptr_t)code, 64, 0, want, sizeof want, &img), 0);
    tr_snapshot s;
    char err[256];
    if (tr_read_pid(getpid(), NULL, &s, err, sizeof err) != 0)
        fail_msg("%s", err);
    const tr_region *gone = removed_named(&s, "dies_young_x");
    assert_non_null(gone);
    assert_int_equal(gone->start, (uintptr_t)code);
    assert_non_null(gone->unwind);
    assert_int_equal(gone->unwind_len, img.eh_frame_size + img.hdr_size);
    assert_memory_equal(gone->unwind, want, gone->unwind_len);
    assert_int_equal(gone->n_lines, 3);
    assert_int_equal(gone->lines[1].line, 11);
    assert_string_equal(gone->lines[2].file, "b.mvm");
    tr_snapshot_free(&s);
    /* One more removal reuses its ring slot: it is gone, its block free. */
    register_with(code + 64, "last", "a.mvm", cfi, lines, 3);
    assert_int_equal(jf_unregister(code + 64), 0);
    if (tr_read_pid(getpid(), NULL, &s, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_null(removed_named(&s, "dies_young_x"));
    tr_snapshot_free(&s);
    jf_cfi_free(cfi);
    assert_int_equal(jf_shutdown(), 0);
}

/* Live and removed entries of the table, read in place. */
static void count_entries(const jf__pub_header *h, uint32_t *live, uint32_t *removed)
{
    const unsigned char *base = (const unsigned char *)h;
    *live = *removed = 0;
    for (uint32_t i = 0; i < h->entries_used; i++)
        *live += ((const jf__pub_entry *)(const void *)(base + h->entries_off))[i].flags == JF_PUB_LIVE;
    for (uint32_t i = 0; i < h->ring_capacity; i++)
        *removed += ((const jf__pub_entry *)(const void *)(base + h->ring_off))[i].flags == JF_PUB_REMOVED;
}

/* 4 KiB blocks: the first heap (16 MiB) holds 4,096; 5,500 registrations
 * of which 1,000 removed need 4,500 (with an 8 MiB heap OOM_NEW was 2,000). */
enum { OOM_FILE = 4000, OOM_FIRST = 1500, OOM_REMOVED = 1000, OOM_NEW = 4000 };

/* In a child whose address space cannot hold a bigger table: regions with
 * 4 KB file names fill the heap; OOM_REMOVED of them are removed (their
 * blocks held by the ring); new ones take the heap's rest, then the ring's
 * blocks (oldest first), and only then are refused: counted in jf_stats and
 * the header, jf_published_table says so, and registration still succeeds.
 * Exit status: 0, or which check failed. */
static int fill_until_memory_runs_out(void)
{
    static uint8_t code[(OOM_FIRST + OOM_NEW) * SPACING];
    static char file[OOM_FILE + 1];
    memset(file, 'f', OOM_FILE);
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV;
    if (jf_init(&c) != 0)
        return 2;
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!f || fscanf(f, "%lu", &pages) != 1)
        return 3;
    fclose(f);
    /* 32 MiB more than now: room for the registry's copies, none for a
     * table with an eightfold heap (~141 MiB). */
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) != 0)
        return 3;
    as.rlim_cur = pages * (unsigned long)getpagesize() + (32u << 20);
    if (setrlimit(RLIMIT_AS, &as) != 0)
        return 3;
    char name[32];
    for (int i = 0; i < OOM_FIRST + OOM_NEW; i++) {
        if (i == OOM_FIRST) /* the first OOM_REMOVED die: the ring holds their blocks */
            for (int k = 0; k < OOM_REMOVED; k++)
                if (jf_unregister(code + k * SPACING) != 0)
                    return 4;
        jf_region r = JF_REGION_INIT;
        snprintf(name, sizeof name, "r%d", i);
        r.addr = code + i * SPACING;
        r.size = SPACING;
        r.name = name;
        r.file = file;
        if (jf_register(&r) != 0)
            return 5;
    }
    struct jf_stats st = JF_STATS_INIT;
    const void *addr = NULL;
    if (jf_stats(&st) != 0 || st.table_dropped == 0)
        return 6;
    if (jf_published_table(&addr, NULL) != JF_ERANGE || !strstr(jf_last_error(), "not published"))
        return 7;
    const jf__pub_header *h = addr;
    if (!(h->flags & JF_PUB_INCOMPLETE) || h->dropped != st.table_dropped)
        return 8;
    uint32_t live, removed;
    count_entries(h, &live, &removed);
    printf("memory ran out: %u live published, %u removed kept, %llu dropped of %d registrations\n", live,
           removed, (unsigned long long)st.table_dropped, OOM_FIRST + OOM_NEW);
    if (removed != 0) /* every removed region gave its block up before a registration was refused */
        return 9;
    if (live + st.table_dropped != OOM_FIRST + OOM_NEW - OOM_REMOVED || h->live_count != live)
        return 10;
    if (jf_shutdown() != 0 || jf_stats(&st) != 0 || st.table_dropped != 0) /* counters are 0 after the last */
        return 11;
    return 0;
}

static void when_memory_runs_out_removed_regions_give_way_then_refusals_are_counted(void **state)
{
    (void)state;
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        int rc = fill_until_memory_runs_out();
        fflush(stdout);
        _exit(rc);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    if (WIFSIGNALED(status))
        fail_msg("killed by signal %d", WTERMSIG(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_table_of_line_tables_past_64_mib_takes_changes_in_o1_writes),
        cmocka_unit_test(a_table_of_long_names_past_64_mib_takes_changes_in_o1_writes),
        cmocka_unit_test(a_removed_regions_unwind_rules_and_lines_stay_until_its_ring_slot_is_reused),
        cmocka_unit_test(when_memory_runs_out_removed_regions_give_way_then_refusals_are_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
