/*
 * Sink: the GDB JIT interface (also read by lldb). Each registration call
 * becomes one in-memory ELF symfile (src/elf_image.c) linked into
 * __jit_debug_descriptor, and the debugger is told by a call to
 * __jit_debug_register_code, on which it keeps a breakpoint.
 *
 * Why symfiles are merged: every registration stops the debugger, and the
 * cost of a stop grows with the number of live symfiles (docs/formats.md: ~1 ms
 * at 1,000, 35 ms at 10,000). So symfiles live in levels by size (level L
 * holds 8^L to 8^(L+1)-1 regions); when a level holds MERGE_FANIN symfiles,
 * they are merged into one of a higher level. Live symfiles stay below 7 per
 * level, and each region is rewritten about log8(N) times.
 *
 * Why merging stops at level MERGE_TOP_LEVEL: unregistering a region
 * rebuilds the symfile holding it and the debugger re-reads that symfile
 * whole, so the biggest symfile bounds what one unregistration costs. Merges
 * therefore stop at 4,096 to 32,767 regions per symfile (8^4 from single
 * registrations): level MERGE_TOP_LEVEL symfiles add up one per 4-32k
 * regions (about 35 live symfiles in all at 100,000 regions, 200 at 1M).
 *
 * Why .text is split into spans: gdb maps an address to an objfile through
 * its sections, and of two overlapping sections it keeps only one. A
 * symfile's .text sections must therefore cover its own regions and nothing
 * another symfile covers. Regions are joined into one span only across gaps
 * smaller than SPAN_MAX_GAP (alignment padding) that no other symfile's
 * span touches; a later region registered inside such a gap makes us rebuild
 * the symfile that covers it.
 *
 * Why a replacement is registered only after what it replaces is gone
 * (merged symfiles, rebuilt ones): lldb 14 keys loaded segments by their
 * start address alone, and unloading a module erases the entry at each of
 * its segments' addresses, whoever owns that entry by then. A new symfile
 * published while an old one with a segment at the same address was still
 * live would lose that segment when the old one went: its functions stay in
 * `image list` but no address finds them (a chain of Python functions, all
 * packed trampolines rebuilt and merged, showed one name in ten). So the
 * replacement is built first, then the old symfiles are unregistered, then
 * the replacement registered, one notification after the other: live
 * segments never share a start (their spans are disjoint), and the regions
 * are missing from the list only between those two notifications, while
 * the registering thread is inside this sink.
 *
 * The registry lock serialises every entry point, so the descriptor is only
 * ever touched under that one lock.
 */
#include "elf_image.h"
#include "sink_gdb.h"
#include "error.h"
#include "gdb_jit_abi.h"
#include "region.h"
#include "sink.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- the interface gdb and lldb look up by name ------------------------ */

/* Exported from the shared and the static library, kept by --gc-sections
 * and LTO (used, retain), never inlined or folded (noinline, asm body). */
#if defined(__has_attribute)
#if __has_attribute(retain)
#define JF_RETAIN __attribute__((retain))
#endif
#if __has_attribute(noipa)
#define JF_NOIPA __attribute__((noipa))
#endif
#endif
#ifndef JF_RETAIN
#define JF_RETAIN
#endif
#ifndef JF_NOIPA
#define JF_NOIPA
#endif
#define JF_JIT_EXPORT __attribute__((visibility("default"), used)) JF_RETAIN

JF_JIT_EXPORT __attribute__((noinline)) JF_NOIPA void __jit_debug_register_code(void)
{
    __asm__ volatile("" ::: "memory");
}

JF_JIT_EXPORT jf__jit_descriptor __jit_debug_descriptor = {1, JIT_NOACTION, NULL, NULL};

/* ---- symfiles ---------------------------------------------------------- */

enum {
    MERGE_FANIN = 8,     /* symfiles per level before they are merged */
    SPAN_MAX_GAP = 16,   /* largest gap (bytes) one .text section spans */
    MAX_GROUP = 16384,   /* regions per symfile built from one call */
    MERGE_TOP_LEVEL = 4, /* symfiles of this level or above are not merged */
};

typedef struct symfile {
    jf__jit_code_entry entry;
    jf__elf_image image;
    jf__live **members; /* sorted by start, owned array (regions are the registry's) */
    size_t n_members;
    jf__elf_span *spans; /* sorted, disjoint */
    size_t n_spans;
    unsigned level;
    int retiring; /* being replaced: its spans are no obstacle */
} symfile;

/* Live symfiles, in no order. Guarded by the registry lock. */
static symfile **files;
static size_t n_files, files_cap;
static atomic_int merging_disabled;

void jf__gdb_set_merging(int enabled)
{
    atomic_store(&merging_disabled, !enabled);
}

static unsigned level_of(size_t n_members)
{
    unsigned level = 0;
    while (n_members >= MERGE_FANIN) {
        n_members /= MERGE_FANIN;
        level++;
    }
    return level;
}

static int by_start(const void *a, const void *b)
{
    uintptr_t x = (*(jf__live *const *)a)->start, y = (*(jf__live *const *)b)->start;
    return (x > y) - (x < y);
}

static uintptr_t end_of(const jf__live *r)
{
    return r->start + r->size;
}

/* 1 if one of f's spans intersects [lo, hi). */
static int spans_intersect(const symfile *f, uintptr_t lo, uintptr_t hi)
{
    size_t a = 0, b = f->n_spans; /* first span with hi > lo */
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (f->spans[m].hi <= lo)
            a = m + 1;
        else
            b = m;
    }
    return a < f->n_spans && f->spans[a].lo < hi;
}

/* 1 if any region in sorted[0..n) intersects [lo, hi). */
static int regions_intersect(jf__live *const *sorted, size_t n, uintptr_t lo, uintptr_t hi)
{
    size_t a = 0, b = n; /* first region starting at or after lo */
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (sorted[m]->start < lo)
            a = m + 1;
        else
            b = m;
    }
    if (a < n && sorted[a]->start < hi)
        return 1;
    return a > 0 && end_of(sorted[a - 1]) > lo;
}

/* Can a span bridge the gap [lo, hi) without covering anyone else's code? */
static int gap_is_free(uintptr_t lo, uintptr_t hi, jf__live *const *pending, size_t n_pending)
{
    if (hi - lo >= SPAN_MAX_GAP)
        return 0;
    for (size_t i = 0; i < n_files; i++)
        if (!files[i]->retiring && spans_intersect(files[i], lo, hi))
            return 0;
    return !regions_intersect(pending, n_pending, lo, hi);
}

/* Group sorted members into spans. `pending` are regions about to get a
 * symfile of their own (sorted): no span may cover them. */
static int compute_spans(symfile *f, jf__live *const *pending, size_t n_pending)
{
    f->spans = malloc(f->n_members * sizeof *f->spans);
    if (!f->spans)
        return jf__fail(JF_ENOMEM, "out of memory for symfile code ranges");
    size_t n = 0;
    for (size_t i = 0; i < f->n_members; i++) {
        const jf__live *r = f->members[i];
        if (n > 0 && (r->start <= f->spans[n - 1].hi ||
                      gap_is_free(f->spans[n - 1].hi, r->start, pending, n_pending))) {
            if (end_of(r) > f->spans[n - 1].hi)
                f->spans[n - 1].hi = end_of(r);
            continue;
        }
        f->spans[n].lo = r->start;
        f->spans[n].hi = end_of(r);
        n++;
    }
    f->n_spans = n;
    return 0;
}

/* A region's symfile is the live one listing it: set when one is published,
 * cleared when that one goes (its replacement is published right after).
 * In the region's detail, which gdb_add made for every member. */
static void own_members(symfile *f, symfile *owner)
{
    for (size_t i = 0; i < f->n_members; i++)
        if (owner || f->members[i]->detail->gdb_symfile == f)
            f->members[i]->detail->gdb_symfile = owner;
}

static void symfile_free(symfile *f)
{
    if (!f)
        return;
    own_members(f, NULL);
    jf__elf_image_free(&f->image);
    free(f->members);
    free(f->spans);
    free(f);
}

/* Build a symfile for `members` (sorted; ownership passes to the symfile,
 * also on failure) into *out. Returns 0 or a JF_E* code, message set. */
static int symfile_build(jf__live **members, size_t n, jf__live *const *pending, size_t n_pending,
                         symfile **out)
{
    *out = NULL;
    symfile *f = calloc(1, sizeof *f);
    if (!f) {
        free(members);
        return jf__fail(JF_ENOMEM, "out of memory for a symfile");
    }
    f->members = members;
    f->n_members = n;
    f->level = level_of(n);
    int rc = compute_spans(f, pending, n_pending);
    if (rc == 0)
        rc = jf__elf_image_build(members, n, f->spans, f->n_spans, &f->image);
    if (rc) {
        symfile_free(f);
        return rc;
    }
    f->entry.symfile_addr = (const char *)f->image.bytes;
    f->entry.symfile_size = f->image.size;
    *out = f;
    return 0;
}

/* ---- telling the debugger ---------------------------------------------- */

static void notify_debugger(jf__jit_code_entry *e, jf__jit_action action)
{
    __jit_debug_descriptor.relevant_entry = e;
    __jit_debug_descriptor.action_flag = action;
    __jit_debug_register_code();
    __jit_debug_descriptor.action_flag = JIT_NOACTION;
}

/* Link f into the descriptor and the live list, and tell the debugger. */
static int publish(symfile *f, jf_sink_stats *stats)
{
    if (n_files == files_cap) {
        size_t cap = files_cap ? 2 * files_cap : 16;
        symfile **grown = realloc(files, cap * sizeof *grown);
        if (!grown) {
            symfile_free(f);
            return jf__fail(JF_ENOMEM, "out of memory for the symfile list");
        }
        files = grown;
        files_cap = cap;
    }
    files[n_files++] = f;
    own_members(f, f);
    jf__jit_code_entry *e = &f->entry;
    e->prev_entry = NULL;
    e->next_entry = __jit_debug_descriptor.first_entry;
    if (e->next_entry)
        e->next_entry->prev_entry = e;
    __jit_debug_descriptor.first_entry = e;
    notify_debugger(e, JIT_REGISTER_FN);
    stats->objects = n_files;
    stats->bytes += f->image.size;
    return 0;
}

/* Unlink f, tell the debugger, free it. */
static void retract(symfile *f, jf_sink_stats *stats)
{
    jf__jit_code_entry *e = &f->entry;
    if (e->prev_entry)
        e->prev_entry->next_entry = e->next_entry;
    else
        __jit_debug_descriptor.first_entry = e->next_entry;
    if (e->next_entry)
        e->next_entry->prev_entry = e->prev_entry;
    notify_debugger(e, JIT_UNREGISTER_FN);
    for (size_t i = 0; i < n_files; i++) {
        if (files[i] == f) {
            files[i] = files[--n_files];
            break;
        }
    }
    if (stats) {
        stats->objects = n_files;
        stats->bytes -= f->image.size;
    }
    symfile_free(f);
}

/* Replace `old` by a symfile of `members` (NULL/0: just remove it). The new
 * one is built first, then published right after `old` is retracted (see
 * the top of this file). */
static int replace(symfile *old, jf__live **members, size_t n, jf__live *const *pending, size_t n_pending,
                   jf_sink_stats *stats)
{
    if (n == 0) {
        free(members);
        retract(old, stats);
        return 0;
    }
    old->retiring = 1;
    symfile *f;
    int rc = symfile_build(members, n, pending, n_pending, &f);
    old->retiring = 0;
    if (rc)
        return rc;
    retract(old, stats);
    return publish(f, stats); /* cannot fail: the list just shrank */
}

static jf__live **copy_members(jf__live *const *src, size_t n)
{
    jf__live **copy = malloc((n ? n : 1) * sizeof *copy);
    if (copy)
        memcpy(copy, src, n * sizeof *copy);
    return copy;
}

/* ---- merging ----------------------------------------------------------- */

/* While `level` (below MERGE_TOP_LEVEL) holds MERGE_FANIN symfiles, merge
 * them into one. */
static int merge_levels(unsigned level, jf_sink_stats *stats)
{
    while (level < MERGE_TOP_LEVEL && !atomic_load(&merging_disabled)) {
        symfile *parts[MERGE_FANIN];
        size_t n_parts = 0, total = 0, total_spans = 0;
        for (size_t i = 0; i < n_files && n_parts < MERGE_FANIN; i++) {
            if (files[i]->level == level) {
                parts[n_parts++] = files[i];
                total += files[i]->n_members;
                total_spans += files[i]->n_spans;
            }
        }
        if (n_parts < MERGE_FANIN || total_spans > JF_ELF_MAX_SPANS)
            return 0;
        jf__live **members = malloc(total * sizeof *members);
        if (!members)
            return jf__fail(JF_ENOMEM, "out of memory merging symfiles");
        size_t at = 0;
        for (size_t k = 0; k < n_parts; k++) {
            memcpy(members + at, parts[k]->members, parts[k]->n_members * sizeof *members);
            at += parts[k]->n_members;
            parts[k]->retiring = 1;
        }
        qsort(members, total, sizeof *members, by_start);
        symfile *merged;
        int rc = symfile_build(members, total, NULL, 0, &merged);
        for (size_t k = 0; k < n_parts; k++)
            parts[k]->retiring = 0;
        if (rc)
            return rc;
        for (size_t k = 0; k < n_parts; k++)
            retract(parts[k], stats);
        level = merged->level;
        if ((rc = publish(merged, stats)) != 0)
            return rc;
    }
    return 0;
}

/* ---- sink entry points ------------------------------------------------- */

/* Rebuild every symfile whose spans cover part of the new regions (sorted),
 * so that the new symfile's sections overlap nobody's. */
static int split_covering_symfiles(jf__live *const *sorted, size_t n, jf_sink_stats *stats)
{
    symfile **covering = malloc((n_files ? n_files : 1) * sizeof *covering);
    if (!covering)
        return jf__fail(JF_ENOMEM, "out of memory checking symfile ranges");
    size_t n_covering = 0;
    for (size_t i = 0; i < n_files; i++) {
        int covers = 0;
        for (size_t k = 0; k < n && !covers; k++)
            covers = spans_intersect(files[i], sorted[k]->start, end_of(sorted[k]));
        if (covers)
            covering[n_covering++] = files[i];
    }
    int rc = 0;
    for (size_t i = 0; i < n_covering && rc == 0; i++) {
        symfile *f = covering[i];
        jf__live **members = copy_members(f->members, f->n_members);
        rc = members ? replace(f, members, f->n_members, sorted, n, stats)
                     : jf__fail(JF_ENOMEM, "out of memory rebuilding a symfile");
    }
    free(covering);
    return rc;
}

static int add_group(jf__live *const *regions, size_t n, jf_sink_stats *stats)
{
    jf__live **sorted = copy_members(regions, n);
    if (!sorted)
        return jf__fail(JF_ENOMEM, "out of memory for a symfile");
    qsort(sorted, n, sizeof *sorted, by_start);
    int rc = split_covering_symfiles(sorted, n, stats);
    if (rc) {
        free(sorted);
        return rc;
    }
    symfile *f;
    if ((rc = symfile_build(sorted, n, NULL, 0, &f)) != 0)
        return rc;
    unsigned level = f->level;
    rc = publish(f, stats);
    if (rc == 0)
        rc = merge_levels(level, stats);
    return rc;
}

static int gdb_add(jf__live *const *regions, size_t n, jf_sink_stats *stats)
{
    for (size_t i = 0; i < n; i++) /* room for each one's note first: nothing can fail half way */
        if (!jf__live_detail_make(regions[i]))
            return JF_ENOMEM;
    for (size_t i = 0; i < n; i += MAX_GROUP) {
        int rc = add_group(regions + i, n - i < MAX_GROUP ? n - i : MAX_GROUP, stats);
        if (rc)
            return rc;
    }
    stats->regions += n;
    return 0;
}

/* The live symfile holding r (NULL: never added, the sink was failing),
 * and r's index in it. */
static symfile *find_owner(const jf__live *r, size_t *index)
{
    symfile *f = jf__live_about(r)->gdb_symfile;
    if (!f)
        return NULL;
    size_t a = 0, b = f->n_members;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (f->members[m]->start < r->start)
            a = m + 1;
        else
            b = m;
    }
    if (a == f->n_members || f->members[a] != r)
        return NULL;
    *index = a;
    return f;
}

static int remove_one(jf__live *r, jf_sink_stats *stats)
{
    size_t index;
    symfile *f = find_owner(r, &index);
    if (!f)
        return 0; /* never added (the sink was failing then) */
    size_t n = f->n_members - 1;
    jf__live **members = NULL;
    if (n > 0) {
        if (!(members = malloc(n * sizeof *members)))
            return jf__fail(JF_ENOMEM, "out of memory rebuilding a symfile");
        memcpy(members, f->members, index * sizeof *members);
        memcpy(members + index, f->members + index + 1, (n - index) * sizeof *members);
    }
    int rc = replace(f, members, n, NULL, 0, stats);
    if (rc == 0)
        r->detail->gdb_symfile = NULL; /* jf_move adds it again */
    if (rc == 0 && n > 0)
        rc = merge_levels(level_of(n), stats);
    return rc;
}

static int gdb_remove(jf__live *const *regions, size_t n, jf_sink_stats *stats)
{
    for (size_t i = 0; i < n; i++) {
        int rc = remove_one(regions[i], stats);
        if (rc)
            return rc;
    }
    return 0;
}

static int gdb_start(const char *dump_dir, jf_sink_stats *stats)
{
    (void)dump_dir;
    stats->objects = 0;
    stats->bytes = 0;
    return 0;
}

static void gdb_stop(int final, jf_sink_stats *stats)
{
    (void) final;
    while (n_files > 0)
        retract(files[n_files - 1], NULL);
    free(files);
    files = NULL;
    files_cap = 0;
    stats->objects = 0; /* "live symfiles": none once off (the unwind sink's stop says the same) */
}

/* The child inherited our symfiles and descriptor, but the registry replays
 * every region into fresh ones: forget the copies without telling anyone
 * (a debugger following the child reads the list, which is now empty). */
static void gdb_forget_after_fork(void)
{
    __jit_debug_descriptor.first_entry = NULL;
    __jit_debug_descriptor.relevant_entry = NULL;
    __jit_debug_descriptor.action_flag = JIT_NOACTION;
    for (size_t i = 0; i < n_files; i++)
        symfile_free(files[i]);
    n_files = 0;
}

const jf__sink_ops jf__gdb_sink = {
    .word = "gdb",
    .bit = JF_SINK_GDB,
    .start = gdb_start,
    .add = gdb_add,
    .remove = gdb_remove,
    .stop = gdb_stop,
    .forget_after_fork = gdb_forget_after_fork,
};
