/*
 * The registry's two-level index of live regions (see region_index.h).
 * Page numbers are hashed with Fibonacci hashing (the product's top bits),
 * which spreads strided keys evenly.
 */
#include "region_index.h"

#include <stdlib.h>
#include <string.h>

enum { PAGE_SHIFT = 12, MIN_CAPACITY = 64 };

static size_t home_of(uintptr_t page, size_t capacity)
{
    uint64_t h = (uint64_t)page * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> (64 - __builtin_ctzll((unsigned long long)capacity)));
}

/* The directory slot of `page`, or the empty slot ending its probe run. */
static size_t probe(const jf__region_page *pages, size_t capacity, uintptr_t page)
{
    size_t mask = capacity - 1;
    size_t i = home_of(page, capacity);
    while (pages[i].entries && pages[i].page != page)
        i = (i + 1) & mask;
    return i;
}

static jf__region_page *find_page(const jf__region_index *t, uintptr_t page)
{
    if (t->capacity == 0)
        return NULL;
    jf__region_page *p = &t->pages[probe(t->pages, t->capacity, page)];
    return p->entries ? p : NULL;
}

/* Index of the first entry whose start is >= start. Appending in address
 * order and taking the oldest first (the common cases: code registered and
 * freed in address order) are answered without a search. */
static uint32_t lower_bound(const jf__region_page *p, uintptr_t start)
{
    if (p->count == 0 || p->entries[p->count - 1].start < start)
        return p->count;
    if (p->entries[0].start >= start)
        return 0;
    uint32_t lo = 0, hi = p->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->entries[mid].start < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

jf__live *jf__region_index_find(const jf__region_index *t, uintptr_t start)
{
    jf__region_page *p = find_page(t, start >> PAGE_SHIFT);
    if (!p)
        return NULL;
    uint32_t i = lower_bound(p, start);
    return i < p->count && p->entries[i].start == start ? p->entries[i].region : NULL;
}

/* Keep the directory at most half full so probe runs stay short. */
static int grow_directory(jf__region_index *t)
{
    if ((t->used_pages + 1) * 2 <= t->capacity)
        return 0;
    size_t capacity = t->capacity ? t->capacity * 2 : MIN_CAPACITY;
    if (capacity > SIZE_MAX / 2 / sizeof(jf__region_page))
        return JF_ENOMEM;
    jf__region_page *pages = calloc(capacity, sizeof *pages);
    if (!pages)
        return JF_ENOMEM;
    for (size_t i = 0; i < t->capacity; i++)
        if (t->pages[i].entries)
            pages[probe(pages, capacity, t->pages[i].page)] = t->pages[i];
    free(t->pages);
    t->pages = pages;
    t->capacity = capacity;
    return 0;
}

static int make_room(jf__region_page *p)
{
    if (p->count < p->capacity)
        return 0;
    uint32_t capacity = p->capacity ? p->capacity * 2 : 4;
    if (capacity <= p->capacity) /* more entries than a page can start */
        return JF_ENOMEM;
    jf__region_slot *entries = realloc(p->entries, capacity * sizeof *entries);
    if (!entries)
        return JF_ENOMEM;
    p->entries = entries;
    p->capacity = capacity;
    return 0;
}

int jf__region_index_insert(jf__region_index *t, jf__live *r)
{
    uintptr_t page = r->start >> PAGE_SHIFT;
    jf__region_page *p = find_page(t, page);
    if (!p) {
        if (grow_directory(t) != 0)
            return JF_ENOMEM;
        p = &t->pages[probe(t->pages, t->capacity, page)];
        jf__region_page fresh = {.page = page};
        if (make_room(&fresh) != 0)
            return JF_ENOMEM;
        *p = fresh;
        t->used_pages++;
    }
    uint32_t i = lower_bound(p, r->start);
    if (i < p->count && p->entries[i].start == r->start)
        return JF_EEXIST;
    if (make_room(p) != 0)
        return JF_ENOMEM;
    if (i < p->count) /* appending (the common case) moves nothing */
        memmove(&p->entries[i + 1], &p->entries[i], (p->count - i) * sizeof *p->entries);
    p->entries[i] = (jf__region_slot){r->start, r};
    p->count++;
    t->count++;
    if (r->size > t->max_size)
        t->max_size = r->size;
    return 0;
}

/* Empty directory slot i, pulling later members of its probe run back so
 * every page stays reachable from its home slot (backward-shift deletion). */
static void remove_page(jf__region_index *t, size_t i)
{
    size_t mask = t->capacity - 1;
    free(t->pages[i].entries);
    size_t hole = i;
    for (size_t j = (i + 1) & mask; t->pages[j].entries; j = (j + 1) & mask) {
        size_t home = home_of(t->pages[j].page, t->capacity);
        int movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
        if (movable) {
            t->pages[hole] = t->pages[j];
            hole = j;
        }
    }
    t->pages[hole] = (jf__region_page){0};
    t->used_pages--;
}

/* Take the entry for `start` out of its page; the page stays, maybe empty. */
static jf__live *take_entry(jf__region_index *t, uintptr_t start, jf__region_page **page_out)
{
    jf__region_page *p = find_page(t, start >> PAGE_SHIFT);
    if (!p)
        return NULL;
    uint32_t i = lower_bound(p, start);
    if (i >= p->count || p->entries[i].start != start)
        return NULL;
    jf__live *found = p->entries[i].region;
    p->count--;
    memmove(&p->entries[i], &p->entries[i + 1], (p->count - i) * sizeof *p->entries);
    t->count--;
    *page_out = p;
    return found;
}

jf__live *jf__region_index_remove(jf__region_index *t, uintptr_t start)
{
    jf__region_page *p;
    jf__live *found = take_entry(t, start, &p);
    if (found && p->count == 0)
        remove_page(t, (size_t)(p - t->pages));
    return found;
}

jf__live *jf__region_index_detach(jf__region_index *t, uintptr_t start)
{
    jf__region_page *p;
    return take_entry(t, start, &p);
}

void jf__region_index_release_empty(jf__region_index *t, uintptr_t start)
{
    jf__region_page *p = find_page(t, start >> PAGE_SHIFT);
    if (p && p->count == 0)
        remove_page(t, (size_t)(p - t->pages));
}

/* A test applied to each page of a range: the region it finds, or NULL. */
typedef jf__live *(*page_test)(const jf__region_page *p, uintptr_t lo, uintptr_t hi);

/* Apply `test` to the pages numbered [first, last], in order when that is
 * cheaper than one pass over the directory (then in directory order). */
static jf__live *scan_pages(const jf__region_index *t, uintptr_t first, uintptr_t last, page_test test,
                            uintptr_t lo, uintptr_t hi)
{
    if (last - first < t->capacity) {
        for (uintptr_t page = first;; page++) {
            const jf__region_page *p = find_page(t, page);
            jf__live *r = p ? test(p, lo, hi) : NULL;
            if (r || page == last)
                return r;
        }
    }
    for (size_t k = 0; k < t->capacity; k++) {
        const jf__region_page *p = &t->pages[k];
        jf__live *r = p->entries && p->page >= first && p->page <= last ? test(p, lo, hi) : NULL;
        if (r)
            return r;
    }
    return NULL;
}

/* A region of p starting in [lo, hi). */
static jf__live *starting_in(const jf__region_page *p, uintptr_t lo, uintptr_t hi)
{
    uint32_t i = lower_bound(p, lo);
    return i < p->count && p->entries[i].start < hi ? p->entries[i].region : NULL;
}

/* A region of p starting below lo and reaching past it. */
static jf__live *reaching_past(const jf__region_page *p, uintptr_t lo, uintptr_t hi)
{
    (void)hi;
    for (uint32_t i = lower_bound(p, lo); i-- > 0;)
        if (p->entries[i].region->size > lo - p->entries[i].start)
            return p->entries[i].region;
    return NULL;
}

int jf__region_index_any_start_in(const jf__region_index *t, uintptr_t lo, uintptr_t hi)
{
    return t->count && lo < hi &&
           scan_pages(t, lo >> PAGE_SHIFT, (hi - 1) >> PAGE_SHIFT, starting_in, lo, hi) != NULL;
}

jf__live *jf__region_index_overlapping(const jf__region_index *t, uintptr_t lo, uintptr_t hi)
{
    if (t->count == 0 || lo >= hi)
        return NULL;
    jf__live *r = scan_pages(t, lo >> PAGE_SHIFT, (hi - 1) >> PAGE_SHIFT, starting_in, lo, hi);
    if (r)
        return r;
    /* One starting below lo reaches at most max_size back. */
    uintptr_t back = lo > t->max_size ? lo - t->max_size : 0;
    return scan_pages(t, back >> PAGE_SHIFT, lo >> PAGE_SHIFT, reaching_past, lo, hi);
}

int jf__region_index_foreach(const jf__region_index *t, int (*visit)(jf__live *r, void *ctx), void *ctx)
{
    for (size_t i = 0; i < t->capacity; i++) {
        const jf__region_page *p = &t->pages[i];
        for (uint32_t k = 0; p->entries && k < p->count; k++) {
            int rc = visit(p->entries[k].region, ctx);
            if (rc)
                return rc;
        }
    }
    return 0;
}

void jf__region_index_clear(jf__region_index *t)
{
    for (size_t i = 0; i < t->capacity; i++)
        free(t->pages[i].entries);
    free(t->pages);
    *t = (jf__region_index){0};
}
