/* What the published table's cheaper changes rely on (src/published.c,
 * bench/standby_cost.sh): the first heap holds 100,000 regions with a file
 * and a 4-row line table without growing, every entry notes the size class
 * of its heap block (freed by it when the ring reuses the slot, measured
 * again when it is out of range), line offsets of a region past 4 GiB are
 * still cut to UINT32_MAX, unwind instructions of every length are
 * published whole (they are copied without memcpy calls), and trampolines
 * name one shared copy of their template's unwind description. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cfi.h"
#include "jitframes.h"
#include "pub_blocks.h"
#include "pub_layout.h"
#include "table_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void init_standby(void)
{
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV;
    assert_int_equal(jf_init(&c), 0);
}

static const jf__pub_header *table_header(void)
{
    const void *table;
    assert_int_equal(jf_published_table(&table, NULL), 0);
    return table;
}

static jf__pub_entry *entry_at(const jf__pub_header *h, uint32_t off, uint32_t i)
{
    return (jf__pub_entry *)(void *)((char *)h + off + (size_t)i * sizeof(jf__pub_entry));
}

/* The entry with `flags` of the region starting at start, among the n
 * entries at offset off of the table (the live array or the ring). */
static jf__pub_entry *find_entry(uint32_t off, uint32_t n, uint32_t flags, uintptr_t start)
{
    const jf__pub_header *h = table_header();
    for (uint32_t i = 0; i < n; i++) {
        jf__pub_entry *e = entry_at(h, off, i);
        if (e->flags == flags && e->start == start)
            return e;
    }
    fail_msg("no entry with flags %u at %#lx", flags, (unsigned long)start);
    return NULL;
}

/* The live entry of the region starting at start. */
static jf__pub_entry *live_entry(uintptr_t start)
{
    const jf__pub_header *h = table_header();
    return find_entry(h->entries_off, h->entries_used, JF_PUB_LIVE, start);
}

static void tr_read_own(tr_snapshot *s)
{
    pid_t self = getpid();
    char err[256];
    if (tr_read_pid(self, NULL, s, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_true(s->consistent);
}

static const jf_line lines4[] = {{0, 10, NULL}, {8, 11, NULL}, {24, 12, NULL}, {40, 14, NULL}};

/* The shape bench/standby_cost.sh measures as "lines": a name, a file and a
 * 4-row line table, ~90 heap bytes each. The first table (131,072 slots,
 * 16 MiB of heap) holds 100,000 of them without a growth (it grew once at
 * 16,384 slots, whose copy callgrind counted per byte; with 64 heap bytes
 * a slot it grew again at ~87,000 of them, copying the table
 * mid-benchmark). */
static void line_table_regions_by_the_hundred_thousand_never_grow_the_table(void **state)
{
    (void)state;
    enum { N = 100000, SIZE = 64 };
    init_standby();
    const void *seen;
    size_t seen_size;
    assert_int_equal(jf_published_table(&seen, &seen_size), 0);
    unsigned moves = 0;
    uintptr_t base = (uintptr_t)1 << 40; /* never touched: standby reads no code */
    char name[32];
    for (size_t i = 0; i < N; i++) {
        jf_region r = JF_REGION_INIT;
        r.addr = (void *)(base + i * SIZE);
        r.size = SIZE;
        snprintf(name, sizeof name, "jit_fn_%zu", i);
        r.name = name;
        r.file = "prog.mvm";
        r.line = 10;
        r.lines = lines4;
        r.n_lines = 4;
        assert_int_equal(jf_register(&r), 0);
        const void *now;
        size_t now_size;
        assert_int_equal(jf_published_table(&now, &now_size), 0);
        if (now != seen || now_size != seen_size)
            moves++, seen = now, seen_size = now_size;
    }
    const jf__pub_header *h = seen;
    printf("%d regions: heap %u of %u bytes; mapping %zu bytes; %u growths\n", N, h->heap_used,
           h->heap_capacity, seen_size, moves);
    assert_int_equal(moves, 0);
    assert_int_equal(jf_shutdown(), 0);
}

/* A region's heap bytes: name, file, line table (jf__pub_lines + rows). */
static uint64_t block_bytes(const char *name, const char *file, size_t n_lines)
{
    uint64_t n = strlen(name) + 1 + (file ? strlen(file) + 1 : 0);
    return n + (n_lines ? sizeof(jf__pub_lines) + n_lines * sizeof(jf__pub_line) : 0);
}

/* Each entry notes its block's class; a removal past the ring frees the
 * block by that class, so churn of one shape reuses the same blocks and
 * the heap stops growing. */
static void every_entry_notes_its_heap_block_class(void **state)
{
    (void)state;
    enum { SIZE = 64 };
    init_standby();
    const uint32_t ring = table_header()->ring_capacity; /* 4096, more in a table kept grown */
    uintptr_t base = (uintptr_t)1 << 40;
    const char *name = "a_name_long_enough_for_a_larger_class";
    jf_region r = JF_REGION_INIT;
    r.size = SIZE;
    r.name = name;
    r.file = "prog.mvm";
    r.lines = lines4;
    r.n_lines = 4;
    r.addr = (void *)base;
    assert_int_equal(jf_register(&r), 0);
    jf__pub_entry *e = live_entry(base);
    uint32_t want = jf__pub_class(block_bytes(name, "prog.mvm", 4));
    assert_true(want > 0);
    assert_int_equal(e->block_class, want);
    /* Churn: every removal past the ring frees a block of that class. */
    uint32_t heap_used = 0;
    for (size_t i = 1; i <= 3 * (size_t)ring; i++) {
        assert_int_equal(jf_unregister((void *)(base + (i - 1) * SIZE)), 0);
        r.addr = (void *)(base + i * SIZE);
        assert_int_equal(jf_register(&r), 0);
        if (i == ring + 1)
            heap_used = table_header()->heap_used;
    }
    printf("heap used after one ring of removals: %u, after three: %u\n", heap_used,
           table_header()->heap_used);
    assert_int_equal(table_header()->heap_used, heap_used);
    assert_int_equal(jf_shutdown(), 0);
}

/* The class is read back from the shared mapping, which the process can
 * write: one out of range (a stray write) is measured from the entry
 * instead of indexing past the free lists, and the block is still reused. */
static void an_out_of_range_block_class_is_measured_again(void **state)
{
    (void)state;
    enum { SIZE = 64 };
    init_standby();
    uintptr_t base = (uintptr_t)1 << 40;
    jf_region r = JF_REGION_INIT;
    r.size = SIZE;
    r.name = "victim_with_a_longer_name"; /* with its file: a 48-byte block, class 2 */
    r.file = "prog.mvm";
    r.addr = (void *)base;
    assert_int_equal(jf_register(&r), 0);
    jf__pub_entry *e = live_entry(base);
    uint32_t block = e->name_off;
    assert_int_equal(e->block_class, 2);
    e->block_class = UINT32_MAX; /* as a stray write would leave it */
    assert_int_equal(jf_unregister((void *)base), 0);
    /* A ring's worth of removals of regions of another class push it out. */
    const uint32_t ring = table_header()->ring_capacity; /* 4096, more in a table kept grown */
    jf_region other = JF_REGION_INIT;
    other.size = SIZE;
    other.name = "o"; /* a 16-byte block, class 0 */
    for (size_t i = 1; i <= ring; i++) {
        other.addr = (void *)(base + i * SIZE);
        assert_int_equal(jf_register(&other), 0);
        assert_int_equal(jf_unregister(other.addr), 0);
    }
    /* Its block went back to its own class: the next region of that shape gets it. */
    uintptr_t next = base + (2 * (uintptr_t)ring) * SIZE;
    r.addr = (void *)next;
    assert_int_equal(jf_register(&r), 0);
    assert_int_equal(live_entry(next)->name_off, block);
    tr_snapshot s;
    tr_read_own(&s);
    assert_int_equal(s.n_live, 1);
    assert_string_equal(s.live[0].name, "victim_with_a_longer_name");
    assert_string_equal(s.live[0].file, "prog.mvm");
    tr_snapshot_free(&s);
    assert_int_equal(jf_shutdown(), 0);
}

/* Region k of a test: at base + k * 64, named "fn<k>". */
static void register_nth(uintptr_t base, unsigned k)
{
    char name[16];
    snprintf(name, sizeof name, "fn%u", k);
    jf_region r = JF_REGION_INIT;
    r.addr = (void *)(base + (uintptr_t)k * 64);
    r.size = 64;
    r.name = name;
    assert_int_equal(jf_register(&r), 0);
}

static void unregister_nth(uintptr_t base, unsigned k)
{
    assert_int_equal(jf_unregister((void *)(base + (uintptr_t)k * 64)), 0);
}

static jf__pub_entry *slot(uint32_t i)
{
    const jf__pub_header *h = table_header();
    return entry_at(h, h->entries_off, i);
}

/* Every live region is read back under its own name, and only those. */
static void assert_live_names(uintptr_t base, const unsigned *ks, size_t n)
{
    tr_snapshot s;
    tr_read_own(&s);
    assert_int_equal(s.n_live, n);
    for (size_t i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "fn%u", ks[i]);
        size_t j = 0;
        while (j < s.n_live && s.live[j].start != base + (uintptr_t)ks[i] * 64)
            j++;
        assert_true(j < s.n_live);
        assert_string_equal(s.live[j].name, name);
    }
    tr_snapshot_free(&s);
}

/* A removal frees its slot into a set in the writer's own memory, and a
 * registration takes the lowest free slot, then a never used one: after
 * removals in any order, new regions fill the array from its start. What
 * the process writes into free entries (the writer's word at offset 60,
 * once a list's link) changes nothing. */
static void freed_slots_are_reused_lowest_first_whatever_the_table_says(void **state)
{
    (void)state;
    init_standby();
    uintptr_t base = (uintptr_t)1 << 40;
    for (unsigned k = 0; k < 4; k++)
        register_nth(base, k); /* slots 0-3 */
    unregister_nth(base, 1);
    unregister_nth(base, 3);      /* freed last: a list of the last freed first gave it first */
    slot(1)->block_class = 2 + 1; /* a link to the live slot 2 */
    slot(3)->block_class = UINT32_MAX;
    register_nth(base, 4);
    register_nth(base, 5);
    register_nth(base, 6);
    assert_ptr_equal(live_entry(base + 4 * 64), slot(1));
    assert_ptr_equal(live_entry(base + 5 * 64), slot(3));
    assert_ptr_equal(live_entry(base + 6 * 64), slot(4));
    assert_int_equal(table_header()->entries_used, 5);
    static const unsigned live[] = {0, 2, 4, 5, 6};
    assert_live_names(base, live, 5);
    assert_int_equal(jf_shutdown(), 0);
}

/* The removed entry of the region starting at start, in the ring. */
static jf__pub_entry *ring_entry(uintptr_t start)
{
    const jf__pub_header *h = table_header();
    return find_entry(h->ring_off, h->ring_capacity, JF_PUB_REMOVED, start);
}

/* A ring's worth of registrations and removals of one-letter names (class
 * 0), from region `from` on: every removal before them leaves the ring and
 * frees its block. */
static void push_the_ring_out(uintptr_t base, uintptr_t from)
{
    const uint32_t ring = table_header()->ring_capacity;
    jf_region other = JF_REGION_INIT;
    other.size = 64;
    other.name = "o";
    for (uintptr_t i = from; i < from + ring; i++) {
        other.addr = (void *)(base + i * 64);
        assert_int_equal(jf_register(&other), 0);
        assert_int_equal(jf_unregister(other.addr), 0);
    }
}

/* A region of class 2 (a 48-byte block: the name and its file). */
static jf__pub_entry *register_class_2(uintptr_t start, const char *name)
{
    jf_region r = JF_REGION_INIT;
    r.addr = (void *)start;
    r.size = 64;
    r.name = name;
    r.file = "prog.mvm";
    assert_int_equal(jf_register(&r), 0);
    jf__pub_entry *e = live_entry(start);
    assert_int_equal(e->block_class, 2);
    return e;
}

/* The table, read back, lists exactly these names, in address order. */
static void assert_table_lists(const char *const *names, size_t n)
{
    tr_snapshot s;
    tr_read_own(&s);
    assert_int_equal(s.n_live, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(s.live[i].name, names[i]);
    tr_snapshot_free(&s);
}

/* Where regions go once push_the_ring_out(base, ...) is done: past its regions. */
static uintptr_t past_the_ring(uintptr_t base)
{
    return base + 2 * (uintptr_t)table_header()->ring_capacity * 64;
}

/* Freed blocks of a class are reused lowest first, whatever order their
 * regions were removed in, and what the process writes into a free block
 * (its first bytes were once a list's link) changes nothing. */
static void freed_blocks_are_reused_lowest_first_whatever_the_heap_says(void **state)
{
    (void)state;
    init_standby();
    uintptr_t base = (uintptr_t)1 << 40;
    uint32_t blocks[3];
    for (unsigned k = 0; k < 3; k++)
        blocks[k] = register_class_2(base + k * 64, "victim_with_a_longer_name")->name_off;
    assert_true(blocks[0] < blocks[1] && blocks[1] < blocks[2]);
    for (unsigned k = 0; k < 3; k++) /* the ring frees them in this order: a list of the */
        assert_int_equal(jf_unregister((void *)(base + k * 64)), 0); /* last freed gave the highest first */
    push_the_ring_out(base, 3); /* the victims' blocks are their class's only free ones */
    const jf__pub_header *h = table_header();
    char *heap = (char *)h + h->heap_off;
    uint32_t far = UINT32_MAX - 8;
    for (unsigned k = 0; k < 3; k++)
        memcpy(heap + blocks[k], &far, sizeof far);
    uintptr_t next = past_the_ring(base);
    static const char *const names[4] = {"first_after_the_scribble", "second_after_the_scribble",
                                         "third_after_the_scribble_", "fourth_after_the_scribble"};
    for (unsigned k = 0; k < 3; k++)
        assert_int_equal(register_class_2(next + k * 64, names[k])->name_off, blocks[k]);
    uint32_t fresh = register_class_2(next + 3 * 64, names[3])->name_off;
    assert_true(fresh > blocks[2] && (uint64_t)fresh + 48 <= table_header()->heap_used);
    assert_table_lists(names, 4);
    assert_int_equal(jf_shutdown(), 0);
}

/* A removed entry's block offset scribbled over to point past the heap is
 * not freed (a later block would be written outside the heap). */
static void a_removed_entry_pointing_past_the_heap_frees_nothing(void **state)
{
    (void)state;
    init_standby();
    uintptr_t base = (uintptr_t)1 << 40;
    register_class_2(base, "victim_with_a_longer_name");
    assert_int_equal(jf_unregister((void *)base), 0);
    ring_entry(base)->name_off = UINT32_MAX - 64;
    push_the_ring_out(base, 1);
    uint32_t heap_used = table_header()->heap_used;
    static const char *const names[1] = {"after_the_scribble_a_longer_name"};
    assert_int_equal(register_class_2(past_the_ring(base), names[0])->name_off,
                     heap_used); /* a fresh block */
    assert_table_lists(names, 1);
    assert_int_equal(jf_shutdown(), 0);
}

/* A removed entry whose block offset the process pointed at another
 * removed region's block frees that block once, not twice: two later
 * regions never share it (a list of free blocks handed it out twice; a
 * set that counted it twice handed out an offset past the heap). */
static void a_block_named_by_two_removed_entries_is_reused_once(void **state)
{
    (void)state;
    init_standby();
    uintptr_t base = (uintptr_t)1 << 40;
    uint32_t a = register_class_2(base, "first_victim_a_longer_name")->name_off;
    register_class_2(base + 64, "second_victim_a_longer_name");
    assert_int_equal(jf_unregister((void *)base), 0);
    assert_int_equal(jf_unregister((void *)(base + 64)), 0);
    ring_entry(base + 64)->name_off = a; /* both removed entries now name a's block */
    push_the_ring_out(base, 2);
    uintptr_t next = past_the_ring(base);
    static const char *const names[2] = {"first_after_the_scribble", "second_after_the_scribble"};
    uint32_t first = register_class_2(next, names[0])->name_off;
    uint32_t second = register_class_2(next + 64, names[1])->name_off;
    assert_int_equal(first, a);
    assert_true(second != a && (uint64_t)second + 48 <= table_header()->heap_used);
    assert_table_lists(names, 2);
    assert_int_equal(jf_shutdown(), 0);
}

/* A region past 4 GiB: its rows' offsets past 4 GiB are cut to UINT32_MAX,
 * those below kept (the rows of smaller regions are written without a test
 * per row). */
#if SIZE_MAX > UINT32_MAX
static void line_offsets_past_4_gib_are_cut(void **state)
{
    (void)state;
    init_standby();
    const size_t big = (size_t)5 << 30;
    const jf_line rows[] = {{0, 1, NULL}, {4096, 2, NULL}, {(size_t)1 << 32, 3, NULL}, {big - 1, 4, NULL}};
    jf_region r = JF_REGION_INIT;
    r.addr = (void *)((uintptr_t)1 << 44);
    r.size = big;
    r.name = "huge";
    r.file = "huge.src";
    r.lines = rows;
    r.n_lines = 4;
    assert_int_equal(jf_register(&r), 0);
    jf__pub_entry *e = live_entry((uintptr_t)1 << 44);
    const jf__pub_header *h = table_header();
    const char *blob = (const char *)h + h->heap_off + e->lines_off;
    jf__pub_lines head;
    memcpy(&head, blob, sizeof head);
    assert_int_equal(head.n_lines, 4);
    const uint32_t want[4][2] = {{0, 1}, {4096, 2}, {UINT32_MAX, 3}, {UINT32_MAX, 4}};
    for (int k = 0; k < 4; k++) {
        jf__pub_line l;
        memcpy(&l, blob + sizeof head + k * sizeof l, sizeof l);
        assert_int_equal(l.offset, want[k][0]);
        assert_int_equal(l.line, want[k][1]);
        assert_int_equal(l.file_off, 0);
        assert_int_equal(l.file_len, 0);
    }
    assert_int_equal(jf_shutdown(), 0);
}
#endif

/* n bytes of valid CFA instructions: a DW_CFA_nop first when n is odd,
 * then DW_CFA_def_cfa_offset pairs. */
static void cfa_insns(uint8_t *out, size_t n)
{
    size_t k = 0;
    if (n % 2)
        out[k++] = 0x00; /* DW_CFA_nop */
    for (; k < n; k += 2) {
        out[k] = 0x0e; /* DW_CFA_def_cfa_offset */
        out[k + 1] = (uint8_t)(8 + k % 64);
    }
}

/* Published instructions: what was given, then at most 7 DW_CFA_nop (the
 * CIE is padded to its record's alignment). */
static void assert_published_insns(const uint8_t *got, uint32_t got_len, const uint8_t *want, size_t want_len)
{
    assert_true(got_len >= want_len && got_len < want_len + 8);
    assert_memory_equal(got, want, want_len);
    for (uint32_t k = (uint32_t)want_len; k < got_len; k++)
        assert_int_equal(got[k], 0x00);
}

/* The CIE's and the FDE's instructions of every length from 0 to 40
 * bytes (two 4- or 8-byte copies, a byte loop, memcpy past 16) are in the
 * published description byte for byte, whatever length the padding makes. */
static void unwind_instructions_of_every_length_are_published_whole(void **state)
{
    (void)state;
    enum { LONGEST = 40, SIZE = 256 };
    uint32_t lengths[2][LONGEST + 1];
    init_standby();
    uintptr_t base = (uintptr_t)1 << 40;
    for (size_t n = 0; n <= LONGEST; n++) {
        uint8_t cie[LONGEST], fde[LONGEST];
        cfa_insns(cie, n);
        cfa_insns(fde, LONGEST - n);
        jf__raw_cie raw = {1, -8, 16, cie, n};
        struct jf_cfi *cfi = jf__cfi_from_raw(&raw, fde, LONGEST - n, 0, SIZE);
        if (!cfi)
            fail_msg("length %zu: %s", n, jf_last_error());
        jf_region r = JF_REGION_INIT;
        r.addr = (void *)(base + n * SIZE);
        r.size = SIZE;
        r.name = "cfi";
        r.cfi = cfi;
        assert_int_equal(jf_register(&r), 0);
        jf_cfi_free(cfi);
        jf__pub_entry *e = live_entry(base + n * SIZE);
        const jf__pub_header *h = table_header();
        const uint8_t *blob = (const uint8_t *)h + h->heap_off + e->cfi_off;
        jf__pub_cfi head;
        memcpy(&head, blob, sizeof head);
        assert_int_equal(head.n_fdes, 1);
        uint32_t cie_len = head.cie_insns_len;
        assert_published_insns(blob + sizeof head, cie_len, cie, n);
        jf__pub_fde f;
        memcpy(&f, blob + sizeof head + cie_len, sizeof f);
        assert_int_equal(f.start, 0);
        assert_int_equal(f.end, SIZE);
        assert_published_insns(blob + sizeof head + cie_len + sizeof f, f.insns_len, fde, LONGEST - n);
        assert_int_equal(e->cfi_len, sizeof head + cie_len + sizeof f + f.insns_len);
        lengths[0][n] = cie_len;
        lengths[1][n] = f.insns_len;
    }
    printf("published CIE instruction lengths:");
    for (size_t n = 0; n <= LONGEST; n++)
        printf(" %u", lengths[0][n]);
    printf("\npublished FDE instruction lengths:");
    for (size_t n = 0; n <= LONGEST; n++)
        printf(" %u", lengths[1][n]);
    printf("\n");
    assert_int_equal(jf_shutdown(), 0);
}

/* A failed test leaves the library initialised: shut it down whole so the
 * next test starts from a fresh table. */
static int shut_down(void **state)
{
    (void)state;
    while (jf_shutdown() == 0)
        ;
    return 0;
}

static void trampoline_target(void)
{
}

/* A block of class c's size filled with regions registered and removed a
 * ring's worth of times (each removal past the ring frees a block), then
 * `keep` of them left live: any freed block of that class is rewritten. */
static void churn_blocks_of_class(uint32_t c, uintptr_t base, unsigned keep)
{
    enum { SIZE = 64 };
    char name[PUB_SMALL_MAX];
    size_t len = jf__pub_class_size(c) - 1; /* the name and its NUL fill the block */
    assert_true(len < sizeof name);
    memset(name, 'x', len);
    name[len] = '\0';
    jf_region r = JF_REGION_INIT;
    r.size = SIZE;
    r.name = name;
    uint32_t ring = table_header()->ring_capacity;
    for (uint32_t i = 0; i <= ring + keep; i++) {
        r.addr = (void *)(base + (uintptr_t)i * SIZE);
        assert_int_equal(jf_register(&r), 0);
        if (i <= ring)
            assert_int_equal(jf_unregister(r.addr), 0);
    }
}

/* Every trampoline names one copy of the template's unwind description:
 * its own block holds its name alone. The copy outlives them all (their
 * blocks freed and rewritten), and the next trampoline names it again. */
static void trampolines_name_one_shared_unwind_block(void **state)
{
    (void)state;
    enum { TRAMPOLINES = 64 };
    init_standby();
    jf_fn entry[TRAMPOLINES];
    for (unsigned i = 0; i < TRAMPOLINES; i++) {
        char name[32];
        snprintf(name, sizeof name, "py::function_%u", i);
        assert_int_equal(jf_trampoline_create(trampoline_target, name, NULL, &entry[i]), 0);
    }
    const jf__pub_header *h = table_header();
    uint32_t shared = UINT32_MAX, cfi_len = 0, seen = 0;
    for (uint32_t k = 0; k < h->entries_used; k++) {
        const jf__pub_entry *e = entry_at(h, h->entries_off, k);
        if (e->flags != JF_PUB_LIVE)
            continue;
        if (shared == UINT32_MAX) {
            shared = e->cfi_off;
            cfi_len = e->cfi_len;
        }
        assert_true(e->cfi_len > 0);
        assert_int_equal(e->cfi_off, shared);
        assert_int_equal(e->block_class, jf__pub_class(e->name_len + 1u));
        seen++;
    }
    assert_int_equal(seen, TRAMPOLINES);
    print_message("one %u-byte unwind description named by %u trampolines\n", cfi_len, TRAMPOLINES);
    const char *heap = (const char *)h + h->heap_off;
    uint8_t *bytes = malloc(cfi_len);
    assert_non_null(bytes);
    memcpy(bytes, heap + shared, cfi_len);
    tr_snapshot s;
    tr_read_own(&s);
    assert_int_equal(s.n_live, TRAMPOLINES);
    for (size_t i = 0; i < s.n_live; i++)
        assert_non_null(s.live[i].unwind); /* readers take it from the shared block */
    tr_snapshot_free(&s);

    for (unsigned i = 0; i < TRAMPOLINES; i++)
        assert_int_equal(jf_trampoline_destroy(entry[i]), 0);
    uintptr_t base = (uintptr_t)1 << 40;
    churn_blocks_of_class(jf__pub_class(cfi_len), base, 8);
    churn_blocks_of_class(jf__pub_class(sizeof "py::function_00"), base + ((uintptr_t)1 << 30), 8);
    h = table_header(); /* the churn may have grown it */
    heap = (const char *)h + h->heap_off;
    assert_memory_equal(heap + shared, bytes, cfi_len);
    free(bytes);

    jf_fn again;
    assert_int_equal(jf_trampoline_create(trampoline_target, "py::again", NULL, &again), 0);
    uint32_t named = UINT32_MAX;
    for (uint32_t k = 0; k < h->entries_used; k++) {
        const jf__pub_entry *e = entry_at(h, h->entries_off, k);
        if (e->flags == JF_PUB_LIVE && e->cfi_len)
            named = e->cfi_off;
    }
    assert_int_equal(named, shared);
    assert_int_equal(jf_trampoline_destroy(again), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(line_table_regions_by_the_hundred_thousand_never_grow_the_table, shut_down),
        cmocka_unit_test_teardown(every_entry_notes_its_heap_block_class, shut_down),
        cmocka_unit_test_teardown(an_out_of_range_block_class_is_measured_again, shut_down),
        cmocka_unit_test_teardown(freed_slots_are_reused_lowest_first_whatever_the_table_says, shut_down),
        cmocka_unit_test_teardown(freed_blocks_are_reused_lowest_first_whatever_the_heap_says, shut_down),
        cmocka_unit_test_teardown(a_removed_entry_pointing_past_the_heap_frees_nothing, shut_down),
        cmocka_unit_test_teardown(a_block_named_by_two_removed_entries_is_reused_once, shut_down),
#if SIZE_MAX > UINT32_MAX
        cmocka_unit_test_teardown(line_offsets_past_4_gib_are_cut, shut_down),
#endif
        cmocka_unit_test_teardown(unwind_instructions_of_every_length_are_published_whole, shut_down),
        cmocka_unit_test_teardown(trampolines_name_one_shared_unwind_block, shut_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
