/* Shared decoded blocks and their cache (table_shared.h). */
#include "table_shared.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct block { /* 32 bytes before the data */
    uint32_t refs, claimed;
    size_t size;
    uint64_t aux;
    ts_dtor dtor;
    max_align_t align[]; /* data */
} block;

static block *block_of(const void *data)
{
    return (block *)(void *)((char *)(uintptr_t)data - offsetof(block, align));
}

void *ts_new(size_t size, ts_dtor dtor)
{
    if (size > SIZE_MAX - sizeof(block))
        return NULL;
    block *b = calloc(1, sizeof *b + (size ? size : 1));
    if (!b)
        return NULL;
    b->refs = 1;
    b->size = size;
    b->dtor = dtor;
    return b->align;
}

void *ts_ref(void *data)
{
    if (data)
        block_of(data)->refs++;
    return data;
}

void ts_unref(void *data)
{
    if (!data)
        return;
    block *b = block_of(data);
    if (--b->refs)
        return;
    if (b->dtor)
        b->dtor(data);
    free(b);
}

size_t ts_size(const void *data)
{
    return data ? block_of(data)->size : 0;
}

int ts_claim(void *data)
{
    block *b = block_of(data);
    int first = !b->claimed;
    b->claimed = 1;
    return first;
}

int ts_claimed(const void *data)
{
    return block_of(data)->claimed;
}

void ts_set_aux(void *data, uint64_t aux)
{
    block_of(data)->aux = aux;
}

uint64_t ts_aux(const void *data)
{
    return data ? block_of(data)->aux : 0;
}

/* ---- The cache: open addressing, linear probing, grown at half full ---- */

typedef struct ts_slot {
    ts_key key;
    void *value;
    int used;
} ts_slot;

/* splitmix64's finaliser over the key's words. */
static uint64_t mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

static uint64_t hash(ts_key k)
{
    return mix(mix(((uint64_t)k.kind << 32 | k.off) ^ ((uint64_t)k.len << 40)) ^ k.extra);
}

static int same_key(ts_key a, ts_key b)
{
    return a.kind == b.kind && a.off == b.off && a.len == b.len && a.extra == b.extra;
}

static ts_slot *find(const ts_cache *c, ts_key key)
{
    for (size_t i = hash(key) & (c->cap - 1);; i = (i + 1) & (c->cap - 1))
        if (!c->slots[i].used || same_key(c->slots[i].key, key))
            return &c->slots[i];
}

int ts_cache_get(const ts_cache *c, ts_key key, void **value)
{
    if (!c->cap)
        return 0;
    ts_slot *s = find(c, key);
    if (!s->used)
        return 0;
    *value = s->value;
    return 1;
}

static int grow(ts_cache *c)
{
    size_t cap = c->cap ? 2 * c->cap : 64;
    ts_slot *old = c->slots;
    size_t old_cap = c->cap;
    if (!(c->slots = calloc(cap, sizeof *c->slots))) {
        c->slots = old;
        return -1;
    }
    c->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].used)
            *find(c, old[i].key) = old[i];
    free(old);
    return 0;
}

int ts_cache_put(ts_cache *c, ts_key key, void *value)
{
    if ((c->n + 1) * 2 > c->cap && grow(c) != 0)
        return -1;
    ts_slot *s = find(c, key);
    if (s->used) {
        ts_unref(s->value);
    } else {
        s->used = 1;
        s->key = key;
        c->n++;
    }
    s->value = ts_ref(value);
    return 0;
}

void ts_cache_free(ts_cache *c)
{
    for (size_t i = 0; i < c->cap; i++)
        if (c->slots[i].used)
            ts_unref(c->slots[i].value);
    free(c->slots);
    memset(c, 0, sizeof *c);
}
