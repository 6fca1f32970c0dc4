/*
 * A hostile process for the readers of the published table: it calls
 * jf_init (so it has a table), registers one real function it keeps
 * running, then rewrites its own table over and over with lies — entry
 * counts far beyond the mapping, sizes of 2^40 bytes, names and files with
 * "../" that claim thousands of bytes, offsets past the heap, a generation
 * left odd (always "changing"), a ring of huge capacity with removals in the
 * future, and every pass new names (so a reader that keeps what it sees
 * meets new regions all the time). The lies fill its table's first 2 MiB.
 * It is honest until a line arrives on stdin, then lies until end of file.
 * Usage: table_liar      prints "pid <pid>" once ready.
 *
 * table_liar SHAPE COUNT writes one table of COUNT entries that share heap
 * bytes (what a reader must decode once, not COUNT times), prints
 * "pid <pid>" and waits for end of file on stdin. SHAPE: lines (a 1 MiB
 * line table whose lines all name one 8 KiB file), names (one 8 KiB name),
 * cfi (a 1 MiB unwind description: one FDE of nops), cfi-sizes (the same
 * with a different region size per entry: distinct unwind data, over any
 * sane budget), cfi-late (a 1 MiB description whose last FDE is unsound),
 * hostile-names (COUNT ignored: names and files with terminal escapes, C1
 * controls, U+202E, invalid UTF-8, newlines; and a table that claims to be
 * process 1's).
 */
#define _GNU_SOURCE
#include "jitframes.h"
#include "pub_layout.h"

#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(__x86_64__)
int main(void)
{
    fprintf(stderr, "table_liar: x86_64 only\n");
    return 77;
}
#else

/* uint64_t spin(uint64_t n) */
static const unsigned char spin_code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8, 0x48,
                                          0x83, 0xe8, 0x01, 0x75, 0xfa, 0x5d, 0xc3};

/* The table, where the library says it is (a grown one is an anonymous
 * mapping, unnamed on kernels that cannot name one). */
static jf__pub_header *find_table(size_t *size)
{
    const void *addr;
    if (jf_published_table(&addr, size) != 0)
        return NULL;
    return (jf__pub_header *)addr;
}

/* Register never-run regions until the table has `need` bytes (the first
 * table holds 16,384 slots: a bigger shape needs a grown one). */
static jf__pub_header *table_of_at_least(size_t need, size_t *size)
{
    jf__pub_header *h = find_table(size);
    uintptr_t at = (uintptr_t)1 << 40; /* never touched */
    char name[32];
    for (uint32_t i = 0; h && *size < need && i < (1u << 21); i++) {
        snprintf(name, sizeof name, "liar_bulk_%u", i);
        jf_region r = JF_REGION_INIT;
        r.addr = (const void *)(at + (uintptr_t)i * 16);
        r.size = 16;
        r.name = name;
        if (jf_register(&r) != 0)
            return NULL;
        h = find_table(size);
    }
    return h;
}

/* 1: a line arrived, -1: end of file, 0: nothing yet. */
static int stdin_state(void)
{
    struct pollfd p = {0, POLLIN, 0};
    char buf[64];
    if (poll(&p, 1, 0) != 1)
        return 0;
    return read(0, buf, sizeof buf) > 0 ? 1 : -1;
}

/* One pass of lies, pass number k, in a table of size bytes. */
static void lie(jf__pub_header *h, size_t size, unsigned long k, uintptr_t code)
{
    uint8_t *base = (uint8_t *)h;
    if (size > (2u << 20))
        size = 2u << 20;
    size_t heap_off = size / 2, heap_cap = size - heap_off;
    char *heap = (char *)base + heap_off;
    snprintf(heap, heap_cap, "../../../../../../tmp/jf-liar-pwned-%lu/x", k);
    size_t name_len = strlen(heap);
    snprintf(heap + 256, heap_cap - 256, "../../../../etc/jf-liar-file-%lu", k);
    h->heap_off = heap_off;
    h->heap_capacity = (uint32_t)heap_cap;
    h->heap_used = k % 3 ? 0xffffffffu : (uint32_t)heap_cap;
    h->entries_off = sizeof *h;
    size_t fit = (heap_off - sizeof *h) / sizeof(jf__pub_entry);
    h->entries_capacity = k % 2 ? 0xffffffffu : (uint32_t)fit;
    h->entries_used = k % 2 ? 0xfffffff0u : (uint32_t)fit / 2;
    h->live_count = 0xffffffffu;
    h->ring_off = (uint32_t)(sizeof *h + fit / 2 * sizeof(jf__pub_entry));
    h->ring_capacity = k % 4 == 1 ? 0xffffffffu : (uint32_t)(fit / 2);
    h->ring_written = UINT64_MAX - k;
    jf__pub_entry *e = (jf__pub_entry *)(base + sizeof *h);
    for (size_t i = 0; i < fit; i++) {
        jf__pub_entry x = {0};
        x.flags = i < fit / 2 ? JF_PUB_LIVE : JF_PUB_REMOVED;
        x.start = code + (i % 16);
        x.size = i % 3 == 0 ? (uint64_t)1 << 40 : i % 3 == 1 ? sizeof spin_code : UINT64_MAX - code;
        x.name_off = 0;
        x.name_len = i % 5 == 0 ? 0xfffffff0u : (uint32_t)name_len;
        x.file_off = 256;
        x.file_len = i % 7 == 0 ? 0x7fffffffu : 40;
        x.line = (uint32_t)k;
        x.lines_len = i % 2 ? 0xffffff00u : 0;
        x.lines_off = (uint32_t)heap_cap - 4;
        x.cfi_len = i % 4 == 3 ? 0xfffffff0u : 0;
        x.cfi_off = 8;
        x.published_gen = k;
        x.published_ns = UINT64_MAX - i;
        x.removed_ns = UINT64_MAX - k;
        e[i] = x;
    }
    h->generation = k % 8 == 7 ? 2 * k + 1 : 2 * k; /* odd: "being changed" */
}

/* ---- Shapes: static tables of shared heap bytes ---- */

enum { MIB = 1 << 20, LONG_STRING = 8192 };

typedef struct heap_writer {
    char *heap;
    size_t used, cap;
} heap_writer;

/* Append n bytes; their offset, or exit when the table has no room. */
static uint32_t heap_put(heap_writer *w, const void *bytes, size_t n)
{
    if (n > w->cap - w->used) {
        fprintf(stderr, "table_liar: the table has no room for %zu heap bytes\n", n);
        exit(1);
    }
    memcpy(w->heap + w->used, bytes, n);
    w->used += n;
    return (uint32_t)(w->used - n);
}

static uint32_t heap_long_string(heap_writer *w, char c)
{
    static char s[LONG_STRING + 1];
    memset(s, c, LONG_STRING);
    return heap_put(w, s, LONG_STRING + 1);
}

/* ~1 MiB line table: every line names the file at its end. */
static uint32_t heap_line_table(heap_writer *w, uint32_t *len)
{
    uint32_t n = (MIB - LONG_STRING - 1 - (uint32_t)sizeof(jf__pub_lines)) / (uint32_t)sizeof(jf__pub_line);
    size_t bytes = sizeof(jf__pub_lines) + (size_t)n * sizeof(jf__pub_line) + LONG_STRING + 1;
    char *t = calloc(1, bytes);
    memcpy(t, &n, sizeof n);
    uint32_t file_off = (uint32_t)(bytes - LONG_STRING - 1);
    for (uint32_t k = 0; k < n; k++) {
        jf__pub_line l = {k, k + 1, file_off, LONG_STRING};
        memcpy(t + sizeof(jf__pub_lines) + (size_t)k * sizeof l, &l, sizeof l);
    }
    memset(t + file_off, 'f', LONG_STRING);
    uint32_t off = heap_put(w, t, bytes);
    free(t);
    *len = (uint32_t)bytes;
    return off;
}

/* ~1 MiB unwind description: FDE [0, 16) of nops; late: then an unsorted one. */
static uint32_t heap_cfi(heap_writer *w, int late, uint32_t *len)
{
    uint32_t ops = MIB - 64;
    size_t bytes = sizeof(jf__pub_cfi) + 3 + sizeof(jf__pub_fde) + ops + (late ? sizeof(jf__pub_fde) : 0);
    uint8_t *c = calloc(1, bytes);
    jf__pub_cfi h = {1, -8, 16, 3, late ? 2u : 1u};
    memcpy(c, &h, sizeof h);
    memcpy(c + sizeof h, "\x0c\x07\x08", 3); /* DW_CFA_def_cfa rsp+8 */
    jf__pub_fde f = {0, 16, ops};
    memcpy(c + sizeof h + 3, &f, sizeof f); /* then ops nops (zeros) */
    jf__pub_fde bad = {4, 8, 0};
    if (late)
        memcpy(c + bytes - sizeof bad, &bad, sizeof bad);
    uint32_t off = heap_put(w, c, bytes);
    free(c);
    *len = (uint32_t)bytes;
    return off;
}

static const char *const hostile[] = {
    "esc_\x1b]0;title\x07_\x1b[2J_clear",
    "osc52_\x1b]52;c;cHduZWQ=\x07",
    "csi_\x9b"
    "31m_red",
    "rlo_\xe2\x80\xae"
    "fdp.exe",
    "bad_utf8_\xff\xc3_end",
    "new\nline 1 2 forged",
    " leading_space",
    "nel_\xc2\x85_c1",
    "",
};

static int write_shape(const char *shape, uint32_t count, uintptr_t code)
{
    size_t size;
    size_t heap_off = sizeof(jf__pub_header) + ((size_t)count + 16) * sizeof(jf__pub_entry);
    jf__pub_header *h = table_of_at_least(heap_off + 2 * MIB, &size);
    if (!h)
        return fprintf(stderr, "table_liar: no table of its own\n"), 1;
    if (heap_off + 2 * MIB > size)
        return fprintf(stderr, "table_liar: a %zu-byte table cannot hold %u entries\n", size, count), 1;
    heap_writer w = {(char *)h + heap_off, 0, size - heap_off};
    jf__pub_entry *e = (jf__pub_entry *)(h + 1);
    int hostile_names = strcmp(shape, "hostile-names") == 0;
    if (hostile_names)
        count = sizeof hostile / sizeof *hostile;
    uint32_t name_off = heap_long_string(&w, 'n'), blob = 0, blob_len = 0;
    if (strcmp(shape, "lines") == 0)
        blob = heap_line_table(&w, &blob_len);
    else if (strncmp(shape, "cfi", 3) == 0)
        blob = heap_cfi(&w, strcmp(shape, "cfi-late") == 0, &blob_len);
    else if (!hostile_names && strcmp(shape, "names") != 0)
        return fprintf(stderr, "table_liar: unknown shape %s\n", shape), 2;
    h->generation = 1; /* changing */
    for (uint32_t i = 0; i < count; i++) {
        jf__pub_entry x = {0};
        x.flags = JF_PUB_LIVE;
        x.start = code + (uint64_t)i * 4096;
        x.size = strcmp(shape, "cfi-sizes") == 0 ? 16 + 16 * (uint64_t)i : 16;
        x.name_off = name_off;
        x.name_len = LONG_STRING;
        x.published_gen = 2;
        if (hostile_names) {
            x.start = code + 16 * (uint64_t)i;
            x.name_len = (uint32_t)strlen(hostile[i]);
            x.name_off = heap_put(&w, hostile[i], x.name_len + 1);
            x.file_off = x.name_off; /* the same bytes as its file */
            x.file_len = x.name_len;
            x.line = 1;
        } else if (strcmp(shape, "lines") == 0) {
            x.lines_off = blob;
            x.lines_len = blob_len;
        } else if (blob_len) {
            x.cfi_off = blob;
            x.cfi_len = blob_len;
        }
        e[i] = x;
    }
    h->entries_off = sizeof *h;
    h->entries_capacity = count + 16;
    h->entries_used = count;
    h->live_count = count;
    h->ring_off = (uint32_t)(sizeof *h + (size_t)count * sizeof(jf__pub_entry));
    h->ring_capacity = 16;
    h->ring_written = 0;
    h->heap_off = heap_off;
    h->heap_capacity = (uint32_t)(size - heap_off);
    h->heap_used = (uint32_t)w.used;
    if (hostile_names)
        h->pid = 1;
    h->generation = 4;
    return 0;
}

int main(int argc, char **argv)
{
    if (jf_init(NULL) != 0)
        return fprintf(stderr, "table_liar: jf_init: %s\n", jf_last_error()), 1;
    uint8_t *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return perror("mmap"), 1;
    memcpy(mem, spin_code, sizeof spin_code);
    if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) != 0)
        return perror("mprotect"), 1;
    jf_region r = JF_REGION_INIT;
    r.addr = mem;
    r.size = sizeof spin_code;
    r.name = "liar_spin";
    if (jf_register(&r) != 0)
        return fprintf(stderr, "table_liar: jf_register: %s\n", jf_last_error()), 1;
    if (argc == 3) { /* a shape: written once, then wait */
        int rc = write_shape(argv[1], (uint32_t)strtoul(argv[2], NULL, 10), (uintptr_t)mem);
        if (rc)
            return rc;
        printf("pid %ld\n", (long)getpid());
        fflush(stdout);
        char buf[64];
        while (read(0, buf, sizeof buf) > 0)
            ;
        return 0;
    }
    size_t size;
    jf__pub_header *h = find_table(&size);
    if (!h || size < 8192)
        return fprintf(stderr, "table_liar: no table of its own\n"), 1;
    printf("pid %ld\n", (long)getpid());
    fflush(stdout);
    uint64_t (*spin)(uint64_t) = (uint64_t(*)(uint64_t))(void *)mem;
    volatile uint64_t sink = 0;
    int lying = 0;
    for (unsigned long k = 0; k < 100000000ul; k++) {
        int in = stdin_state();
        if (in < 0)
            break;
        lying |= in > 0;
        if (lying)
            lie(h, size, k, (uintptr_t)mem);
        sink += spin(2000000);
    }
    (void)sink;
    return 0; /* no jf_shutdown: its table is not its own any more */
}
#endif
