/*
 * Slots for jf__live records (see region_slab.h). Each slot starts with an
 * 8-byte header naming its class and its place in its chunk, so freeing
 * needs no size and finds the chunk. A chunk (256 KiB from mmap with
 * MAP_POPULATE: one system call instead of a fault per page) holds slots of
 * one class and a bitmap of those freed; chunks are kept for the life of
 * the process. A class allocates the lowest free slot of one chunk (a freed
 * one, else the first never used) until that chunk has none, then moves to
 * another of its chunks that has: however records were freed, they are
 * reused in address order, a chunk at a time, which the processor's
 * prefetcher follows. (One free list per class, last
 * freed first, spread them over every page the records ever used: after
 * one random-order pass over 100,000 regions, every later registration and
 * unregistration missed the cache on its record and took ~4x the time.)
 * Records larger than the biggest class, and every record under
 * AddressSanitizer (which must see each allocation), use malloc.
 */
#define _GNU_SOURCE
#include "region_slab.h"

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define SLAB_ENABLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_ENABLED 0
#endif
#endif
#ifndef SLAB_ENABLED
#define SLAB_ENABLED 1
#endif

/* HEADER: 8 bytes, the alignment of jf__live's widest field. Every byte
 * of a record is a byte of fresh pages a process pays for (populated 4 KiB
 * pages: ~0.38 ns a byte at 1M registrations, bench_table_fresh with the
 * smallest class 192 against 128): a name-only region with a name of up to
 * 15 bytes takes the 64-byte class, with up to 47 the 96-byte one. */
enum { HEADER = 8, CHUNK = 256 * 1024, N_CLASSES = 8, MALLOCED = 0xff };
_Static_assert(HEADER % _Alignof(void *) == 0 && HEADER % _Alignof(uint64_t) == 0,
               "a record after the header is aligned for pointers and 64-bit fields");
static const uint32_t class_size[N_CLASSES] = {64, 96, 128, 192, 256, 384, 512, 1024}; /* header included */

/* What a slot's first 8 bytes say. */
typedef struct slot_header {
    uint8_t class_id; /* MALLOCED for a record from malloc */
    uint8_t unused[3];
    uint32_t index; /* the slot's place in its chunk */
} slot_header;
_Static_assert(sizeof(slot_header) == HEADER, "the header is HEADER bytes");

enum {
    SLOTS_MAX = CHUNK / 64, /* of the smallest class */
    WORDS = SLOTS_MAX / 64,
};

/* The start of a chunk; its slots follow: [0, unused) have been handed
 * out at least once (those freed since are in the bitmap), the rest never. */
typedef struct chunk {
    uint64_t free_bits[WORDS];  /* bit i: slot i was freed and is not in use */
    uint32_t n_freed, lowest;   /* lowest: no freed slot in a word below it */
    uint32_t unused, slots;     /* the first never used slot; slots in all */
    struct chunk *next_partial; /* the next chunk of partial[class] */
    uint8_t class_id;
    uint8_t listed; /* current[class] or in partial[class] */
} chunk;
/* Slots start on a cache line: a 64-byte record is one line, not two. */
enum { SLOTS_AT = (sizeof(chunk) + 63) / 64 * 64 };

/* A spin lock: held for a few instructions (a list pop or push), and a
 * mutex would cost as much as the rest of the allocation. */
static int slab_lock;
/* Guarded by slab_lock: per class, the chunk allocated from and the others
 * with free slots. */
static chunk *current[N_CLASSES];
static chunk *partial[N_CLASSES];

static void lock(void)
{
    while (__atomic_exchange_n(&slab_lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&slab_lock, __ATOMIC_RELAXED))
            sched_yield();
}

static void unlock(void)
{
    __atomic_store_n(&slab_lock, 0, __ATOMIC_RELEASE);
}

static int class_of(size_t size)
{
    for (int c = 0; c < N_CLASSES; c++)
        if (size + HEADER <= class_size[c])
            return c;
    return -1;
}

static chunk *new_chunk(int c)
{
    void *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    chunk *ch = p;
    ch->slots = (uint32_t)((CHUNK - SLOTS_AT) / class_size[c]);
    ch->class_id = (uint8_t)c;
    ch->listed = 1;
    return ch;
}

static int chunk_has_room(const chunk *ch)
{
    return ch->n_freed != 0 || ch->unused < ch->slots;
}

/* The chunk class c allocates from now: the current one while it has
 * room, else one with freed slots, else a new one. Lock held. */
static chunk *chunk_for(int c)
{
    chunk *ch = current[c];
    if (ch && chunk_has_room(ch))
        return ch;
    if (ch)
        ch->listed = 0; /* full: its next free lists it again */
    if ((ch = partial[c]) != NULL)
        partial[c] = ch->next_partial;
    else
        ch = new_chunk(c);
    current[c] = ch;
    return ch;
}

/* The lowest freed slot of ch (which has one); UINT32_MAX if its bitmap
 * has none after all. Lock held. */
static uint32_t take_freed(chunk *ch)
{
    uint32_t w = ch->lowest;
    while (w < WORDS - 1 && !ch->free_bits[w])
        w++;
    if (!ch->free_bits[w]) { /* n_freed said otherwise: the chunk was written over */
        ch->n_freed = 0;
        return UINT32_MAX;
    }
    uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(ch->free_bits[w]);
    ch->free_bits[w] &= ch->free_bits[w] - 1;
    ch->lowest = w;
    ch->n_freed--;
    return i;
}

/* The lowest free slot of ch (which has room): a freed one, else the
 * first never used; its header written. NULL if there is none after all.
 * Lock held. */
static char *take_slot(chunk *ch)
{
    uint32_t i = ch->n_freed ? take_freed(ch) : ch->unused++;
    if (i >= ch->slots)
        return NULL;
    char *slot = (char *)ch + SLOTS_AT + (size_t)i * class_size[ch->class_id];
    slot_header h = {ch->class_id, {0}, i};
    memcpy(slot, &h, sizeof h);
    return slot;
}

void *jf__slab_alloc(size_t size)
{
    int c = SLAB_ENABLED ? class_of(size) : -1;
    char *slot = NULL;
    if (c < 0) {
        if (size > SIZE_MAX - HEADER || !(slot = malloc(size + HEADER)))
            return NULL;
        slot[0] = (char)MALLOCED;
        return slot + HEADER;
    }
    lock();
    chunk *ch = chunk_for(c);
    if (ch)
        slot = take_slot(ch);
    unlock();
    return slot ? slot + HEADER : NULL;
}

void jf__slab_free(void *p)
{
    if (!p)
        return;
    char *slot = (char *)p - HEADER;
    slot_header h;
    memcpy(&h, slot, sizeof h);
    if (h.class_id == MALLOCED) {
        free(slot);
        return;
    }
    if (h.class_id >= N_CLASSES || h.index >= (CHUNK - SLOTS_AT) / class_size[h.class_id])
        return; /* not a slot's header (written over): leaked, never misplaced */
    chunk *ch = (chunk *)(void *)(slot - SLOTS_AT - (size_t)h.index * class_size[h.class_id]);
    uint32_t w = h.index / 64;
    lock();
    ch->free_bits[w] |= UINT64_C(1) << (h.index % 64);
    ch->n_freed++;
    if (w < ch->lowest)
        ch->lowest = w;
    if (!ch->listed) {
        ch->listed = 1;
        ch->next_partial = partial[h.class_id];
        partial[h.class_id] = ch;
    }
    unlock();
}

void jf__slab_lock_for_fork(void)
{
    lock();
}

void jf__slab_unlock_after_fork(void)
{
    unlock();
}
