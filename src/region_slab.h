/*
 * Memory for jf__live records: slots of a few size classes carved from
 * prefaulted chunks, so a registration costs neither malloc's search nor a
 * page fault on fresh memory.
 */
#ifndef JF_REGION_SLAB_H
#define JF_REGION_SLAB_H

#include <stddef.h>

/* size bytes aligned to 8 (jf__live's widest field); NULL when out of memory.
 * Thread-safe. */
void *jf__slab_alloc(size_t size);

/* Give back what jf__slab_alloc returned (NULL is fine). Thread-safe. */
void jf__slab_free(void *p);

/* Hold the slab lock across fork() (registry atfork handlers only). */
void jf__slab_lock_for_fork(void);
void jf__slab_unlock_after_fork(void);

#endif
