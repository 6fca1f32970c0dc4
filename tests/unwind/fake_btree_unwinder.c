/*
 * A stand-in for GCC 13+'s libgcc registration API, for testing the unwind
 * sink's handling of it on machines with an older libgcc. Same observable
 * rules as libgcc's b-tree (unwind-dw2-fde.c, unwind-dw2-btree.h):
 *  - a table is keyed by the lowest pc of its FDEs; registering a second
 *    table with the same key silently drops it;
 *  - deregistering removes the entry with the table's key, whichever table
 *    registered it; if there is none, the process aborts;
 *  - _Unwind_Find_FDE searches the one table whose [first pc, last end)
 *    contains the pc.
 * Linked first into a test program, it is the unwinder in global scope.
 * fake_btree_drops() counts dropped registrations.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ENTRIES = 4096 };

typedef struct entry {
    const uint8_t *table;
    uintptr_t lo, hi;
    void *object; /* the caller's, returned by __deregister_frame_info */
} entry;

static entry entries[MAX_ENTRIES];
static size_t n_entries;
static int drops;

int fake_btree_drops(void);
size_t fake_btree_entries(void);
void __register_frame(void *begin);
void __deregister_frame(void *begin);
void __register_frame_info(const void *begin, void *object);
void *__deregister_frame_info(const void *begin);
const void *_Unwind_Find_FDE(void *pc, void **bases);

static uint64_t uleb(const uint8_t **p)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
}

static uint32_t u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The FDE pointer encoding of a CIE ("zR" only, as jitframes writes). */
static uint8_t cie_encoding(const uint8_t *cie)
{
    const uint8_t *p = cie + 9; /* length, id, version */
    const char *aug = (const char *)p;
    p += strlen(aug) + 1;
    uleb(&p); /* code alignment */
    uleb(&p); /* data alignment (sleb, same length) */
    p++;      /* return address column (version 1) */
    if (aug[0] != 'z')
        return 0;
    uleb(&p);
    for (const char *a = aug + 1; *a; a++)
        if (*a == 'R')
            return *p;
    return 0;
}

/* pc range of the FDE at f; 0 if not an FDE. */
static int fde_range(const uint8_t *f, uintptr_t *begin, uintptr_t *end)
{
    uint32_t id = u32(f + 4);
    if (id == 0)
        return 0;
    uint8_t enc = cie_encoding(f + 4 - id);
    const uint8_t *field = f + 8;
    if (enc == 0x00) { /* absptr */
        memcpy(begin, field, sizeof *begin);
        uintptr_t range;
        memcpy(&range, field + sizeof range, sizeof range);
        *end = *begin + range;
    } else if (enc == 0x1b) { /* pcrel | sdata4 */
        int32_t rel;
        memcpy(&rel, field, 4);
        *begin = (uintptr_t)field + (intptr_t)rel;
        *end = *begin + u32(field + 4);
    } else {
        abort();
    }
    return 1;
}

static void table_range(const uint8_t *t, uintptr_t *lo, uintptr_t *hi)
{
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (const uint8_t *p = t; u32(p) != 0; p += 4 + u32(p)) {
        uintptr_t b, e;
        if (fde_range(p, &b, &e)) {
            *lo = b < *lo ? b : *lo;
            *hi = e > *hi ? e : *hi;
        }
    }
}

static entry *find_key(uintptr_t lo)
{
    for (size_t i = 0; i < n_entries; i++)
        if (entries[i].lo == lo)
            return &entries[i];
    return NULL;
}

void __register_frame_info(const void *begin, void *object)
{
    uintptr_t lo, hi;
    table_range(begin, &lo, &hi);
    if (hi <= lo)
        return;
    if (find_key(lo) || n_entries == MAX_ENTRIES) {
        drops++;
        return;
    }
    entries[n_entries++] = (entry){begin, lo, hi, object};
}

void *__deregister_frame_info(const void *begin)
{
    uintptr_t lo, hi;
    table_range(begin, &lo, &hi);
    if (hi <= lo)
        return NULL;
    entry *e = find_key(lo);
    if (!e)
        abort(); /* gcc_assert (in_shutdown || ob) */
    void *object = e->object;
    *e = entries[--n_entries];
    return object;
}

/* As libgcc: the object is allocated here and freed on deregistration. */
void __register_frame(void *begin)
{
    if (u32(begin) == 0)
        return;
    __register_frame_info(begin, malloc(64));
}

void __deregister_frame(void *begin)
{
    if (u32(begin) != 0)
        free(__deregister_frame_info(begin));
}

const void *_Unwind_Find_FDE(void *pc, void **bases)
{
    uintptr_t a = (uintptr_t)pc;
    for (size_t i = 0; i < n_entries; i++) {
        if (a < entries[i].lo || a >= entries[i].hi)
            continue;
        for (const uint8_t *p = entries[i].table; u32(p) != 0; p += 4 + u32(p)) {
            uintptr_t b, e;
            if (fde_range(p, &b, &e) && a >= b && a < e) {
                bases[2] = (void *)b;
                return p;
            }
        }
        return NULL; /* the b-tree's one candidate table does not have it */
    }
    return NULL;
}

int fake_btree_drops(void)
{
    return drops;
}

size_t fake_btree_entries(void)
{
    return n_entries;
}
