/*
 * Binding to the process's own unwinders, at run time, never through a
 * link-time reference (a -static-libgcc host would bind a private copy
 * nobody consults):
 *  - the unwinder in global scope (dlsym(RTLD_DEFAULT)): libgcc_s in a C++
 *    host, LLVM libunwind when it is linked first;
 *  - libgcc_s.so.1 through dlopen, which finds the copy glibc loaded
 *    RTLD_LOCAL for backtrace() (or loads it), when it is another library.
 * A probe tells how each one takes registrations: LLVM libunwind one FDE per
 * call; libgcc <= 12 (a list searched linearly on every unwind in the
 * process) shared tables; libgcc 13+ (a b-tree) one table per region.
 */
#define _GNU_SOURCE
#include "unwinder.h"

#include "cfi.h"
#include "error.h"
#include "log.h"

#include <dlfcn.h>
#include <string.h>
#include <sys/mman.h>

/* ------------------------------------------------------------------------ */
/* Binding to the process's unwinders                                        */
/* ------------------------------------------------------------------------ */

/* Set once per process (kept across stop/start and fork). Guarded by the
 * registry lock like everything in a sink. */
static jf__unwinder unwinders[MAX_UNWINDERS];
static int n_unwinders;
static int bound;
/* Some unwinder takes shared tables. */
static int tables_in_use;

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
static int unwinder_from_scope(void *lookup, jf__unwinder *u)
{
    memset(u, 0, sizeof *u);
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

enum { PROBE_TABLE = 512 }; /* room for a one-FDE image and its header */

typedef const void *(*find_fde_fn)(void *pc, void *bases);

/* A table with one FDE for [pc, pc + range), absolute addresses, as the
 * sink's own images are made (the CFI emitter; frameless rules: the probe
 * only looks FDEs up). 0, or -1 if it cannot be built. */
static int put_probe_table(uint8_t *buf, uintptr_t pc, uint64_t range)
{
    jf_cfi *cfi;
    if (jf_cfi_new(&cfi) != 0)
        return -1;
    jf__eh_image img;
    int rc = jf_cfi_add_frameless(cfi, 0, (size_t)range, 16);
    if (rc == 0)
        rc = jf__cfi_emit(cfi, JF_EH_LAYOUT_ABSOLUTE, pc, range, (uint64_t)(uintptr_t)buf, buf, PROBE_TABLE,
                          &img);
    jf_cfi_free(cfi);
    return rc ? -1 : 0;
}

/* A symbol of u's library, or NULL. */
static void *unwinder_symbol(const jf__unwinder *u, const char *name)
{
    void *sym = dlsym(u->handle ? u->handle : RTLD_DEFAULT, name);
    return sym && object_base(sym) == u->base ? sym : NULL;
}

/* A libgcc's __register_frame hands the struct object it allocates to the
 * __register_frame_info that comes first in global scope. When that one is
 * another library's (LLVM libunwind's no-op stub), registering through this
 * libgcc reaches nothing, and the object would be lost: no need to probe. */
static int registrations_interposed(const jf__unwinder *u)
{
    void *global = dlsym(RTLD_DEFAULT, "__register_frame_info");
    return global && object_base(global) != u->base;
}

static probe_result probe_libgcc(const jf__unwinder *u)
{
    static union {
        void *p[32];
        uint64_t u[32];
    } second_object; /* room for any libgcc's struct object */
    void *find = unwinder_symbol(u, "_Unwind_Find_FDE");
    void *reg_info = unwinder_symbol(u, "__register_frame_info");
    void *dereg_info = unwinder_symbol(u, "__deregister_frame_info");
    if (registrations_interposed(u))
        return PROBE_NO_EFFECT;
    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!find || !reg_info || !dereg_info || page == MAP_FAILED) {
        if (page != MAP_FAILED)
            munmap(page, 4096);
        return PROBE_UNKNOWN;
    }
    find_fde_fn find_fde;
    register_object_fn register_info;
    deregister_info_fn deregister_info;
    memcpy(&find_fde, &find, sizeof find_fde);
    memcpy(&register_info, &reg_info, sizeof register_info);
    memcpy(&deregister_info, &dereg_info, sizeof deregister_info);
    uintptr_t x = (uintptr_t)page + 2048; /* no code lives here */
    if (put_probe_table(page, x, 16) != 0 || put_probe_table(page + PROBE_TABLE, x, 32) != 0) {
        munmap(page, 4096);
        return PROBE_UNKNOWN;
    }
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

static const char *const mode_names[] = {"LLVM libunwind, one FDE per call",
                                         "libgcc (b-tree), one table per region",
                                         "libgcc (list), shared tables"};

static void keep_unwinder(const jf__unwinder *u, const char *how)
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
    jf__unwinder *kept = &unwinders[n_unwinders++];
    *kept = *u;
    void *reg_table = unwinder_symbol(u, "__register_frame_info_table");
    void *reg_info = unwinder_symbol(u, "__register_frame_info");
    void *dereg_info = unwinder_symbol(u, "__deregister_frame_info");
    kept->mode = u->per_fde ? MODE_PER_FDE : MODE_PER_REGION;
    if (!u->per_fde && reg_info && dereg_info) {
        memcpy(&kept->register_info, &reg_info, sizeof kept->register_info);
        memcpy(&kept->deregister_info, &dereg_info, sizeof kept->deregister_info);
    }
    if (!u->per_fde && probe == PROBE_LIST && reg_table && dereg_info) {
        kept->mode = MODE_TABLES;
        memcpy(&kept->register_table, &reg_table, sizeof kept->register_table);
        tables_in_use = 1;
    }
    jf__log(JF_LOG_INFO, "unwind sink: %s in %s (%s)", mode_names[kept->mode], object_name(u->base), how);
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
    jf__unwinder u;
    if (!unwinder_from_scope(h, &u)) {
        dlclose(h);
        return;
    }
    if (u.handle)
        dlclose(u.handle);
    u.handle = h;
    keep_unwinder(&u, "libgcc_s.so.1, used by backtrace()");
}

int jf__unwinders_bind(void)
{
    if (bound)
        return 0;
    jf__unwinder u;
    if (unwinder_from_scope(RTLD_DEFAULT, &u))
        keep_unwinder(&u, "global scope");
    bind_libgcc_s();
    if (n_unwinders == 0) {
        const char *why = dlerror();
        return jf__fail(JF_ENOTSUP,
                        "no unwinder with __register_frame/__deregister_frame found in "
                        "the process or in libgcc_s.so.1 (%s)",
                        why ? why : "not defined");
    }
    bound = 1;
    return 0;
}

const jf__unwinder *jf__unwinders(int *n)
{
    *n = n_unwinders;
    return unwinders;
}

int jf__unwinders_take_tables(void)
{
    return tables_in_use;
}
