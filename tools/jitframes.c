/*
 * jitframes — inspect and validate the files jitframes (or any runtime)
 * writes for perf and debuggers: `jitframes dump FILE...` prints every entry
 * or record, `jitframes check FILE...` validates each file and reports
 * "FILE:WHERE: what is wrong" at its first problem. `--json` prints one
 * JSON object per file instead. The format is taken from --format, else
 * from the content (jitdump magic in either byte order, ELF magic), else
 * from the name (jit-*.dump), else it is a perf map; every summary says
 * which. Only regular files (and `-`, standard input) of at most 1 GiB
 * are read: a device or a FIFO is refused, never waited on.
 * `jitframes enable|disable|status PID` talk to a running process's control
 * channel (control_cmd.c), `jitframes record PID` profiles it (record_cmd.c
 * hands over to jitframes-record.py), `jitframes clean` removes what
 * dead processes left behind (clean_cmd.c), and `jitframes regions|perfmap
 * PID` read the regions a process published in its memory (table_cmd.c).
 */
#define _GNU_SOURCE
#include "clean_cmd.h"
#include "control_cmd.h"
#include "record_cmd.h"
#include "table_cmd.h"
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

/* Exit statuses (documented in tools/README.md and --help). */
enum { EXIT_VALID = 0, EXIT_INVALID = 1, EXIT_USAGE = 2, EXIT_WARNINGS = 3 };

#define MAX_INPUT ((size_t)1 << 30)

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

/* Read at most MAX_INPUT bytes from fd; NULL with *why set on failure. */
static uint8_t *read_all(int fd, size_t *len_out, const char **why)
{
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            *why = strerror(ENOMEM);
            return NULL;
        }
        if (len == cap) {
            if (cap > MAX_INPUT) {
                free(buf);
                *why = "larger than 1 GiB: refused";
                return NULL;
            }
            uint8_t *bigger = realloc(buf, cap * 2);
            if (!bigger)
                free(buf);
            buf = bigger;
            cap *= 2;
            continue;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n == 0)
            break;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *why = strerror(errno);
            free(buf);
            return NULL;
        }
        len += (size_t)n;
    }
    *len_out = len;
    return buf;
}

/* The bytes of `path` ("-": standard input). Only regular files are
 * opened: O_NONBLOCK keeps open() from waiting for a FIFO's writer. */
static uint8_t *read_input(const char *path, size_t *len_out, const char **why)
{
    if (strcmp(path, "-") == 0)
        return read_all(STDIN_FILENO, len_out, why);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        *why = strerror(errno);
        return NULL;
    }
    struct stat st;
    uint8_t *buf = NULL;
    if (fstat(fd, &st) != 0)
        *why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        *why = S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file: refused"
             : S_ISDIR(st.st_mode)  ? "a directory, not a regular file: refused"
                                    : "a device or socket, not a regular file: refused";
    else if ((unsigned long long)st.st_size > MAX_INPUT)
        *why = "larger than 1 GiB: refused";
    else
        buf = read_all(fd, len_out, why);
    close(fd);
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
    const char *cmd;  /* "dump" or "check" */
    const char *path;
    enum file_kind kind;
    const char *how;  /* how the format was chosen */
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

/* `dump --json`: the entries or records, gathered while the file is walked. */
typedef struct json_items {
    FILE *f;
    char *buf;
    size_t len;
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
        fclose(items->f);
        items->f = NULL;
        printf(", \"%s\": [%.*s]", items_name, (int)items->len, items->buf ? items->buf : "");
        free(items->buf);
    }
    printf("}\n");
}

static void json_perfmap_entry(void *ctx, const pm_entry *e)
{
    FILE *f = json_item(ctx);
    fprintf(f, "{\"line\": %" PRIu64 ", \"start\": %" PRIu64 ", \"size\": %" PRIu64 ", \"name\": ",
            e->line, e->start, e->size);
    json_string_n(f, e->name, e->name_len);
    fputc('}', f);
}

static void json_jitdump_record(void *ctx, const jd_record *r, uint32_t elf_mach)
{
    (void)elf_mach;
    FILE *f = json_item(ctx);
    fprintf(f, "{\"offset\": %" PRIu64 ", \"type\": \"%s\", \"size\": %u, \"timestamp\": %" PRIu64,
            r->offset, jd_record_name(r->id), r->total_size, r->timestamp);
    if (r->id == JD_CODE_LOAD) {
        fprintf(f, ", \"code_addr\": %" PRIu64 ", \"code_size\": %" PRIu64 ", \"code_index\": %" PRIu64
                   ", \"name\": ", r->u.load.code_addr, r->u.load.code_size, r->u.load.code_index);
        json_string(f, r->u.load.name ? r->u.load.name : "");
    } else if (r->id == JD_CODE_MOVE) {
        fprintf(f, ", \"old_code_addr\": %" PRIu64 ", \"new_code_addr\": %" PRIu64 ", \"code_index\": %" PRIu64,
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
        fprintf(f, ", \"unwinding_size\": %" PRIu64 ", \"eh_frame_hdr_size\": %" PRIu64 ", \"mapped_size\": %" PRIu64,
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
 * In place: the stream keeps pointers to buf and len. */
static void json_items_open(const job *j, json_items *items)
{
    *items = (json_items){NULL, NULL, 0, 0};
    if (j->json && strcmp(j->cmd, "dump") == 0)
        items->f = open_memstream(&items->buf, &items->len);
}

static int run_perfmap(const job *j, const uint8_t *buf, size_t len)
{
    jft_error err = {0};
    pm_summary s = {0};
    if (strcmp(j->cmd, "dump") == 0 && !j->json) {
        printf("# perf map %s (%s)\n#  line  start            end                   size  name\n",
               j->path, j->how);
        /* Every well-formed line, then the first problem (an overlap too). */
        if (pm_parse(buf, len, print_perfmap_entry, NULL, &err) == 0)
            pm_check(buf, len, &s, &err);
    } else {
        json_items items;
        json_items_open(j, &items);
        if (items.f)
            pm_parse(buf, len, json_perfmap_entry, &items, &err);
        pm_check(buf, len, &s, &err);
        if (j->json) {
            json_report(j, &err, "entries", &items, "\"entries\": %" PRIu64 ", \"duplicates\": %" PRIu64
                        ", \"lowest\": %" PRIu64 ", \"highest\": %" PRIu64
                        ", \"padding\": %" PRIu64 ", \"unpublished\": %" PRIu64,
                        s.entries, s.duplicates, s.lowest, s.highest, s.padding, s.unpublished);
            return err.set ? EXIT_INVALID : EXIT_VALID;
        }
    }
    if (err.set) {
        print_error(j, &err);
        return EXIT_INVALID;
    }
    if (strcmp(j->cmd, "dump") == 0)
        return EXIT_VALID;
    printf("%s: valid perf map: %" PRIu64 " entries", j->path, s.entries);
    if (s.entries)
        printf(" covering %" PRIx64 "-%" PRIx64, s.lowest, s.highest);
    if (s.duplicates)
        printf(", %" PRIu64 " exact duplicate lines", s.duplicates);
    if (s.padding)
        printf(", %" PRIu64 " bytes of unused space (blank lines)", s.padding);
    if (s.unpublished)
        printf(", %" PRIu64 " unpublished line%s (its writer was killed; readers skip it)",
               s.unpublished, s.unpublished == 1 ? "" : "s");
    printf(" (format %s)\n", j->how);
    return EXIT_VALID;
}

static int run_jitdump(const job *j, const uint8_t *buf, size_t len)
{
    jft_error err = {0};
    jd_summary s = {0};
    int dump = strcmp(j->cmd, "dump") == 0 && !j->json;
    if (dump)
        printf("# jitdump %s (%s)\n", j->path, j->how);
    json_items items;
    json_items_open(j, &items);
    static const jd_visitor json_visitor = {NULL, json_jitdump_record};
    int rc = dump      ? jd_dump(buf, len, stdout, &s, &err)
           : items.f   ? jd_walk(buf, len, &json_visitor, &items, 1, &s, &err)
                       : jd_check(buf, len, &s, &err);
    int valid = rc ? EXIT_INVALID : s.warnings ? EXIT_WARNINGS : EXIT_VALID;
    if (j->json) {
        json_report(j, &err, "records", &items, "\"records\": %" PRIu64 ", \"loads\": %" PRIu64 ", \"unwind_infos\": %" PRIu64
                    ", \"debug_infos\": %" PRIu64 ", \"moves\": %" PRIu64 ", \"closes\": %" PRIu64
                    ", \"reopened\": %" PRIu64 ", \"unpublished_bytes\": %" PRIu64 ", \"warnings\": %" PRIu64,
                    s.records, s.loads, s.unwind_infos, s.debug_infos, s.moves, s.closes, s.reopened,
                    s.unpublished, s.warnings);
        return valid;
    }
    if (rc) {
        print_error(j, &err);
        return EXIT_INVALID;
    }
    printf("%s%s: valid jitdump: %" PRIu64 " records (%" PRIu64 " loads, %" PRIu64
           " with unwind info, %" PRIu64 " with line info, %" PRIu64 " moves, %" PRIu64 " closes)",
           dump ? "# " : "", j->path, s.records, s.loads, s.unwind_infos, s.debug_infos, s.moves,
           s.closes);
    if (s.reopened)
        printf(", reopened %" PRIu64 " times after CODE_CLOSE", s.reopened);
    if (s.unpublished)
        printf(", %" PRIu64 " bytes of an unpublished record group at the end (the writer stopped "
               "mid-registration; perf reads up to it)", s.unpublished);
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
    int rc = dump    ? elf_dump(buf, len, stdout, &s, &err)
           : items.f ? elf_walk(buf, len, &json_visitor, &items, 1, &s, &err)
                     : elf_check(buf, len, &s, &err);
    if (j->json) {
        json_report(j, &err, "symbols", &items, "\"sections\": %" PRIu64 ", \"functions\": %" PRIu64 ", \"fdes\": %" PRIu64,
                    s.sections, s.functions, s.fdes);
        return rc ? EXIT_INVALID : EXIT_VALID;
    }
    if (rc) {
        print_error(j, &err);
        return EXIT_INVALID;
    }
    printf("%s%s: valid symfile: %" PRIu64 " sections, %" PRIu64 " functions, %" PRIu64 " FDEs\n",
           dump ? "# " : "", j->path, s.sections, s.functions, s.fdes);
    return EXIT_VALID;
}

static const char usage_text[] =
    "usage: jitframes [--format=FORMAT] [--json] check FILE...\n"
    "       jitframes [--format=FORMAT] [--json] dump FILE...\n"
    "       jitframes clean [--older-than D] [--dry-run] [--dir DIR]...\n"
    "       jitframes enable PID SINKS\n"
    "       jitframes disable PID SINKS\n"
    "       jitframes status PID [--json]\n"
    "       jitframes record PID [--duration S] [--call-graph dwarf|fp] [-o DIR] [--keep]\n"
    "       jitframes regions PID [--json]\n"
    "       jitframes perfmap PID [-o FILE] [--jitdump FILE]\n"
    "       jitframes --help | --version\n"
    "\n"
    "FILE is a perf map (perf-<pid>.map), a jitdump (jit-<pid>.dump) or a GDB JIT\n"
    "symfile (an ELF64 object); - reads standard input. Only regular files of at\n"
    "most 1 GiB are read.\n"
    "  check          validate each file; a summary line, or FILE:WHERE: problem\n"
    "  dump           print every entry or record, then the first problem if any\n"
    "  --format=F     perfmap, jitdump or symfile; default: from the content (magic\n"
    "                 numbers), then the name (jit-*.dump), else perfmap\n"
    "  --json         one JSON object per file on standard output (see tools/README.md)\n"
    "Exit status: 0 every file valid; 1 a file breaks a rule; 2 usage error, or a file\n"
    "that cannot be read or is refused; 3 valid for perf, with warnings (rules perf\n"
    "does not enforce, e.g. an unknown ELF machine in a jitdump header).\n"
    "\n"
    "clean removes the perf maps, jitdumps and jitted-*.so files that processes\n"
    "which no longer exist left in /tmp and $JITFRAMES_DIR (or each --dir), owned\n"
    "by you (root: anyone), with the content their names say, that no running\n"
    "process holds; kept files are listed with the reason.\n"
    "  --older-than D only files last written more than D ago (90, 90s, 30m, 12h, 7d)\n"
    "  --dry-run      say what would be removed, remove nothing\n"
    "Exit status: 0 done; 1 a file could not be removed; 2 usage error.\n"
    "\n"
    "enable, disable and status talk to a running process started with\n"
    "JITFRAMES_CONTROL=1 (or JF_CONFIG_CONTROL): PID as this side sees it (the\n"
    "process may run in its own pid, mount and, for root, network namespaces).\n"
    "Only the process's own user or root is obeyed.\n"
    "  enable         turn sinks on (SINKS as in $JITFRAMES: perfmap,jitdump,gdb,\n"
    "                 unwind, all); regions already live are written at once\n"
    "  disable        turn sinks off; files written so far stay\n"
    "  status         enabled sinks, live regions, counters and files (--json: one\n"
    "                 JSON object, see tools/README.md)\n"
    "Exit status: 0 done; 1 the process answered with an error (not your process,\n"
    "a sink could not start), printed; 2 usage error; 4 no such process, or it does\n"
    "not listen (not started with JITFRAMES_CONTROL=1), or cannot be reached.\n"
    "\n"
    "record turns on what a recording needs (the perf map; with --call-graph dwarf,\n"
    "the default, the jitdump too), runs perf record -p PID for S seconds (default\n"
    "10; Ctrl-C ends it early), puts the sinks back as they were, and leaves\n"
    "perf.data (and perf.jit.data) and flamegraph.html in DIR; it removes the files\n"
    "it caused outside DIR unless --keep. jitframes record --help: every option.\n"
    "\n"
    "regions and perfmap read the regions a process published in its memory (any\n"
    "process whose jitframes was initialised; nothing switched on in advance): you\n"
    "need the right to ptrace it. regions lists them (--json: one JSON object);\n"
    "perfmap prints a perf map of them, or creates FILE (-o; never overwritten);\n"
    "--jitdump FILE also creates a jitdump with their code bytes, read from it.\n"
    "Exit status: 0 done; 1 no table, not readable, or FILE not created; 2 usage.\n";

static int usage(FILE *out, int status)
{
    fputs(usage_text, out);
    return status;
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

/* One file: read it, pick its format, run the command. */
static int run_file(job j)
{
    size_t len = 0;
    const char *why = NULL;
    uint8_t *buf = read_input(j.path, &len, &why);
    if (!buf) {
        fprintf(stderr, "%s: %s\n", j.path, why);
        return EXIT_USAGE;
    }
    int rc;
    if (j.kind == KIND_UNKNOWN) {
        j.kind = detect_by_content_and_name(j.path, buf, len, &j.how);
        if (j.kind == KIND_ELF && has_name(j.path, "jitted-", ".so")) {
            fprintf(stderr, "%s: perf inject's jitted-*.so is an ELF shared object, not a GDB JIT "
                            "symfile: not checked (--format=symfile applies the symfile rules)\n",
                    j.path);
            free(buf);
            return EXIT_USAGE;
        }
    }
    if (j.kind == KIND_JITDUMP)
        rc = run_jitdump(&j, buf, len);
    else if (j.kind == KIND_ELF)
        rc = run_elf(&j, buf, len);
    else
        rc = run_perfmap(&j, buf, len);
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    job j = {NULL, NULL, KIND_UNKNOWN, "given with --format", 0};
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        if (strcmp(argv[i], "--help") == 0)
            return usage(stdout, EXIT_VALID);
        if (strcmp(argv[i], "--version") == 0) {
            printf("jitframes %s\n", JITFRAMES_VERSION);
            return EXIT_VALID;
        }
        if (strcmp(argv[i], "--json") == 0)
            j.json = 1;
        else if (strncmp(argv[i], "--format=", 9) != 0 || parse_format(argv[i] + 9, &j.kind) != 0)
            return usage(stderr, EXIT_USAGE);
    }
    if (i < argc && strcmp(argv[i], "-h") == 0)
        return usage(stdout, EXIT_VALID);
    if (i < argc && strcmp(argv[i], "clean") == 0)
        return jft_clean_command(argc - i, argv + i);
    if (i < argc && strcmp(argv[i], "record") == 0)
        return jft_record_command(argc - i, argv + i);
    if (i < argc && jft_is_table_command(argv[i]))
        return jft_table_command(argc - i, argv + i);
    if (i < argc && jft_is_control_command(argv[i]))
        return jft_control_command(argc - i, argv + i, j.json);
    if (argc - i < 2 || (strcmp(argv[i], "dump") != 0 && strcmp(argv[i], "check") != 0))
        return usage(stderr, EXIT_USAGE);
    j.cmd = argv[i++];
    /* The worst file decides: refused/unreadable, then invalid, then warnings. */
    static const int severity[] = {0, 2, 3, 1}; /* by exit status */
    int status = EXIT_VALID;
    for (; i < argc; i++) {
        j.path = argv[i];
        int rc = run_file(j);
        if (severity[rc] > severity[status])
            status = rc;
    }
    return status;
}
