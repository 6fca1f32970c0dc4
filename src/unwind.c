/*
 * Sink: the process's own unwinder. Each region's .eh_frame (absolute
 * layout, from the CFI assembler) is registered with the unwinder that
 * glibc backtrace(), _Unwind_Backtrace and C++ exceptions really use, so
 * they walk through JIT frames and trampolines.
 *
 * Binding happens at run time, never through a link-time reference (a
 * -static-libgcc host would bind a private copy nobody consults):
 *  - the unwinder in global scope (dlsym(RTLD_DEFAULT)): libgcc_s in a C++
 *    host, LLVM libunwind when it is linked first;
 *  - libgcc_s.so.1 through dlopen, which finds the copy glibc loaded
 *    RTLD_LOCAL for backtrace() (or loads it), when it is another library.
 * LLVM libunwind (recognised by __unw_add_dynamic_fde in the same library)
 * takes one FDE per __register_frame call; libgcc takes a whole table
 * ending in a zero terminator.
 *
 * Scale: GCC <= 12 searches registered tables linearly on every unwind in
 * the process, so regions share tables. Tables are kept in address order
 * with disjoint ranges (libgcc's lookups require it): a group's regions join
 * the table whose range they fall in, or form new tables (of at most
 * FULL_WEIGHT regions) in the gaps, and neighbouring tables merge while
 * together they hold at most FULL_WEIGHT regions. n regions thus need fewer
 * than 2n / FULL_WEIGHT + 1 tables per code window, and a removal rebuilds
 * one table of bounded size. A replacement table is always registered before
 * the tables it replaces are deregistered, so no FDE is ever missing for a
 * concurrent unwind. We only ever deregister tables we registered: libgcc
 * aborts otherwise.
 */
#define _GNU_SOURCE
#include "byte_writer.h"
#include "cfi.h"
#include "internal.h"
#include "sink.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Binding to the process's unwinders                                        */
/* ------------------------------------------------------------------------ */

typedef void (*frame_fn)(void *);

typedef struct unwinder {
    frame_fn register_frame;
    frame_fn deregister_frame;
    int per_fde;        /* LLVM libunwind: one FDE per call */
    int keyed_by_start; /* GCC 13+ libgcc: see probe_keyed_by_start() */
    const void *base;   /* load address of the library that defines them */
    void *handle;       /* keeps that library loaded while tables point into it */
} unwinder;

enum { MAX_UNWINDERS = 2 };

/* Set once per process (kept across stop/start and fork). Guarded by the
 * registry lock like everything in a sink. */
static unwinder unwinders[MAX_UNWINDERS];
static int n_unwinders;
static int bound;
/* Replace tables by deregistering the old ones first (see swap_tables). */
static int deregister_first;

/* The load address of the object defining `sym`, or NULL. */
static const void *object_base(const void *sym)
{
    Dl_info info;
    if (!sym || !dladdr(sym, &info))
        return NULL;
    return info.dli_fbase;
}

static const char *object_name(const void *sym)
{
    Dl_info info;
    if (!sym || !dladdr(sym, &info) || !info.dli_fname || !info.dli_fname[0])
        return "the main program";
    return info.dli_fname;
}

/* dlsym returns data pointers; going through memcpy keeps -Wpedantic quiet. */
static frame_fn as_frame_fn(void *sym)
{
    frame_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    return fn;
}

/* Fill *u from `lookup` (a dlopen handle or RTLD_DEFAULT). 0 if this scope
 * has no usable unwinder. `handle` is only used to look for the LLVM
 * marker in the same library. */
static int unwinder_from_scope(void *lookup, unwinder *u)
{
    void *reg = dlsym(lookup, "__register_frame");
    void *dereg = dlsym(lookup, "__deregister_frame");
    const void *base = object_base(reg);
    if (!reg || !dereg || !base || object_base(dereg) != base)
        return 0;
    /* Look the marker up in the defining library itself, so another
     * library's libunwind elsewhere in the process does not count. */
    Dl_info info;
    void *own = NULL;
    if (dladdr(reg, &info) && info.dli_fname && info.dli_fname[0])
        own = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    void *marker = dlsym(own ? own : lookup, "__unw_add_dynamic_fde");
    u->register_frame = as_frame_fn(reg);
    u->deregister_frame = as_frame_fn(dereg);
    u->per_fde = marker && object_base(marker) == base;
    u->base = base;
    u->handle = own;
    return 1;
}

static int already_bound(const void *base)
{
    for (int i = 0; i < n_unwinders; i++)
        if (unwinders[i].base == base)
            return 1;
    return 0;
}

/*
 * What registering a table with a libgcc really does. X lies in a page of
 * our own that holds no code.
 *  1. Register a table with one FDE for [X, X + 16) through __register_frame
 *     and ask its _Unwind_Find_FDE for X + 8: not found (or found elsewhere)
 *     means registration has no effect on this library's lookups, e.g. its
 *     internal calls to __register_frame_info are interposed by another
 *     unwinder's (LLVM libunwind's are no-op stubs) earlier in global scope.
 *  2. Register a second table for [X, X + 32) and ask for X + 24: found on
 *     GCC <= 12, a list of tables that accepts both; not found on GCC 13+, a
 *     b-tree keyed by each table's first pc, which silently drops a table
 *     starting where a live one does (and aborts when it is deregistered).
 * The second table uses our own `struct object` storage
 * (__register_frame_info), so a dropped one leaks nothing, and a table is
 * deregistered only when it is known to be registered.
 */
typedef enum probe_result { PROBE_LIST, PROBE_BTREE, PROBE_NO_EFFECT, PROBE_UNKNOWN } probe_result;

enum { PROBE_TABLE = 64 };

typedef const void *(*find_fde_fn)(void *pc, void *bases);
typedef void (*register_info_fn)(const void *begin, void *object);
typedef void *(*deregister_info_fn)(const void *begin);

/* A table with one CIE and one FDE for [pc, pc + range), absolute addresses. */
static void put_probe_table(uint8_t *buf, uintptr_t pc, uint64_t range)
{
    jf_writer w;
    jf__writer_init(&w, buf, PROBE_TABLE);
    jf__put_u32(&w, 0); /* CIE length, patched below */
    jf__put_u32(&w, 0); /* CIE id */
    jf__put_u8(&w, 1);  /* version */
    jf__put_cstr(&w, "zR");
    jf__put_uleb128(&w, 1);
    jf__put_sleb128(&w, -8);
    jf__put_u8(&w, 16);   /* return address column: irrelevant to lookups */
    jf__put_uleb128(&w, 1);
    jf__put_u8(&w, 0x00); /* DW_EH_PE_absptr */
    jf__put_align(&w, 4); /* DW_CFA_nop */
    jf__patch_u32(&w, 0, (uint32_t)(w.pos - 4));
    size_t fde = w.pos;
    jf__put_u32(&w, 0);
    jf__put_u32(&w, (uint32_t)(w.pos)); /* back to the CIE at 0 */
    jf__put_le(&w, pc, sizeof(void *));
    jf__put_le(&w, range, sizeof(void *));
    jf__put_uleb128(&w, 0);
    jf__put_align(&w, 4);
    jf__patch_u32(&w, fde, (uint32_t)(w.pos - fde - 4));
    jf__put_u32(&w, 0); /* terminator */
}

/* A symbol of u's library, or NULL. */
static void *unwinder_symbol(const unwinder *u, const char *name)
{
    void *sym = dlsym(u->handle ? u->handle : RTLD_DEFAULT, name);
    return sym && object_base(sym) == u->base ? sym : NULL;
}

static probe_result probe_libgcc(const unwinder *u)
{
    static union {
        void *p[32];
        uint64_t u[32];
    } second_object; /* room for any libgcc's struct object */
    void *find = unwinder_symbol(u, "_Unwind_Find_FDE");
    void *reg_info = unwinder_symbol(u, "__register_frame_info");
    void *dereg_info = unwinder_symbol(u, "__deregister_frame_info");
    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!find || !reg_info || !dereg_info || page == MAP_FAILED) {
        if (page != MAP_FAILED)
            munmap(page, 4096);
        return PROBE_UNKNOWN;
    }
    find_fde_fn find_fde;
    register_info_fn register_info;
    deregister_info_fn deregister_info;
    memcpy(&find_fde, &find, sizeof find_fde);
    memcpy(&register_info, &reg_info, sizeof register_info);
    memcpy(&deregister_info, &dereg_info, sizeof deregister_info);
    uintptr_t x = (uintptr_t)page + 2048; /* no code lives here */
    put_probe_table(page, x, 16);
    put_probe_table(page + PROBE_TABLE, x, 32);
    void *bases[3];
    u->register_frame(page);
    uintptr_t hit = (uintptr_t)find_fde((void *)(x + 8), bases);
    probe_result r = PROBE_NO_EFFECT;
    if (hit >= (uintptr_t)page && hit < (uintptr_t)page + PROBE_TABLE) {
        register_info(page + PROBE_TABLE, &second_object);
        r = find_fde((void *)(x + 24), bases) ? PROBE_LIST : PROBE_BTREE;
        if (r == PROBE_LIST)
            deregister_info(page + PROBE_TABLE);
    }
    u->deregister_frame(page);
    munmap(page, 4096);
    return r;
}

static void keep_unwinder(const unwinder *u, const char *how)
{
    probe_result probe = u->per_fde ? PROBE_LIST : probe_libgcc(u);
    if (already_bound(u->base) || n_unwinders == MAX_UNWINDERS || probe == PROBE_NO_EFFECT) {
        if (probe == PROBE_NO_EFFECT)
            jf__log(JF_LOG_INFO, "unwind sink: registering with %s (%s) has no effect here; not used",
                    object_name(u->base), how);
        if (u->handle)
            dlclose(u->handle);
        return;
    }
    unwinder *kept = &unwinders[n_unwinders++];
    *kept = *u;
    /* Unknown: take the order that is safe for both kinds. */
    kept->keyed_by_start = probe == PROBE_BTREE || probe == PROBE_UNKNOWN;
    deregister_first |= kept->keyed_by_start;
    jf__log(JF_LOG_INFO, "unwind sink: %s unwinder in %s (%s)",
            u->per_fde ? "LLVM libunwind" : kept->keyed_by_start ? "libgcc (b-tree)" : "libgcc (list)",
            object_name(u->base), how);
}

/* libgcc_s.so.1 as glibc's backtrace() uses it: the copy already loaded
 * (possibly RTLD_LOCAL), else a fresh load (glibc would load it anyway). */
static void bind_libgcc_s(void)
{
    void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    unwinder u;
    if (!unwinder_from_scope(h, &u)) {
        dlclose(h);
        return;
    }
    if (u.handle)
        dlclose(u.handle);
    u.handle = h;
    keep_unwinder(&u, "libgcc_s.so.1, used by backtrace()");
}

static int bind_unwinders(void)
{
    if (bound)
        return 0;
    unwinder u;
    if (unwinder_from_scope(RTLD_DEFAULT, &u))
        keep_unwinder(&u, "global scope");
    bind_libgcc_s();
    if (n_unwinders == 0) {
        const char *why = dlerror();
        return jf__fail(JF_ENOTSUP, "no unwinder with __register_frame/__deregister_frame found in "
                                    "the process or in libgcc_s.so.1 (%s)", why ? why : "not defined");
    }
    bound = 1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */
/* ------------------------------------------------------------------------ */

enum {
    /* Neighbouring tables merge while together they hold at most this many
     * regions, so n live regions need fewer than 2n / FULL_WEIGHT + 1
     * tables per code window; it also bounds what a removal rebuilds. */
    FULL_WEIGHT = 256,
    /* A table that grew past this (regions added inside its range) splits. */
    MAX_WEIGHT = 2 * FULL_WEIGHT,
    /* The CFI assembler writes pc-relative 32-bit code addresses, so a table
     * must lie within 2 GiB of its code: a table only holds code of one
     * 1 GiB window, and is mapped close to it. */
    WINDOW_SHIFT = 30,
};

/*
 * The tables, sorted by address. Invariant: their ranges [lo, hi] are
 * disjoint. Both libgcc lookups rely on it: GCC <= 12 walks the tables by
 * descending start and gives up after the first one starting at or below the
 * pc; GCC 13+ keeps a b-tree of non-overlapping ranges.
 */
typedef struct unwind_table {
    uint8_t *bytes;    /* .eh_frame at its final address, zero terminator included */
    size_t size;
    size_t map_size;   /* bytes mapped at `bytes` */
    size_t *fde_offsets; /* for one-FDE-per-call unwinders */
    size_t n_fdes;
    jf_live **members; /* sorted by start; owned by the registry */
    size_t n_members;
    uintptr_t lo, hi;  /* first and last member's start */
} unwind_table;

static unwind_table **tables;
static size_t n_tables, tables_capacity;
/* The registry's counters for this sink, to zero what stop() releases. */
static jf_sink_stats *held_stats;

static uintptr_t window_of(uintptr_t addr)
{
    return addr >> WINDOW_SHIFT;
}

static uint32_t load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t load_u64(const uint8_t *p)
{
    return (uint64_t)load_u32(p) | (uint64_t)load_u32(p + 4) << 32;
}

/* Walk the table's entries; record where each FDE starts when `offsets`
 * is not NULL. Returns the number of FDEs, or SIZE_MAX if malformed. */
static size_t walk_fdes(const unwind_table *t, size_t *offsets)
{
    size_t count = 0, pos = 0;
    while (pos + 4 <= t->size) {
        uint64_t len = load_u32(t->bytes + pos);
        size_t header = 4;
        if (len == 0)
            return count;
        if (len == 0xffffffffu) {
            if (pos + 12 > t->size)
                return SIZE_MAX;
            len = load_u64(t->bytes + pos + 4);
            header = 12;
        }
        if (len < 4 || len > t->size - pos - header)
            return SIZE_MAX;
        uint64_t id = header == 4 ? load_u32(t->bytes + pos + 4) : load_u64(t->bytes + pos + 12);
        if (id != 0 && offsets)
            offsets[count] = pos;
        count += id != 0;
        pos += header + (size_t)len;
    }
    return SIZE_MAX; /* no terminator */
}

static int index_fdes(unwind_table *t)
{
    size_t count = walk_fdes(t, NULL);
    if (count == SIZE_MAX)
        return jf__fail(JF_EINVAL, "unwind table: malformed .eh_frame");
    if (count && !(t->fde_offsets = malloc(count * sizeof *t->fde_offsets)))
        return jf__fail(JF_ENOMEM, "out of memory indexing %zu FDEs", count);
    walk_fdes(t, t->fde_offsets);
    t->n_fdes = count;
    return 0;
}

/* Room for every member's image; SIZE_MAX on overflow. */
static size_t table_capacity(jf_live *const *members, size_t n)
{
    size_t cap = 4;
    for (size_t i = 0; i < n; i++) {
        size_t one = jf__cfi_max_image_size(members[i]->cfi);
        if (one > SIZE_MAX - cap)
            return SIZE_MAX;
        cap += one;
    }
    return cap;
}

static uint64_t distance(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

/* 1 if every byte of [p, p + len) is within a signed 32-bit reach of every
 * code address in [lo, hi]. */
static int in_reach(uintptr_t p, size_t len, uintptr_t lo, uintptr_t hi)
{
    const uint64_t reach = (uint64_t)INT32_MAX - 4096;
    uint64_t end = (uint64_t)p + len;
    return distance(p, lo) < reach && distance(p, hi) < reach && distance(end, lo) < reach &&
           distance(end, hi) < reach;
}

/* Anonymous read-write memory within reach of [lo, hi]: the kernel takes a
 * hint when that range is free, so try a few spots around the code, then
 * wherever it likes. NULL if none is in reach. */
static uint8_t *map_near(uintptr_t lo, uintptr_t hi, size_t len)
{
    static const unsigned shifts[] = {21, 26, 29};
    uintptr_t hints[2 * (sizeof shifts / sizeof shifts[0]) + 1];
    size_t n = 0;
    for (size_t i = 0; i < sizeof shifts / sizeof shifts[0]; i++) {
        uintptr_t d = (uintptr_t)1 << shifts[i];
        if (lo > d + len)
            hints[n++] = (lo - d - len) & ~(uintptr_t)0xfff;
        if (hi < UINTPTR_MAX - d - len)
            hints[n++] = (hi + d) & ~(uintptr_t)0xfff;
    }
    hints[n++] = 0;
    for (size_t i = 0; i < n; i++) {
        void *p = mmap((void *)hints[i], len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            continue;
        if (in_reach((uintptr_t)p, len, lo, hi))
            return p;
        munmap(p, len);
    }
    return NULL;
}

static void members_span(jf_live *const *members, size_t n, uintptr_t *lo, uintptr_t *hi)
{
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (members[i]->start < *lo)
            *lo = members[i]->start;
        if (members[i]->start + members[i]->size > *hi)
            *hi = members[i]->start + members[i]->size;
    }
}

/* Emit every member's .eh_frame back to back at its final address. Each
 * image ends with a terminator (and .eh_frame_hdr) that the next member's
 * image overwrites, so only the last terminator remains. */
static int emit_members(unwind_table *t, size_t cap)
{
    size_t used = 0;
    for (size_t i = 0; i < t->n_members; i++) {
        const jf_live *r = t->members[i];
        jf_eh_image img;
        int rc = jf__cfi_emit(r->cfi, JF_EH_LAYOUT_ABSOLUTE, r->start, r->size,
                              (uint64_t)(uintptr_t)(t->bytes + used), t->bytes + used, cap - used, &img);
        if (rc)
            return rc;
        if (img.eh_frame_size < 4 || img.eh_frame_size > cap - used || (img.eh_frame_size - 4) % 4)
            return jf__fail(JF_EINVAL, "region %s: unexpected .eh_frame size %zu", r->name,
                            img.eh_frame_size);
        used += img.eh_frame_size - 4;
    }
    memset(t->bytes + used, 0, 4);
    t->size = used + 4;
    return 0;
}

static void table_free(unwind_table *t)
{
    if (!t)
        return;
    if (t->bytes)
        munmap(t->bytes, t->map_size);
    free(t->fde_offsets);
    free(t->members);
    free(t);
}

/* Map and fill the table's bytes near its code, then make them read-only. */
static int table_fill(unwind_table *t)
{
    size_t cap = table_capacity(t->members, t->n_members);
    long page = sysconf(_SC_PAGESIZE);
    size_t mask = (page > 0 ? (size_t)page : 4096) - 1;
    if (cap > SIZE_MAX - mask)
        return jf__fail(JF_ENOMEM, "unwind table too large");
    t->map_size = (cap + mask) & ~mask;
    uintptr_t lo, hi;
    members_span(t->members, t->n_members, &lo, &hi);
    t->bytes = map_near(lo, hi, t->map_size);
    if (!t->bytes)
        return jf__fail(JF_ERANGE, "no memory for an unwind table within 2 GiB of code at %p-%p",
                        (void *)lo, (void *)hi);
    int rc = emit_members(t, cap);
    if (!rc && mprotect(t->bytes, t->map_size, PROT_READ) != 0)
        rc = jf__fail(JF_ENOMEM, "cannot protect an unwind table");
    return rc ? rc : index_fdes(t);
}

/* A table describing `members` (sorted by start, copied), not yet registered. */
static int table_build(jf_live *const *members, size_t n, unwind_table **out)
{
    unwind_table *t = calloc(1, sizeof *t);
    if (!t || !(t->members = malloc(n * sizeof *members))) {
        free(t);
        return jf__fail(JF_ENOMEM, "out of memory for an unwind table of %zu regions", n);
    }
    memcpy(t->members, members, n * sizeof *members);
    t->n_members = n;
    t->lo = members[0]->start;
    t->hi = members[n - 1]->start;
    int rc = table_fill(t);
    if (rc) {
        table_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

static void table_register(unwind_table *t)
{
    for (int u = 0; u < n_unwinders; u++) {
        if (!unwinders[u].per_fde) {
            unwinders[u].register_frame(t->bytes);
            continue;
        }
        for (size_t i = 0; i < t->n_fdes; i++)
            unwinders[u].register_frame(t->bytes + t->fde_offsets[i]);
    }
}

static void table_deregister(unwind_table *t)
{
    for (int u = n_unwinders - 1; u >= 0; u--) {
        if (!unwinders[u].per_fde) {
            unwinders[u].deregister_frame(t->bytes);
            continue;
        }
        for (size_t i = 0; i < t->n_fdes; i++)
            unwinders[u].deregister_frame(t->bytes + t->fde_offsets[i]);
    }
}

/* ------------------------------------------------------------------------ */
/* Which table describes a region: start address -> table                   */
/* ------------------------------------------------------------------------ */

typedef struct owner_slot {
    uintptr_t start; /* 0 = empty (regions never start at 0) */
    unwind_table *table;
} owner_slot;

static owner_slot *owners;
static size_t owner_capacity, owner_count;

static size_t owner_hash(uintptr_t start)
{
    return (size_t)(((uint64_t)start >> 4) * 0x9e3779b97f4a7c15ull >> 17);
}

static owner_slot *owner_find(uintptr_t start)
{
    if (!owner_capacity)
        return NULL;
    size_t mask = owner_capacity - 1;
    for (size_t i = owner_hash(start) & mask;; i = (i + 1) & mask) {
        if (owners[i].start == start)
            return &owners[i];
        if (!owners[i].start)
            return NULL;
    }
}

static void owner_put_unchecked(uintptr_t start, unwind_table *t)
{
    size_t mask = owner_capacity - 1;
    size_t i = owner_hash(start) & mask;
    while (owners[i].start && owners[i].start != start)
        i = (i + 1) & mask;
    if (!owners[i].start)
        owner_count++;
    owners[i].start = start;
    owners[i].table = t;
}

/* Room for `extra` more entries at a load factor of at most 1/2. */
static int owner_reserve(size_t extra)
{
    if (extra > SIZE_MAX / 4 - owner_count)
        return jf__fail(JF_ENOMEM, "too many regions for the unwind sink");
    size_t need = (owner_count + extra) * 2;
    if (need <= owner_capacity)
        return 0;
    size_t cap = owner_capacity ? owner_capacity : 64;
    while (cap < need)
        cap *= 2;
    owner_slot *old = owners;
    size_t old_cap = owner_capacity;
    owners = calloc(cap, sizeof *owners);
    if (!owners) {
        owners = old;
        return jf__fail(JF_ENOMEM, "out of memory for the unwind sink's region index");
    }
    owner_capacity = cap;
    owner_count = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].start)
            owner_put_unchecked(old[i].start, old[i].table);
    free(old);
    return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void owner_remove(uintptr_t start)
{
    owner_slot *s = owner_find(start);
    if (!s)
        return;
    size_t mask = owner_capacity - 1;
    size_t hole = (size_t)(s - owners);
    for (size_t i = (hole + 1) & mask; owners[i].start; i = (i + 1) & mask) {
        size_t home = owner_hash(owners[i].start) & mask;
        /* Move entry i into the hole unless its home lies cyclically in (hole, i]. */
        int stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
        if (!stays) {
            owners[hole] = owners[i];
            hole = i;
        }
    }
    owners[hole].start = 0;
    owners[hole].table = NULL;
    owner_count--;
}

static void owners_point_to(unwind_table *t)
{
    for (size_t i = 0; i < t->n_members; i++)
        owner_put_unchecked(t->members[i]->start, t);
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
 * Replace tables[at, at + n_old) by fresh[0, n_fresh) (same address range,
 * sorted, built). The fresh tables are registered before the old ones are
 * deregistered, so every FDE stays findable throughout, except under a
 * libgcc keyed by first pc (GCC 13+), which would drop a fresh table that
 * starts where an old one does: there the old ones go first, and a
 * concurrent unwind through these regions may briefly find no FDE.
 */
static int swap_tables(size_t at, size_t n_old, unwind_table *const *fresh, size_t n_fresh,
                       jf_sink_stats *stats)
{
    if (n_fresh > n_old && tables_reserve(n_fresh - n_old) != 0) {
        for (size_t i = 0; i < n_fresh; i++)
            table_free(fresh[i]);
        return JF_ENOMEM;
    }
    unwind_table *old[2];
    if (n_old > sizeof old / sizeof old[0])
        return jf__fail(JF_EINVAL, "internal: replacing %zu unwind tables at once", n_old);
    memcpy(old, tables + at, n_old * sizeof *old);
    for (size_t i = 0; deregister_first && i < n_old; i++)
        table_deregister(old[i]);
    for (size_t i = 0; i < n_fresh; i++) {
        table_register(fresh[i]);
        owners_point_to(fresh[i]);
        stats->objects++;
        stats->bytes += fresh[i]->size;
    }
    memmove(tables + at + n_fresh, tables + at + n_old, (n_tables - at - n_old) * sizeof *tables);
    memcpy(tables + at, fresh, n_fresh * sizeof *tables);
    n_tables = n_tables - n_old + n_fresh;
    for (size_t i = 0; i < n_old; i++) {
        if (!deregister_first)
            table_deregister(old[i]);
        stats->objects--;
        stats->bytes -= old[i]->size;
        table_free(old[i]);
    }
    return 0;
}

/* Build tables for sorted `members` (FULL_WEIGHT each at most when there
 * are more than MAX_WEIGHT) and swap them in for tables[at, at + n_old). */
static int rebuild_range(size_t at, size_t n_old, jf_live *const *members, size_t n, jf_sink_stats *stats)
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
        rc = swap_tables(at, n_old, fresh, pieces, stats);
    }
    if (fresh != one)
        free(fresh);
    return rc;
}

/* Merge neighbours of one window while together they hold at most
 * FULL_WEIGHT regions. Adjacent tables have adjacent ranges, so the merged
 * range overlaps no other table. */
static int coalesce(jf_sink_stats *stats)
{
    jf_live *both[2 * FULL_WEIGHT];
    size_t i = 0;
    while (i + 1 < n_tables) {
        unwind_table *a = tables[i], *b = tables[i + 1];
        if (window_of(a->lo) != window_of(b->hi) || a->n_members + b->n_members > FULL_WEIGHT) {
            i++;
            continue;
        }
        memcpy(both, a->members, a->n_members * sizeof *both);
        memcpy(both + a->n_members, b->members, b->n_members * sizeof *both);
        int rc = rebuild_range(i, 2, both, a->n_members + b->n_members, stats);
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

/* Regions inside tables[t]'s range join it: rebuild it with them. */
static int join_table(size_t t, jf_live *const *regions, size_t n, jf_sink_stats *stats)
{
    unwind_table *old = tables[t];
    size_t total = old->n_members + n;
    jf_live **all = malloc(total * sizeof *all);
    if (!all)
        return jf__fail(JF_ENOMEM, "out of memory rebuilding an unwind table");
    size_t i = 0, j = 0, k = 0;
    while (i < old->n_members || j < n)
        all[k++] = j == n || (i < old->n_members && old->members[i]->start < regions[j]->start)
                       ? old->members[i++]
                       : regions[j++];
    int rc = rebuild_range(t, 1, all, total, stats);
    free(all);
    return rc;
}

/*
 * Add sorted regions none of which is held yet. Each one either lies inside
 * an existing table's range (it joins that table) or in a gap between
 * tables (runs of those, within one window, make new tables).
 */
static int add_sorted(jf_live *const *regions, size_t n, jf_sink_stats *stats)
{
    size_t i = 0;
    while (i < n) {
        size_t t = first_table_ending_after(regions[i]->start);
        size_t run = 1;
        int rc;
        if (t < n_tables && tables[t]->lo <= regions[i]->start) {
            while (i + run < n && regions[i + run]->start <= tables[t]->hi)
                run++;
            rc = join_table(t, regions + i, run, stats);
        } else {
            uintptr_t limit = t < n_tables ? tables[t]->lo : UINTPTR_MAX;
            uintptr_t window = window_of(regions[i]->start);
            while (i + run < n && run < FULL_WEIGHT && regions[i + run]->start < limit &&
                   window_of(regions[i + run]->start) == window)
                run++;
            rc = rebuild_range(t, 0, regions + i, run, stats);
        }
        if (rc)
            return rc;
        i += run;
    }
    return coalesce(stats);
}

static int by_start(const void *a, const void *b)
{
    const jf_live *x = *(jf_live *const *)a, *y = *(jf_live *const *)b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The regions of a group that need describing: with unwind rules, and not
 * already held (a replay after fork hands us what the child inherited). */
static size_t select_new(jf_live *const *regions, size_t n, jf_live **out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (regions[i]->cfi && !owner_find(regions[i]->start))
            out[k++] = regions[i];
    return k;
}

static int unwind_add(jf_live *const *regions, size_t n, jf_sink_stats *stats)
{
    jf_live **fresh = malloc((n ? n : 1) * sizeof *fresh);
    if (!fresh)
        return jf__fail(JF_ENOMEM, "out of memory for a group of %zu regions", n);
    size_t k = select_new(regions, n, fresh);
    qsort(fresh, k, sizeof *fresh, by_start);
    int rc = owner_reserve(k);
    if (!rc)
        rc = add_sorted(fresh, k, stats);
    free(fresh);
    if (!rc)
        stats->regions += k;
    return rc;
}

/* Rebuild the table holding `gone` without it (or drop the table). */
static int drop_member(const jf_live *gone, jf_sink_stats *stats)
{
    owner_slot *s = owner_find(gone->start);
    if (!s)
        return 0; /* no unwind rules: never held */
    unwind_table *t = s->table;
    size_t at = first_table_ending_after(t->lo);
    if (at >= n_tables || tables[at] != t)
        return jf__fail(JF_EINVAL, "internal: unwind table of %s not found in order", gone->name);
    jf_live **rest = malloc(t->n_members * sizeof *rest);
    if (!rest)
        return jf__fail(JF_ENOMEM, "out of memory rebuilding an unwind table");
    size_t n = 0;
    for (size_t i = 0; i < t->n_members; i++)
        if (t->members[i] != gone)
            rest[n++] = t->members[i];
    int rc = rebuild_range(at, 1, rest, n, stats);
    free(rest);
    if (!rc)
        owner_remove(gone->start);
    return rc;
}

static int unwind_remove(jf_live *const *regions, size_t n, jf_sink_stats *stats)
{
    for (size_t i = 0; i < n; i++) {
        int rc = drop_member(regions[i], stats);
        if (rc)
            return rc;
    }
    return coalesce(stats);
}

static int unwind_start(const char *dump_dir, jf_sink_stats *stats)
{
    (void)dump_dir;
    held_stats = stats;
    return bind_unwinders();
}

/* Deregister and free everything (the registry replays on re-enable). */
static void unwind_stop(int final)
{
    (void)final;
    while (n_tables) {
        unwind_table *t = tables[--n_tables];
        table_deregister(t);
        table_free(t);
    }
    free(tables);
    tables = NULL;
    tables_capacity = 0;
    free(owners);
    owners = NULL;
    owner_capacity = owner_count = 0;
    if (held_stats) {
        held_stats->objects = 0;
        held_stats->bytes = 0;
    }
}

/* The child inherited the registrations along with the memory they point
 * to: keep both. The replay that follows finds every region already held. */
static void unwind_forget_after_fork(void)
{
}

const sink_ops jf_unwind_sink = {
    .word = "unwind",
    .bit = JF_SINK_UNWIND,
    .start = unwind_start,
    .add = unwind_add,
    .remove = unwind_remove,
    .stop = unwind_stop,
    .forget_after_fork = unwind_forget_after_fork,
};
