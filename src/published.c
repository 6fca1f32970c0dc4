/*
 * The published table (published.h; layout in pub_layout.h): the live
 * regions in an array of slots in no order, a ring of removed regions, and
 * a heap of strings, line tables and unwind descriptions, in one mapping.
 *
 * Every change is O(1) whatever the address order: a region takes a free
 * slot (the lowest freed, else the next never used) and keeps it until it is
 * removed (its jf__live remembers which), and a removal frees the slot. No
 * entry ever moves, so readers sort what they read (a sorted array cost
 * O(n) shifts per registration out of address order, which multi-threaded
 * JITs and arena reuse do all the time).
 *
 * Consistency for readers in other processes: every entry has its own
 * sequence lock (odd while written), and the header's generation is odd
 * during every change, so a reader can tell a torn entry (retry it) from a
 * table that changed under it (retry the whole read, or accept a snapshot
 * whose entries are each consistent). Each entry records the generation it
 * was published at and each removed one the generation it was removed at,
 * so a sampler that noted only (pc, generation) names the pc afterwards.
 * An entry's strings, line table and unwind description are one block of
 * the heap (pub_blocks.h; a shared description, every trampoline's, is one
 * block that all its entries name: cfi_cache), never moved nor rewritten
 * while an entry refers to it: a removed entry's block stays with it in
 * the ring until the ring reuses that slot (so a recording can still take a removed region's
 * unwind rules), then joins the free blocks of its size class, the lowest
 * of which the next block of that class takes. No compaction: O(1) per
 * change at any fill.
 *
 * When memory truly runs out (the table cannot grow: no address space or
 * memory for a bigger mapping, or at ENTRIES_MAX/HEAP_MAX), the oldest
 * removed regions of the ring give their blocks up (their ring slots are
 * emptied) before new code is refused; a region still refused is counted in
 * the header (dropped, JF_PUB_INCOMPLETE) and in jf_stats (table_dropped),
 * and jf_published_table says why.
 */
#define _GNU_SOURCE
#include "published.h"

#include "cfi.h"
#include "error.h"
#include "log.h"
#include "pub_blocks.h"
#include "lowest_set.h"
#include "arch/host.h"
#include "pub_layout.h"
#include "published_map.h"
#include "short_copy.h"
#include "sys.h"
#include "tick_clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Exported: where the table is (0 when there is none), for readers that
 * look up ELF symbols. Declared in jitframes.h. */
JF_API const void *volatile jf_region_table;

/* Sizes of the mapping: it starts at ~30 MiB of address space (131,072
 * slots, 16 MiB of heap; nothing resident until touched: ~110 bytes per
 * region with a short name) in 4 KiB pages, and grows eightfold into a new
 * mapping when its slots or its heap are full (each on its own: a heap of
 * large line tables grows without the slots), up to ENTRIES_MAX slots
 * (1.5 GiB) and HEAP_MAX heap bytes (the offsets are 32-bit). A grown
 * table is in huge pages (published_map.h): small processes keep their few
 * 4 KiB pages, a big one pays ~60 faults instead of ~27,000 for 1,000,000
 * regions; the first table takes them too, for what it touches next, once
 * the process passes 16,384 regions (advise_huge_once). Growing copies the
 * table (amortised O(1)), so the first table has room for the processes
 * that once grew it at 16,384 regions: in a fresh process of 32,000 that
 * copy and the new mapping's fresh huge pages cost 1.2x the registrations'
 * time (bench/fresh_before_table.sh --before e4cace8), and callgrind,
 * which counts the copy's rep movsb per byte, +18 instructions per
 * registration over the first 100,000. A first mapping the kernel refuses
 * (an address space limit) is tried with 16,384 slots and 8 MiB of heap,
 * then 1 MiB (~2.9 MiB in all). */
enum {
    GROWTH = 8,
    ENTRIES_FIRST = 1u << 17,      /* 12 MiB of entries, touched 256 KiB at a time */
    HEAP_FIRST = 16u << 20,        /* 128 bytes a slot, as a grown table's */
    ENTRIES_START = 1u << 14,      /* the retries' slots; the first ring's up to this (1.5 MiB of entries) */
    HEAP_FIRST_PER_ENTRY = 512,    /* the retry: 8 MiB of heap */
    HEAP_FIRST_MIN_PER_ENTRY = 64, /* the last retry: 1 MiB of heap */
    SMALL_HEAP = 8u << 20,         /* past this, or ENTRIES_START slots used: huge pages */
    ENTRIES_MAX = 1u << 24,
    RING_MIN = 4096,        /* removals the first table's ring holds (powers of two) */
    RING_GROWN_MIN = 16384, /* a grown table's: a 32nd of its slots, at least this */
    RING_PER_SLOTS = 32,
    RING_MAX = 65536,     /* what readers accept (tools/table_reader.h, pub_table.py) */
    HEAP_PER_ENTRY = 128, /* grown: a name, a file, a short line table or unwind rules a slot, */
                          /* so such regions grow the slots, never the heap on its own */
    FILE_MAX = 4096,      /* a longer source file name is cut */
    LINES_MAX = 65536,    /* a region with more lines publishes none */
    LINES_BYTES_MAX = 4u << 20,
    CFI_BYTES_MAX = 1u << 20, /* a bigger unwind description is not published */
};
#define HEAP_MAX (UINT64_C(1) << 31)

typedef struct pub_state {
    unsigned char *base;
    size_t map_size;
    jf__pub_header *h;
    jf__pub_entry *entries, *ring;
    char *heap;
    uint32_t cap, used, live;
    uint32_t ring_cap;            /* ring_capacity_for(cap): a bigger table has churn enough to need more */
    jf__lowest_set free_slots;    /* slots freed by removals, reused lowest first */
    uint32_t heap_cap, heap_used; /* heap_used: the end of the blocks ever made */
    jf__pub_blocks blocks;        /* freed blocks by size class */
    uint64_t dropped;             /* registrations not published (the header's, kept here too) */
    uint64_t ring_written;
    uint64_t generation;
    size_t entries_ready, heap_ready; /* bytes populated ahead of use */
    uint32_t slots_ready;             /* entries_ready in slots */
    int active;                       /* published: between jf__pub_start and jf__pub_stop */
    int huge_advised;                 /* MADV_HUGEPAGE given (advise_huge_once, or a grown table) */
    int error;                        /* why there is no table (JF_E*), 0 if there is */
    char why[256];
} pub_state;

static pub_state pub;

/* The last shared description published (every trampoline shares its
 * template's), serialized once and, at its first use, written once into a
 * heap block of its own that every entry with it names (in_heap): a
 * trampoline's block holds its name alone. That block is never freed while
 * the table lives (a process has one shared description, its trampoline
 * template's, so at most one such block; a description replaced here
 * would leave its block behind, still named by its entries). The cache
 * holds a reference, so the address cannot be reused for another
 * description while it is cached. */
static struct {
    struct jf_cfi *cfi;
    uint8_t *bytes;
    uint32_t len;
    uint32_t heap_off; /* its block, if in_heap */
    int in_heap;
} cfi_cache;

static void cfi_cache_drop(void)
{
    jf__cfi_free(cfi_cache.cfi);
    free(cfi_cache.bytes);
    memset(&cfi_cache, 0, sizeof cfi_cache);
}

/* ---- Sequence locks ------------------------------------------------------ */

/* The lock made odd; what seq_end needs (the writer alone changes it: no
 * need to read it back). */
static inline uint32_t seq_begin(uint32_t *seq)
{
    uint32_t even = *seq;
    __atomic_store_n(seq, even + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    return even;
}

static inline void seq_end(uint32_t *seq, uint32_t even)
{
    __atomic_store_n(seq, even + 2, __ATOMIC_RELEASE);
}

/* The generation is mirrored privately: reading it back from the shared
 * page cost a TLB miss per registration. */
static void change_begin(void)
{
    __atomic_store_n(&pub.h->generation, ++pub.generation, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

/* What a change did: added regions (slots and heap may have grown),
 * removed some (the ring moved), or both (a move). */
enum { CHANGE_ADDED = 1, CHANGE_REMOVED = 2 };

static inline void change_end(int what)
{
    if (what & CHANGE_ADDED) {
        __atomic_store_n(&pub.h->entries_used, pub.used, __ATOMIC_RELAXED);
        __atomic_store_n(&pub.h->heap_used, pub.heap_used, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&pub.h->live_count, pub.live, __ATOMIC_RELAXED);
    if (what & CHANGE_REMOVED)
        __atomic_store_n(&pub.h->ring_written, pub.ring_written, __ATOMIC_RELAXED);
    __atomic_store_n(&pub.h->generation, ++pub.generation, __ATOMIC_RELEASE);
}

/* Copy an entry's fields into slot e under e's lock. */
static void entry_store(jf__pub_entry *e, const jf__pub_entry *v)
{
    uint32_t even = seq_begin(&e->seq);
    *e = *v;
    e->seq = even + 1;
    seq_end(&e->seq, even);
}

/* The bytes of e's own block: its strings, line table and unwind
 * description, unless that is the shared block. */
static uint64_t entry_string_bytes(const jf__pub_entry *e)
{
    int shared = cfi_cache.in_heap && e->cfi_len && e->cfi_off == cfi_cache.heap_off;
    return (uint64_t)e->name_len + 1 + (e->file_len ? e->file_len + 1u : 0u) + e->lines_len +
           (shared ? 0u : e->cfi_len);
}

/* ---- Populating ahead ---------------------------------------------------- */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
enum { POPULATE_CHUNK = 256 << 10 };

/* Make the pages of [area, area + need) present before they are written:
 * one system call per 256 KiB instead of a page fault per 4 KiB (a fault
 * on a fresh shared page cost more than the rest of a registration). The
 * call starts at a page boundary (after a growth *ready is where the copy
 * ended, mid-page: madvise refuses an unaligned start). A kernel without
 * MADV_POPULATE_WRITE (before 5.14) just faults: the chunk counts as
 * ready anyway, so a refusal costs one call per 256 KiB, not one per
 * registration. */
static void populate_ahead(char *area, size_t *ready, size_t need, size_t cap)
{
    if (need <= *ready)
        return;
    size_t upto = jf__round_up(need, POPULATE_CHUNK);
    if (upto > cap)
        upto = cap;
    uintptr_t from = (uintptr_t)(area + *ready) & ~(uintptr_t)(jf__page_size() - 1); /* in the mapping */
    (void)madvise((void *)from, (uintptr_t)(area + upto) - from, MADV_POPULATE_WRITE);
    *ready = upto; /* need <= cap: upto >= need */
}

/* ---- Lifecycle ----------------------------------------------------------- */

/* The ring grows with the slots: a reader that reads the ring every so
 * often (tools/ebpf/jitframes_sample.py) between whole reads, which take
 * longer the bigger the table, then misses no removal over a longer
 * stall. 16,384 in the first table (131,072 slots; 4096 in a first table
 * of 16,384, where address space is short), 32,768 after its first growth
 * (1,048,576 slots), 65,536 from the second. */
static uint32_t ring_capacity_for(uint32_t cap)
{
    if (cap <= ENTRIES_START)
        return RING_MIN;
    uint32_t n = cap / RING_PER_SLOTS;
    return n < RING_GROWN_MIN ? RING_GROWN_MIN : n > RING_MAX ? RING_MAX : n;
}

static size_t ring_area_offset(void)
{
    return jf__page_size() + (size_t)pub.cap * sizeof(jf__pub_entry);
}

static size_t heap_area_offset(void)
{
    return ring_area_offset() + (size_t)pub.ring_cap * sizeof(jf__pub_entry);
}

/* Where each area goes for a live array of `cap` entries and a heap of
 * heap_cap bytes: the header has a page of its own, then the live array,
 * the ring and the heap. */
static void layout(uint32_t cap, uint64_t heap_cap)
{
    pub.cap = cap;
    pub.ring_cap = ring_capacity_for(cap);
    pub.heap_cap = (uint32_t)heap_cap;
    pub.map_size = jf__round_up(heap_area_offset() + pub.heap_cap, jf__page_size());
}

/* The areas' addresses once the mapping exists. */
static void attach(unsigned char *base)
{
    pub.base = base;
    pub.h = (jf__pub_header *)base;
    pub.entries = (jf__pub_entry *)(base + jf__page_size());
    pub.ring = (jf__pub_entry *)(base + ring_area_offset());
    pub.heap = (char *)(base + heap_area_offset());
    jf__pub_blocks_attach(&pub.blocks, pub.heap, pub.heap_cap);
}

static void write_header(void)
{
    jf__pub_header *h = pub.h;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    h->version = JF_PUB_VERSION;
    h->header_size = sizeof(jf__pub_header);
    h->entry_size = sizeof(jf__pub_entry);
    h->pid = (uint32_t)getpid();
    h->clock_id = CLOCK_MONOTONIC;
    h->created_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    h->map_size = pub.map_size;
    h->entries_off = (uint32_t)((unsigned char *)pub.entries - pub.base);
    h->entries_capacity = pub.cap;
    h->ring_off = (uint32_t)((unsigned char *)pub.ring - pub.base);
    h->ring_capacity = pub.ring_cap;
    h->heap_off = (uint64_t)((unsigned char *)pub.heap - pub.base);
    h->heap_capacity = pub.heap_cap;
    h->generation = pub.generation;
    h->entries_used = pub.used;
    h->live_count = pub.live;
    h->ring_written = pub.ring_written;
    h->heap_used = pub.heap_used;
    /* A reader that sees the signature sees everything above. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(h->signature, JF_PUB_SIGNATURE, sizeof h->signature);
    __atomic_store_n(&jf_region_table, (const void *)pub.base, __ATOMIC_RELEASE);
}

/* An empty set of free slots for the table's capacity. Without memory for
 * it, freed slots are not reused (new regions take never used ones, and
 * the table grows sooner): nothing is lost but room. */
static void free_slots_reset(void)
{
    jf__lowest_set_destroy(&pub.free_slots);
    if (jf__lowest_set_init(&pub.free_slots, pub.cap) != 0) {
        jf__lowest_set_destroy(&pub.free_slots);
        jf__log(JF_LOG_WARNING, "no memory to track the published table's free slots: they are not reused");
    }
}

/* A table kept from an earlier jf_init/jf_shutdown cycle, emptied: its
 * pages stay populated, so a process that starts again pays no page
 * faults (nor does a benchmark's next round). */
static void reset_kept_table(void)
{
    size_t ring_used = pub.ring_written < pub.ring_cap ? (size_t)pub.ring_written : pub.ring_cap;
    memset(pub.ring, 0, ring_used * sizeof(jf__pub_entry));
    static const jf__pub_entry empty = {.flags = JF_PUB_EMPTY};
    for (uint32_t i = 0; i < pub.used; i++) /* publish_one expects free slots zeroed */
        entry_store(&pub.entries[i], &empty);
    pub.used = pub.live = 0;
    free_slots_reset();
    pub.heap_used = 0;
    pub.ring_written = pub.dropped = 0;
    jf__pub_blocks_clear(&pub.blocks);
    pub.h->flags = 0;
    pub.h->dropped = 0;
    pub.why[0] = '\0';
    pub.h->entries_used = pub.h->live_count = pub.h->heap_used = 0;
    pub.h->ring_written = 0;
}

/* Removal times: precise (within about a microsecond, tick_clock.h) for
 * a quarter of clock_gettime's cost where the cycle counter keeps the
 * kernel's time. Set up by the first removal (a process that never removes
 * a region never reads the clocksource's name) and kept across restarts and
 * forks: it describes the machine. */
static jf__tick_clock removal_clock;

void jf__pub_start(void)
{
    if (pub.active)
        return;
    if (pub.base) {
        reset_kept_table();
    } else {
        memset(&pub, 0, sizeof pub);
        layout(ENTRIES_FIRST, HEAP_FIRST);
        unsigned char *base = jf__pub_map_create(pub.map_size, 0, pub.why, sizeof pub.why);
        for (uint32_t per = HEAP_FIRST_PER_ENTRY; per >= HEAP_FIRST_MIN_PER_ENTRY && !base; per /= 8) {
            layout(ENTRIES_START, (uint64_t)ENTRIES_START * per);
            base = jf__pub_map_create(pub.map_size, 0, pub.why, sizeof pub.why);
        }
        if (!base) {
            pub.error = JF_ENOMEM;
            jf__log(JF_LOG_WARNING, "%s; regions are registered but not published", pub.why);
            return;
        }
        attach(base);
        free_slots_reset();
    }
    pub.active = 1;
    write_header();
}

/* The table is unpublished (signature and symbol cleared) but kept for a
 * later jf_init. */
void jf__pub_stop(void)
{
    cfi_cache_drop();
    if (pub.active) {
        __atomic_store_n(&jf_region_table, NULL, __ATOMIC_RELEASE);
        memset(pub.h->signature, 0, sizeof pub.h->signature);
        pub.active = 0;
    }
    pub.error = 0;
}

void jf__pub_forget_after_fork(void)
{
    cfi_cache_drop(); /* the reference is the child's too: dropping it is right */
    __atomic_store_n(&jf_region_table, NULL, __ATOMIC_RELAXED);
    jf__lowest_set_destroy(&pub.free_slots);
    jf__pub_blocks_clear(&pub.blocks);
    memset(&pub, 0, sizeof pub);
}

int jf__pub_status(const void **addr, size_t *size)
{
    if (addr)
        *addr = pub.active ? pub.base : NULL;
    if (size)
        *size = pub.active ? pub.map_size : 0;
    if (pub.active && pub.dropped)
        return jf__fail(JF_ERANGE, "%llu registrations were not published (%s)",
                        (unsigned long long)pub.dropped, pub.why[0] ? pub.why : "the table could not grow");
    if (!pub.active)
        return jf__fail(pub.error ? pub.error : JF_ENOTINIT, "%s",
                        pub.why[0] ? pub.why
                                   : "no published table (jf_init not called, or JF_CONFIG_NO_TABLE)");
    return 0;
}

uint64_t jf__pub_dropped(void)
{
    return pub.active ? pub.dropped : 0; /* after the last jf_shutdown every counter is 0 */
}

/* A registration the table cannot hold: say so in the header. */
static void drop(const char *why)
{
    if (!pub.dropped)
        snprintf(pub.why, sizeof pub.why, "%s", why);
    pub.h->dropped = ++pub.dropped;
    __atomic_store_n(&pub.h->flags, pub.h->flags | JF_PUB_INCOMPLETE, __ATOMIC_RELEASE);
}

/* ---- Growing ------------------------------------------------------------- */

/* The heap capacity for `cap` slots and heap_need more bytes: at least
 * HEAP_PER_ENTRY per slot, grown eightfold until the need fits; 0 when it
 * would pass HEAP_MAX. */
static uint64_t heap_capacity_for(uint32_t cap, uint64_t heap_need)
{
    uint64_t heap_cap = pub.heap_cap;
    if (heap_cap < (uint64_t)cap * HEAP_PER_ENTRY)
        heap_cap = (uint64_t)cap * HEAP_PER_ENTRY;
    uint64_t want = (uint64_t)pub.heap_used + heap_need;
    while (heap_cap < want && heap_cap < HEAP_MAX)
        heap_cap *= GROWTH;
    if (heap_cap > HEAP_MAX)
        heap_cap = HEAP_MAX;
    return want <= heap_cap ? heap_cap : 0;
}

/* The old table's ring into the new one, each removal at its place in
 * the new capacity (never smaller: no removal is lost). */
static void copy_ring(const pub_state *old)
{
    uint64_t first = old->ring_written > old->ring_cap ? old->ring_written - old->ring_cap : 0;
    if (pub.ring_cap == old->ring_cap) {
        memcpy(pub.ring, old->ring, (size_t)(old->ring_written - first) * sizeof(jf__pub_entry));
        return;
    }
    for (uint64_t k = first; k < old->ring_written; k++)
        pub.ring[k & (pub.ring_cap - 1)] = old->ring[k & (old->ring_cap - 1)];
}

/* Grow the table: eightfold more slots (more_slots) and/or a heap with
 * room for heap_need more bytes, in a new mapping (same name) with the
 * entries, the ring and the heap copied at the same offsets within their
 * areas, published (signature, symbol) before the old one is unpublished
 * and unmapped. A reader that held the old address fails its read and
 * finds the table again (tr_read_pid does). O(n) once per eightfold growth:
 * amortised O(1). Called during a change: the new header carries the odd
 * generation. 0, or -1 (the old table stays) at ENTRIES_MAX or HEAP_MAX or
 * without memory. */
static int grow(int more_slots, uint64_t heap_need)
{
    if (more_slots && pub.cap >= ENTRIES_MAX)
        return -1;
    uint32_t cap = more_slots ? (pub.cap * GROWTH < ENTRIES_MAX ? pub.cap * GROWTH : ENTRIES_MAX) : pub.cap;
    uint64_t heap_cap = heap_capacity_for(cap, heap_need);
    if (!heap_cap)
        return -1;
    pub_state old = pub;
    layout(cap, heap_cap);
    unsigned char *base = jf__pub_map_create(pub.map_size, 1, pub.why, sizeof pub.why);
    if (!base) {
        pub = old;
        return -1;
    }
    attach(base);
    pub.huge_advised = 1; /* jf__pub_map_create(..., 1, ...) */
    if (more_slots)
        (void)jf__lowest_set_grow(&pub.free_slots, cap); /* without memory: slots past the old capacity */
                                                         /* are not reused once freed */
    memcpy(pub.entries, old.entries, (size_t)old.used * sizeof(jf__pub_entry));
    copy_ring(&old);
    memcpy(pub.heap, old.heap, old.heap_used);
    pub.entries_ready = (size_t)old.used * sizeof(jf__pub_entry); /* touched by the copy */
    pub.slots_ready = old.used;
    pub.heap_ready = old.heap_used;
    pub.h->flags = old.h->flags;
    pub.h->dropped = old.h->dropped;
    write_header();
    memset(old.h->signature, 0, sizeof old.h->signature);
    jf__pub_map_destroy(old.base, old.map_size);
    jf__log(JF_LOG_INFO, "published table grown to %u entries, %u heap bytes (%zu bytes)", pub.cap,
            pub.heap_cap, pub.map_size);
    return 0;
}

/* A process past the slots and heap a small one uses (16,384 regions, or
 * 8 MiB of heap) has proved big: the first table (4 KiB pages) may then
 * take transparent huge pages where it is touched next. One advice over
 * the whole mapping keeps it one mapping, as readers expect; the pages
 * already touched stay as they are. */
static void advise_huge_once(void)
{
    if (pub.huge_advised || (pub.used < ENTRIES_START && pub.heap_used < SMALL_HEAP))
        return;
    pub.huge_advised = 1;
    (void)madvise(pub.base, pub.map_size, MADV_HUGEPAGE);
}

/* ---- The heap ------------------------------------------------------------ */

static inline uint32_t entry_block_class(const jf__pub_entry *e)
{
    return jf__pub_class(entry_string_bytes(e));
}

/* A removed entry's block, free once its ring slot is reused. Its class
 * was noted in the entry when it was published (measuring the block again
 * cost a removal ~15 instructions); a class out of range (the mapping is
 * writable by the process only, but a class is an index) is measured.
 * Called while the ring entry is rewritten under its lock, so no reader
 * takes the block for the removed region's once a new one is written there. */
static inline void release_block(const jf__pub_entry *e)
{
    uint32_t c = e->block_class;
    jf__pub_blocks_put(&pub.blocks, e->name_off, c < PUB_CLASSES ? c : entry_block_class(e));
}

/* A removed region gives its block up: freed and its ring entry emptied,
 * both under the entry's lock. */
static void give_up_ring_entry(jf__pub_entry *e)
{
    static const jf__pub_entry empty = {.flags = JF_PUB_EMPTY};
    uint32_t even = seq_begin(&e->seq);
    release_block(e);
    *e = empty;
    e->seq = even + 1;
    seq_end(&e->seq, even);
}

/* Memory ran out: the oldest removed regions give their blocks up (their
 * ring slots emptied) until one can hold a block of class c. 1 with *off,
 * or 0 when even the whole ring could not. O(ring), only when the table
 * cannot grow. */
static int reclaim_ring(uint32_t c, uint32_t *off)
{
    for (uint32_t k = 0; k < pub.ring_cap; k++) {
        jf__pub_entry *e = &pub.ring[(pub.ring_written + k) & (pub.ring_cap - 1)]; /* oldest first */
        if (e->flags != JF_PUB_REMOVED)
            continue;
        give_up_ring_entry(e);
        if (jf__pub_blocks_take(&pub.blocks, c, off) || jf__pub_blocks_take_larger(&pub.blocks, c, off))
            return 1;
    }
    return 0;
}

/* heap_alloc's slow path: past the populated part, populate ahead; past
 * the heap's end, a larger free block split, else a bigger heap, else the
 * ring's blocks. 0 with *off, or -1. */
static int heap_alloc_slow(uint32_t c, uint64_t size, uint32_t *off)
{
    if (pub.heap_used + size > pub.heap_cap) {
        if (jf__pub_blocks_take_larger(&pub.blocks, c, off))
            return 0;
        if (grow(0, size) != 0)
            return reclaim_ring(c, off) ? 0 : -1;
    }
    advise_huge_once();
    populate_ahead(pub.heap, &pub.heap_ready, pub.heap_used + size, pub.heap_cap);
    *off = pub.heap_used;
    pub.heap_used += (uint32_t)size;
    return 0;
}

/* A block of class c: a freed one, else the next
 * at the heap's end (one comparison while the populated part has it:
 * heap_ready never exceeds heap_cap). 0 with *off, or -1. */
static inline int heap_alloc(uint32_t c, uint32_t *off)
{
    if (jf__pub_blocks_take(&pub.blocks, c, off))
        return 0;
    uint64_t size = jf__pub_class_size(c);
    if (__builtin_expect(pub.heap_used + size > pub.heap_ready, 0))
        return heap_alloc_slow(c, size, off);
    *off = pub.heap_used;
    pub.heap_used += (uint32_t)size;
    return 0;
}

/* Copy len bytes then a NUL at *at; the offset written. */
static inline uint32_t heap_put_cstr(uint32_t *at, const char *s, uint32_t len)
{
    uint32_t off = *at;
    jf__short_copy(pub.heap + off, s, len);
    pub.heap[off + len] = '\0';
    *at += len + 1;
    return off;
}

/* ---- The live array ------------------------------------------------------ */

/* A slot for a new entry: the lowest one freed, else the next never used;
 * UINT32_MAX when the array is full. */
static inline uint32_t take_slot(void)
{
    uint32_t freed = pub.free_slots.count ? jf__lowest_set_take(&pub.free_slots) : UINT32_MAX;
    if (freed != UINT32_MAX)
        return freed;
    if (pub.used >= pub.slots_ready) { /* rarely: populate the next 256 KiB, or grow */
        if (pub.used == pub.cap && grow(1, 0) != 0)
            return UINT32_MAX;
        advise_huge_once();
        populate_ahead((char *)pub.entries, &pub.entries_ready, (pub.used + 1) * sizeof(jf__pub_entry),
                       (size_t)pub.cap * sizeof(jf__pub_entry));
        pub.slots_ready = (uint32_t)(pub.entries_ready / sizeof(jf__pub_entry));
    }
    return pub.used++;
}

/* Bytes of the region's line table in the heap (0: none, or too big to publish).
 * Most tables name no file per row: one pass ORs the row file pointers,
 * and only a table with some measures their names. */
static uint32_t lines_size(const jf__live_detail *d)
{
    if (d->n_lines == 0 || d->n_lines > LINES_MAX)
        return 0;
    uint64_t bytes = sizeof(jf__pub_lines) + (uint64_t)d->n_lines * sizeof(jf__pub_line);
    uintptr_t any_file = 0;
    for (size_t k = 0; k < d->n_lines; k++)
        any_file |= (uintptr_t)d->lines[k].file;
    for (size_t k = 0; any_file && k < d->n_lines; k++)
        if (d->lines[k].file)
            bytes += strnlen(d->lines[k].file, FILE_MAX) + 1;
    return bytes > LINES_BYTES_MAX ? 0 : (uint32_t)bytes;
}

/* The rows of a table that names no file per row (file fields 0: the
 * block may be reused), each as two 8-byte stores: offset and line, then
 * the zero file fields. Offsets are below the region's size, so only a
 * region past 4 GiB needs them cut to UINT32_MAX (row by row). */
static inline void put_rows(char *rows, const jf_line *l, size_t n, size_t region_size)
{
    static const uint32_t no_file[2];
    if (__builtin_expect(region_size > UINT32_MAX, 0)) {
        for (size_t k = 0; k < n; k++) {
            jf__pub_line out = {l[k].offset > UINT32_MAX ? UINT32_MAX : (uint32_t)l[k].offset, l[k].line, 0,
                                0};
            memcpy(rows + k * sizeof out, &out, sizeof out);
        }
        return;
    }
    for (const jf_line *end = l + n; l < end; l++, rows += sizeof(jf__pub_line)) {
        uint32_t pair[2] = {(uint32_t)l->offset, l->line};
        memcpy(rows, pair, sizeof pair);
        memcpy(rows + sizeof pair, no_file, sizeof no_file);
    }
}

/* Write the region's line table (size bytes, from lines_size) at *at. */
static uint32_t heap_put_lines(uint32_t *at, const jf__live_detail *d, size_t region_size, uint32_t size)
{
    uint32_t off = *at;
    char *blob = pub.heap + off;
    jf__pub_lines head = {(uint32_t)d->n_lines};
    memcpy(blob, &head, sizeof head);
    uint32_t strings = sizeof head + (uint32_t)d->n_lines * sizeof(jf__pub_line);
    *at += size;
    if (strings == size) { /* no row names a file of its own: the usual case */
        put_rows(blob + sizeof head, d->lines, d->n_lines, region_size);
        return off;
    }
    for (size_t k = 0; k < d->n_lines; k++) {
        const jf_line *l = &d->lines[k];
        jf__pub_line out = {(uint32_t)(l->offset > UINT32_MAX ? UINT32_MAX : l->offset), l->line, 0, 0};
        if (l->file) {
            out.file_len = (uint32_t)strnlen(l->file, FILE_MAX);
            out.file_off = strings;
            memcpy(blob + strings, l->file, out.file_len);
            blob[strings + out.file_len] = '\0';
            strings += out.file_len + 1;
        }
        memcpy(blob + sizeof head + k * sizeof out, &out, sizeof out);
    }
    return off;
}

/* Bytes of the region's source file in the heap (a longer name is cut). */
static inline uint32_t file_len(const jf__live_detail *d)
{
    return d->file_len < FILE_MAX ? d->file_len : FILE_MAX;
}

/* Heap bytes of r's optional parts (file, line table, unwind description),
 * and where the shared block is if the description is one (then not in r's
 * own block; NOT_SHARED otherwise). */
typedef struct extras {
    uint32_t file_len, lines_len, cfi_len;
    uint32_t shared_cfi_off;
} extras;

enum { NOT_SHARED = UINT32_MAX };

/* The cached shared description's block, written at its first use; or
 * NOT_SHARED if the heap has no room for it (the region then gets a copy in
 * its own block, as any other description). */
static uint32_t shared_cfi_block(void)
{
    if (!cfi_cache.in_heap) {
        uint32_t off;
        if (heap_alloc(jf__pub_class(cfi_cache.len), &off) != 0)
            return NOT_SHARED;
        memcpy(pub.heap + off, cfi_cache.bytes, cfi_cache.len);
        cfi_cache.heap_off = off;
        cfi_cache.in_heap = 1;
    }
    return cfi_cache.heap_off;
}

/* A shared description of n serialized bytes becomes the cached one: 1, or
 * 0 if memory ran out (it is then published like any other). */
static int cache_shared_cfi(const struct jf_cfi *cfi, size_t n)
{
    uint8_t *bytes = malloc(n);
    struct jf_cfi *ref = bytes ? jf__cfi_clone(cfi) : NULL; /* a reference, not a copy */
    if (!ref) {
        free(bytes);
        return 0;
    }
    cfi_cache_drop();
    jf__cfi_serialize(cfi, bytes);
    cfi_cache.cfi = ref;
    cfi_cache.bytes = bytes;
    cfi_cache.len = (uint32_t)n;
    return 1;
}

/* Bytes of the region's unwind description in the heap (0: none, or not
 * publishable); a shared one is named in its block (x->shared_cfi_off). */
static uint32_t cfi_size(const jf__live_detail *d, extras *x)
{
    if (d->cfi != cfi_cache.cfi) {
        size_t n = jf__cfi_serialized_size(d->cfi);
        if (n > CFI_BYTES_MAX)
            return 0;
        if (!n || !jf__cfi_is_shared(d->cfi) || !cache_shared_cfi(d->cfi, n))
            return (uint32_t)n;
    }
    x->shared_cfi_off = shared_cfi_block();
    return cfi_cache.len;
}

static uint32_t heap_put_cfi(uint32_t *at, const jf__live_detail *d, uint32_t size)
{
    uint32_t off = *at;
    if (d->cfi == cfi_cache.cfi)
        memcpy(pub.heap + off, cfi_cache.bytes, size);
    else
        jf__cfi_serialize(d->cfi, (uint8_t *)pub.heap + off);
    *at += size;
    return off;
}

static void measure_extras(const jf__live_detail *d, extras *x)
{
    x->file_len = file_len(d);
    x->lines_len = d->n_lines ? lines_size(d) : 0;
    x->shared_cfi_off = NOT_SHARED;
    x->cfi_len = d->cfi ? cfi_size(d, x) : 0;
}

/* Write them after the name in e's block (e held odd by the caller). */
static void write_extras(const jf__live *r, const extras *x, jf__pub_entry *e, uint32_t block)
{
    uint32_t at = block + r->name_len + 1;
    e->file_len = x->file_len;
    e->lines_len = x->lines_len;
    e->cfi_len = x->cfi_len;
    if (x->file_len)
        e->file_off = heap_put_cstr(&at, r->detail->file, x->file_len);
    if (x->lines_len)
        e->lines_off = heap_put_lines(&at, r->detail, r->size, x->lines_len);
    if (x->cfi_len)
        e->cfi_off = x->shared_cfi_off != NOT_SHARED ? x->shared_cfi_off
                                                     : heap_put_cfi(&at, r->detail, x->cfi_len);
}

/* A free slot's entry, its lock taken, and a heap block of `need` bytes;
 * NULL (counted as dropped) when neither the heap nor the slots can grow. */
__attribute__((always_inline)) static inline jf__pub_entry *begin_entry(uint64_t need, uint32_t *slot,
                                                                        uint32_t *seq, uint32_t *block)
{
    uint32_t c = jf__pub_class(need);
    if (heap_alloc(c, block) != 0)
        return drop("no memory for the table's heap to grow"), NULL;
    if ((*slot = take_slot()) == UINT32_MAX) {
        jf__pub_blocks_put(&pub.blocks, *block, c);
        return drop("no memory for the table's slots to grow"), NULL;
    }
    jf__pub_entry *e = &pub.entries[*slot];
    *seq = e->seq;
    __atomic_store_n(&e->seq, *seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    e->block_class = c;
    return e;
}

/* The fields every entry has, then its lock released. A free slot has no
 * file, line table nor unwind description (never used, or emptied by
 * free_slot), so a region without them writes only these. */
__attribute__((always_inline)) static inline void end_entry(jf__pub_entry *e, uint32_t seq, jf__live *r,
                                                            uint32_t line, uint32_t slot, uint32_t block,
                                                            uint64_t gen, uint64_t now_ns)
{
    e->flags = JF_PUB_LIVE;
    e->start = r->start;
    e->size = r->size;
    e->line = line;
    e->name_len = r->name_len;
    jf__short_copy(pub.heap + block, r->name, (size_t)r->name_len + 1); /* the block starts with the name */
    e->name_off = block;
    e->published_gen = gen;
    e->published_ns = now_ns;
    __atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
    r->pub_slot = slot + 1;
    pub.live++;
    __builtin_prefetch(e + 1, 1); /* the next registration's entry: a miss on a fresh line cost most */
}

/* A region with a file, a line table or an unwind description. */
__attribute__((noinline)) static void publish_with_extras(jf__live *r, uint64_t gen, uint64_t now_ns)
{
    extras x;
    measure_extras(r->detail, &x);
    uint64_t need = (uint64_t)r->name_len + 1 + (x.file_len ? x.file_len + 1u : 0u) + x.lines_len +
                    (x.shared_cfi_off != NOT_SHARED ? 0u : x.cfi_len);
    uint32_t slot, seq, block;
    jf__pub_entry *e = begin_entry(need, &slot, &seq, &block);
    if (e) {
        write_extras(r, &x, e, block);
        end_entry(e, seq, r, r->detail->line, slot, block, gen, now_ns);
    }
}

/* A region with a source file only (no line table nor unwind
 * description): the name and the file, without measuring the rest. */
__attribute__((always_inline)) static inline void publish_with_file(jf__live *r, uint64_t gen,
                                                                    uint64_t now_ns)
{
    uint32_t len = file_len(r->detail);
    uint32_t slot, seq, block;
    jf__pub_entry *e = begin_entry((uint64_t)r->name_len + 1 + (len ? len + 1u : 0u), &slot, &seq, &block);
    if (!e)
        return;
    if (len) {
        uint32_t at = block + r->name_len + 1;
        e->file_len = len;
        e->file_off = heap_put_cstr(&at, r->detail->file, len);
    }
    end_entry(e, seq, r, r->detail->line, slot, block, gen, now_ns);
}

/* Publish r in a free slot, writing its entry field by field under the
 * slot's lock: this is the cost every registration pays. */
__attribute__((always_inline)) static inline void publish_one(jf__live *r, uint64_t gen, uint64_t now_ns)
{
    if (__builtin_expect(r->detail != NULL, 0))
        return r->detail->n_lines || r->detail->cfi ? publish_with_extras(r, gen, now_ns)
                                                    : publish_with_file(r, gen, now_ns);
    uint32_t slot, seq, block;
    jf__pub_entry *e = begin_entry((uint64_t)r->name_len + 1, &slot, &seq, &block);
    if (e)
        end_entry(e, seq, r, 0, slot, block, gen, now_ns);
}

/* Free slot i (entry e): flags 0 and no file, line table or unwind
 * description, which is what publish_one relies on (it writes only the
 * fields every entry has); the rest is left as it was, meaningless to
 * readers. The slot joins the free set, in the writer's own memory
 * (nothing the process writes into the table can misdirect a later
 * registration) and allocated with the table (a removal allocates
 * nothing). */
static inline void free_slot(jf__pub_entry *e, uint32_t i)
{
    uint32_t even = seq_begin(&e->seq);
    e->flags = JF_PUB_EMPTY;
    e->file_len = e->lines_len = e->cfi_len = 0;
    seq_end(&e->seq, even);
    jf__lowest_set_add(&pub.free_slots, i);
}

/* r's entry goes to the removed ring (its block with it) and its slot is
 * freed; the block of the ring entry it replaces is freed. */
__attribute__((always_inline)) static inline void unpublish(jf__live *r, uint64_t now_ns)
{
    if (r->pub_slot == 0 || r->pub_slot > pub.used)
        return; /* never published (memory ran out) */
    uint32_t i = r->pub_slot - 1;
    r->pub_slot = 0;
    jf__pub_entry *ring = &pub.ring[pub.ring_written & (pub.ring_cap - 1)];
    uint32_t even = seq_begin(&ring->seq);
    if (ring->flags == JF_PUB_REMOVED)
        release_block(ring);
    jf__pub_entry *e = &pub.entries[i];
    memcpy(&ring->flags, &e->flags, offsetof(jf__pub_entry, removed_gen) - offsetof(jf__pub_entry, flags));
    ring->flags = JF_PUB_REMOVED;
    ring->removed_gen = pub.generation + 1;
    ring->removed_ns = now_ns;
    seq_end(&ring->seq, even);
    pub.ring_written++;
    free_slot(e, i);
    pub.live--;
}

/* published_ns: CLOCK_MONOTONIC_COARSE, never ahead of CLOCK_MONOTONIC
 * (the last tick's value of the same clock). Even that cost ~30 ns a call
 * on the reference machine (a VM: 40% of a registration), so where the host
 * has a cycle counter (JF_HOST_HAS_TICKS, src/arch/host.h: the x86_64 TSC)
 * the value is kept and read again only when the counter says ~0.5 ms have
 * passed (2^20 cycles at 2 GHz) or a removal took the precise
 * time since: a kept value stays a lower bound, at most that much staler,
 * and never earlier than a removal published before it (whose time may be
 * up to about a microsecond late, tick_clock.h: then so is this). */
static uint64_t coarse_clock_ns(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &t) != 0)
        return 0;
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

enum { COARSE_REREAD_CYCLES = 1u << 20 };
static uint64_t kept_ns, kept_tsc;

/* A removal's precise time: what publications after it start from. The
 * counter is not read again (an rdtsc cost ~10 ns of CPU on the reference
 * VM, a fifth of what the table adds to a removal): kept_tsc dates from the
 * last coarse read, older than this time, so the kept value is reused for
 * less, never for longer, than COARSE_REREAD_CYCLES after a real reading. */
static void keep_time(uint64_t precise_ns)
{
    kept_ns = precise_ns;
}

static uint64_t coarse_now_ns(void)
{
    if (!JF_HOST_HAS_TICKS) {
        uint64_t now = coarse_clock_ns();
        return now > kept_ns ? now : kept_ns; /* never before a removal published earlier */
    }
    uint64_t tsc = jf__host_ticks();
    if (kept_ns && tsc - kept_tsc < COARSE_REREAD_CYCLES)
        return kept_ns;
    uint64_t now = coarse_clock_ns();
    if (now > kept_ns) /* the coarse clock may lag a kept precise time */
        kept_ns = now;
    kept_tsc = tsc;
    return kept_ns;
}

/* Out of line: without the table, jf__pub_add is a test and a return. */
__attribute__((noinline)) static void add_batch(jf__live *const *regions, size_t n)
{
    uint64_t now = coarse_now_ns();
    change_begin();
    for (size_t i = 0; i < n; i++)
        publish_one(regions[i], pub.generation + 1, now);
    change_end(CHANGE_ADDED);
}

void jf__pub_add(jf__live *const *regions, size_t n)
{
    if (pub.active)
        add_batch(regions, n);
}

/* A change that removes regions begins: the precise time, which later
 * publications start from. */
static uint64_t removal_begin(void)
{
    uint64_t now = jf__tick_clock_now(&removal_clock);
    keep_time(now);
    change_begin();
    return now;
}

/* Moved regions: removed at their old addresses, then published at their
 * new ones in the slots just freed, as one change. */
static void remove_and_republish(jf__live *const *regions, size_t n)
{
    uint64_t now = removal_begin();
    for (size_t i = 0; i < n; i++)
        unpublish(regions[i], now);
    for (size_t i = 0; i < n; i++)
        publish_one(regions[i], pub.generation + 1, now); /* the removal's time: see coarse_clock_ns */
    change_end(CHANGE_ADDED | CHANGE_REMOVED);
}

/* Out of line, apart from moves: a removal pays for no publication. */
__attribute__((noinline)) static void remove_batch(jf__live *const *regions, size_t n)
{
    uint64_t now = removal_begin();
    for (size_t i = 0; i < n; i++)
        unpublish(regions[i], now);
    change_end(CHANGE_REMOVED);
}

/* One region removed (jf_unregister): no loop, nothing called but the
 * clock. */
__attribute__((noinline)) static void remove_one(jf__live *r)
{
    uint64_t now = removal_begin();
    unpublish(r, now);
    change_end(CHANGE_REMOVED);
}

void jf__pub_remove(jf__live *const *regions, size_t n)
{
    if (pub.active)
        n == 1 ? remove_one(regions[0]) : remove_batch(regions, n);
}

/* A moved region is removed at its old address (the ring keeps it there)
 * and published at its new one, in the same slot. */
void jf__pub_move(jf__live *const *regions, const uintptr_t *old_starts, size_t n)
{
    (void)old_starts; /* each region's slot says where its entry is */
    if (pub.active)
        remove_and_republish(regions, n);
}
