/*
 * What the table readers decode once and share: entries of a hostile (or a
 * frugal) table may point many slots at the same heap bytes, so a name, a
 * line table or an unwind description is decoded once per distinct
 * (offset, length) and every region holding it takes a reference. The cost
 * of a read then follows the bytes that are distinct, not the slot count.
 */
#ifndef JFT_TABLE_SHARED_H
#define JFT_TABLE_SHARED_H

#include <stddef.h>
#include <stdint.h>

/* A reference-counted block: ts_new gives its data (size bytes, zeroed),
 * freed with dtor(data) then itself when the last reference goes. */
typedef void (*ts_dtor)(void *data);
void *ts_new(size_t size, ts_dtor dtor);
void *ts_ref(void *data);         /* NULL: NULL */
void ts_unref(void *data);        /* NULL: nothing */
size_t ts_size(const void *data); /* NULL: 0 */
/* 1 the first time it is asked of this block, then 0: a keeper that
 * accounts for bytes counts a shared block once. */
int ts_claim(void *data);
int ts_claimed(const void *data);
/* A number the owner keeps with the data (0 until set). */
void ts_set_aux(void *data, uint64_t aux);
uint64_t ts_aux(const void *data); /* NULL: 0 */

/* A map from what was decoded, (kind, offset, length, extra), to the shared
 * block (or NULL: it was unsound) that holds a reference to it. */
typedef struct ts_key {
    uint32_t kind, off, len;
    uint64_t extra;
} ts_key;

typedef struct ts_cache {
    struct ts_slot *slots;
    size_t cap, n;
} ts_cache;

/* 1 with *value (which may be NULL) if key was decoded, else 0. */
int ts_cache_get(const ts_cache *c, ts_key key, void **value);
/* Remember value for key (the cache takes a reference). 0, or -1 when out
 * of memory (nothing remembered: the caller decodes again next time). */
int ts_cache_put(ts_cache *c, ts_key key, void *value);
void ts_cache_free(ts_cache *c);

#endif
