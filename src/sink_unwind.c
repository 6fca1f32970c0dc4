/*
 * Sink: the process's own unwinder. Each region's .eh_frame (absolute
 * layout, from the CFI assembler) is registered with the unwinder that
 * glibc backtrace(), _Unwind_Backtrace and C++ exceptions really use, so
 * they walk through JIT frames and trampolines.
 *
 * Which unwinders there are and how each takes registrations (one FDE per
 * call, one table per region, shared tables) is found at run time by
 * unwinder.c; this file manages what is registered with them.
 *
 * Three rules keep concurrent unwinders in other threads safe:
 *  - a region's .eh_frame image never moves or changes while the region is
 *    registered (shared tables are arrays pointing at the images);
 *  - a replacement table is registered before the one it replaces goes,
 *    replacements highest first and old tables lowest first (libgcc's list
 *    search stops at the first table starting at or below the pc), and
 *    tables cover disjoint address ranges, so no live FDE is ever missing;
 *  - libgcc's per-table objects are reused only after a quarantine.
 * We only ever deregister what we registered: libgcc aborts otherwise.
 */
#define _GNU_SOURCE
#include "byte_order.h"
#include "cfi.h"
#include "error.h"
#include "region.h"
#include "sys.h"
#include "sink.h"
#include "unwinder.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ------------------------------------------------------------------------ */
/* Object storage for libgcc                                                */
/* ------------------------------------------------------------------------ */

/*
 * libgcc's struct object for each table we register, in storage of ours.
 * Right after a lookup found an FDE, libgcc reads the table's object again
 * (tbase, dbase, encoding) without holding its lock (GCC 13+ never holds
 * one): freeing or reusing an object the moment its table is deregistered
 * crashes a concurrent unwinder (seen here: reused storage, garbage
 * encoding, abort). So released objects wait OBJECT_QUARANTINE_NS in a FIFO
 * before reuse, untouched in the fields libgcc reads, and their memory never
 * goes back to malloc. (libgcc's own __register_frame frees its object at
 * once: every JIT using it has that race.)
 */
typedef union object_storage {
    void *p[16]; /* room for any libgcc's struct object (6 or 7 pointers) */
    uint64_t u[16];
} object_storage;

enum { OBJECT_SLAB = 256, OBJECT_RELEASED_AT = 14, OBJECT_LINK = 15 };
#define OBJECT_QUARANTINE_NS 2000000000ull

static object_storage *object_slab;
static size_t object_slab_left;
static object_storage *quarantine_head, *quarantine_tail;
static size_t quarantined;

static object_storage *object_alloc(void)
{
    if (quarantine_head &&
        jf__monotonic_ns() - quarantine_head->u[OBJECT_RELEASED_AT] >= OBJECT_QUARANTINE_NS) {
        object_storage *o = quarantine_head;
        quarantine_head = o->p[OBJECT_LINK];
        if (!quarantine_head)
            quarantine_tail = NULL;
        quarantined--;
        return o;
    }
    if (!object_slab_left) {
        object_storage *slab = calloc(OBJECT_SLAB, sizeof *slab);
        if (!slab)
            return NULL;
        object_slab = slab;
        object_slab_left = OBJECT_SLAB;
    }
    return &object_slab[--object_slab_left];
}

static void object_release(object_storage *o)
{
    if (!o)
        return;
    o->u[OBJECT_RELEASED_AT] = jf__monotonic_ns();
    o->p[OBJECT_LINK] = NULL;
    if (quarantine_tail)
        quarantine_tail->p[OBJECT_LINK] = o;
    else
        quarantine_head = o;
    quarantine_tail = o;
    quarantined++;
}

/* ------------------------------------------------------------------------ */
/* Region images: each region's .eh_frame, at one address for its lifetime  */
/* ------------------------------------------------------------------------ */
/*
 * An unwinder reads an FDE after its lookup returned it, without any lock:
 * the bytes of a live region's FDE must never move or be freed while the
 * region is registered, even when the shared table that lists them is
 * replaced. So each region's .eh_frame (CIE, FDEs, terminator) is written
 * once into a pool block, and shared tables only point at these images.
 *
 * Images hold absolute code addresses, so they may live anywhere; the pools
 * are still kept per 1 GiB code window, which keeps the images of
 * neighbouring code (merged into one table) close together in memory.
 */
enum {
    WINDOW_SHIFT = 30,
    POOL_CHUNK = 256 * 1024,
    MIN_BLOCK_SHIFT = 6, /* blocks of 64, 128, ... 4096 bytes; larger images get their own mapping */
    N_BLOCK_CLASSES = 7,
};

typedef struct pool_window {
    uintptr_t key;  /* code address >> WINDOW_SHIFT */
    uint8_t *chunk; /* current chunk (chunks are never unmapped) */
    size_t chunk_used;
    void *free_blocks[N_BLOCK_CLASSES];
} pool_window;

typedef struct region_image {
    jf__live *region; /* owned by the registry */
    uint8_t *bytes;   /* .eh_frame at its final address, terminator included */
    size_t size;
    size_t block;        /* bytes reserved at `bytes` */
    size_t window;       /* index in windows[] */
    size_t *fde_offsets; /* for one-FDE-per-call unwinders */
    size_t n_fdes;
    struct unwind_table *table;            /* the shared table listing it, if any */
    size_t held_at;                        /* index in held[] */
    object_storage *object[MAX_UNWINDERS]; /* registered through __register_frame_info */
} region_image;

static pool_window *windows;
static size_t n_windows, windows_capacity;

/* Index of the window for `key`, created if needed; SIZE_MAX on ENOMEM. */
static size_t window_for(uintptr_t key)
{
    for (size_t i = 0; i < n_windows; i++)
        if (windows[i].key == key)
            return i;
    if (n_windows == windows_capacity) {
        size_t cap = windows_capacity ? windows_capacity * 2 : 4;
        pool_window *grown = realloc(windows, cap * sizeof *grown);
        if (!grown) {
            jf__fail(JF_ENOMEM, "out of memory for the unwind sink's windows");
            return SIZE_MAX;
        }
        windows = grown;
        windows_capacity = cap;
    }
    memset(&windows[n_windows], 0, sizeof windows[n_windows]);
    windows[n_windows].key = key;
    return n_windows++;
}

/* Anonymous read-write memory for unwind images. The images hold absolute
 * addresses (the CFI assembler's absolute layout), so they may live anywhere
 * relative to their code. NULL if the kernel has none. */
static uint8_t *map_pool_memory(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static size_t page_round(size_t n)
{
    return jf__round_up(n, jf__page_size());
}

/* A block of at least `need` bytes from window w's pool. */
static uint8_t *pool_alloc(size_t w, size_t need, size_t *block)
{
    pool_window *pw = &windows[w];
    int cls = 0;
    while (cls < N_BLOCK_CLASSES && ((size_t)1 << (MIN_BLOCK_SHIFT + cls)) < need)
        cls++;
    if (cls == N_BLOCK_CLASSES) { /* a large image: a mapping of its own */
        *block = page_round(need);
        return *block == SIZE_MAX ? NULL : map_pool_memory(*block);
    }
    *block = (size_t)1 << (MIN_BLOCK_SHIFT + cls);
    uint8_t *b = pw->free_blocks[cls];
    if (b) {
        memcpy(&pw->free_blocks[cls], b, sizeof(void *));
        return b;
    }
    if (!pw->chunk || POOL_CHUNK - pw->chunk_used < *block) {
        uint8_t *chunk = map_pool_memory(POOL_CHUNK);
        if (!chunk)
            return NULL;
        pw->chunk = chunk; /* the old chunk's tail stays unused */
        pw->chunk_used = 0;
    }
    b = pw->chunk + pw->chunk_used;
    pw->chunk_used += *block;
    return b;
}

static void pool_free(size_t w, uint8_t *b, size_t block)
{
    int cls = 0;
    while (cls < N_BLOCK_CLASSES && ((size_t)1 << (MIN_BLOCK_SHIFT + cls)) < block)
        cls++;
    if (cls == N_BLOCK_CLASSES) {
        munmap(b, block);
        return;
    }
    memcpy(b, &windows[w].free_blocks[cls], sizeof(void *));
    windows[w].free_blocks[cls] = b;
}

/* The .eh_frame read here is the library's own, in the host's byte order. */
static uint32_t load_u32(const uint8_t *p)
{
    return jf__load_host_u32(p);
}

static uint64_t load_u64(const uint8_t *p)
{
    return jf__load_uint(p, 8, JF_HOST_BIG_ENDIAN);
}

/* Walk an .eh_frame; record where each FDE starts when `offsets` is not
 * NULL. Returns the number of FDEs, or SIZE_MAX if malformed. */
static size_t walk_fdes(const uint8_t *bytes, size_t size, size_t *offsets)
{
    size_t count = 0, pos = 0;
    while (pos + 4 <= size) {
        uint64_t len = load_u32(bytes + pos);
        size_t header = 4;
        if (len == 0)
            return count;
        if (len == 0xffffffffu) {
            if (pos + 12 > size)
                return SIZE_MAX;
            len = load_u64(bytes + pos + 4);
            header = 12;
        }
        if (len < 4 || len > size - pos - header)
            return SIZE_MAX;
        uint64_t id = header == 4 ? load_u32(bytes + pos + 4) : load_u64(bytes + pos + 12);
        if (id != 0 && offsets)
            offsets[count] = pos;
        count += id != 0;
        pos += header + (size_t)len;
    }
    return SIZE_MAX; /* no terminator */
}

static void image_free(region_image *im)
{
    if (!im)
        return;
    if (im->bytes)
        pool_free(im->window, im->bytes, im->block);
    for (int u = 0; u < MAX_UNWINDERS; u++)
        object_release(im->object[u]);
    free(im->fde_offsets);
    free(im);
}

/* Write r's .eh_frame into a pool block near its code. */
static int image_create(jf__live *r, region_image **out)
{
    region_image *im = calloc(1, sizeof *im);
    if (!im)
        return jf__fail(JF_ENOMEM, "out of memory for the unwind image of %s", r->name);
    im->region = r;
    im->window = window_for(r->start >> WINDOW_SHIFT);
    const struct jf_cfi *cfi = r->detail->cfi; /* make_images: it has rules */
    size_t cap = jf__cfi_max_image_size(cfi);
    int rc = 0;
    if (im->window == SIZE_MAX)
        rc = JF_ENOMEM;
    else if (!(im->bytes = pool_alloc(im->window, cap, &im->block)))
        rc = jf__fail(JF_ENOMEM, "out of memory for the unwind image of %s", r->name);
    jf__eh_image img;
    if (!rc)
        rc = jf__cfi_emit(cfi, JF_EH_LAYOUT_ABSOLUTE, r->start, r->size, (uint64_t)(uintptr_t)im->bytes,
                          im->bytes, cap, &img);
    if (!rc) {
        im->size = img.eh_frame_size;
        im->n_fdes = walk_fdes(im->bytes, im->size, NULL);
        if (im->n_fdes == SIZE_MAX)
            rc = jf__fail(JF_EINVAL, "%s: malformed .eh_frame from the CFI assembler", r->name);
        else if (im->n_fdes && !(im->fde_offsets = malloc(im->n_fdes * sizeof *im->fde_offsets)))
            rc = jf__fail(JF_ENOMEM, "out of memory indexing %zu FDEs", im->n_fdes);
        else
            walk_fdes(im->bytes, im->size, im->fde_offsets);
    }
    if (rc) {
        if (im->window == SIZE_MAX)
            im->bytes = NULL;
        image_free(im);
        return rc;
    }
    *out = im;
    return 0;
}

/* Register or deregister an image with the unwinders that take regions
 * one at a time (the others see it through a shared table). A libgcc gets
 * our object storage when it exports __register_frame_info. */
static void image_register(region_image *im)
{
    int n_unwinders;
    const jf__unwinder *unwinders = jf__unwinders(&n_unwinders);
    for (int u = 0; u < n_unwinders; u++) {
        const jf__unwinder *w = &unwinders[u];
        if (w->mode == MODE_PER_REGION) {
            if (w->register_info && (im->object[u] = object_alloc()) != NULL)
                w->register_info(im->bytes, im->object[u]);
            else
                w->register_frame(im->bytes);
        } else if (w->mode == MODE_PER_FDE) {
            for (size_t i = 0; i < im->n_fdes; i++)
                w->register_frame(im->bytes + im->fde_offsets[i]);
        }
    }
}

static void image_deregister(const region_image *im)
{
    int n_unwinders;
    const jf__unwinder *unwinders = jf__unwinders(&n_unwinders);
    for (int u = n_unwinders - 1; u >= 0; u--) {
        const jf__unwinder *w = &unwinders[u];
        if (w->mode == MODE_PER_REGION) {
            if (im->object[u])
                w->deregister_info(im->bytes); /* the object is released with the image */
            else
                w->deregister_frame(im->bytes);
        } else if (w->mode == MODE_PER_FDE) {
            for (size_t i = 0; i < im->n_fdes; i++)
                w->deregister_frame(im->bytes + im->fde_offsets[i]);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Shared tables (libgcc <= 12)                                             */
/* ------------------------------------------------------------------------ */
/*
 * GCC <= 12 searches registered tables linearly on every unwind in the
 * process, so regions share tables: a table is a NULL-terminated array of
 * .eh_frame images (__register_frame_info_table), which libgcc sorts once.
 * Tables are kept in address order with disjoint ranges [lo, hi]: libgcc
 * walks them by descending start and gives up after the first one starting
 * at or below the pc. A group's regions join the table whose range they fall
 * in, or form new tables in the gaps, and neighbours merge while together
 * they hold at most FULL_WEIGHT regions: n regions need fewer than
 * 2n / FULL_WEIGHT + 1 tables. Replacing a table only rewrites its array:
 * the new one is registered before the old one goes, so every FDE stays
 * findable, and the images it points at never move.
 */
enum {
    FULL_WEIGHT = 256,
    MAX_WEIGHT = 2 * FULL_WEIGHT, /* a table that grew past this splits */
};

typedef struct unwind_table {
    void **array;           /* empty section, each member's image, NULL */
    region_image **members; /* sorted by start */
    size_t n_members;
    uintptr_t lo, hi; /* first and last member's start */
    object_storage *object[MAX_UNWINDERS];
} unwind_table;

static unwind_table **tables;
static size_t n_tables, tables_capacity;

/*
 * The first entry of every array: an empty .eh_frame (its terminator only).
 * libgcc takes a table whose first word is 0 for an empty one and skips
 * deregistering it, so the array must not start with a pointer whose low
 * 32 bits are 0; this one's are not (checked at start).
 */
static const uint32_t empty_section[4] = {0, 0, 0, 0};

static uintptr_t member_start(const region_image *im)
{
    return im->region->start;
}

static void table_free(unwind_table *t)
{
    if (!t)
        return;
    for (int u = 0; u < MAX_UNWINDERS; u++)
        object_release(t->object[u]);
    free(t->array);
    free(t->members);
    free(t);
}

/* A table listing `members` (sorted by start, copied), not yet registered. */
static int table_build(region_image *const *members, size_t n, unwind_table **out)
{
    unwind_table *t = calloc(1, sizeof *t);
    if (!t || !(t->members = malloc(n * sizeof *members)) || !(t->array = malloc((n + 2) * sizeof(void *)))) {
        table_free(t);
        return jf__fail(JF_ENOMEM, "out of memory for an unwind table of %zu regions", n);
    }
    int n_unwinders;
    const jf__unwinder *unwinders = jf__unwinders(&n_unwinders);
    for (int u = 0; u < n_unwinders; u++) {
        if (unwinders[u].mode == MODE_TABLES && !(t->object[u] = object_alloc())) {
            table_free(t);
            return jf__fail(JF_ENOMEM, "out of memory for an unwind table");
        }
    }
    memcpy(t->members, members, n * sizeof *members);
    t->n_members = n;
    t->array[0] = (void *)(uintptr_t)empty_section;
    for (size_t i = 0; i < n; i++)
        t->array[i + 1] = members[i]->bytes;
    t->array[n + 1] = NULL;
    t->lo = member_start(members[0]);
    t->hi = member_start(members[n - 1]);
    *out = t;
    return 0;
}

static void table_register(unwind_table *t)
{
    int n_unwinders;
    const jf__unwinder *unwinders = jf__unwinders(&n_unwinders);
    for (int u = 0; u < n_unwinders; u++)
        if (unwinders[u].mode == MODE_TABLES)
            unwinders[u].register_table(t->array, t->object[u]);
}

static void table_deregister(unwind_table *t)
{
    int n_unwinders;
    const jf__unwinder *unwinders = jf__unwinders(&n_unwinders);
    for (int u = n_unwinders - 1; u >= 0; u--)
        if (unwinders[u].mode == MODE_TABLES)
            unwinders[u].deregister_info(t->array);
}

/* ------------------------------------------------------------------------ */
/* The images the sink holds                                                */
/* ------------------------------------------------------------------------ */

/* A region's image is in its detail (it has one: it has rules); this list is for stopping (every
 * image deregistered) and counting. Each image knows its index in it. */
static region_image **held;
static size_t n_held, held_capacity;

static region_image *image_of(const jf__live *r)
{
    return jf__live_about(r)->unwind_image;
}

/* Room for `extra` more held images. */
static int held_reserve(size_t extra)
{
    if (extra <= held_capacity - n_held)
        return 0;
    if (extra > SIZE_MAX / 4 - n_held)
        return jf__fail(JF_ENOMEM, "too many unwind images");
    size_t cap = held_capacity ? held_capacity : 64;
    while (cap - n_held < extra)
        cap *= 2;
    region_image **grown = realloc(held, cap * sizeof *grown);
    if (!grown)
        return jf__fail(JF_ENOMEM, "out of memory for the unwind image list");
    held = grown;
    held_capacity = cap;
    return 0;
}

/* Hold im (room reserved with held_reserve). */
static void hold(region_image *im)
{
    im->held_at = n_held;
    held[n_held++] = im;
    im->region->detail->unwind_image = im;
}

static void release(region_image *im)
{
    region_image *last = held[--n_held];
    held[im->held_at] = last;
    last->held_at = im->held_at;
    im->region->detail->unwind_image = NULL;
}

/* ------------------------------------------------------------------------ */
/* The ordered table list: replacing, adding, merging, removing             */
/* ------------------------------------------------------------------------ */

static int tables_reserve(size_t extra)
{
    if (extra <= tables_capacity - n_tables)
        return 0;
    size_t cap = tables_capacity ? tables_capacity : 16;
    while (cap - n_tables < extra)
        cap *= 2;
    unwind_table **grown = realloc(tables, cap * sizeof *grown);
    if (!grown)
        return jf__fail(JF_ENOMEM, "out of memory for the unwind sink's table list");
    tables = grown;
    tables_capacity = cap;
    return 0;
}

/*
 * Replace tables[at, at + n_old) by fresh[0, n_fresh) (same range, sorted,
 * built): the fresh ones are registered first, then the old ones go.
 *
 * The order within each step matters too. libgcc <= 12 walks the tables it
 * has classified by descending first pc and gives up at the first one
 * starting at or below the pc, even if another one further on holds it.
 * While old and fresh tables overlap, the first table at or below any live
 * pc must hold it (or the one holding it must be still unclassified, as
 * those are all searched):
 *  - fresh tables are registered from the highest down, so a registered
 *    fresh table starting below a pc is always the one holding it; the old
 *    table holding it starts at or above every older table below the pc;
 *  - old tables go from the lowest up, so the old tables still registered
 *    start above every pc whose old table is gone.
 * Registering them lowest first lost FDEs: a fresh upper piece of a split
 * table, classified while the lower old table still held the pc, hid it.
 */
static int swap_tables(size_t at, size_t n_old, unwind_table *const *fresh, size_t n_fresh)
{
    unwind_table *old[2];
    if (n_old > sizeof old / sizeof old[0] || (n_fresh > n_old && tables_reserve(n_fresh - n_old) != 0)) {
        for (size_t i = 0; i < n_fresh; i++)
            table_free(fresh[i]);
        return n_old > 2 ? jf__internal("replacing %zu unwind tables", n_old) : JF_ENOMEM;
    }
    memcpy(old, tables + at, n_old * sizeof *old);
    for (size_t i = n_fresh; i-- > 0;) {
        table_register(fresh[i]);
        for (size_t k = 0; k < fresh[i]->n_members; k++)
            fresh[i]->members[k]->table = fresh[i];
    }
    memmove(tables + at + n_fresh, tables + at + n_old, (n_tables - at - n_old) * sizeof *tables);
    memcpy(tables + at, fresh, n_fresh * sizeof *tables);
    n_tables = n_tables - n_old + n_fresh;
    for (size_t i = 0; i < n_old; i++) { /* lowest first */
        table_deregister(old[i]);
        table_free(old[i]);
    }
    return 0;
}

/* Tables for sorted `members` (FULL_WEIGHT each at most when there are more
 * than MAX_WEIGHT), swapped in for tables[at, at + n_old). */
static int rebuild_range(size_t at, size_t n_old, region_image *const *members, size_t n)
{
    size_t per = n > MAX_WEIGHT ? FULL_WEIGHT : n;
    size_t pieces = per ? (n + per - 1) / per : 0;
    unwind_table *one[1];
    unwind_table **fresh = pieces <= 1 ? one : malloc(pieces * sizeof *fresh);
    if (!fresh)
        return jf__fail(JF_ENOMEM, "out of memory for %zu unwind tables", pieces);
    int rc = 0;
    size_t k = 0;
    for (; k < pieces && !rc; k++) {
        size_t done = k * per;
        rc = table_build(members + done, n - done < per ? n - done : per, &fresh[k]);
    }
    if (rc) {
        for (size_t i = 0; i + 1 < k; i++)
            table_free(fresh[i]);
    } else {
        rc = swap_tables(at, n_old, fresh, pieces);
    }
    if (fresh != one)
        free(fresh);
    return rc;
}

/* Merge neighbours while together they hold at most FULL_WEIGHT regions.
 * Adjacent tables have adjacent ranges: the merged range overlaps no other. */
static int coalesce(void)
{
    region_image *both[FULL_WEIGHT];
    size_t i = 0;
    while (i + 1 < n_tables) {
        unwind_table *a = tables[i], *b = tables[i + 1];
        if (a->n_members + b->n_members > FULL_WEIGHT) {
            i++;
            continue;
        }
        memcpy(both, a->members, a->n_members * sizeof *both);
        memcpy(both + a->n_members, b->members, b->n_members * sizeof *both);
        int rc = rebuild_range(i, 2, both, a->n_members + b->n_members);
        if (rc)
            return rc;
    }
    return 0;
}

/* Index of the first table whose range ends at or after addr. */
static size_t first_table_ending_after(uintptr_t addr)
{
    size_t lo = 0, hi = n_tables;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tables[mid]->hi < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Images inside tables[t]'s range join it. */
static int join_table(size_t t, region_image *const *images, size_t n)
{
    unwind_table *old = tables[t];
    size_t total = old->n_members + n;
    region_image **all = malloc(total * sizeof *all);
    if (!all)
        return jf__fail(JF_ENOMEM, "out of memory rebuilding an unwind table");
    size_t i = 0, j = 0, k = 0;
    while (i < old->n_members || j < n)
        all[k++] = j == n || (i < old->n_members && member_start(old->members[i]) < member_start(images[j]))
                       ? old->members[i++]
                       : images[j++];
    int rc = rebuild_range(t, 1, all, total);
    free(all);
    return rc;
}

/* Add images sorted by start to the tables: each joins the table whose
 * range it falls in, or runs of them make new tables in the gaps. */
static int tables_add(region_image *const *images, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uintptr_t start = member_start(images[i]);
        size_t t = first_table_ending_after(start);
        size_t run = 1;
        int rc;
        if (t < n_tables && tables[t]->lo <= start) {
            while (i + run < n && member_start(images[i + run]) <= tables[t]->hi)
                run++;
            rc = join_table(t, images + i, run);
        } else {
            uintptr_t limit = t < n_tables ? tables[t]->lo : UINTPTR_MAX;
            while (i + run < n && run < FULL_WEIGHT && member_start(images[i + run]) < limit)
                run++;
            rc = rebuild_range(t, 0, images + i, run);
        }
        if (rc)
            return rc;
        i += run;
    }
    return coalesce();
}

/* Rebuild the table listing im without it (or drop the table). */
static int tables_drop(const region_image *im)
{
    unwind_table *t = im->table;
    size_t at = first_table_ending_after(t->lo);
    if (at >= n_tables || tables[at] != t)
        return jf__internal("unwind table of %s not found in order", im->region->name);
    region_image **rest = malloc(t->n_members * sizeof *rest);
    if (!rest)
        return jf__fail(JF_ENOMEM, "out of memory rebuilding an unwind table");
    size_t n = 0;
    for (size_t i = 0; i < t->n_members; i++)
        if (t->members[i] != im)
            rest[n++] = t->members[i];
    int rc = rebuild_range(at, 1, rest, n);
    free(rest);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The sink                                                                  */
/* ------------------------------------------------------------------------ */

/* What the unwinders hold: shared tables, or one registration per region. */
static void update_stats(jf_sink_stats *stats)
{
    stats->objects = jf__unwinders_take_tables() ? n_tables : n_held;
}

static int by_start(const void *a, const void *b)
{
    const region_image *x = *(region_image *const *)a, *y = *(region_image *const *)b;
    return member_start(x) < member_start(y) ? -1 : member_start(x) > member_start(y);
}

/* Images for the regions of a group that need describing: with unwind
 * rules, and not already held (a replay after fork hands us what the child
 * inherited). */
/* Images for a group's regions with unwind rules. A region whose rules
 * cannot be emitted (JF_ERANGE) is left out and the rest go on, as the sink
 * contract says; any other failure drops the whole group. */
static int make_images(jf__live *const *regions, size_t n, region_image **out, size_t *k)
{
    *k = 0;
    int left_out = 0;
    for (size_t i = 0; i < n; i++) {
        if (!jf__live_about(regions[i])->cfi || image_of(regions[i]))
            continue;
        int rc = image_create(regions[i], &out[*k]);
        if (rc == JF_ERANGE) {
            left_out = rc;
            continue;
        }
        if (rc) {
            while (*k > 0)
                image_free(out[--*k]);
            return rc;
        }
        (*k)++;
    }
    return left_out;
}

static int unwind_add(jf__live *const *regions, size_t n, jf_sink_stats *stats)
{
    region_image **fresh = malloc((n ? n : 1) * sizeof *fresh);
    if (!fresh)
        return jf__fail(JF_ENOMEM, "out of memory for a group of %zu regions", n);
    size_t k = 0;
    int rc = held_reserve(n);
    if (!rc)
        rc = make_images(regions, n, fresh, &k);
    if (!rc || rc == JF_ERANGE) {
        qsort(fresh, k, sizeof *fresh, by_start);
        for (size_t i = 0; i < k; i++) {
            image_register(fresh[i]);
            hold(fresh[i]);
            stats->bytes += fresh[i]->size;
        }
        stats->regions += k;
        int table_rc = jf__unwinders_take_tables() ? tables_add(fresh, k) : 0;
        if (table_rc)
            rc = table_rc;
    }
    free(fresh);
    update_stats(stats);
    return rc;
}

static int unwind_remove(jf__live *const *regions, size_t n, jf_sink_stats *stats)
{
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        region_image *im = image_of(regions[i]);
        if (!im)
            continue; /* no unwind rules: never held */
        if (im->table)
            rc = tables_drop(im);
        if (rc)
            break;
        image_deregister(im);
        release(im);
        stats->bytes -= im->size;
        image_free(im);
    }
    if (!rc && jf__unwinders_take_tables())
        rc = coalesce();
    update_stats(stats);
    return rc;
}

static int unwind_start(const char *dump_dir, jf_sink_stats *stats)
{
    (void)dump_dir;
    (void)stats;
    if ((uint32_t)(uintptr_t)empty_section == 0)
        return jf__internal("misplaced empty .eh_frame section");
    return jf__unwinders_bind();
}

/* Deregister and free everything (the registry replays on re-enable). The
 * pool chunks stay mapped for later images. */
static void unwind_stop(int final, jf_sink_stats *stats)
{
    (void) final;
    while (n_tables) {
        unwind_table *t = tables[--n_tables];
        table_deregister(t);
        table_free(t);
    }
    free(tables);
    tables = NULL;
    tables_capacity = 0;
    while (n_held) {
        region_image *im = held[n_held - 1];
        image_deregister(im);
        release(im);
        image_free(im);
    }
    free(held);
    held = NULL;
    held_capacity = 0;
    stats->objects = 0;
    stats->bytes = 0;
}

/* The child inherited the registrations along with the memory they point
 * to: keep both. The replay that follows finds every region already held. */
static void unwind_forget_after_fork(void)
{
}

const jf__sink_ops jf__unwind_sink = {
    .word = "unwind",
    .bit = JF_SINK_UNWIND,
    .start = unwind_start,
    .add = unwind_add,
    .remove = unwind_remove,
    .stop = unwind_stop,
    .forget_after_fork = unwind_forget_after_fork,
};
