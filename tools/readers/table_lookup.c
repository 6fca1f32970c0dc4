/*
 * Naming a sampled pc (table_lookup.h). The sample-time half reads one
 * fixed-size header and nothing else, as the eBPF program does; the
 * resolution half works on a snapshot the reader already checked.
 */
#include "table_lookup.h"

#include "pub_layout.h"

#include <stddef.h>
#include <string.h>

/* The header's first fields, up to the generation: what the eBPF program reads. */
enum { SAMPLE_READ = offsetof(jf__pub_header, generation) + sizeof(uint64_t) };

tr_lookup_result tr_sample_generation(tr_read_fn read, void *ctx, uint64_t base, uint64_t map_size,
                                      uint64_t *generation)
{
    jf__pub_header h;
    *generation = 0;
    if (map_size < sizeof h || read(ctx, base, &h, SAMPLE_READ) != 0 ||
        memcmp(h.signature, JF_PUB_SIGNATURE, 8) != 0 || h.version != JF_PUB_VERSION)
        return TR_UNREADABLE;
    *generation = h.generation;
    return TR_FOUND;
}

static int holds(const tr_region *r, uint64_t pc)
{
    return pc >= r->start && pc - r->start < r->size;
}

static int live_at(const tr_region *r, uint64_t g)
{
    return r->published_gen <= g && (r->removed_gen == 0 || r->removed_gen > g);
}

/* The live list is sorted by start without overlaps in a consistent
 * snapshot; an inconsistent one may hold overlapping entries, so a few
 * candidates that start at or before pc are tried, nearest first. */
enum { WALK_BACK = 16 };
static const tr_region *resolve_even(const tr_snapshot *s, uint64_t pc, uint64_t g)
{
    size_t lo = tr_live_at_or_before(s, pc);
    for (size_t i = lo; i > 0 && lo - i < WALK_BACK; i--)
        if (holds(&s->live[i - 1], pc) && live_at(&s->live[i - 1], g))
            return &s->live[i - 1];
    for (size_t i = s->n_removed; i > 0; i--)
        if (holds(&s->removed[i - 1], pc) && live_at(&s->removed[i - 1], g))
            return &s->removed[i - 1];
    return NULL;
}

const tr_region *tr_resolve(const tr_snapshot *s, uint64_t pc, uint64_t generation)
{
    if (!(generation & 1))
        return resolve_even(s, pc, generation);
    const tr_region *r = resolve_even(s, pc, generation - 1);
    return r ? r : resolve_even(s, pc, generation + 1);
}
