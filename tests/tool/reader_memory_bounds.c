/*
 * `jitframes check` and `dump` read any input within a bounded buffer: fed
 * hundreds of MiB (a pipe written on the fly, or a large file), or an
 * endless stream, the tool's peak resident memory (ru_maxrss of the child)
 * stays at most 64 MiB; garbage stops it at once with a problem, and a
 * stream that outgrows what the checker tracks stops with a message naming
 * the limit. Usage: reader_memory_bounds JITFRAMES SCRATCH_DIR
 * Sizes are counts (bytes written), not time. Under sanitizers (their
 * shadow memory and quarantine are resident too) the volumes are smaller
 * and only the behaviour is checked.
 */
#define _GNU_SOURCE
#include "jitdump_builder.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef READER_MEMORY_SANITIZED
enum { SANITIZED = 1 };
#define STREAM_BYTES ((uint64_t)24 << 20)
#else
enum { SANITIZED = 0 };
#define STREAM_BYTES ((uint64_t)320 << 20) /* five times the bound */
#endif
#define RSS_BOUND_KIB (64 * 1024)
/* An endless stream is cut here, long after the tool should have stopped. */
#define ENDLESS_CAP ((uint64_t)512 << 20)

static const char *tool, *scratch;
static int failures;

static void fail(const char *test, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(const char *test, const char *fmt, ...)
{
    failures++;
    fprintf(stderr, "FAIL %s: ", test);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---- running the tool --------------------------------------------------- */

/* Produces the next piece of input into *b (appending); returns 0 at the end. */
typedef int (*feed_fn)(void *state, jdb *b);

typedef struct run {
    int exit_code; /* -1 if killed by a signal */
    long maxrss_kib;
    uint64_t written; /* bytes the tool took before it stopped reading */
    char out[2048];   /* the start of its stdout and stderr */
} run;

static void read_output(const char *path, run *r)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(r->out, 1, sizeof r->out - 1, f) : 0;
    r->out[n] = 0;
    if (f)
        fclose(f);
}

/* Run the tool with argv, its stdin fed by `feed` (NULL: /dev/null), its
 * stdout (and stderr) in a scratch file unless `discard_stdout`. */
static void run_tool(const char *const *argv, feed_fn feed, void *state, int discard_stdout, run *r)
{
    char out_path[4096];
    snprintf(out_path, sizeof out_path, "%s/out.txt", scratch);
    int in[2];
    if (pipe2(in, O_CLOEXEC) != 0) {
        perror("pipe");
        exit(1);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int out = open(discard_stdout ? "/dev/null" : out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = open(out_path, O_WRONLY | O_CREAT | (discard_stdout ? O_TRUNC : O_APPEND), 0600);
        dup2(in[0], 0);
        dup2(out, 1);
        dup2(err, 2);
        execv(tool, (char *const *)argv);
        _exit(127);
    }
    close(in[0]);
    memset(r, 0, sizeof *r);
    jdb b;
    jdb_init(&b, 0);
    for (int more = feed != NULL; more;) {
        b.len = 0;
        more = feed(state, &b);
        size_t done = 0;
        while (done < b.len) {
            ssize_t n = write(in[1], b.data + done, b.len - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) { /* EPIPE: the tool stopped reading */
                more = 0;
                break;
            }
            done += (size_t)n;
        }
        r->written += done;
    }
    jdb_free(&b);
    close(in[1]);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid) {
        perror("wait4");
        exit(1);
    }
    r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r->maxrss_kib = ru.ru_maxrss;
    read_output(out_path, r);
}

static void expect(const char *test, const run *r, int exit_code, const char *text)
{
    printf("%s: exit %d, peak RSS %ld KiB, %llu bytes taken\n", test, r->exit_code, r->maxrss_kib,
           (unsigned long long)r->written);
    if (r->exit_code != exit_code)
        fail(test, "exit %d, expected %d; output: %s", r->exit_code, exit_code, r->out);
    if (text && !strstr(r->out, text))
        fail(test, "output lacks \"%s\": %s", text, r->out);
    if (!SANITIZED && r->maxrss_kib > RSS_BOUND_KIB)
        fail(test, "peak RSS %ld KiB is above %d KiB", r->maxrss_kib, RSS_BOUND_KIB);
}

/* `jitframes check -` fed by `feed`: its run, checked by expect(). */
static void check_stdin(const char *test, feed_fn feed, void *state, int exit_code, const char *text, run *r)
{
    const char *argv[] = {tool, "check", "-", NULL};
    run_tool(argv, feed, state, 0, r);
    expect(test, r, exit_code, text);
}

/* ---- jitdump streams ---------------------------------------------------- */

typedef struct dump_feed {
    uint64_t budget; /* stop after about this many bytes */
    uint64_t sent, group, ts;
    int distinct; /* every load at a new address (never replaced) */
    uint8_t *unwind;
    size_t eh, hdr;
} dump_feed;

enum { CODE_SIZE = 4096, SLOTS = 4096 };

static void dump_feed_init(dump_feed *f, uint64_t budget, int distinct)
{
    memset(f, 0, sizeof *f);
    f->budget = budget;
    f->distinct = distinct;
    jdb_fde fde = {0, CODE_SIZE, jdb_framed_insns, jdb_framed_insns_size};
    f->unwind = jdb_unwind_data(CODE_SIZE, &fde, 1, &f->eh, &f->hdr, NULL);
}

/*
 * Valid records: line table, unwinding info and a load of 4 KiB of code at
 * one of 4,096 addresses (reused: the new load replaces the old), and every
 * 16th load moved within its slot. With `distinct`, small loads at ever new
 * addresses, all live at once.
 */
static int feed_dump(void *state, jdb *b)
{
    dump_feed *f = state;
    if (f->sent == 0)
        jdb_header(b, 1);
    for (int i = 0; i < 64 && f->sent + b->len < f->budget; i++, f->group++) {
        uint64_t ts = ++f->ts;
        if (f->distinct) {
            jdb_load(b, ts, 0x100000 + f->group * 16, 16, f->group, "distinct_fn");
            continue;
        }
        uint64_t addr = 0x10000000 + (f->group % SLOTS) * 0x10000;
        jdb_line lines[] = {{0, 1, "gen.c"}, {CODE_SIZE / 2, 2, "gen.c"}, {CODE_SIZE, 3, "gen.c"}};
        jdb_debug(b, ts, addr, lines, 3);
        jdb_unwind(b, ts, f->unwind, f->eh, f->hdr, (f->eh + f->hdr + 15) & ~(size_t)15);
        jdb_load(b, ts, addr, CODE_SIZE, f->group, "generated_fn");
        if (f->group % 16 == 15)
            jdb_move(b, ts, addr, addr + 0x8000, CODE_SIZE, f->group);
    }
    f->sent += b->len;
    return f->sent < f->budget;
}

/* check - of generated records (see feed_dump); returns the bytes taken. */
static uint64_t check_dump_stream(const char *test, uint64_t budget, int distinct, int exit_code,
                                  const char *text)
{
    dump_feed f;
    dump_feed_init(&f, budget, distinct);
    run r;
    check_stdin(test, feed_dump, &f, exit_code, text, &r);
    free(f.unwind);
    return r.written;
}

static void check_stream_of_valid_records_in_bounded_memory(void)
{
    uint64_t taken = check_dump_stream(__func__, STREAM_BYTES, 0, 0, "-: valid jitdump:");
    if (taken < STREAM_BYTES)
        fail(__func__, "only %llu bytes were read", (unsigned long long)taken);
}

static void check_stream_of_ever_new_loads_stops_at_the_live_region_limit(void)
{
    uint64_t taken = check_dump_stream(__func__, ENDLESS_CAP, 1, 1, "more than 524288 live code regions");
    if (taken >= ENDLESS_CAP)
        fail(__func__, "the tool read the whole %llu bytes", (unsigned long long)taken);
}

/* xorshift64: the same garbage every run. */
typedef struct garbage_feed {
    uint64_t sent, x;
    int with_header;
    const char *pattern; /* repeated instead of random bytes if not NULL */
} garbage_feed;

static int feed_garbage(void *state, jdb *b)
{
    garbage_feed *g = state;
    if (g->sent == 0 && g->with_header)
        jdb_header(b, 1);
    for (int i = 0; i < 8192; i++) {
        if (g->pattern) {
            jdb_bytes(b, g->pattern, strlen(g->pattern));
            continue;
        }
        g->x ^= g->x << 13;
        g->x ^= g->x >> 7;
        g->x ^= g->x << 17;
        jdb_u64(b, g->x);
    }
    g->sent += b->len;
    return g->sent < ENDLESS_CAP;
}

/* At most this much of an endless garbage stream may be read: one record's
 * worth and the pipe's buffers. */
#define GARBAGE_TAKEN_MAX ((uint64_t)16 << 20)

static void check_garbage(const char *test, garbage_feed g, int exit_code, const char *text)
{
    run r;
    check_stdin(test, feed_garbage, &g, exit_code, text, &r);
    if (r.written > GARBAGE_TAKEN_MAX)
        fail(test, "%llu bytes were read before it stopped", (unsigned long long)r.written);
}

static void check_stream_of_garbage_stops_at_once(void)
{
    check_garbage("check_stream_of_random_records_stops_at_once",
                  (garbage_feed){0, 88172645463325252ull, 1, NULL}, 1, "-:0x2");
    check_garbage("check_stream_of_random_bytes_stops_at_once",
                  (garbage_feed){0, 88172645463325252ull, 0, NULL}, 1, "-:1: ");
    check_garbage("check_stream_of_yes_stops_at_once", (garbage_feed){0, 0, 0, "y\n"}, 1, "-:1: ");
    check_garbage("check_stream_without_newline_stops_at_the_line_limit",
                  (garbage_feed){0, 0, 0, "1000 10 f"}, 1, "-:1: line longer than 1048576 bytes");
}

/* A record larger than the limit is a violation naming it, not a buffer. */
static int feed_huge_record(void *state, jdb *b)
{
    (void)state;
    jdb_header(b, 1);
    jdb_u32(b, 0);        /* CODE_LOAD */
    jdb_u32(b, 9u << 20); /* 9 MiB */
    jdb_u64(b, 2);
    jdb_zeros(b, 4096);
    return 0;
}

static void check_record_above_the_size_limit_is_a_violation(void)
{
    run r;
    check_stdin(__func__, feed_huge_record, NULL, 1,
                "-:0x2c: CODE_LOAD record of 9437184 bytes is larger than the 8388608 bytes", &r);
}

/* ---- large files -------------------------------------------------------- */

static void dump_of_a_large_file_in_bounded_memory(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/jit-4242.dump", scratch);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        fail(__func__, "cannot create %s: %s", path, strerror(errno));
        return;
    }
    dump_feed f;
    dump_feed_init(&f, STREAM_BYTES, 0);
    jdb b;
    jdb_init(&b, 0);
    for (int more = 1; more;) {
        b.len = 0;
        more = feed_dump(&f, &b);
        if (write(fd, b.data, b.len) != (ssize_t)b.len) {
            fail(__func__, "writing %s: %s", path, strerror(errno));
            more = 0;
        }
    }
    jdb_free(&b);
    free(f.unwind);
    close(fd);
    const char *plain[] = {tool, "dump", path, NULL};
    const char *json[] = {tool, "--json", "dump", path, NULL};
    run r;
    run_tool(plain, NULL, NULL, 1, &r);
    expect("dump_of_a_large_file_in_bounded_memory", &r, 0, NULL);
    run_tool(json, NULL, NULL, 1, &r);
    expect("json_dump_of_a_large_file_in_bounded_memory", &r, 0, NULL);
    unlink(path);
}

/* ---- symfiles ----------------------------------------------------------- */

static void put_u16(jdb *b, uint16_t v)
{
    jdb_u8(b, (uint8_t)v);
    jdb_u8(b, (uint8_t)(v >> 8));
}

static void section_header(jdb *b, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr,
                           uint64_t offset, uint64_t size)
{
    jdb_u32(b, name);
    jdb_u32(b, type);
    jdb_u64(b, flags);
    jdb_u64(b, addr);
    jdb_u64(b, offset);
    jdb_u64(b, size);
    jdb_zeros(b, 24); /* link, info, addralign, entsize */
}

/*
 * A valid ELF64 object of `size` bytes whose .eh_frame is all minimal CIEs
 * (16 bytes each): what makes the walk keep the most per byte.
 */
static void build_cie_symfile(jdb *b, size_t size)
{
    static const char shstrtab[] = "\0.shstrtab\0.eh_frame";                     /* 21 bytes with its NUL */
    static const uint8_t cie[16] = {12, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0x78, 16}; /* + 3 DW_CFA_nop */
    size_t eh_offset = 64 + 24, n = (size - eh_offset - 3 * 64) / sizeof cie;
    jdb_bytes(b, "\177ELF\2\1\1", 7);
    jdb_zeros(b, 9);
    put_u16(b, 1);  /* ET_REL */
    put_u16(b, 62); /* x86_64 */
    jdb_u32(b, 1);
    jdb_u64(b, 0);
    jdb_u64(b, 0);                          /* no program headers */
    jdb_u64(b, eh_offset + n * sizeof cie); /* section headers */
    jdb_u32(b, 0);
    put_u16(b, 64);
    put_u16(b, 0);
    put_u16(b, 0);
    put_u16(b, 64);
    put_u16(b, 3);
    put_u16(b, 1); /* .shstrtab */
    jdb_bytes(b, shstrtab, sizeof shstrtab);
    jdb_zeros(b, eh_offset - b->len);
    for (size_t i = 0; i < n; i++)
        jdb_bytes(b, cie, sizeof cie);
    section_header(b, 0, 0, 0, 0, 0, 0);
    section_header(b, 1, 3, 0, 0, 64, sizeof shstrtab);
    section_header(b, 11, 1, 2, 0x1000, eh_offset, n * sizeof cie); /* PROGBITS, SHF_ALLOC */
}

static void check_symfile(const char *test, size_t size, int exit_code, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/symfile.o", scratch);
    jdb b;
    jdb_init(&b, 0);
    build_cie_symfile(&b, size);
    FILE *f = fopen(path, "wbx");
    if (!f || fwrite(b.data, 1, b.len, f) != b.len || fclose(f) != 0)
        fail(test, "cannot write %s", path);
    jdb_free(&b);
    const char *argv[] = {tool, "check", path, NULL};
    run r;
    run_tool(argv, NULL, NULL, 0, &r);
    expect(test, &r, exit_code, text);
    unlink(path);
}

static void check_of_symfiles_in_bounded_memory(void)
{
    check_symfile("check_of_an_8_MiB_symfile_of_cies_in_bounded_memory", (size_t)8 << 20, 0,
                  "valid symfile: 2 sections, 0 functions, 0 FDEs");
    check_symfile("check_of_a_symfile_above_8_MiB_is_refused", (size_t)9 << 20, 2,
                  "a symfile larger than 8 MiB: refused");
}

/* ---- perf maps ---------------------------------------------------------- */

typedef struct map_feed {
    uint64_t budget, sent, line;
    int distinct; /* every line a new region */
} map_feed;

/* Lines over 4,096 regions, repeated exactly (valid); or ever new regions. */
static int feed_map(void *state, jdb *b)
{
    map_feed *m = state;
    char line[128];
    for (int i = 0; i < 4096; i++, m->line++) {
        uint64_t region = m->distinct ? m->line : m->line % 4096;
        int n = snprintf(line, sizeof line, "%llx 40 py::generated_function_%llu:/src/app.py\n",
                         (unsigned long long)(0x7f0000000000 + region * 0x40), (unsigned long long)region);
        jdb_bytes(b, line, (size_t)n);
    }
    m->sent += b->len;
    return m->sent < m->budget;
}

static void check_perf_map_stream_in_bounded_memory(void)
{
    map_feed m = {STREAM_BYTES, 0, 0, 0};
    run r;
    check_stdin(__func__, feed_map, &m, 0, "-: valid perf map:", &r);
}

static void check_perf_map_of_ever_new_regions_stops_at_the_region_limit(void)
{
    map_feed m = {ENDLESS_CAP, 0, 0, 1};
    run r;
    check_stdin(__func__, feed_map, &m, 1, "-:524289: more than 524288 distinct regions", &r);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: reader_memory_bounds JITFRAMES SCRATCH_DIR\n");
        return 2;
    }
    tool = argv[1];
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/reader_memory_XXXXXX", argv[2]);
    if (!mkdtemp(dir)) {
        perror(dir);
        return 1;
    }
    scratch = dir;
    signal(SIGPIPE, SIG_IGN);
    check_stream_of_valid_records_in_bounded_memory();
    check_stream_of_ever_new_loads_stops_at_the_live_region_limit();
    check_stream_of_garbage_stops_at_once();
    check_record_above_the_size_limit_is_a_violation();
    dump_of_a_large_file_in_bounded_memory();
    check_of_symfiles_in_bounded_memory();
    check_perf_map_stream_in_bounded_memory();
    check_perf_map_of_ever_new_regions_stops_at_the_region_limit();
    char out[4200];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    unlink(out);
    rmdir(dir);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("all reader memory bounds held\n");
    return 0;
}
