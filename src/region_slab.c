/*
 * Slots for jf__live records (see region_slab.h). Each slot starts with an
 * 8-byte header naming its class, so freeing needs no size. Chunks come
 * from mmap with MAP_POPULATE (one system call instead of a fault per page)
 * and are kept for the life of the process: freed slots go on their class's
 * free list. Records larger than the biggest class, and every record under
 * AddressSanitizer (which must see each allocation), use malloc.
 */
#define _GNU_SOURCE
#include "region_slab.h"

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
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

/* HEADER: 8 bytes, the alignment of jf__live's widest field; at 16, the
 * 8 bytes the published table added to jf__live (pub_slot, name_len) moved
 * a 14-byte name from the 128-byte class to the 192-byte one (+64 bytes,
 * +15,700 page faults per million registrations: bench_perfmap, fresh). */
enum { HEADER = 8, CHUNK = 256 * 1024, N_CLASSES = 6, MALLOCED = 0xff };
_Static_assert(HEADER % _Alignof(void *) == 0 && HEADER % _Alignof(uint64_t) == 0,
               "a record after the header is aligned for pointers and 64-bit fields");
static const uint32_t class_size[N_CLASSES] = {128, 192, 256, 384, 512, 1024}; /* header included */

typedef struct free_slot {
    struct free_slot *next;
} free_slot;

/* A spin lock: held for a few instructions (a list pop or push), and a
 * mutex would cost as much as the rest of the allocation. */
static int slab_lock;
/* Guarded by slab_lock. */
static free_slot *free_list[N_CLASSES];
static char *bump, *bump_end; /* the unused part of the newest chunk */

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

/* A slot of class c carved from the newest chunk (a new one if needed).
 * Lock held. */
static char *carve(int c)
{
    if ((size_t)(bump_end - bump) < class_size[c]) {
        void *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1,
                       0);
        if (p == MAP_FAILED)
            return NULL;
        bump = p;
        bump_end = bump + CHUNK;
    }
    char *slot = bump;
    bump += class_size[c];
    return slot;
}

void *jf__slab_alloc(size_t size)
{
    int c = SLAB_ENABLED ? class_of(size) : -1;
    char *slot;
    if (c < 0) {
        if (size > SIZE_MAX - HEADER || !(slot = malloc(size + HEADER)))
            return NULL;
        slot[0] = (char)MALLOCED;
        return slot + HEADER;
    }
    lock();
    slot = (char *)free_list[c];
    if (slot)
        free_list[c] = free_list[c]->next;
    else
        slot = carve(c);
    unlock();
    if (!slot)
        return NULL;
    slot[0] = (char)c;
    return slot + HEADER;
}

void jf__slab_free(void *p)
{
    if (!p)
        return;
    char *slot = (char *)p - HEADER;
    unsigned char c = (unsigned char)slot[0];
    if (c == MALLOCED) {
        free(slot);
        return;
    }
    lock();
    free_slot *f = (free_slot *)(void *)slot;
    f->next = free_list[c];
    free_list[c] = f;
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
