/*
 * One pc against a published table (table_lookup.h). Every step is bounded
 * by a constant, as the eBPF verifier demands of the program this mirrors:
 * 32 halvings cover 2^32 slots, JF_PUB_WALK_BACK tombstones, one name of
 * TR_NAME_MAX bytes.
 */
#include "table_lookup.h"

#include "pub_layout.h"

#include <stddef.h>
#include <string.h>

enum { MAX_HALVINGS = 32 };

static int header_sound(const pub_header *h, uint64_t map_size)
{
    return memcmp(h->signature, JF_PUB_SIGNATURE, 8) == 0 && h->version == JF_PUB_VERSION &&
           h->entry_size == sizeof(pub_entry) && h->entries_used <= h->entries_capacity &&
           h->entries_off <= map_size &&
           (uint64_t)h->entries_capacity * sizeof(pub_entry) <= map_size - h->entries_off &&
           h->heap_off <= map_size && h->heap_capacity <= map_size - h->heap_off;
}

/* Index of the last slot starting at or before pc, or -1. */
static int64_t last_start_at_or_before(tr_read_fn read, void *ctx, uint64_t slots, uint32_t used,
                                       uint64_t pc, int *failed)
{
    uint32_t lo = 0, hi = used;
    for (int step = 0; step < MAX_HALVINGS && lo < hi; step++) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint64_t start;
        if (read(ctx, slots + (uint64_t)mid * sizeof(pub_entry) + offsetof(pub_entry, start), &start,
                 sizeof start) != 0) {
            *failed = 1;
            return -1;
        }
        if (start <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (int64_t)lo - 1;
}

static void copy_name(char *dst, const char *src, size_t n)
{
    size_t i = 0;
    for (; i < n && src[i]; i++)
        dst[i] = ((unsigned char)src[i] < 0x20 || src[i] == 0x7f) ? '?' : src[i];
    dst[i] = '\0';
}

/* Entry e (read at `at`) holds pc: fill hit with its name, read under its
 * sequence lock. */
static tr_lookup_result take(tr_read_fn read, void *ctx, uint64_t base, const pub_header *h, uint64_t at,
                             const pub_entry *e, tr_hit *hit)
{
    char name[TR_NAME_MAX];
    size_t n = e->name_len < TR_NAME_MAX - 1 ? e->name_len : TR_NAME_MAX - 1;
    if (e->name_off > h->heap_capacity || n > h->heap_capacity - e->name_off ||
        read(ctx, base + h->heap_off + e->name_off, name, n) != 0)
        return TR_UNREADABLE;
    uint32_t seq;
    if (read(ctx, at, &seq, sizeof seq) != 0)
        return TR_UNREADABLE;
    if (seq != e->seq)
        return TR_BUSY;
    name[n] = '\0';
    copy_name(hit->name, name, n);
    hit->start = e->start;
    hit->size = e->size;
    hit->line = e->line;
    return TR_FOUND;
}

tr_lookup_result tr_lookup_pc(tr_read_fn read, void *ctx, uint64_t base, uint64_t map_size, uint64_t pc,
                              tr_hit *hit)
{
    memset(hit, 0, sizeof *hit);
    pub_header h;
    if (map_size < sizeof h || read(ctx, base, &h, sizeof h) != 0 || !header_sound(&h, map_size))
        return TR_UNREADABLE;
    hit->generation = h.generation;
    hit->ring_written = h.ring_written;
    if (h.generation & 1)
        return TR_BUSY;
    uint64_t slots = base + h.entries_off;
    int failed = 0;
    int64_t i = last_start_at_or_before(read, ctx, slots, h.entries_used, pc, &failed);
    if (failed)
        return TR_BUSY; /* the array shrank under us */
    for (int back = 0; back < JF_PUB_WALK_BACK && i >= 0; back++, i--) {
        uint64_t at = slots + (uint64_t)i * sizeof(pub_entry);
        pub_entry e;
        if (read(ctx, at, &e, sizeof e) != 0)
            return TR_UNREADABLE;
        if (e.seq & 1)
            return TR_BUSY;
        if (e.flags != JF_PUB_LIVE)
            continue;
        /* Both bounds: the entry read now may differ from the start the
         * search read (the target changed it, or lies). */
        if (pc < e.start || pc - e.start >= e.size)
            return TR_NOT_FOUND;
        return take(read, ctx, base, &h, at, &e, hit);
    }
    return TR_NOT_FOUND;
}
