/*
 * `jitframes dump FILE...` prints every entry or record, `jitframes check
 * FILE...` validates each file and reports "FILE:WHERE: what is wrong" at
 * its first problem; `--json` prints one JSON object per file instead. The
 * format is taken from --format, else from the content (jitdump magic in
 * either byte order, ELF magic), else from the name (jit-*.dump), else it
 * is a perf map; every summary says which. Only regular files (and `-`,
 * standard input) are read: a device or a FIFO is refused, never waited
 * on. Perf maps and jitdumps are read as streams, in bounded memory
 * whatever their size (tools/readers: perfmap_reader.h, jitdump_reader.h);
 * a symfile, which is read whole, is refused above 8 MiB.
 */
#define _GNU_SOURCE
#include "file_cmd.h"
#include "cli_args.h"
#include "exit_status.h"
#include "elf_reader.h"
#include "jitdump_reader.h"
#include "json_out.h"
#include "perfmap_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum file_kind { KIND_UNKNOWN, KIND_PERFMAP, KIND_JITDUMP, KIND_ELF };

static const char *const kind_names[] = {"unknown", "perfmap", "jitdump", "symfile"};

/* A GDB JIT symfile is read whole. jitframes puts at most 32,767 regions
 * in one (src/sink_gdb.c), about 100 bytes each with typical names. What the
 * walk keeps is a few times the file at worst (8 MiB of minimal CIEs in
 * .eh_frame: 50 MiB resident), hence a lower bound than for streams. */
#define MAX_SYMFILE ((size_t)8 << 20)

/* The first bytes of an input: enough to tell its format by content. */
#define HEAD_SIZE 64

static enum file_kind detect_kind(const uint8_t *buf, size_t len)
{
    if (len >= 4 && memcmp(buf, "\177ELF", 4) == 0)
        return KIND_ELF;
    if (len >= 4) {
        uint32_t le = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 |
                      (uint32_t)buf[3] << 24;
        uint32_t be = (uint32_t)buf[3] | (uint32_t)buf[2] << 8 | (uint32_t)buf[1] << 16 |
                      (uint32_t)buf[0] << 24;
        if (le == JD_MAGIC || be == JD_MAGIC)
            return KIND_JITDUMP;
    }
    return KIND_PERFMAP;
}

/* An opened input: its first bytes, then the rest through `stream`. */
typedef struct input {
    int fd;
    uint8_t head[HEAD_SIZE];
    size_t head_len;
    jft_stream stream;
} input;

/* Open `path` ("-": standard input) and read its first bytes. Only regular
 * files are opened: O_NONBLOCK keeps open() from waiting for a FIFO's
 * writer. Returns 0, or -1 with *why set. */
static int open_input(const char *path, input *in, const char **why)
{
    in->fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (in->fd < 0) {
        *why = strerror(errno);
        return -1;
    }
    struct stat st;
    *why = NULL;
    if (in->fd == STDIN_FILENO)
        ;
    else if (fstat(in->fd, &st) != 0)
        *why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        *why = S_ISFIFO(st.st_mode)  ? "a FIFO, not a regular file: refused"
               : S_ISDIR(st.st_mode) ? "a directory, not a regular file: refused"
                                     : "a device or socket, not a regular file: refused";
    if (!*why) {
        jft_stream_from_fd(&in->stream, in->fd, NULL, 0);
        in->head_len = jft_stream_read(&in->stream, in->head, sizeof in->head);
        if (in->stream.error)
            *why = strerror(in->stream.error);
        jft_stream_from_fd(&in->stream, in->fd, in->head, in->head_len);
    }
    if (*why && in->fd != STDIN_FILENO)
        close(in->fd);
    return *why ? -1 : 0;
}

static void close_input(input *in)
{
    if (in->fd != STDIN_FILENO)
        close(in->fd);
}

/* The whole input (a symfile), at most MAX_SYMFILE bytes; NULL with *why. */
static uint8_t *read_whole(input *in, size_t *len_out, const char **why)
{
    uint8_t *buf = malloc(MAX_SYMFILE + 1);
    size_t len = buf ? jft_stream_read(&in->stream, buf, MAX_SYMFILE + 1) : 0;
    *why = !buf                ? strerror(ENOMEM)
           : in->stream.error  ? strerror(in->stream.error)
           : len > MAX_SYMFILE ? "a symfile larger than 8 MiB: refused"
                               : NULL;
    if (*why) {
        free(buf);
        return NULL;
    }
    *len_out = len;
    return buf;
}

static int has_name(const char *path, const char *prefix, const char *suffix)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base), p = strlen(prefix), x = strlen(suffix);
    return n >= p + x && strncmp(base, prefix, p) == 0 && strcmp(base + n - x, suffix) == 0;
}

/* Content first (magic numbers), then the name, else a perf map. */
static enum file_kind detect_by_content_and_name(const char *path, const uint8_t *buf, size_t len,
                                                 const char **how)
{
    enum file_kind k = detect_kind(buf, len);
    *how = "from its content";
    if (k != KIND_PERFMAP)
        return k;
    *how = "from its name";
    if (has_name(path, "jit-", ".dump"))
        return KIND_JITDUMP;
    if (has_name(path, "perf-", ".map"))
        return KIND_PERFMAP;
    *how = "assumed: not a jitdump or an ELF";
    return KIND_PERFMAP;
}

static void print_perfmap_entry(void *ctx, const pm_entry *e)
{
    (void)ctx;
    printf("%6" PRIu64 "  %016" PRIx64 "-%016" PRIx64 "  %8" PRIu64 "  %.*s\n", e->line, e->start,
           e->start + e->size, e->size, (int)e->name_len, e->name);
}

/* One file's job: what to do with it and how to say it. */
typedef struct job {
    const char *cmd; /* "dump" or "check" */
    const char *path;
    enum file_kind kind;
    const char *how; /* how the format was chosen */
    int json;
} job;

static void print_error(const job *j, const jft_error *err)
{
    if (j->json)
        return;
    if (j->kind == KIND_PERFMAP)
        fprintf(stderr, "%s:%" PRIu64 ": %s\n", j->path, err->where, err->msg);
    else
        fprintf(stderr, "%s:0x%" PRIx64 ": %s\n", j->path, err->where, err->msg);
}

/* `dump --json`: the entries or records, gathered while the file is walked
 * into an unnamed temporary file (a dump of any size in bounded memory),
 * printed after the verdict. */
typedef struct json_items {
    FILE *f;
    int n;
} json_items;

static FILE *json_item(json_items *items)
{
    if (items->n++)
        fputs(", ", items->f);
    return items->f;
}

/* {"file":...,"format":...,"detected":...,"valid":...,"summary":{...}|"error":{...}[,"NAME":[...]]} */
static void json_report(const job *j, const jft_error *err, const char *items_name, json_items *items,
                        const char *summary_fmt, ...)
{
    printf("{\"file\": ");
    json_string(stdout, j->path);
    printf(", \"format\": \"%s\", \"detected\": ", kind_names[j->kind]);
    json_string(stdout, j->how);
    printf(", \"valid\": %s, ", err && err->set ? "false" : "true");
    if (err && err->set) {
        printf("\"error\": {\"where\": %" PRIu64 ", \"message\": ", err->where);
        json_string(stdout, err->msg);
        printf("}");
    } else {
        va_list ap;
        va_start(ap, summary_fmt);
        printf("\"summary\": {");
        vprintf(summary_fmt, ap);
        printf("}");
        va_end(ap);
    }
    if (items && items->f) {
        printf(", \"%s\": [", items_name);
        rewind(items->f);
        char chunk[1 << 14];
        for (size_t n; (n = fread(chunk, 1, sizeof chunk, items->f)) > 0;)
            fwrite(chunk, 1, n, stdout);
        printf("]");
        fclose(items->f);
        items->f = NULL;
    }
    printf("}\n");
}

static void json_perfmap_entry(void *ctx, const pm_entry *e)
{
    FILE *f = json_item(ctx);
    fprintf(f, "{\"line\": %" PRIu64 ", \"start\": %" PRIu64 ", \"size\": %" PRIu64 ", \"name\": ", e->line,
            e->start, e->size);
    json_string_n(f, e->name, e->name_len);
    fputc('}', f);
}

static void json_jitdump_record(void *ctx, const jd_record *r, uint32_t elf_mach)
{
    (void)elf_mach;
    FILE *f = json_item(ctx);
    fprintf(f, "{\"offset\": %" PRIu64 ", \"type\": \"%s\", \"size\": %u, \"timestamp\": %" PRIu64, r->offset,
            jd_record_name(r->id), r->total_size, r->timestamp);
    if (r->id == JD_CODE_LOAD) {
        fprintf(f,
                ", \"code_addr\": %" PRIu64 ", \"code_size\": %" PRIu64 ", \"code_index\": %" PRIu64
                ", \"name\": ",
                r->u.load.code_addr, r->u.load.code_size, r->u.load.code_index);
        json_string(f, r->u.load.name ? r->u.load.name : "");
    } else if (r->id == JD_CODE_MOVE) {
        fprintf(f,
                ", \"old_code_addr\": %" PRIu64 ", \"new_code_addr\": %" PRIu64 ", \"code_index\": %" PRIu64,
                r->u.move.old_code_addr, r->u.move.new_code_addr, r->u.move.code_index);
    } else if (r->id == JD_CODE_DEBUG_INFO) {
        fprintf(f, ", \"code_addr\": %" PRIu64 ", \"lines\": [", r->u.debug.code_addr);
        for (uint64_t i = 0; r->u.debug.lines && i < r->u.debug.nr_entry; i++) {
            fprintf(f, "%s{\"addr\": %" PRIu64 ", \"line\": %u, \"file\": ", i ? ", " : "",
                    r->u.debug.lines[i].addr, r->u.debug.lines[i].lineno);
            json_string(f, r->u.debug.lines[i].file ? r->u.debug.lines[i].file : "");
            fputc('}', f);
        }
        fputc(']', f);
    } else if (r->id == JD_CODE_UNWINDING_INFO) {
        fprintf(f,
                ", \"unwinding_size\": %" PRIu64 ", \"eh_frame_hdr_size\": %" PRIu64
                ", \"mapped_size\": %" PRIu64,
                r->u.unwind.unwinding_size, r->u.unwind.eh_frame_hdr_size, r->u.unwind.mapped_size);
    }
    fputc('}', f);
}

static void json_elf_symbol(void *ctx, size_t index, const elf_symbol *sym)
{
    FILE *f = json_item(ctx);
    fprintf(f, "{\"index\": %zu, \"addr\": %" PRIu64 ", \"size\": %" PRIu64 ", \"name\": ", index, sym->addr,
            sym->size);
    json_string(f, sym->name ? sym->name : "");
    fputc('}', f);
}

/* For dump --json: a stream for the items (f stays NULL when not dumping).
 * tmpfile() opens it with O_TMPFILE, or creates and unlinks it at once. */
static void json_items_open(const job *j, json_items *items)
{
    *items = (json_items){NULL, 0};
    if (j->json && strcmp(j->cmd, "dump") == 0)
        items->f = tmpfile();
}

static int run_perfmap(const job *j, jft_stream *in)
{
    jft_error err = {0};
    pm_summary s = {0};
    if (strcmp(j->cmd, "dump") == 0 && !j->json) {
        printf("# perf map %s (%s)\n#  line  start            end                   size  name\n", j->path,
               j->how);
        /* Every well-formed line, then the first problem (an overlap too). */
        pm_walk_stream(in, print_perfmap_entry, NULL, &s, &err);
    } else {
        json_items items;
        json_items_open(j, &items);
        pm_walk_stream(in, items.f ? json_perfmap_entry : NULL, &items, &s, &err);
        if (j->json) {
            json_report(j, &err, "entries", &items,
                        "\"entries\": %" PRIu64 ", \"duplicates\": %" PRIu64 ", \"lowest\": %" PRIu64
                        ", \"highest\": %" PRIu64 ", \"padding\": %" PRIu64 ", \"unpublished\": %" PRIu64,
                        s.entries, s.duplicates, s.lowest, s.highest, s.padding, s.unpublished);
            return err.set ? JFT_EXIT_FAILED : JFT_EXIT_OK;
        }
    }
    if (err.set) {
        print_error(j, &err);
        return JFT_EXIT_FAILED;
    }
    if (strcmp(j->cmd, "dump") == 0)
        return JFT_EXIT_OK;
    printf("%s: valid perf map: %" PRIu64 " entries", j->path, s.entries);
    if (s.entries)
        printf(" covering %" PRIx64 "-%" PRIx64, s.lowest, s.highest);
    if (s.duplicates)
        printf(", %" PRIu64 " exact duplicate lines", s.duplicates);
    if (s.padding)
        printf(", %" PRIu64 " bytes of unused space (blank lines)", s.padding);
    if (s.unpublished)
        printf(", %" PRIu64 " unpublished line%s (its writer was killed; readers skip it)", s.unpublished,
               s.unpublished == 1 ? "" : "s");
    printf(" (format %s)\n", j->how);
    return JFT_EXIT_OK;
}

static int run_jitdump(const job *j, jft_stream *in)
{
    jft_error err = {0};
    jd_summary s = {0};
    int dump = strcmp(j->cmd, "dump") == 0 && !j->json;
    if (dump)
        printf("# jitdump %s (%s)\n", j->path, j->how);
    json_items items;
    json_items_open(j, &items);
    static const jd_visitor json_visitor = {NULL, json_jitdump_record};
    int rc = dump      ? jd_dump_stream(in, stdout, &s, &err)
             : items.f ? jd_walk_stream(in, &json_visitor, &items, 1, &s, &err)
                       : jd_walk_stream(in, NULL, NULL, 0, &s, &err);
    int valid = rc ? JFT_EXIT_FAILED : s.warnings ? JFT_EXIT_WARNINGS : JFT_EXIT_OK;
    if (j->json) {
        json_report(j, &err, "records", &items,
                    "\"records\": %" PRIu64 ", \"loads\": %" PRIu64 ", \"unwind_infos\": %" PRIu64
                    ", \"debug_infos\": %" PRIu64 ", \"moves\": %" PRIu64 ", \"closes\": %" PRIu64
                    ", \"reopened\": %" PRIu64 ", \"unpublished_bytes\": %" PRIu64 ", \"warnings\": %" PRIu64,
                    s.records, s.loads, s.unwind_infos, s.debug_infos, s.moves, s.closes, s.reopened,
                    s.unpublished, s.warnings);
        return valid;
    }
    if (rc) {
        print_error(j, &err);
        return JFT_EXIT_FAILED;
    }
    printf("%s%s: valid jitdump: %" PRIu64 " records (%" PRIu64 " loads, %" PRIu64
           " with unwind info, %" PRIu64 " with line info, %" PRIu64 " moves, %" PRIu64 " closes)",
           dump ? "# " : "", j->path, s.records, s.loads, s.unwind_infos, s.debug_infos, s.moves, s.closes);
    if (s.reopened)
        printf(", reopened %" PRIu64 " times after CODE_CLOSE", s.reopened);
    if (s.unpublished)
        printf(", %" PRIu64 " bytes of an unpublished record group at the end (the writer stopped "
               "mid-registration; perf reads up to it)",
               s.unpublished);
    printf("\n");
    if (s.warnings)
        fprintf(stderr, "%s:0x%" PRIx64 ": warning: %s%s\n", j->path, s.warning.where, s.warning.msg,
                s.warnings > 1 ? " (and more warnings)" : "");
    return valid;
}

static int run_elf(const job *j, const uint8_t *buf, size_t len)
{
    jft_error err = {0};
    elf_summary s = {0};
    int dump = strcmp(j->cmd, "dump") == 0 && !j->json;
    if (dump)
        printf("# symfile %s (%s)\n", j->path, j->how);
    json_items items;
    json_items_open(j, &items);
    static const elf_visitor json_visitor = {NULL, NULL, json_elf_symbol, NULL};
    int rc = dump      ? elf_dump(buf, len, stdout, &s, &err)
             : items.f ? elf_walk(buf, len, &json_visitor, &items, 1, &s, &err)
                       : elf_check(buf, len, &s, &err);
    if (j->json) {
        json_report(j, &err, "symbols", &items,
                    "\"sections\": %" PRIu64 ", \"functions\": %" PRIu64 ", \"fdes\": %" PRIu64, s.sections,
                    s.functions, s.fdes);
        return rc ? JFT_EXIT_FAILED : JFT_EXIT_OK;
    }
    if (rc) {
        print_error(j, &err);
        return JFT_EXIT_FAILED;
    }
    printf("%s%s: valid symfile: %" PRIu64 " sections, %" PRIu64 " functions, %" PRIu64 " FDEs\n",
           dump ? "# " : "", j->path, s.sections, s.functions, s.fdes);
    return JFT_EXIT_OK;
}

static int parse_format(const char *name, enum file_kind *kind)
{
    for (int k = KIND_PERFMAP; k <= KIND_ELF; k++) {
        if (strcmp(name, kind_names[k]) == 0) {
            *kind = (enum file_kind)k;
            return 0;
        }
    }
    return -1;
}

/* A symfile: read whole (bounded), then checked. */
static int run_symfile(const job *j, input *in)
{
    size_t len = 0;
    const char *why = NULL;
    uint8_t *buf = read_whole(in, &len, &why);
    if (!buf) {
        fprintf(stderr, "%s: %s\n", j->path, why);
        return JFT_EXIT_USAGE;
    }
    int rc = run_elf(j, buf, len);
    free(buf);
    return rc;
}

/* One file: open it, pick its format from its first bytes, run the command. */
static int run_file(job j)
{
    const char *why = NULL;
    input in;
    if (open_input(j.path, &in, &why)) {
        fprintf(stderr, "%s: %s\n", j.path, why);
        return JFT_EXIT_USAGE;
    }
    int rc;
    if (j.kind == KIND_UNKNOWN) {
        j.kind = detect_by_content_and_name(j.path, in.head, in.head_len, &j.how);
        if (j.kind == KIND_ELF && has_name(j.path, "jitted-", ".so")) {
            fprintf(stderr,
                    "%s: perf inject's jitted-*.so is an ELF shared object, not a GDB JIT "
                    "symfile: not checked (--format=symfile applies the symfile rules)\n",
                    j.path);
            close_input(&in);
            return JFT_EXIT_USAGE;
        }
    }
    if (j.kind == KIND_JITDUMP)
        rc = run_jitdump(&j, &in.stream);
    else if (j.kind == KIND_ELF)
        rc = run_symfile(&j, &in);
    else
        rc = run_perfmap(&j, &in.stream);
    close_input(&in);
    return rc;
}

/* check and dump: their options, then each FILE. */
static const jft_option file_options[] = {{"--json", 0, 0}, {"--format", 0, 1}, {NULL, 0, 0}};

static int on_file_option(void *ctx, int which, const char *value)
{
    job *j = ctx;
    if (which == 0)
        j->json = 1;
    else
        return parse_format(value, &j->kind);
    return 0;
}

int jft_file_command(int argc, char **argv)
{
    job j = {argv[0], NULL, KIND_UNKNOWN, "given with --format", 0};
    int n;
    int parsed = jft_parse_args(argc, argv, file_options, on_file_option, &j, &n);
    if (parsed == JFT_ARGS_HELP)
        return jft_usage(stdout, j.cmd), JFT_EXIT_OK;
    if (parsed != JFT_ARGS_OK)
        return JFT_EXIT_USAGE;
    if (n == 0) {
        fprintf(stderr, "jitframes %s: no FILE given\n", j.cmd);
        jft_usage_synopsis(stderr, j.cmd);
        return JFT_EXIT_USAGE;
    }
    /* The worst file decides: refused/unreadable, then invalid, then warnings. */
    static const int severity[] = {
        [JFT_EXIT_OK] = 0, [JFT_EXIT_WARNINGS] = 1, [JFT_EXIT_FAILED] = 2, [JFT_EXIT_USAGE] = 3};
    int status = JFT_EXIT_OK;
    for (int i = 1; i <= n; i++) {
        j.path = argv[i];
        int rc = run_file(j);
        if (severity[rc] > severity[status])
            status = rc;
    }
    return status;
}
