/*
 * Sink: <dir>/jit-<pid>.dump, the file `perf inject --jit` turns into one
 * ELF object per CODE_LOAD (names, source lines, unwind tables), mapped
 * again at a new address by a CODE_MOVE (jf_move).
 *
 * Why it is written this way:
 * - Durable without a syscall per record: the file is mapped MAP_SHARED and
 *   records are copied into the mapping, so they are in the page cache (the
 *   kernel) the moment the copy is done; a SIGKILL loses nothing. The file is
 *   grown in chunks with posix_fallocate *before* new pages are touched (a
 *   full disk becomes JF_ENOSPC instead of SIGBUS) after checking
 *   RLIMIT_FSIZE ourselves (JF_EFBIG instead of SIGXFSZ).
 * - perf stops reading at a record header whose size is < 16, so the
 *   zero-filled reserved tail reads as the end. A group is published by
 *   storing its first record's size field last: until then the group reads
 *   as the end of the file, so a killed writer never leaves half a group.
 *   At shutdown the file is cut to its real length.
 * - Every CODE_LOAD carries JF_JITDUMP_NONCE_SIZE unique bytes after the real
 *   code, counted in code_size, so a perf that derives build-ids from the
 *   code bytes alone can never merge two regions with identical code. The
 *   live code and the real instructions are never touched. (Padded to 4
 *   where JITDUMP_LOAD_PAD_MAX, src/jitdump_encode.h, says so.)
 * - A marker mapping of the first page (PROT_READ|PROT_EXEC, MAP_PRIVATE) is
 *   how perf finds the file; it stays mapped for the life of the process.
 * - The file is born complete: created unnamed (O_TMPFILE), its header
 *   written, then linked under its name and only then mapped as the marker
 *   (perf takes the path from the mapping). A SIGKILL during start-up
 *   leaves either nothing or a dump with its whole header.
 *
 * The registry lock serialises every entry point, which makes each batch's
 * record group atomic with respect to other threads. The records themselves
 * are encoded by jitdump_encode.c, which tools/cli/table_jitdump.c uses too.
 */
#define _GNU_SOURCE
#include "byte_writer.h"
#include "cfi.h"
#include "error.h"
#include "jitdump_encode.h"
#include "log.h"
#include "region.h"
#include "safe_file.h"
#include "sink.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* File growth: at least MIN_GROWTH, half the current size, at most MAX_GROWTH. */
#define MIN_GROWTH ((size_t)256 * 1024)
#define MAX_GROWTH ((size_t)64 * 1024 * 1024)

/*
 * The open dump. Invariants: bytes [0, used) are the header and complete
 * records; bytes [used, reserved) are zero; the file is `reserved` bytes
 * long with its blocks allocated; map covers [0, map_len) with
 * map_len >= reserved. Guarded by the registry lock.
 */
typedef struct jitdump_file {
    int fd;
    uint8_t *map;
    size_t map_len;
    size_t used;
    size_t reserved;
    char path[4096];
} jitdump_file;

static jitdump_file dump = {.fd = -1};

/* The marker mapping, kept across stop/start for the life of the process,
 * and the identity of the file it marks (to resume it after a restart). */
static void *marker = MAP_FAILED;
static size_t marker_len;
static dev_t marker_dev;
static ino_t marker_ino;
static size_t resume_len; /* length of our file when we last closed it */

static uint64_t next_code_index = 1;

/* perf's reader keeps the last CODE_UNWINDING_INFO until a CODE_LOAD uses
 * it; a CODE_MOVE only reads its mapped_size. After a move that carried one,
 * the next load or move without its own first gets one describing nothing
 * (from no_fde_cfi, a description with no FDE), so that it never takes the
 * moved region's unwind data or mapping size. */
static int perf_keeps_move_unwind;
static struct jf_cfi *no_fde_cfi;
static uint64_t nonce_seed;
static uint32_t dump_pid; /* getpid() is a syscall: taken once per file */

/* The previous CODE_LOAD's ranges, for the overlap report. `protected_end`
 * is where perf's mapping of it may not be cut: its code end, or its whole
 * synthesized range when it carries unwind data. */
static struct {
    int valid;
    uintptr_t start;
    uintptr_t protected_end;
} prev_load;

static uint64_t overlap_count; /* read with __atomic_load_n by any thread */

/* Thread id cache: gettid is a syscall. The generation changes after fork. */
static unsigned fork_generation = 1;
static _Thread_local unsigned tid_generation;
static _Thread_local uint32_t cached_tid;

static uint32_t current_tid(void)
{
    if (tid_generation != fork_generation) {
        cached_tid = (uint32_t)syscall(SYS_gettid);
        tid_generation = fork_generation;
    }
    return cached_tid;
}

/* ------------------------------------------------------------------------ */
/* The synthesized mapping perf makes for a CODE_LOAD                         */
/* ------------------------------------------------------------------------ */

/* Size of the unwind data (eh_frame + hdr) for cfi, emitted for a load of
 * load_size bytes at code_addr; 0 with the error set on failure. */
static size_t unwind_image_size(const struct jf_cfi *cfi, uint64_t code_addr, size_t load_size,
                                jf__eh_image *img)
{
    size_t cap = jf__cfi_max_image_size(cfi);
    uint8_t stack_buf[512];
    uint8_t *buf = cap <= sizeof stack_buf ? stack_buf : malloc(cap);
    if (!buf) {
        jf__fail(JF_ENOMEM, "out of memory measuring an unwind table");
        return 0;
    }
    int rc = jf__cfi_emit(cfi, JF_EH_LAYOUT_PERF_JITDUMP, code_addr, load_size, 0, buf, cap, img);
    if (buf != stack_buf)
        free(buf);
    return rc ? 0 : img->eh_frame_size + img->hdr_size;
}

size_t jf_jitdump_footprint(size_t code_size, const jf_cfi *cfi)
{
    jf__clear_error();
    if (code_size == 0 || code_size > SIZE_MAX / 2) {
        jf__fail(JF_EINVAL, "jf_jitdump_footprint: code_size %zu out of range", code_size);
        return 0;
    }
    size_t load_size = code_size + JF_JITDUMP_NONCE_SIZE + JITDUMP_LOAD_PAD_MAX; /* at most */
    if (!cfi)
        return load_size;
    if (jf__cfi_validate(cfi, code_size) != 0)
        return 0;
    jf__eh_image img;
    size_t data = unwind_image_size(cfi, 0x10000, load_size, &img);
    return data ? jf__round_up(load_size, 8) + jf__jitdump_mapped_size(data) : 0;
}

uint64_t jf_jitdump_overlaps(void)
{
    jf__clear_error();
    return __atomic_load_n(&overlap_count, __ATOMIC_RELAXED);
}

/* Report a region whose synthesized mapping cuts into the previous one's
 * (perf would split the older mapping: the older region loses its unwind
 * data, or its first bytes get the newer name). */
static void check_overlap(const jf__live *r, uintptr_t synth_end)
{
    if (prev_load.valid && r->start < prev_load.protected_end && synth_end > prev_load.start) {
        uint64_t n = __atomic_add_fetch(&overlap_count, 1, __ATOMIC_RELAXED);
        if ((n & (n - 1)) == 0) /* 1st, 2nd, 4th...: never floods the log */
            jf__log(JF_LOG_WARNING,
                    "jitdump: %s at %p: perf's mapping [%p, %p) overlaps the previous region's "
                    "[%p, %p); leave jf_jitdump_footprint() bytes per region (%llu overlaps so far)",
                    r->name, (void *)r->start, (void *)r->start, (void *)synth_end, (void *)prev_load.start,
                    (void *)prev_load.protected_end, (unsigned long long)n);
    }
}

static void remember_load(const jf__live *r, uintptr_t synth_end, int has_unwind)
{
    prev_load.valid = 1;
    prev_load.start = r->start;
    prev_load.protected_end = has_unwind ? synth_end : r->start + r->size;
}

/* ------------------------------------------------------------------------ */
/* Growing the file and the mapping                                           */
/* ------------------------------------------------------------------------ */

/* Reserve blocks up to new_size (ftruncate back on failure: some file
 * systems extend the file before giving up). */
static int reserve_blocks(size_t new_size)
{
    int rc = jf__safe_file_check_size_limit((off_t)new_size);
    if (rc)
        return rc;
    int err = posix_fallocate(dump.fd, (off_t)dump.reserved, (off_t)(new_size - dump.reserved));
    if (err == 0)
        return 0;
    (void)!ftruncate(dump.fd, (off_t)dump.reserved);
    return jf__fail(jf__errno_code(err), "%s: cannot reserve %zu bytes: %s", dump.path, new_size,
                    strerror(err));
}

static int map_at_least(size_t len)
{
    if (len <= dump.map_len)
        return 0;
    size_t new_len = jf__round_up(len, jf__page_size());
    void *p = dump.map ? mremap(dump.map, dump.map_len, new_len, MREMAP_MAYMOVE)
                       : mmap(NULL, new_len, PROT_READ | PROT_WRITE, MAP_SHARED, dump.fd, 0);
    if (p == MAP_FAILED)
        return jf__fail(jf__errno_code(errno), "%s: cannot map %zu bytes: %s", dump.path, new_len,
                        strerror(errno));
    dump.map = p;
    dump.map_len = new_len;
    return 0;
}

/* Map the new, reserved pages [from, to) writable in one call instead of a
 * page fault per page while records are copied (a hint: older kernels
 * without MADV_POPULATE_WRITE just fault them in later). */
static void prefault(size_t from, size_t to)
{
#ifdef MADV_POPULATE_WRITE
    size_t start = from & ~(jf__page_size() - 1);
    if (to > start)
        (void)madvise(dump.map + start, to - start, MADV_POPULATE_WRITE);
#else
    (void)from;
    (void)to;
#endif
}

/* Make [used, used + need) writable: reserved on disk and mapped. Tries a
 * generous chunk first, then exactly what is needed (a nearly full disk or
 * a nearby RLIMIT_FSIZE still takes the last records that fit). */
static int ensure_room(size_t need)
{
    if (need <= dump.reserved - dump.used)
        return 0;
    if (need > SIZE_MAX / 2 - dump.used)
        return jf__fail(JF_ERANGE, "%s: record group too large", dump.path);
    size_t minimum = dump.used + need;
    size_t growth = dump.reserved / 2;
    growth = growth < MIN_GROWTH ? MIN_GROWTH : growth > MAX_GROWTH ? MAX_GROWTH : growth;
    size_t generous = jf__round_up(minimum + growth, jf__page_size());
    int rc = reserve_blocks(generous);
    size_t got = generous;
    if (rc) {
        got = minimum;
        rc = reserve_blocks(minimum);
    }
    if (rc)
        return rc;
    size_t old_reserved = dump.reserved;
    dump.reserved = got;
    rc = map_at_least(got);
    if (rc == 0)
        prefault(old_reserved, got);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Records                                                                    */
/* ------------------------------------------------------------------------ */

/* A record group being written: the writer starts at the group's first
 * byte, and that first record's size is held back here until the group is
 * complete (see publish_group). */
typedef struct group_writer {
    jf__writer w;
    uint32_t first_size;
} group_writer;

static void group_init(group_writer *g, uint8_t *at, size_t cap)
{
    jf__writer_init(&g->w, at, cap);
    g->first_size = 0;
}

/* Pad the record that started at `start` to `align` and set its size
 * (start 0: the group's first record, whose size is held back). */
static void end_record(group_writer *g, size_t start, size_t align)
{
    if (start == 0)
        g->first_size = jf__jitdump_pad_record(&g->w, 0, align);
    else
        jf__jitdump_end_record(&g->w, start, align);
}

/* Bytes after the real code in r's CODE_LOAD (counted in its code_size): the
 * nonce, and where JITDUMP_LOAD_PAD_MAX asks for it, padding to 4. */
static size_t nonce_size(const jf__live *r)
{
    if (!JITDUMP_LOAD_PAD_MAX) /* no strlen where the size is constant */
        return JF_JITDUMP_NONCE_SIZE;
    return jf__jitdump_nonce_size(strlen(r->name), r->size);
}

/* code_size of r's CODE_LOAD. */
static size_t load_size(const jf__live *r)
{
    return r->size + nonce_size(r);
}

static const char *line_file(const jf__live_detail *d, const jf_line *l)
{
    return l->file ? l->file : d->file;
}

/* Line entries the region gets: its table, or its file:line at offset 0;
 * plus the closing entry at the end of the CODE_LOAD's code (code_addr +
 * code_size, nonce included): perf ends the line sequence at the last
 * entry, which therefore covers nothing. 0 if no lines. */
static size_t debug_entry_count(const jf__live_detail *d)
{
    if (d->n_lines)
        return d->n_lines + 1;
    return d->file && d->line ? 2 : 0;
}

static size_t debug_record_bound(const jf__live *r)
{
    const jf__live_detail *d = jf__live_about(r);
    size_t n = debug_entry_count(d);
    if (!n)
        return 0;
    size_t bytes = JITDUMP_DEBUG_INFO_FIXED + n * JITDUMP_DEBUG_ENTRY_FIXED + JITDUMP_RECORD_ALIGN;
    if (!d->n_lines)
        return bytes + 2 * (strlen(d->file) + 1);
    for (size_t k = 0; k < d->n_lines; k++)
        bytes += strlen(line_file(d, &d->lines[k])) + 1;
    return bytes + strlen(line_file(d, &d->lines[d->n_lines - 1])) + 1;
}

static void write_debug_info(group_writer *g, const jf__live *r, uint64_t timestamp)
{
    jf__writer *w = &g->w;
    const jf__live_detail *d = jf__live_about(r);
    size_t n = debug_entry_count(d);
    if (!n)
        return;
    size_t start = jf__jitdump_begin_record(w, JIT_CODE_DEBUG_INFO, timestamp);
    jf__jitdump_put_debug_head(w, r->start, n);
    uint32_t last_line = d->line;
    const char *last_file = d->file;
    for (size_t k = 0; k < d->n_lines; k++) {
        last_line = d->lines[k].line;
        last_file = line_file(d, &d->lines[k]);
        jf__jitdump_put_debug_entry(w, r->start + d->lines[k].offset, last_line, last_file);
    }
    if (!d->n_lines)
        jf__jitdump_put_debug_entry(w, r->start, last_line, last_file);
    jf__jitdump_put_debug_entry(w, (uint64_t)r->start + load_size(r), last_line, last_file);
    end_record(g, start, JITDUMP_RECORD_ALIGN);
}

static size_t unwind_record_bound(const jf__live *r)
{
    const struct jf_cfi *cfi = jf__live_about(r)->cfi;
    return cfi ? JITDUMP_UNWIND_FIXED + jf__cfi_max_image_size(cfi) + JITDUMP_RECORD_ALIGN : 0;
}

/* Emit an unwinding record with cfi's image for r's load straight into the
 * output. `own`: r's own rules, which perf maps after the code (*mapped gets
 * that size); else data describing nothing, mapped_size 0. Returns 0 or the
 * emitter's error (nothing written then). */
static int put_unwinding_record(group_writer *g, const jf__live *r, const struct jf_cfi *cfi, int own,
                                uint64_t timestamp, size_t *mapped)
{
    jf__writer *w = &g->w;
    size_t start = jf__jitdump_begin_record(w, JIT_CODE_UNWINDING_INFO, timestamp);
    size_t sizes_at = w->pos;
    jf__put_zeros(w, 24);
    size_t cap = jf__cfi_max_image_size(cfi);
    uint8_t *data = jf__writer_reserve(w, cap);
    jf__eh_image img;
    int rc = data ? jf__cfi_emit(cfi, JF_EH_LAYOUT_PERF_JITDUMP, r->start, (uint64_t)load_size(r), 0, data,
                                 cap, &img)
                  : JF_ERANGE;
    if (rc) {
        if (data)
            memset(w->buf + start, 0, w->pos - start);
        w->pos = start;
        return rc;
    }
    size_t data_size = img.eh_frame_size + img.hdr_size;
    memset(data + data_size, 0, cap - data_size);
    w->pos = sizes_at + 24 + data_size;
    *mapped = own ? jf__jitdump_mapped_size(data_size) : 0;
    jf__jitdump_set_unwinding_sizes(w, sizes_at, data_size, img.hdr_size, *mapped);
    end_record(g, start, JITDUMP_RECORD_ALIGN);
    return 0;
}

/* r's own unwinding record. Returns the mapped size written (0: no record,
 * either no CFI or emission failed — then the region goes out without
 * unwind data and the failure is logged). */
static size_t write_unwinding_info(group_writer *g, const jf__live *r, uint64_t timestamp,
                                   jf_sink_stats *stats)
{
    size_t mapped = 0;
    const struct jf_cfi *cfi = jf__live_about(r)->cfi;
    if (cfi && put_unwinding_record(g, r, cfi, 1, timestamp, &mapped) != 0) {
        stats->errors++;
        jf__log(JF_LOG_WARNING, "jitdump: %s: cannot emit its unwind table (%s); written without one",
                r->name, jf_last_error());
    }
    return mapped;
}

/* Before a load or move of r written without unwind data: replace what perf
 * still keeps from a move (see perf_keeps_move_unwind). */
static void forget_move_unwind(group_writer *g, const jf__live *r, uint64_t timestamp)
{
    size_t mapped;
    if (!perf_keeps_move_unwind)
        return;
    if (no_fde_cfi && put_unwinding_record(g, r, no_fde_cfi, 0, timestamp, &mapped) == 0)
        perf_keeps_move_unwind = 0;
    else
        jf__log(JF_LOG_WARNING, "jitdump: %s: perf may give it a moved region's unwind data: %s", r->name,
                jf_last_error());
}

static size_t no_fde_record_bound(void)
{
    return no_fde_cfi ? JITDUMP_UNWIND_FIXED + jf__cfi_max_image_size(no_fde_cfi) + JITDUMP_RECORD_ALIGN : 0;
}

static size_t code_load_bound(const jf__live *r)
{
    return JITDUMP_CODE_LOAD_FIXED + strlen(r->name) + 1 + load_size(r);
}

/* CODE_LOAD: not padded — perf takes the code from the record's last
 * code_size bytes. The real code is followed by the nonce (and its padding,
 * see JITDUMP_LOAD_PAD_MAX). */
static void write_code_load(group_writer *g, jf__live *r, uint64_t timestamp, int has_unwind)
{
    uint64_t index = next_code_index++;
    /* For CODE_MOVE: the index, and whether perf's .so holds unwind data. */
    r->jitdump_note = (uintptr_t)(index << 1 | (has_unwind != 0));
    jf__jitdump_load load = {
        .pid = dump_pid,
        .tid = current_tid(),
        .addr = r->start,
        .index = index,
        .name = r->name,
        .code = (const void *)r->start,
        .size = r->size,
        .nonce_size = nonce_size(r),
        .nonce = jf__jitdump_nonce(nonce_seed, index),
    };
    end_record(g, jf__jitdump_put_code_load(&g->w, &load, timestamp), 1);
}

/*
 * Unwind data that would make perf's mapping for r cover where another live
 * region's code starts: that region's first bytes would take r's name and
 * its own mapping would be split, so it is r's unwind data that goes (r keeps
 * its name and lines). JITs that pack code downwards (LuaJIT's traces) meet
 * this on every region.
 */
static int covers_other_code(const jf__live *r, uintptr_t synth_end)
{
    return jf__live_region_starts_in(r->start + r->size, synth_end);
}

static void report_left_out_unwind(const jf__live *r, uintptr_t synth_end)
{
    uint64_t n = __atomic_add_fetch(&overlap_count, 1, __ATOMIC_RELAXED);
    if ((n & (n - 1)) == 0)
        jf__log(JF_LOG_WARNING,
                "jitdump: %s at %p: written without its unwind data, whose mapping in perf "
                "[%p, %p) would cover another region's code (%llu so far)",
                r->name, (void *)r->start, (void *)r->start, (void *)synth_end, (unsigned long long)n);
}

/* r's unwinding record, unless it would cover another region's code (see
 * above): the mapped size it adds to perf's mapping, 0 if none written. */
static size_t write_unwinding_unless_covering(group_writer *g, const jf__live *r, uint64_t timestamp,
                                              jf_sink_stats *stats)
{
    if (!jf__live_about(r)->cfi)
        return 0;
    uintptr_t code_end = r->start + jf__round_up(load_size(r), 8);
    /* Unwind data maps at least 8 more bytes: a region starting in there is
     * covered whatever the data's size, and nothing is emitted for nothing. */
    if (covers_other_code(r, code_end + 8)) {
        report_left_out_unwind(r, code_end + 8);
        return 0;
    }
    jf__writer *w = &g->w;
    size_t unwind_at = w->pos;
    size_t mapped = write_unwinding_info(g, r, timestamp, stats);
    if (mapped && covers_other_code(r, code_end + mapped)) {
        memset(w->buf + unwind_at, 0, w->pos - unwind_at);
        w->pos = unwind_at;
        report_left_out_unwind(r, code_end + mapped);
        return 0;
    }
    return mapped;
}

/* One region's records: debug info, unwinding info, then its load. */
static void write_region_group(group_writer *g, jf__live *r, uint64_t timestamp, jf_sink_stats *stats)
{
    write_debug_info(g, r, timestamp);
    size_t mapped = write_unwinding_unless_covering(g, r, timestamp, stats);
    if (!mapped)
        forget_move_unwind(g, r, timestamp);
    perf_keeps_move_unwind = 0; /* a load uses up what perf keeps */
    size_t load = load_size(r);
    uintptr_t synth_end = r->start + (mapped ? jf__round_up(load, 8) + mapped : load);
    check_overlap(r, synth_end);
    remember_load(r, synth_end, mapped != 0);
    write_code_load(g, r, timestamp, mapped != 0);
}

/*
 * Make the group at [used, used + len) visible: its first record's size is
 * stored last, in one 4-byte store, after everything else (signal fences
 * keep the compiler from moving the group's stores past it). Until then the
 * zero size reads as the end of the file, so a writer killed mid-group
 * leaves a valid file. Where JITDUMP_LOAD_PAD_MAX pads, records start 4-aligned and
 * the compiler is told so: one aligned store there too.
 */
static void publish_group(const group_writer *g)
{
    size_t len = g->w.pos;
    uint8_t size[4];
    jf__store_host_u32(size, g->first_size);
    uint8_t *size_field = dump.map + dump.used + 4;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (JITDUMP_LOAD_PAD_MAX)
        memcpy(__builtin_assume_aligned(size_field, 4), size, 4);
    else
        memcpy(size_field, size, 4); /* a constant 4-byte copy: one store */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    dump.used += len;
}

/* A record's size is a u32 and perf reads code_size as an int: a region
 * whose records would not fit (2 GiB of code, or a line table that large) is
 * left out (JF_ERANGE), never written truncated. */
static int region_fits(const jf__live *r)
{
    return r->size <= UINT32_MAX / 2 && code_load_bound(r) <= UINT32_MAX &&
           debug_record_bound(r) <= UINT32_MAX && unwind_record_bound(r) <= UINT32_MAX;
}

static size_t group_bound(jf__live *const *regions, size_t n)
{
    size_t bound = 0;
    for (size_t i = 0; i < n; i++)
        if (region_fits(regions[i]))
            bound += debug_record_bound(regions[i]) + unwind_record_bound(regions[i]) +
                     no_fde_record_bound() + code_load_bound(regions[i]);
    return bound;
}

static int jitdump_add(jf__live *const *regions, size_t n, jf_sink_stats *stats)
{
    if (dump.fd < 0)
        return jf__fail(JF_EDISABLED, "jitdump is not open");
    size_t bound = group_bound(regions, n);
    int rc = ensure_room(bound);
    if (rc)
        return rc;
    group_writer g;
    group_init(&g, dump.map + dump.used, dump.reserved - dump.used);
    uint64_t timestamp = jf__monotonic_ns();
    size_t written = 0;
    const jf__live *left_out = NULL;
    for (size_t i = 0; i < n; i++) {
        if (region_fits(regions[i])) {
            write_region_group(&g, regions[i], timestamp, stats);
            written++;
        } else {
            regions[i]->jitdump_note = 0; /* nothing to move */
            if (!left_out)
                left_out = regions[i];
        }
    }
    rc = left_out ? jf__fail(JF_ERANGE,
                             "jitdump: %s (%zu bytes) is too large for a jitdump record: "
                             "left out of the dump (%zu of this group's %zu regions)",
                             left_out->name, left_out->size, n - written, n)
                  : 0;
    if (g.w.pos == 0)
        return rc;
    if (!jf__writer_ok(&g.w)) { /* the bound covers the group */
        memset(dump.map + dump.used, 0, dump.reserved - dump.used);
        return jf__internal("jitdump: record group larger than its bound");
    }
    size_t len = g.w.pos;
    publish_group(&g);
    stats->bytes += len;
    stats->regions += written;
    return rc;
}

static int jitdump_remove(jf__live *const *regions, size_t n, jf_sink_stats *stats)
{
    (void)stats;
    /* Nothing is written: a later CODE_LOAD at the same address is
     * timestamped. A removed region no longer takes part in the overlap
     * report (its address range may be reused). */
    for (size_t i = 0; i < n; i++)
        if (prev_load.valid && regions[i]->start == prev_load.start)
            prev_load.valid = 0;
    return 0;
}

/* The code index of r's CODE_LOAD in this file, 0 if it has none (left out
 * as too large); and whether that load carried unwind data. A replay
 * (enabling, fork) gives every region a new one. */
static uint64_t code_index_of(const jf__live *r)
{
    return (uint64_t)r->jitdump_note >> 1;
}

static int loaded_with_unwind(const jf__live *r)
{
    return (int)(r->jitdump_note & 1);
}

/* CODE_MOVE: perf inject maps the .so it made for `index` at the new address. */
static void write_code_move(group_writer *g, const jf__live *r, uintptr_t old_start, uint64_t index,
                            uint64_t timestamp)
{
    /* Its size as its CODE_LOAD said. */
    size_t start = jf__jitdump_put_code_move(&g->w, dump_pid, current_tid(), old_start, r->start,
                                             (uint64_t)load_size(r), index, timestamp);
    end_record(g, start, 1);
}

/* A moved region's records: its unwinding record again when its load had
 * one (perf's CODE_MOVE maps round8(code_size) + the last unwinding record's
 * mapped_size, and its libunwind reads .eh_frame_hdr through that mapping),
 * then the CODE_MOVE. */
static void write_move_group(group_writer *g, jf__live *r, uintptr_t old_start, uint64_t timestamp,
                             jf_sink_stats *stats)
{
    size_t mapped = 0;
    if (loaded_with_unwind(r) && no_fde_cfi)
        mapped = write_unwinding_unless_covering(g, r, timestamp, stats);
    if (!mapped)
        forget_move_unwind(g, r, timestamp);
    write_code_move(g, r, old_start, code_index_of(r), timestamp);
    if (mapped)
        perf_keeps_move_unwind = 1;
}

static size_t move_bound(jf__live *const *regions, size_t n)
{
    size_t bound = 0;
    for (size_t i = 0; i < n; i++)
        bound += JITDUMP_CODE_MOVE_SIZE + unwind_record_bound(regions[i]) + no_fde_record_bound();
    return bound;
}

static int jitdump_move(jf__live *const *regions, const uintptr_t *old_starts, size_t n, jf_sink_stats *stats)
{
    if (dump.fd < 0)
        return jf__fail(JF_EDISABLED, "jitdump is not open");
    int rc = ensure_room(move_bound(regions, n));
    if (rc)
        return rc;
    group_writer g;
    group_init(&g, dump.map + dump.used, dump.reserved - dump.used);
    uint64_t timestamp = jf__monotonic_ns();
    for (size_t i = 0; i < n; i++) {
        if (code_index_of(regions[i]))
            write_move_group(&g, regions[i], old_starts[i], timestamp, stats);
        if (prev_load.valid && prev_load.start == old_starts[i])
            prev_load.valid = 0; /* as for a removal: its range may be reused */
    }
    if (g.w.pos == 0)
        return 0;
    if (!jf__writer_ok(&g.w)) {
        memset(dump.map + dump.used, 0, dump.reserved - dump.used);
        return jf__internal("jitdump: move group larger than its bound");
    }
    size_t len = g.w.pos;
    publish_group(&g);
    stats->bytes += len;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Opening, resuming and closing the file                                     */
/* ------------------------------------------------------------------------ */

static void write_file_header(void)
{
    jf__writer w;
    jf__writer_init(&w, dump.map, JITDUMP_HEADER_SIZE);
    jf__jitdump_put_file_header(&w, dump_pid, jf__monotonic_ns());
    dump.used = JITDUMP_HEADER_SIZE;
}

/* Map the first page executable: the MMAP event perf records for it is how
 * `perf inject` finds the dump. A noexec mount refuses it. */
static int map_marker(const struct stat *st)
{
    size_t len = jf__page_size();
    void *p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, dump.fd, 0);
    if (p == MAP_FAILED)
        return jf__fail(jf__errno_code(errno),
                        "%s: cannot map it PROT_EXEC for perf to find (is the directory on a "
                        "noexec mount? set JITFRAMES_DIR elsewhere): %s",
                        dump.path, strerror(errno));
    if (marker != MAP_FAILED)
        munmap(marker, marker_len);
    marker = p;
    marker_len = len;
    marker_dev = st->st_dev;
    marker_ino = st->st_ino;
    return 0;
}

/* State that starts afresh with each new file. */
static void reset_file_state(void)
{
    perf_keeps_move_unwind = 0;
    nonce_seed = jf__jitdump_nonce_seed();
    prev_load.valid = 0;
}

static int begin_file(const struct stat *st)
{
    int rc = ensure_room(JITDUMP_HEADER_SIZE);
    if (rc == 0)
        rc = map_marker(st);
    if (rc)
        return rc;
    write_file_header();
    reset_file_state();
    return 0;
}

/* Our own file, left by an earlier stop in this process: append to it. */
static int resume_file(const struct stat *st)
{
    int ours = marker != MAP_FAILED && st->st_dev == marker_dev && st->st_ino == marker_ino &&
               resume_len >= JITDUMP_HEADER_SIZE && (size_t)st->st_size == resume_len;
    if (!ours)
        return jf__fail(JF_EUNSAFE,
                        "%s is being written by another jitdump writer in this process; refusing "
                        "to mix records into it (use another directory: JITFRAMES_DIR)",
                        dump.path);
    dump.reserved = dump.used = resume_len;
    return map_at_least(dump.reserved);
}

static void close_file(void)
{
    if (dump.map)
        munmap(dump.map, dump.map_len);
    if (dump.fd >= 0)
        close(dump.fd);
    dump.map = NULL;
    dump.map_len = dump.used = dump.reserved = 0;
    dump.fd = -1;
}

/* Replace dump.fd by a descriptor opened through dump.path, checked to be
 * the same file (no one else can rename ours away in a sticky /tmp, but
 * an unprivileged directory owner could). */
static int reopen_by_name(struct stat *st)
{
    struct stat unnamed;
    int fd = open(dump.path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return jf__fail(jf__errno_code(errno), "%s: cannot open it again: %s", dump.path, strerror(errno));
    if (fstat(fd, st) != 0 || fstat(dump.fd, &unnamed) != 0 || st->st_dev != unnamed.st_dev ||
        st->st_ino != unnamed.st_ino) {
        close(fd);
        return jf__fail(JF_EUNSAFE, "%s was replaced while it was being created", dump.path);
    }
    close(dump.fd);
    dump.fd = fd;
    return 0;
}

/* A failure to create the file, with where the directory comes from, so
 * that it can be changed. */
static int say_where_dumps_go(int code)
{
    return jf__fail(code, "%s (jitdumps go to $JITFRAMES_DIR or jf_config.dump_dir, default /tmp)",
                    jf_last_error());
}

/* Our new file with its header written before it gets its name, so that
 * no reader, `jitframes clean` included, ever sees a dump without one (a
 * SIGKILL before the link leaves nothing). 1: a file of this process is at
 * the name already (resume it); JF_ENOTSUP: no unnamed files here. */
static int start_complete_file(const char *dir, const char *name)
{
    int fd = jf__safe_file_create_unnamed(dir, name);
    if (fd < 0)
        return fd == JF_ENOTSUP ? fd : say_where_dumps_go(fd);
    dump.fd = fd;
    int rc = ensure_room(JITDUMP_HEADER_SIZE);
    if (rc == 0) {
        write_file_header();
        rc = jf__safe_file_link(fd, dir, name);
    }
    /* Mapped through its name: perf records the mapping's path, and an
     * unnamed file's descriptor keeps the unnamed path. */
    struct stat st;
    if (rc == 0)
        rc = reopen_by_name(&st);
    int named = rc == 0; /* the name is ours, checked */
    if (rc == 0)
        rc = map_marker(&st);
    if (rc) {
        close_file();
        if (named)
            unlink(dump.path); /* ours, just linked, and useless without a marker */
        return rc;
    }
    reset_file_state();
    return 0;
}

/* Where unnamed files cannot be made, or to resume our own file: open it
 * by name (a SIGKILL may then leave a file without a header behind, which
 * `jitframes clean` recognises as litter). */
static int start_named_file(const char *dir, const char *name)
{
    int reused;
    int fd = jf__safe_file_open(dir, name, O_RDWR, &reused);
    if (fd < 0)
        return say_where_dumps_go(fd);
    dump.fd = fd;
    struct stat st;
    int rc = fstat(fd, &st) == 0
                 ? 0
                 : jf__fail(jf__errno_code(errno), "%s: fstat: %s", dump.path, strerror(errno));
    if (rc == 0)
        rc = reused ? resume_file(&st) : begin_file(&st);
    if (rc) {
        close_file();
        if (!reused)
            unlink(dump.path); /* ours, just created, and useless without a marker */
    }
    return rc;
}

static int jitdump_start(const char *dir, jf_sink_stats *stats)
{
    (void)stats;
    if (dump.fd >= 0)
        return 0;
    dump_pid = (uint32_t)getpid();
    if (JF_HOST_ELF_MACHINE == 0)
        return jf__fail(JF_ENOTSUP, "jitdump: unknown ELF machine for this architecture");
    if (!no_fde_cfi && jf_cfi_new(&no_fde_cfi) != 0)
        no_fde_cfi = NULL; /* then moves carry no unwind data (see write_move_group) */
    char name[64];
    snprintf(name, sizeof name, "jit-%ld.dump", (long)getpid());
    if (snprintf(dump.path, sizeof dump.path, "%s/%s", dir, name) >= (int)sizeof dump.path)
        return jf__fail(JF_EINVAL, "jitdump directory path too long: %s", dir);
    /* A file we stopped writing earlier is resumed, not replaced. */
    int rc = marker == MAP_FAILED ? start_complete_file(dir, name) : 1;
    if (rc == 1 || rc == JF_ENOTSUP)
        rc = start_named_file(dir, name);
    return rc;
}

static void write_code_close(void)
{
    if (ensure_room(JITDUMP_RECORD_HEADER_SIZE) != 0) {
        jf__log(JF_LOG_WARNING, "jitdump: no room for CODE_CLOSE: %s", jf_last_error());
        return;
    }
    group_writer g;
    group_init(&g, dump.map + dump.used, JITDUMP_RECORD_HEADER_SIZE);
    end_record(&g, jf__jitdump_begin_record(&g.w, JIT_CODE_CLOSE, jf__monotonic_ns()), 1);
    publish_group(&g);
}

/* Cut the reserved zero tail off (perf would read it as the end anyway,
 * but other readers and `ls -l` should see the real size). The marker
 * mapping stays: the code described may still run. */
static void jitdump_stop(int final, jf_sink_stats *stats)
{
    (void)stats;
    if (dump.fd < 0)
        return;
    if (final) {
        write_code_close();
        jf__cfi_free(no_fde_cfi);
        no_fde_cfi = NULL;
    }
    if (dump.map)
        munmap(dump.map, dump.map_len);
    dump.map = NULL;
    if (ftruncate(dump.fd, (off_t)dump.used) != 0)
        jf__log(JF_LOG_WARNING, "jitdump: cannot trim %s to %zu bytes: %s", dump.path, dump.used,
                strerror(errno));
    resume_len = dump.used;
    close_file();
}

/* In the child after fork: the parent's file and marker are not ours. Drop
 * them without writing a byte; start() then opens jit-<child pid>.dump. */
static void jitdump_forget_after_fork(void)
{
    close_file();
    if (marker != MAP_FAILED)
        munmap(marker, marker_len);
    marker = MAP_FAILED;
    resume_len = 0;
    prev_load.valid = 0;
    perf_keeps_move_unwind = 0;
    fork_generation++;
}

const jf__sink_ops jf__jitdump_sink = {
    .word = "jitdump",
    .bit = JF_SINK_JITDUMP,
    .start = jitdump_start,
    .add = jitdump_add,
    .remove = jitdump_remove,
    .move = jitdump_move,
    .stop = jitdump_stop,
    .forget_after_fork = jitdump_forget_after_fork,
};
