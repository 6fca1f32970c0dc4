/*
 * `jitframes clean`: remove the perf maps, jitdumps and `perf inject`
 * leftovers (jitted-<pid>-<n>.so) that processes which no longer exist left
 * in /tmp and $JITFRAMES_DIR, or in each --dir instead. A file goes only
 * when all of this is proven:
 *   - its name is one of those three patterns, and it is a regular file
 *     (lstat: a symlink is never followed nor removed);
 *   - its content is what the name says (perf map lines, the jitdump magic
 *     with the name's pid in its header, an ELF object), or it is a jitdump
 *     whose writer died before its header was complete: empty, all zeros,
 *     or a partial header and zeros;
 *   - it has one link (another name for it may be anyone's file), and its
 *     name's pid is in canonical decimal (perf-0123.map is not pid 123's);
 *   - the caller owns it (root: anyone does);
 *   - its process is gone: no /proc/<pid>, or the process there started
 *     after the file was last written (the pid was reused);
 *   - no running process has it open or mapped (a process in another pid
 *     namespace writes a pid we cannot see as its own);
 *   - with --older-than D, it was last written more than D ago.
 * Removal is unlinkat() relative to the directory, which never follows a
 * symlink put in the file's place meanwhile.
 */
#define _GNU_SOURCE
#include "clean_cmd.h"
#include "cli_args.h"
#include "exit_status.h"
#include "clean_litter.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* ---- the files running processes hold ----------------------------------- */

static void hold_id(held_files *h, dev_t dev, ino_t ino)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 256;
        file_id *bigger = realloc(h->ids, cap * sizeof *bigger);
        if (!bigger)
            return; /* then fewer files are known held: clean keeps fewer, never more */
        h->ids = bigger;
        h->cap = cap;
    }
    h->ids[h->n++] = (file_id){dev, ino};
}

/* Every file a process has open (its fd links, stat() through them). */
static void hold_open_files(held_files *h, const char *pid)
{
    char path[300];
    snprintf(path, sizeof path, "/proc/%s/fd", pid);
    DIR *d = opendir(path);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st;
        if (e->d_name[0] != '.' && fstatat(dirfd(d), e->d_name, &st, 0) == 0 && S_ISREG(st.st_mode))
            hold_id(h, st.st_dev, st.st_ino);
    }
    closedir(d);
}

/* Every file a process has mapped: /proc/PID/maps gives "major:minor inode". */
static void hold_mapped_files(held_files *h, const char *pid)
{
    char path[300], line[4096];
    snprintf(path, sizeof path, "/proc/%s/maps", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        unsigned major, minor;
        unsigned long long ino;
        if (sscanf(line, "%*s %*s %*s %x:%x %llu", &major, &minor, &ino) == 3 && ino != 0)
            hold_id(h, makedev(major, minor), (ino_t)ino);
    }
    fclose(f);
}

static void collect_held_files(held_files *h)
{
    DIR *d = opendir("/proc");
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        hold_open_files(h, e->d_name);
        hold_mapped_files(h, e->d_name);
    }
    closedir(d);
}

int jft_clean_is_held(const held_files *h, const struct stat *st)
{
    for (size_t i = 0; i < h->n; i++)
        if (h->ids[i].ino == st->st_ino && h->ids[i].dev == st->st_dev)
            return 1;
    return 0;
}

/* ---- is the writer gone? ------------------------------------------------- */

/* When the process `pid` started, in seconds since the epoch; -1 if there is
 * no such process (or it cannot be told). */
static long long process_start(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    unsigned long long ticks = 0;
    if (!p ||
        sscanf(p + 2, "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
               &ticks) != 1)
        return -1;
    f = fopen("/proc/stat", "re");
    long long boot = -1;
    while (f && fgets(buf, sizeof buf, f))
        if (sscanf(buf, "btime %lld", &boot) == 1)
            break;
    if (f)
        fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    return boot < 0 || hz <= 0 ? -1 : boot + (long long)(ticks / (unsigned long long)hz);
}

/* Why the file's process is gone, or NULL if it may still be writing. */
const char *jft_clean_gone_reason(long pid, const struct stat *st)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld", pid);
    struct stat proc;
    if (stat(path, &proc) != 0)
        return errno == ENOENT ? "no such process" : NULL;
    long long start = process_start(pid);
    /* A second of margin: both clocks count whole seconds here. */
    if (start >= 0 && (long long)st->st_mtime + 1 < start)
        return "its pid now belongs to a process started after the file was written";
    return NULL;
}

/* ---- is it what its name says? ------------------------------------------- */

static size_t read_head(int dirfd, const char *name, unsigned char *buf, size_t cap)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, cap);
    close(fd);
    return n > 0 ? (size_t)n : 0;
}

/* Lines of "<hex> <hex> <name>" (0x prefixes allowed), or blank ones (the
 * space jitframes reserves): any perf map writer's, never a stranger's file.
 * Empty is a map nothing was written to yet. */
static int looks_like_perf_map(const unsigned char *buf, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && buf[end] != '\n')
            end++;
        if (end == len && len == 4096)
            break; /* a line cut by our read: judged by those before */
        int fields = 0;
        for (size_t k = i; k < end && fields < 2;) {
            size_t start = k;
            if (k + 1 < end && buf[k] == '0' && buf[k + 1] == 'x')
                k += 2;
            while (k < end && isxdigit(buf[k]))
                k++;
            if (k == start || k == end || buf[k] != ' ')
                return 0;
            k++;
            fields++;
        }
        int blank = 1;
        for (size_t k = i; k < end; k++)
            blank &= buf[k] == ' ' || buf[k] == '#';
        if (fields < 2 && !blank)
            return 0;
        i = end + 1;
    }
    return 1;
}

static int looks_like_jitdump(const unsigned char *buf, size_t len, long pid)
{
    if (len < 40)
        return 0;
    int le = memcmp(buf, "DTiJ", 4) == 0, be = memcmp(buf, "JiTD", 4) == 0;
    const unsigned char *p = buf + 20; /* the header's pid */
    uint32_t header_pid = le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                                   (uint32_t)p[3] << 24
                             : (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 |
                                   (uint32_t)p[0] << 24;
    /* A process in its own pid namespace writes its inner pid in both. */
    return (le || be) && header_pid == (uint32_t)pid;
}

/* The largest pid Linux hands out (PID_MAX_LIMIT, 4 << 20 on 64-bit). */
#define PID_MAX_LIMIT 4194304L

/* A number in canonical decimal at s: "0" or digits without a leading zero,
 * at most `max`; its end in *end, or NULL. The pid a writer puts in a name
 * is printed this way; "perf-0123.map" is someone else's name for a file
 * that is not pid 123's. */
const char *jft_clean_canonical_number(const char *s, unsigned long long max, unsigned long long *v)
{
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n > 20 || (s[0] == '0' && n > 1))
        return NULL;
    errno = 0;
    *v = strtoull(s, NULL, 10);
    return errno || *v > max ? NULL : s + n;
}

/* The pid in NAME if it has one of the three forms, with its kind. */
int jft_clean_parse_name(const char *name, long *pid, file_kind *kind)
{
    static const struct {
        const char *prefix, *suffix;
        file_kind kind;
    } forms[] = {
        {"perf-", ".map", CLEAN_MAP}, {"jit-", ".dump", CLEAN_DUMP}, {"jitted-", ".so", CLEAN_INJECTED}};
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        size_t plen = strlen(forms[f].prefix);
        if (strncmp(name, forms[f].prefix, plen) != 0)
            continue;
        unsigned long long v, index;
        const char *end = jft_clean_canonical_number(name + plen, PID_MAX_LIMIT, &v);
        if (!end || v == 0)
            return 0;
        if (forms[f].kind == CLEAN_INJECTED && /* jitted-<pid>-<n>.so */
            (*end != '-' || !(end = jft_clean_canonical_number(end + 1, UINT64_MAX, &index))))
            return 0;
        if (strcmp(end, forms[f].suffix) != 0)
            return 0;
        *pid = (long)v;
        *kind = forms[f].kind;
        return 1;
    }
    return 0;
}

/* The largest dump a writer killed during start-up leaves: its first
 * reservation (jitframes': 260 KiB) with room to spare. */
#define UNWRITTEN_DUMP_MAX ((off_t)4 << 20)

static int all_zero(const unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i])
            return 0;
    return 1;
}

/* A dump its writer was killed before finishing the header of: empty, or
 * all zeros (reserved and mapped, nothing written), or a partial header
 * (the magic, no pid or this one) and zeros after it. Nothing in it. */
static int unwritten_jitdump(int dirfd, const char *name, long pid)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return 0;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= UNWRITTEN_DUMP_MAX;
    unsigned char buf[65536];
    ssize_t n;
    for (off_t at = 0; ok && (n = read(fd, buf, sizeof buf)) > 0; at += n) {
        size_t skip = 0;
        if (at == 0 && n >= 24 && !all_zero(buf, 24)) {
            unsigned char no_pid[4] = {0};
            ok = (memcmp(buf, "DTiJ", 4) == 0 || memcmp(buf, "JiTD", 4) == 0) &&
                 (memcmp(buf + 20, no_pid, 4) == 0 || looks_like_jitdump(buf, (size_t)n, pid));
            skip = n < 40 ? (size_t)n : 40; /* the header's other fields: any value */
        }
        ok = ok && all_zero(buf + skip, (size_t)n - skip);
    }
    close(fd);
    return ok;
}

static int content_matches(int dirfd, const char *name, file_kind kind, long pid)
{
    unsigned char buf[4096];
    size_t len = read_head(dirfd, name, buf, sizeof buf);
    switch (kind) {
    case CLEAN_MAP: return looks_like_perf_map(buf, len);
    case CLEAN_DUMP: return looks_like_jitdump(buf, len, pid) || unwritten_jitdump(dirfd, name, pid);
    default: return len >= 4 && memcmp(buf, "\177ELF", 4) == 0;
    }
}

/* ---- one directory ------------------------------------------------------- */

/* Why the file stays (printed), or NULL when it may go. */
static const char *keep_reason(int dirfd, const char *name, const struct stat *st, file_kind kind, long pid,
                               const clean_options *o, const held_files *held, const char **why_gone)
{
    if (!S_ISREG(st->st_mode))
        return "not a regular file";
    /* Another name for the same file may be anyone's: removing ours would
     * not free it, and the name we saw proves nothing about the file. */
    if (st->st_nlink > 1)
        return "it has more than one hard link";
    if (o->older_than >= 0 && (long long)(time(NULL) - st->st_mtime) < o->older_than)
        return "newer than --older-than";
    if (!(*why_gone = jft_clean_gone_reason(pid, st)))
        return "its process is running";
    if (jft_clean_is_held(held, st))
        return "a running process has it open or mapped";
    if (!content_matches(dirfd, name, kind, pid))
        return "its content is not what its name says";
    return NULL;
}

static void clean_dir(const char *dir, const clean_options *o, const held_files *held, tally *t)
{
    DIR *d = opendir(dir);
    if (!d) {
        if (errno != ENOENT)
            fprintf(stderr, "jitframes clean: %s: %s\n", dir, strerror(errno));
        return;
    }
    uid_t me = geteuid();
    for (struct dirent *e; (e = readdir(d));) {
        long pid;
        file_kind kind;
        struct stat st;
        if (!jft_clean_parse_name(e->d_name, &pid, &kind) ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (me != 0 && st.st_uid != me)
            continue; /* another user's files are none of ours: not even mentioned */
        const char *why_gone = NULL;
        const char *keep = keep_reason(dirfd(d), e->d_name, &st, kind, pid, o, held, &why_gone);
        if (keep) {
            printf("kept %s/%s: %s\n", dir, e->d_name, keep);
            t->kept++;
            continue;
        }
        if (!o->dry_run && unlinkat(dirfd(d), e->d_name, 0) != 0) {
            fprintf(stderr, "jitframes clean: cannot remove %s/%s: %s\n", dir, e->d_name, strerror(errno));
            t->failed++;
            continue;
        }
        printf("%s %s/%s (process %ld: %s)\n", o->dry_run ? "would remove" : "removed", dir, e->d_name, pid,
               why_gone);
        t->removed++;
        t->bytes += (unsigned long long)st.st_size;
    }
    closedir(d);
}

/* ---- the command --------------------------------------------------------- */

/* "90", "90s", "30m", "12h", "7d" -> seconds; -1 if malformed. */
static long long parse_duration(const char *s)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v < 0)
        return -1;
    long long unit = *end == '\0' || strcmp(end, "s") == 0 ? 1
                     : strcmp(end, "m") == 0               ? 60
                     : strcmp(end, "h") == 0               ? 3600
                     : strcmp(end, "d") == 0               ? 86400
                                                           : -1;
    return unit < 0 || v > INT64_MAX / unit ? -1 : v * unit;
}

static int add_dir(clean_options *o, const char *dir)
{
    for (int i = 0; i < o->n_dirs; i++)
        if (strcmp(o->dirs[i], dir) == 0)
            return 0;
    if (o->n_dirs == MAX_DIRS)
        return -1;
    o->dirs[o->n_dirs++] = dir;
    return 0;
}

/* perf's build-id cache as perf finds it: $PERF_BUILDID_DIR, else
 * ~/.debug; NULL if neither is set. */
static const char *default_cache_dir(void)
{
    static char path[4096];
    const char *env = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
    if (env && *env)
        return env;
    if (!home || !*home || snprintf(path, sizeof path, "%s/.debug", home) >= (int)sizeof path)
        return NULL;
    return path;
}

static const jft_option clean_options_table[] = {
    {"--dry-run", 0, 0}, {"--older-than", 0, 1}, {"--dir", 0, 1}, {"--buildid-dir", 0, 1}, {NULL, 0, 0}};

static int on_clean_option(void *ctx, int which, const char *value)
{
    clean_options *o = ctx;
    if (which == 0)
        o->dry_run = 1;
    else if (which == 1)
        return (o->older_than = parse_duration(value)) >= 0 ? 0 : -1;
    else if (which == 2)
        return add_dir(o, value);
    else
        o->cache_dir = value;
    return 0;
}

/* --dir replaces the default directories: /tmp (perf maps always live
 * there), $JITFRAMES_DIR and perf's build-id cache, which then is cleaned
 * only if --buildid-dir names it. */
static int parse_clean_options(int argc, char **argv, clean_options *o)
{
    *o = (clean_options){.older_than = -1};
    int n_operands;
    int parsed = jft_parse_args(argc, argv, clean_options_table, on_clean_option, o, &n_operands);
    if (parsed == JFT_ARGS_OK && n_operands) {
        fprintf(stderr, "jitframes clean: takes no operand (%s): directories are given with --dir\n",
                argv[1]);
        jft_usage_synopsis(stderr, "clean");
        return JFT_ARGS_BAD;
    }
    if (parsed != JFT_ARGS_OK)
        return parsed;
    const char *env = getenv("JITFRAMES_DIR");
    if (o->n_dirs == 0) {
        add_dir(o, "/tmp");
        if (env && *env)
            add_dir(o, env);
        if (!o->cache_dir)
            o->cache_dir = default_cache_dir();
    }
    return JFT_ARGS_OK;
}

int jft_clean_command(int argc, char **argv)
{
    clean_options o;
    int parsed = parse_clean_options(argc, argv, &o);
    if (parsed == JFT_ARGS_HELP) {
        jft_usage(stdout, "clean");
        return JFT_EXIT_OK;
    }
    if (parsed != JFT_ARGS_OK)
        return JFT_EXIT_USAGE;
    held_files held = {0};
    collect_held_files(&held);
    tally t = {0};
    for (int i = 0; i < o.n_dirs; i++)
        clean_dir(o.dirs[i], &o, &held, &t);
    if (o.cache_dir)
        jft_clean_build_id_cache(&o, &held, &t);
    free(held.ids);
    printf("clean: %s %llu files (%llu bytes), kept %llu\n", o.dry_run ? "would remove" : "removed",
           t.removed, t.bytes, t.kept);
    return t.failed ? JFT_EXIT_FAILED : JFT_EXIT_OK;
}
