/*
 * Trampolines for interpreters: each one is a byte-identical copy of the
 * architecture's template (src/arch/<arch>.S, described by the header that
 * src/host/cfi-extract generates at build time) that calls whatever its data
 * slot holds. Creating a trampoline writes one pointer into a read-write page
 * and registers the copy under its own name; code pages are written once,
 * when their arena group is mapped, and are never writable afterwards.
 *
 * Arena group layout (one mapping, never unmapped):
 *
 *   [code block 0][code block 1]...[code block K-1][data block]
 *
 * Copies sit `stride` bytes apart in each code block (stride = the template
 * rounded up to 8, or the room jitdump needs after each region). A copy's
 * slot sits at the same position in the data block plus 8 * (its block
 * number), with K = stride / 8: the K blocks' slots interleave, so one
 * trampoline costs stride + 8 bytes instead of 2 * stride. Every block is
 * linked for its own code-to-slot distance, so copies within a block are
 * byte-identical, and the distance is bounded by the template's reach.
 */
#define _GNU_SOURCE
#include "trampoline.h"

#include "byte_order.h"
#include "cfi.h"
#include "error.h"
#include "registry.h"
#include "sys.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef JF_HAVE_TRAMPOLINE_TEMPLATE
#include "trampoline_template.h"
#define HOST_TEMPLATE (&jf__template_host)
#else
#include "arch/template.h"
#define HOST_TEMPLATE ((const jf__template *)NULL)
#endif

enum {
    SLOT_SIZE = 8,
    DEFAULT_BLOCK = 64 * 1024,
    MAX_ALIGN = 64,
    PLACEMENT_TRIES = 16,
};

/* Groups within this distance of a target are "near" it (calls to a far
 * target cost measurably more on x86_64). */
#define NEAR_DISTANCE ((uintptr_t)1 << 30)
#define HINT_STEP ((uintptr_t)64 << 20)

typedef struct tramp_group {
    uintptr_t base;
    jf__trampoline_layout layout;
    size_t used;        /* copies handed out at least once, in index order */
    uintptr_t free_top; /* slot of the last destroyed copy (0: none); each
                           free slot holds the next free slot's address */
    uint64_t *live;     /* one bit per copy */
} tramp_group;

static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t arena_once = PTHREAD_ONCE_INIT;
/* Guarded by arena_lock. Groups are only ever added. */
static tramp_group *groups;
static size_t n_groups, cap_groups;
static struct jf_cfi *template_cfi;

/* ---- fork safety ---------------------------------------------------------- */

static void arena_prepare(void)
{
    pthread_mutex_lock(&arena_lock);
}

static void arena_release(void)
{
    pthread_mutex_unlock(&arena_lock);
}

static void install_atfork(void)
{
    /* The child inherits every mapping (trampolines keep working there);
     * only the lock must not be inherited in a held state. */
    pthread_atfork(arena_prepare, arena_release, arena_release);
}

/* ---- layout ----------------------------------------------------------------- */

/* Largest code-to-slot distance the template's slot reference can encode. */
static size_t slot_reach(const jf__template *t)
{
    return t->slot.kind == JF_SLOT_AARCH64_LD_PREL_LO19 ? ((size_t)1 << 20) - 4 : (size_t)1 << 30;
}

/* Bytes each region needs before the next one starts. */
static size_t room_per_copy(const jf__template *t, unsigned sinks)
{
    size_t room = t->code_size;
    if (sinks & JF_SINK_JITDUMP) {
        size_t jd = jf_jitdump_footprint(t->code_size, template_cfi);
        if (jd > room)
            room = jd;
    }
    return room;
}

static size_t gcd(size_t a, size_t b)
{
    while (b) {
        size_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* Least common multiple, or SIZE_MAX if it overflows. */
static size_t lcm(size_t a, size_t b)
{
    size_t q = a / gcd(a, b);
    return q > SIZE_MAX / b ? SIZE_MAX : q * b;
}

static int ensure_template_cfi(const jf__template *t);

/* jf__trampoline_layout with arena_lock held. */
static int layout_locked(const jf__template *t, unsigned sinks, size_t align, jf__trampoline_layout *out)
{
    int rc = ensure_template_cfi(t);
    if (rc)
        return rc;
    if (align & (align - 1) || align > MAX_ALIGN)
        return jf__fail(JF_EINVAL, "trampoline alignment %zu is not a power of two up to %d", align,
                        MAX_ALIGN);
    size_t page = jf__page_size();
    size_t stride = jf__round_up(room_per_copy(t, sinks), align > SLOT_SIZE ? align : SLOT_SIZE);
    unsigned variants = (unsigned)(stride / SLOT_SIZE);
    size_t block = jf__round_up(DEFAULT_BLOCK, page);
    size_t fit = slot_reach(t) / variants / page * page; /* K * block within reach */
    if (block > fit)
        block = fit;
    size_t whole = lcm(stride, page); /* a block of whole copies wastes nothing */
    if (whole <= block)
        block = block / whole * whole;
    if (block < stride || block < page)
        return jf__fail(JF_ERANGE, "a %zu-byte trampoline stride does not fit the template's %zu-byte reach",
                        stride, slot_reach(t));
    *out = (jf__trampoline_layout){
        .arch = t->arch,
        .code_size = t->code_size,
        .stride = stride,
        .variants = variants,
        .block = block,
        .per_group = variants * (block / stride),
        .group_bytes = (variants + (size_t)1) * block,
    };
    return 0;
}

int jf__trampoline_layout_for(unsigned sinks, size_t align, jf__trampoline_layout *out)
{
    const jf__template *t = HOST_TEMPLATE;
    if (!t)
        return jf__fail(JF_ENOTSUP, "trampolines are not available on this architecture");
    pthread_mutex_lock(&arena_lock);
    int rc = layout_locked(t, sinks, align, out);
    pthread_mutex_unlock(&arena_lock);
    return rc;
}

/* ---- linking a copy to its slot ---------------------------------------------- */

/* Instructions and data fields are in the host's byte order on every
 * architecture the library runs on. */
#define load_u32 jf__load_host_u32
#define store_u32 jf__store_host_u32

/*
 * Apply the template's one relocation to `code` (a copy of the template)
 * for a slot `distance` bytes after the copy's first byte.
 */
static int link_to_slot(const jf__template *t, uint8_t *code, int64_t distance)
{
    const jf__template_slot_ref *s = &t->slot;
    int64_t pcrel = distance + s->addend - (int64_t)s->at; /* S + A - P */
    switch (s->kind) {
    case JF_SLOT_X86_64_PC32:
        if (pcrel < INT32_MIN || pcrel > INT32_MAX)
            break;
        store_u32(code + s->at, (uint32_t)pcrel);
        return 0;
    case JF_SLOT_AARCH64_LD_PREL_LO19:
        if (pcrel % 4 || pcrel < -(1 << 20) || pcrel >= (1 << 20))
            break;
        store_u32(code + s->at,
                  (load_u32(code + s->at) & ~(0x7ffffu << 5)) | (((uint32_t)(pcrel >> 2) & 0x7ffffu) << 5));
        return 0;
    case JF_SLOT_RISCV_PCREL_HI20_LO12_I: {
        int64_t hi = (pcrel + 0x800) >> 12, lo = pcrel - hi * 4096;
        if (hi < -(1 << 19) || hi >= (1 << 19))
            break;
        store_u32(code + s->at, (load_u32(code + s->at) & 0xfffu) | ((uint32_t)hi & 0xfffffu) << 12);
        store_u32(code + s->at_lo, (load_u32(code + s->at_lo) & 0xfffffu) | ((uint32_t)lo & 0xfffu) << 20);
        return 0;
    }
    case JF_SLOT_PPC64_REL16_HA_LO: {
        int64_t hi = (pcrel + 0x8000) >> 16, lo = pcrel - hi * 65536;
        if (hi < INT16_MIN || hi > INT16_MAX)
            break;
        store_u32(code + s->at, (load_u32(code + s->at) & 0xffff0000u) | ((uint32_t)hi & 0xffffu));
        store_u32(code + s->at_lo, (load_u32(code + s->at_lo) & 0xffff0000u) | ((uint32_t)lo & 0xffffu));
        return 0;
    }
    case JF_SLOT_S390_PC32DBL:
        if (pcrel % 2 || pcrel / 2 < INT32_MIN || pcrel / 2 > INT32_MAX)
            break;
        store_u32(code + s->at, (uint32_t)(int32_t)(pcrel / 2));
        return 0;
    }
    return jf__fail(JF_ERANGE, "the %s template cannot reach a slot %lld bytes away", t->arch,
                    (long long)distance);
}

/* ---- groups ---------------------------------------------------------------------- */

static int mmap_error(const char *what, int err)
{
    if (err == EACCES || err == EPERM)
        return jf__fail(JF_EACCES,
                        "%s: %s; this host forbids executable memory (SELinux execmem, "
                        "a noexec policy): call the target directly instead of a trampoline",
                        what, strerror(err));
    if (err == ENOMEM)
        return jf__fail(JF_ENOMEM, "%s: %s", what, strerror(err));
    return jf__fail(JF_ENOTSUP, "%s: %s", what, strerror(err));
}

static uintptr_t distance(uintptr_t a, uintptr_t b)
{
    return a > b ? a - b : b - a;
}

/* Map `len` read-write bytes, preferably within NEAR_DISTANCE of `near`. */
static void *map_near(uintptr_t near, size_t len)
{
    size_t page = jf__page_size();
    for (int k = 1; k <= PLACEMENT_TRIES; k++) {
        /* Alternate below and above the target, moving away step by step. */
        uintptr_t step = HINT_STEP * (uintptr_t)((k + 1) / 2);
        uintptr_t hint = k % 2 ? near - step - len : near + step;
        if ((k % 2 && near < step + len) || (!(k % 2) && hint < near))
            continue;
        hint &= ~(uintptr_t)(page - 1);
        void *p = mmap((void *)hint, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return p;
        if (distance((uintptr_t)p, near) < NEAR_DISTANCE)
            return p;
        munmap(p, len); /* never used: nothing can run in it */
    }
    return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/* Fill the code blocks of a fresh read-write group, then make them
 * read+execute (never both writable and executable) and flush the icache. */
static int fill_and_seal(const jf__template *t, uint8_t *base, const jf__trampoline_layout *l)
{
    uint8_t copy[256];
    if (t->code_size > sizeof copy || t->code_size > l->stride)
        return jf__fail(JF_ERANGE, "the %s template (%zu bytes) is too large", t->arch, t->code_size);
    size_t code_bytes = l->variants * l->block;
    for (unsigned v = 0; v < l->variants; v++) {
        memcpy(copy, t->code, t->code_size);
        int64_t slot_distance = (int64_t)(code_bytes - v * l->block + v * SLOT_SIZE);
        int rc = link_to_slot(t, copy, slot_distance);
        if (rc)
            return rc;
        uint8_t *block = base + v * l->block;
        for (size_t i = 0; i + l->stride <= l->block; i += l->stride)
            memcpy(block + i, copy, t->code_size);
    }
    if (mprotect(base, code_bytes, PROT_READ | PROT_EXEC) != 0)
        return mmap_error("cannot make trampoline code executable (mprotect PROT_EXEC)", errno);
    __builtin___clear_cache((char *)base, (char *)base + code_bytes);
    return 0;
}

/* Map and fill a new group near `near`; *out is its index. Lock held. */
static int add_group(const jf__template *t, const jf__trampoline_layout *l, uintptr_t near, size_t *out)
{
    if (n_groups == cap_groups) {
        size_t cap = cap_groups ? 2 * cap_groups : 8;
        tramp_group *g = realloc(groups, cap * sizeof *g);
        if (!g)
            return jf__fail(JF_ENOMEM, "out of memory for trampoline arena bookkeeping");
        groups = g;
        cap_groups = cap;
    }
    uint64_t *live = calloc((l->per_group + 63) / 64, sizeof *live);
    if (!live)
        return jf__fail(JF_ENOMEM, "out of memory for trampoline arena bookkeeping");
    void *base = map_near(near, l->group_bytes);
    if (base == MAP_FAILED) {
        free(live);
        return mmap_error("cannot map a trampoline arena", errno);
    }
    int rc = fill_and_seal(t, base, l);
    if (rc) {
        munmap(base, l->group_bytes); /* never executed */
        free(live);
        return rc;
    }
    groups[n_groups] = (tramp_group){.base = (uintptr_t)base, .layout = *l, .live = live};
    *out = n_groups++;
    return 0;
}

static uintptr_t copy_code(const tramp_group *g, size_t index)
{
    const jf__trampoline_layout *l = &g->layout;
    size_t per_block = l->block / l->stride;
    return g->base + index / per_block * l->block + index % per_block * l->stride;
}

static uintptr_t copy_slot(const tramp_group *g, size_t index)
{
    const jf__trampoline_layout *l = &g->layout;
    size_t per_block = l->block / l->stride;
    return g->base + l->variants * l->block + index % per_block * l->stride + index / per_block * SLOT_SIZE;
}

/* The copy index whose slot is at `slot`. */
static size_t slot_index(const tramp_group *g, uintptr_t slot)
{
    const jf__trampoline_layout *l = &g->layout;
    size_t off = slot - (g->base + l->variants * l->block);
    return off % l->stride / SLOT_SIZE * (l->block / l->stride) + off / l->stride;
}

/* The group of a trampoline entry and its copy index there; NULL if the
 * entry is not the start of a copy. Lock held. */
static tramp_group *find_copy(uintptr_t entry, size_t *index)
{
    for (size_t k = 0; k < n_groups; k++) {
        tramp_group *g = &groups[k];
        const jf__trampoline_layout *l = &g->layout;
        if (entry < g->base || entry >= g->base + l->variants * l->block)
            continue;
        size_t off = entry - g->base, in_block = off % l->block;
        if (in_block % l->stride || in_block / l->stride >= l->block / l->stride)
            return NULL;
        *index = off / l->block * (l->block / l->stride) + in_block / l->stride;
        return g;
    }
    return NULL;
}

static int group_fits(const tramp_group *g, const jf__trampoline_layout *l, uintptr_t target)
{
    return g->layout.stride == l->stride && g->layout.block == l->block &&
           (g->free_top || g->used < l->per_group) && distance(g->base, target) < NEAR_DISTANCE;
}

/* Take a free copy suitable for `target`. Lock held. */
static int take_copy(const jf__trampoline_layout *l, uintptr_t target, tramp_group **out, size_t *index)
{
    size_t k = 0;
    while (k < n_groups && !group_fits(&groups[k], l, target))
        k++;
    if (k == n_groups) {
        int rc = add_group(HOST_TEMPLATE, l, target, &k);
        if (rc)
            return rc;
    }
    tramp_group *g = &groups[k];
    if (g->free_top) {
        uintptr_t slot = g->free_top;
        g->free_top = __atomic_load_n((uintptr_t *)slot, __ATOMIC_RELAXED);
        *index = slot_index(g, slot);
    } else {
        *index = g->used++;
    }
    g->live[*index / 64] |= (uint64_t)1 << (*index % 64);
    *out = g;
    return 0;
}

/* Put a copy back on its group's free list. Lock held. The slot then holds
 * the next free slot's address (in the non-executable data block) or 0: a
 * stray call through a destroyed trampoline faults instead of running the
 * old target. */
static void release_copy(tramp_group *g, size_t index)
{
    uintptr_t slot = copy_slot(g, index);
    g->live[index / 64] &= ~((uint64_t)1 << (index % 64));
    __atomic_store_n((uintptr_t *)slot, g->free_top, __ATOMIC_RELEASE);
    g->free_top = slot;
}

/* ---- the unwind description, built once from the generated header ------------- */

static int ensure_template_cfi(const jf__template *t)
{
    if (template_cfi)
        return 0;
    if (t->cie.code_align > UINT32_MAX || t->cie.ra_register > UINT32_MAX || t->cie.data_align < INT32_MIN ||
        t->cie.data_align > INT32_MAX)
        return jf__fail(JF_ERANGE, "the %s template's CIE parameters are out of range", t->arch);
    jf__raw_cie cie = {
        .code_align = (uint32_t)t->cie.code_align,
        .data_align = (int32_t)t->cie.data_align,
        .ra_reg = (uint32_t)t->cie.ra_register,
        .insns = t->cie.insns,
        .insns_len = t->cie.n_insns,
    };
    struct jf_cfi *cfi = jf__cfi_from_raw(&cie, t->fde_insns, t->n_fde_insns, 0, t->code_size);
    if (!cfi)
        return JF_EINVAL;
    /* Every copy has the same rules: the registry shares this one description
     * instead of copying it per trampoline. */
    int rc = jf__cfi_share(cfi);
    if (rc) {
        jf__cfi_free(cfi);
        return rc;
    }
    template_cfi = cfi;
    return 0;
}

/* ---- public API -------------------------------------------------------------------- */

/* The fields of the caller's options this version knows. */
static int read_options(const jf_trampoline_options *opts, jf_trampoline_options *out)
{
    jf_trampoline_options init = JF_TRAMPOLINE_OPTIONS_INIT;
    *out = init;
    if (!opts)
        return 0;
    size_t v1 = offsetof(jf_trampoline_options, line) + sizeof opts->line;
    if (opts->struct_size < v1 || opts->struct_size > 4096)
        return jf__fail(JF_EINVAL,
                        "jf_trampoline_options.struct_size is %zu; set it to "
                        "sizeof(jf_trampoline_options)",
                        opts->struct_size);
    memcpy(out, opts, opts->struct_size < sizeof *out ? opts->struct_size : sizeof *out);
    out->struct_size = sizeof *out;
    return 0;
}

/* Allocate a copy calling `target`. */
static int allocate(jf_fn target, size_t align, uintptr_t *entry)
{
    const jf__template *t = HOST_TEMPLATE;
    if (!t)
        return jf__fail(JF_ENOTSUP, "trampolines are not available on this architecture: "
                                    "call the target directly");
    /* Read the sinks before taking arena_lock: the registry lock is never
     * taken inside it (fork handlers take both, in either order). */
    unsigned sinks = jf_enabled_sinks();
    pthread_once(&arena_once, install_atfork);
    pthread_mutex_lock(&arena_lock);
    jf__trampoline_layout l;
    tramp_group *g = NULL;
    size_t index = 0;
    int rc = layout_locked(t, sinks, align, &l);
    if (rc == 0)
        rc = take_copy(&l, (uintptr_t)target, &g, &index);
    if (rc == 0) {
        __atomic_store_n((uintptr_t *)copy_slot(g, index), (uintptr_t)target, __ATOMIC_RELEASE);
        *entry = copy_code(g, index);
    }
    pthread_mutex_unlock(&arena_lock);
    return rc;
}

static void free_entry(uintptr_t entry)
{
    pthread_mutex_lock(&arena_lock);
    size_t index;
    tramp_group *g = find_copy(entry, &index);
    if (g)
        release_copy(g, index);
    pthread_mutex_unlock(&arena_lock);
}

void *jf__trampoline_slot_of(jf_fn entry)
{
    pthread_mutex_lock(&arena_lock);
    size_t index;
    tramp_group *g = find_copy((uintptr_t)entry, &index);
    void *slot = g && (g->live[index / 64] >> (index % 64) & 1) ? (void *)copy_slot(g, index) : NULL;
    pthread_mutex_unlock(&arena_lock);
    return slot;
}

int jf_trampoline_create(jf_fn target, const char *name, const jf_trampoline_options *opts, jf_fn *entry_out)
{
    jf__clear_error();
    jf_trampoline_options o;
    if (!target || !name || !name[0] || !entry_out)
        return jf__fail(JF_EINVAL, "jf_trampoline_create: target, name and entry_out are required");
    int rc = read_options(opts, &o);
    uintptr_t entry = 0;
    if (rc == 0)
        rc = allocate(target, o.align, &entry);
    if (rc)
        return rc;

    jf_region r = JF_REGION_INIT;
    r.addr = (const void *)entry;
    r.size = HOST_TEMPLATE->code_size;
    r.name = name;
    r.file = o.file;
    r.line = o.line;
    r.cfi = template_cfi;
    int registered;
    rc = jf__register_batch(&r, 1, &registered);
    if (!registered) {
        free_entry(entry);
        return rc;
    }
    /* A sink that failed has disabled itself and said so once (log, stats);
     * the trampoline is named in the other sinks, so it is a success. */
    jf__clear_error();
    *entry_out = (jf_fn)entry;
    return 0;
}

int jf_trampoline_destroy(jf_fn entry)
{
    jf__clear_error();
    pthread_mutex_lock(&arena_lock);
    size_t index;
    tramp_group *g = find_copy((uintptr_t)entry, &index);
    int live = g && (g->live[index / 64] >> (index % 64) & 1);
    if (live) /* claim it: a concurrent destroy of the same entry now fails */
        g->live[index / 64] &= ~((uint64_t)1 << (index % 64));
    pthread_mutex_unlock(&arena_lock);
    if (!live)
        return jf__fail(JF_ENOENT, "jf_trampoline_destroy: %p is not a live trampoline", (void *)entry);

    int rc = jf_unregister((const void *)entry);
    if (rc == JF_ENOTINIT || rc == JF_ENOENT)
        rc = 0; /* jf_shutdown already forgot every region */
    pthread_mutex_lock(&arena_lock);
    g = find_copy((uintptr_t)entry, &index); /* `groups` may have moved meanwhile */
    release_copy(g, index);
    pthread_mutex_unlock(&arena_lock);
    return rc;
}
