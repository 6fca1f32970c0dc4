/*
 * Reading a published region table (table_reader.h). One read of the table
 * copies the header, the live slots, the removed ring and the strings, then
 * the slots and the header again: a slot is kept only if both copies are
 * identical with an even sequence number (no write began or ended between),
 * and its strings were read between the two. The read is consistent as a
 * whole when the header's generation did not move; otherwise it is retried,
 * a bounded number of times. Slots are in no order (the writer never moves
 * an entry): the live regions are sorted here. A region's unwind
 * description is rebuilt with the library's own checks and emitter
 * (src/cfi.c), giving the bytes the jitdump sink would have written.
 */
#define _GNU_SOURCE
#include "table_reader.h"

#include "cfi.h"
#include "pub_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static int fail(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* [off, off + len) lies in [0, size) without overflow. */
static int within(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

/* The header's promises, checked against the mapping's size and the limits. */
static int check_header(const pub_header *h, uint64_t map_size, const tr_limits *lim, char *err,
                        size_t cap)
{
    if (memcmp(h->signature, JF_PUB_SIGNATURE, sizeof h->signature) != 0)
        return fail(err, cap, "no table signature (not published yet, or not a jitframes table)");
    if (h->version != JF_PUB_VERSION)
        return fail(err, cap, "table version %u (this reader knows %d)", h->version, JF_PUB_VERSION);
    if (h->entry_size != sizeof(pub_entry) || h->header_size < sizeof(pub_header))
        return fail(err, cap, "table entry size %u or header size %u is not version %d's", h->entry_size,
                    h->header_size, JF_PUB_VERSION);
    if (!within(h->entries_off, (uint64_t)h->entries_capacity * sizeof(pub_entry), map_size) ||
        !within(h->ring_off, (uint64_t)h->ring_capacity * sizeof(pub_entry), map_size) ||
        !within(h->heap_off, h->heap_capacity, map_size) || h->entries_off < h->header_size)
        return fail(err, cap, "table areas lie outside its %llu-byte mapping", (unsigned long long)map_size);
    if (h->entries_used > h->entries_capacity || h->heap_used > h->heap_capacity)
        return fail(err, cap, "table counts exceed its capacities");
    if (h->entries_used > lim->max_entries || h->ring_capacity > lim->max_ring || h->heap_used > lim->max_heap)
        return fail(err, cap, "table too big for the reader's limits (%u slots, %u ring, %u string bytes)",
                    h->entries_used, h->ring_capacity, h->heap_used);
    return 0;
}

/* One copy of everything a read needs. */
typedef struct raw_read {
    pub_header h, h2;
    pub_entry *slots, *slots2, *ring, *ring2;
    char *heap;
} raw_read;

static void raw_free(raw_read *r)
{
    free(r->slots);
    free(r->slots2);
    free(r->ring);
    free(r->ring2);
    free(r->heap);
    memset(r, 0, sizeof *r);
}

static int read_area(tr_read_fn read, void *ctx, uint64_t addr, size_t len, void **out)
{
    *out = malloc(len ? len : 1);
    if (!*out)
        return -1;
    return len ? read(ctx, addr, *out, len) : 0;
}

/* Ring slots holding removals: all once it has wrapped, else the first
 * ring_written (a young process's read stays small, and quick enough to
 * fit between two changes). */
static uint32_t ring_used(const pub_header *h)
{
    return h->ring_written < h->ring_capacity ? (uint32_t)h->ring_written : h->ring_capacity;
}

static int read_raw(tr_read_fn read, void *ctx, uint64_t base, const pub_header *h, raw_read *r)
{
    size_t slots = (size_t)h->entries_used * sizeof(pub_entry);
    size_t ring = (size_t)ring_used(h) * sizeof(pub_entry);
    r->h = *h;
    if (read_area(read, ctx, base + h->entries_off, slots, (void **)&r->slots) ||
        read_area(read, ctx, base + h->ring_off, ring, (void **)&r->ring) ||
        read_area(read, ctx, base + h->heap_off, h->heap_used, (void **)&r->heap) ||
        read_area(read, ctx, base + h->entries_off, slots, (void **)&r->slots2) ||
        read_area(read, ctx, base + h->ring_off, ring, (void **)&r->ring2) ||
        read(ctx, base, &r->h2, sizeof r->h2))
        return -1;
    return 0;
}

/* A copy of a string of the heap, cut to max and with control characters
 * replaced (a name must never forge a line of a perf map); NULL if it lies
 * outside what was read. */
static char *copy_string(const raw_read *r, uint32_t off, uint32_t len, uint32_t max)
{
    if (!within(off, len, r->h.heap_used))
        return NULL;
    size_t n = len < max ? len : max;
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)r->heap[off + i];
        s[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    s[n] = '\0';
    return s;
}

static void free_region(tr_region *r)
{
    free(r->unwind);
    free(r->name);
    free(r->file);
    for (size_t k = 0; k < r->n_lines; k++)
        free(r->lines[k].file);
    free(r->lines);
}

/* The line table of entry a, checked line by line against the bytes read;
 * an unsound one is left out (the region keeps its name). */
static void copy_lines(const raw_read *r, const pub_entry *a, const tr_limits *lim, tr_region *out)
{
    uint32_t len = a->lines_len, n;
    if (!len || !within(a->lines_off, len, r->h.heap_used) || len < sizeof(pub_lines))
        return;
    const char *blob = r->heap + a->lines_off;
    memcpy(&n, blob, sizeof n);
    if (n == 0 || n > (len - sizeof(pub_lines)) / sizeof(pub_line) || !(out->lines = calloc(n, sizeof(tr_line))))
        return;
    for (uint32_t k = 0; k < n; k++) {
        pub_line l;
        memcpy(&l, blob + sizeof(pub_lines) + (size_t)k * sizeof l, sizeof l);
        if (l.file_len && (l.file_off > len || l.file_len > len - l.file_off))
            break; /* outside its own table */
        out->lines[k].offset = l.offset;
        out->lines[k].line = l.line;
        out->n_lines = k + 1;
        if (l.file_len &&
            !(out->lines[k].file = copy_string(r, a->lines_off + l.file_off, l.file_len, lim->max_string)))
            break;
        if (k + 1 == n)
            return;
    }
    for (size_t k = 0; k < out->n_lines; k++) /* an unsound table: none at all */
        free(out->lines[k].file);
    free(out->lines);
    out->lines = NULL;
    out->n_lines = 0;
}

enum { CFI_READ_MAX = 1u << 20, FDES_MAX = 1u << 16 };

/* The unwinding data of a jitdump CODE_UNWINDING_INFO for entry a, from
 * its unwind description: checked by the library's reader of that form,
 * emitted by the library's emitter for a load of the region's size. Left
 * out (NULL) when unsound. */
static void copy_unwind(const raw_read *r, const pub_entry *a, tr_region *out)
{
    if (!a->cfi_len || a->cfi_len > CFI_READ_MAX || !within(a->cfi_off, a->cfi_len, r->h.heap_used))
        return;
    struct jf_cfi *cfi = jf__cfi_deserialize((const uint8_t *)r->heap + a->cfi_off, a->cfi_len, FDES_MAX);
    size_t cap = cfi ? jf__cfi_max_image_size(cfi) : 0;
    uint8_t *buf = cap ? malloc(cap) : NULL;
    jf_eh_image img;
    if (buf && jf__cfi_emit(cfi, JF_EH_LAYOUT_PERF_JITDUMP, a->start, a->size, 0, buf, cap, &img) == 0 &&
        img.eh_frame_size + img.hdr_size <= UINT32_MAX) {
        out->unwind = buf;
        out->unwind_len = (uint32_t)(img.eh_frame_size + img.hdr_size);
        out->unwind_hdr_len = (uint32_t)img.hdr_size;
    } else {
        free(buf);
    }
    jf__cfi_free(cfi);
}

/* Turn slot i (copies a and b) into a region if it is stable, of the wanted
 * kind and sound. 1 kept, 0 skipped, -1 out of memory. */
static int take_entry(const raw_read *r, const pub_entry *a, const pub_entry *b, uint32_t kind,
                      const tr_limits *lim, tr_region *out, size_t *torn)
{
    if ((a->seq & 1) || memcmp(a, b, sizeof *a) != 0) {
        *torn += a->flags != JF_PUB_EMPTY || b->flags != JF_PUB_EMPTY;
        return 0;
    }
    if (a->flags != kind || a->size == 0 || a->start + a->size < a->start)
        return 0;
    memset(out, 0, sizeof *out);
    out->start = a->start;
    out->size = a->size;
    out->line = a->line;
    out->removed_ns = a->removed_ns;
    out->published_ns = a->published_ns;
    out->published_gen = a->published_gen;
    out->removed_gen = kind == JF_PUB_REMOVED ? a->removed_gen : 0;
    out->name = copy_string(r, a->name_off, a->name_len, lim->max_string);
    if (a->file_len)
        out->file = copy_string(r, a->file_off, a->file_len, lim->max_string);
    if (!out->name || (a->file_len && !out->file)) {
        free_region(out);
        return 0;
    }
    copy_lines(r, a, lim, out);
    copy_unwind(r, a, out);
    return 1;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

/* By start, the newest publication first among equal starts. */
static int by_start(const void *x, const void *y)
{
    const tr_region *a = x, *b = y;
    int c = cmp_u64(a->start, b->start);
    return c ? c : cmp_u64(b->published_gen, a->published_gen);
}

static int by_removed(const void *x, const void *y)
{
    const tr_region *a = x, *b = y;
    int c = cmp_u64(a->removed_gen, b->removed_gen);
    return c ? c : cmp_u64(a->removed_ns, b->removed_ns);
}

static void free_regions(tr_region *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free_region(&v[i]);
    free(v);
}

/* A region read in an inconsistent snapshot (removed from one slot,
 * registered again in another while the slots were read) can appear twice:
 * the newest publication is kept. */
static size_t drop_duplicates(tr_region *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k > 0 && v[k - 1].start == v[i].start) {
            free_region(&v[i]);
            continue;
        }
        v[k++] = v[i];
    }
    return k;
}

static int collect(const raw_read *r, const pub_entry *a, const pub_entry *b, size_t n, uint32_t kind,
                   const tr_limits *lim, tr_region **out, size_t *n_out, size_t *torn)
{
    tr_region *v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += take_entry(r, &a[i], &b[i], kind, lim, &v[k], torn) == 1;
    qsort(v, k, sizeof *v, kind == JF_PUB_LIVE ? by_start : by_removed);
    if (kind == JF_PUB_LIVE)
        k = drop_duplicates(v, k);
    *out = v;
    *n_out = k;
    return 0;
}

static int build_snapshot(const raw_read *r, const tr_limits *lim, tr_snapshot *s)
{
    memset(s, 0, sizeof *s);
    s->pid = r->h.pid;
    s->flags = r->h.flags;
    s->dropped = r->h.dropped;
    s->generation = r->h.generation;
    s->consistent = !(r->h.generation & 1) && r->h.generation == r->h2.generation;
    if (collect(r, r->slots, r->slots2, r->h.entries_used, JF_PUB_LIVE, lim, &s->live, &s->n_live, &s->torn) ||
        collect(r, r->ring, r->ring2, ring_used(&r->h), JF_PUB_REMOVED, lim, &s->removed, &s->n_removed,
                &s->torn)) {
        tr_snapshot_free(s);
        return -1;
    }
    return 0;
}

int tr_read_table(tr_read_fn read, void *ctx, uint64_t base, uint64_t map_size, const tr_limits *limits,
                  tr_snapshot *out, char *err, size_t err_cap)
{
    const tr_limits lim = limits ? *limits : (tr_limits)TR_LIMITS_DEFAULT;
    double deadline = now_seconds() + lim.seconds;
    memset(out, 0, sizeof *out);
    int have = 0;
    unsigned attempt = 0;
    while (attempt < (lim.max_attempts ? lim.max_attempts : 1) && now_seconds() < deadline) {
        attempt++;
        pub_header h;
        int bad = map_size < sizeof h || read(ctx, base, &h, sizeof h) != 0
                      ? fail(err, err_cap, "cannot read the table header at 0x%llx", (unsigned long long)base)
                      : check_header(&h, map_size, &lim, err, err_cap);
        if (bad) { /* the header changed under us into one that breaks the rules */
            if (have)
                tr_snapshot_free(out);
            return -1;
        }
        raw_read r = {0};
        int rc = read_raw(read, ctx, base, &h, &r);
        if (rc == 0) {
            if (have)
                tr_snapshot_free(out);
            rc = build_snapshot(&r, &lim, out);
            have = rc == 0;
        }
        raw_free(&r);
        if (rc != 0 && !have)
            continue; /* the table moved under us: a slot area shrank or was unmapped */
        if (have && out->consistent)
            break;
    }
    if (!have)
        return fail(err, err_cap, "no readable table after %u attempts", attempt);
    out->attempts = attempt;
    return 0;
}

void tr_snapshot_free(tr_snapshot *s)
{
    free_regions(s->live, s->n_live);
    free_regions(s->removed, s->n_removed);
    memset(s, 0, sizeof *s);
}

size_t tr_live_at_or_before(const tr_snapshot *s, uint64_t pc)
{
    size_t lo = 0, hi = s->n_live;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->live[mid].start <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const tr_region *tr_lookup(const tr_snapshot *s, uint64_t pc)
{
    size_t lo = tr_live_at_or_before(s, pc);
    if (lo > 0 && pc - s->live[lo - 1].start < s->live[lo - 1].size)
        return &s->live[lo - 1];
    for (size_t i = s->n_removed; i > 0; i--)
        if (pc >= s->removed[i - 1].start && pc - s->removed[i - 1].start < s->removed[i - 1].size)
            return &s->removed[i - 1];
    return NULL;
}

/* ---- A live process ------------------------------------------------------ */

int tr_read_process(void *ctx, uint64_t addr, void *buf, size_t len)
{
    pid_t pid = *(pid_t *)ctx;
    struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
    ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got == (ssize_t)len)
        return 0;
    if (got >= 0 || (errno != ENOSYS && errno != EPERM))
        return -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/mem", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    got = pread(fd, buf, len, (off_t)addr);
    close(fd);
    return got == (ssize_t)len ? 0 : -1;
}

/* The mapping's name as /proc/PID/maps shows it: a memfd, or an anonymous
 * mapping named with PR_SET_VMA_ANON_NAME. */
static int is_table_mapping(const char *line)
{
    return strstr(line, " /memfd:" JF_PUB_NAME " (deleted)\n") != NULL ||
           strstr(line, " [anon:" JF_PUB_NAME "]\n") != NULL;
}

/* A writable private mapping with no name: where the table is when the
 * library had no memfd and the kernel cannot name anonymous mappings. */
static int is_unnamed_anonymous(const char *line)
{
    char perms[8];
    unsigned long long off;
    unsigned major, minor;
    unsigned long inode;
    int end = 0;
    if (sscanf(line, "%*x-%*x %7s %llx %x:%x %lu %n", perms, &off, &major, &minor, &inode, &end) < 5 || !end)
        return 0;
    return perms[0] == 'r' && perms[1] == 'w' && inode == 0 && major == 0 && minor == 0 &&
           (line[end] == '\n' || line[end] == '\0');
}

/* An unnamed mapping is the table if it starts with a published header
 * that names this process and this mapping's size (signature written last). */
static int holds_table(pid_t pid, uint64_t lo, uint64_t hi)
{
    pub_header h;
    return hi - lo >= sizeof h && tr_read_process(&pid, lo, &h, sizeof h) == 0 &&
           memcmp(h.signature, JF_PUB_SIGNATURE, sizeof h.signature) == 0 && h.pid == (uint32_t)pid &&
           h.map_size == hi - lo;
}

enum { MAPS_LINES_MAX = 4000000, UNNAMED_PROBES_MAX = 4096 };

/* Scan /proc/PID/maps once: the named mapping, else (probing at most
 * UNNAMED_PROBES_MAX unnamed anonymous ones) one holding the table. */
static int scan_maps(FILE *f, pid_t pid, uint64_t *base, uint64_t *size)
{
    char line[512];
    int found = 0, probes = 0;
    /* Lines are bounded by the kernel (a path is at most PATH_MAX), the
     * count by this cap; a longer line is read in pieces and never matches
     * a piece that does not start a line. */
    int at_line_start = 1;
    for (long n = 0; n < MAPS_LINES_MAX && found < 2 && fgets(line, sizeof line, f); n++) {
        int starts = at_line_start;
        at_line_start = strchr(line, '\n') != NULL;
        unsigned long long lo, hi;
        if (!starts || sscanf(line, "%llx-%llx", &lo, &hi) != 2 || hi <= lo)
            continue;
        int named = is_table_mapping(line);
        if (named || (!found && probes < UNNAMED_PROBES_MAX && is_unnamed_anonymous(line) &&
                      (probes++, holds_table(pid, lo, hi)))) {
            *base = lo;
            *size = hi - lo;
            found = named ? 2 : 1;
        }
    }
    return found;
}

int tr_find_table(pid_t pid, uint64_t *base, uint64_t *size, char *err, size_t err_cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/maps", (long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return fail(err, err_cap, "%s: %s", path, strerror(errno));
    int found = scan_maps(f, pid, base, size);
    fclose(f);
    if (!found)
        return fail(err, err_cap,
                    "process %ld has no published region table (no jitframes in it, a jitframes "
                    "without the table, jf_init not called, or its memory is not readable by you)",
                    (long)pid);
    return 0;
}

int tr_read_pid(pid_t pid, const tr_limits *limits, tr_snapshot *out, char *err, size_t err_cap)
{
    uint64_t base = 0, size = 0, last_base = 0;
    for (int attempt = 0; attempt < 4; attempt++) {
        if (tr_find_table(pid, &base, &size, err, err_cap) != 0)
            return -1;
        if (attempt > 0 && base == last_base)
            return -1; /* the same mapping failed again: not a move */
        if (tr_read_table(tr_read_process, &pid, base, size, limits, out, err, err_cap) == 0)
            return 0;
        last_base = base;
    }
    return -1;
}
