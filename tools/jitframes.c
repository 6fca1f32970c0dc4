/*
 * jitframes — inspect and validate the files jitframes (or any runtime)
 * writes for perf: `jitframes dump FILE` prints every entry or record,
 * `jitframes check FILE` validates the format and stops with
 * "FILE:WHERE: what is wrong" at the first problem (exit 1).
 * The format is detected from the content: jitdump magic in either byte
 * order, an ELF magic (a GDB JIT symfile), anything else is a perf map.
 */
#define _GNU_SOURCE
#include "elf_reader.h"
#include "jitdump_reader.h"
#include "perfmap_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum file_kind { KIND_PERFMAP, KIND_JITDUMP, KIND_ELF };

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

/* Read a whole file (regular or not) into a malloc'd buffer. */
static uint8_t *read_file(const char *path, size_t *len_out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        if (len == cap) {
            uint8_t *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                errno = ENOMEM;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n == 0)
            break;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int saved = errno;
            free(buf);
            buf = NULL;
            errno = saved;
            break;
        }
        len += (size_t)n;
    }
    int saved = errno;
    close(fd);
    errno = saved;
    *len_out = len;
    return buf;
}

static void print_perfmap_entry(void *ctx, const pm_entry *e)
{
    (void)ctx;
    printf("%6" PRIu64 "  %016" PRIx64 "-%016" PRIx64 "  %8" PRIu64 "  %.*s\n", e->line, e->start,
           e->start + e->size, e->size, (int)e->name_len, e->name);
}

static void print_error(const char *path, const jft_error *err, enum file_kind kind)
{
    if (kind == KIND_PERFMAP)
        fprintf(stderr, "%s:%" PRIu64 ": %s\n", path, err->where, err->msg);
    else
        fprintf(stderr, "%s:0x%" PRIx64 ": %s\n", path, err->where, err->msg);
}

static int run_perfmap(const char *cmd, const char *path, const uint8_t *buf, size_t len)
{
    jft_error err = {0};
    if (strcmp(cmd, "dump") == 0) {
        printf("# perf map %s\n#  line  start            end                   size  name\n", path);
        if (pm_parse(buf, len, print_perfmap_entry, NULL, &err) == 0)
            return 0;
        print_error(path, &err, KIND_PERFMAP);
        return 1;
    }
    pm_summary s;
    if (pm_check(buf, len, &s, &err)) {
        print_error(path, &err, KIND_PERFMAP);
        return 1;
    }
    printf("%s: valid perf map: %" PRIu64 " entries", path, s.entries);
    if (s.entries)
        printf(" covering %" PRIx64 "-%" PRIx64, s.lowest, s.highest);
    if (s.duplicates)
        printf(", %" PRIu64 " exact duplicate lines", s.duplicates);
    printf("\n");
    return 0;
}

static int run_jitdump(const char *cmd, const char *path, const uint8_t *buf, size_t len)
{
    jft_error err = {0};
    jd_summary s;
    int dump = strcmp(cmd, "dump") == 0;
    if (dump)
        printf("# jitdump %s\n", path);
    int rc = dump ? jd_dump(buf, len, stdout, &s, &err) : jd_check(buf, len, &s, &err);
    if (rc) {
        print_error(path, &err, KIND_JITDUMP);
        return 1;
    }
    printf("%s%s: valid jitdump: %" PRIu64 " records (%" PRIu64 " loads, %" PRIu64
           " with unwind info, %" PRIu64 " with line info, %" PRIu64 " moves, %" PRIu64 " closes)\n",
           dump ? "# " : "", path, s.records, s.loads, s.unwind_infos, s.debug_infos, s.moves,
           s.closes);
    return 0;
}

static int run_elf(const char *cmd, const char *path, const uint8_t *buf, size_t len)
{
    jft_error err = {0};
    elf_summary s;
    int dump = strcmp(cmd, "dump") == 0;
    if (dump)
        printf("# symfile %s\n", path);
    int rc = dump ? elf_dump(buf, len, stdout, &s, &err) : elf_check(buf, len, &s, &err);
    if (rc) {
        print_error(path, &err, KIND_ELF);
        return 1;
    }
    printf("%s%s: valid symfile: %" PRIu64 " sections, %" PRIu64 " functions, %" PRIu64 " FDEs\n",
           dump ? "# " : "", path, s.sections, s.functions, s.fdes);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: jitframes dump FILE\n"
                    "       jitframes check FILE\n"
                    "FILE is a perf map (perf-<pid>.map), a jitdump (jit-<pid>.dump) or a\n"
                    "GDB JIT symfile (an ELF64 object).\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "dump") != 0 && strcmp(argv[1], "check") != 0))
        return usage();
    const char *path = argv[2];
    size_t len;
    uint8_t *buf = read_file(path, &len);
    if (!buf) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return 2;
    }
    int rc;
    switch (detect_kind(buf, len)) {
    case KIND_JITDUMP:
        rc = run_jitdump(argv[1], path, buf, len);
        break;
    case KIND_ELF:
        rc = run_elf(argv[1], path, buf, len);
        break;
    default:
        rc = run_perfmap(argv[1], path, buf, len);
        break;
    }
    free(buf);
    return rc;
}
