/*
 * `jitframes clean`'s second half: perf's build-id cache ($PERF_BUILDID_DIR,
 * else ~/.debug). For every jitted-<pid>-<n>.so that `perf inject --jit`
 * reads, perf keeps a copy as
 *   <cache>/<its directory>/jitted-<pid>-<n>.so/<build-id>/{elf,probes}
 * and a symlink <cache>/.build-id/<2 hex>/<the rest> pointing at the
 * <build-id> directory as "../../<its directory>/jitted-...so/<build-id>".
 * An entry goes only when all of this is proven:
 *   - its name is jitted-<pid>-<n>.so (canonical decimal), it is a
 *     directory (the walk never follows a symlink) owned by the caller
 *     (root: anyone);
 *   - it holds only build-id directories (hex names) of regular files,
 *     all owned likewise, none open or mapped by a running process;
 *   - its process is gone, and with --older-than it is old enough.
 * A .build-id symlink goes only if it points exactly at a removed build-id
 * directory; directories the removal leaves empty go too (rmdir, never a
 * recursive removal). Everything is removed relative to directory
 * descriptors opened with O_NOFOLLOW.
 */
#define _GNU_SOURCE
#include "clean_litter.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MAX_DEPTH = 32, MAX_BUILD_IDS = 64, MAX_FILES = 16 };

typedef struct cache_walk {
    const clean_options *o;
    const held_files *held;
    tally *t;
    int build_ids; /* <cache>/.build-id, or -1 */
    uid_t me;
} cache_walk;

static int open_dir_at(int dirfd, const char *name)
{
    return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* A stream over the directory open as fd, from its start (fd stays open;
 * a dup shares its offset, hence the rewind). */
static DIR *reopen_dir(int fd)
{
    int copy = dup(fd);
    DIR *d = copy >= 0 ? fdopendir(copy) : NULL;
    if (!d && copy >= 0)
        close(copy);
    if (d)
        rewinddir(d);
    return d;
}

/* The next entry other than "." and "..", or NULL. */
static struct dirent *next_entry(DIR *d)
{
    struct dirent *e;
    while ((e = readdir(d)) && (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0))
        ;
    return e;
}

static int owned(const cache_walk *w, const struct stat *st)
{
    return w->me == 0 || st->st_uid == w->me;
}

/* A build-id: 2 to 128 hex digits (perf's are 40: SHA-1). */
static int is_build_id(const char *name)
{
    size_t n = strspn(name, "0123456789abcdef");
    return n >= 2 && n <= 128 && name[n] == '\0';
}

/* Why the build-id directory `name` in dirfd is not just perf's copy, or
 * NULL; its files' bytes added to *bytes. */
static const char *check_build_id_dir(const cache_walk *w, int parent, const char *name,
                                      unsigned long long *bytes)
{
    int fd = open_dir_at(parent, name);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return "a build-id directory cannot be read";
    }
    const char *why = NULL;
    int files = 0;
    for (struct dirent *e; !why && (e = next_entry(d));) {
        struct stat st;
        if (++files > MAX_FILES || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            why = "it holds something other than perf's regular files";
        else if (!owned(w, &st))
            why = "it holds another user's file";
        else if (jft_clean_is_held(w->held, &st))
            why = "a running process has a file of it open or mapped";
        else
            *bytes += (unsigned long long)st.st_size;
    }
    closedir(d);
    return why;
}

/* Why the entry (open as fd) stays, or NULL: its content checked. */
static const char *check_entry(const cache_walk *w, int fd, unsigned long long *bytes)
{
    DIR *d = reopen_dir(fd);
    if (!d) {
        return "it cannot be read";
    }
    const char *why = NULL;
    int ids = 0;
    for (struct dirent *e; !why && (e = next_entry(d));) {
        struct stat st;
        if (++ids > MAX_BUILD_IDS || !is_build_id(e->d_name) ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
            why = "it holds something other than build-id directories";
        else if (!owned(w, &st))
            why = "it holds another user's directory";
        else
            why = check_build_id_dir(w, dirfd(d), e->d_name, bytes);
    }
    closedir(d);
    return why;
}

/* Remove .build-id/<xx>/<rest> if it is a symlink to exactly `target`. */
static void unlink_build_id_link(const cache_walk *w, const char *id, const char *target)
{
    char xx[3] = {id[0], id[1], '\0'}, link[PATH_MAX];
    int fd = w->build_ids >= 0 ? open_dir_at(w->build_ids, xx) : -1;
    if (fd < 0)
        return;
    ssize_t n = readlinkat(fd, id + 2, link, sizeof link - 1);
    if (n > 0) {
        link[n] = '\0';
        if (strcmp(link, target) == 0)
            (void)unlinkat(fd, id + 2, 0);
    }
    close(fd);
    (void)unlinkat(w->build_ids, xx, AT_REMOVEDIR); /* only if now empty */
}

/* Remove a checked entry: its files, build-id directories and links, then
 * itself. 0, or -1 with errno. */
static int remove_entry(const cache_walk *w, int parent, const char *name, int fd, const char *rel)
{
    DIR *d = reopen_dir(fd);
    if (!d) {
        return -1;
    }
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!is_build_id(e->d_name))
            continue;
        int id_fd = open_dir_at(dirfd(d), e->d_name);
        DIR *files = id_fd >= 0 ? fdopendir(id_fd) : NULL;
        for (struct dirent *f; files && (f = next_entry(files));)
            if (unlinkat(dirfd(files), f->d_name, 0) != 0)
                rc = -1;
        if (files)
            closedir(files);
        else if (id_fd >= 0)
            close(id_fd);
        char target[PATH_MAX + 300];
        if (snprintf(target, sizeof target, "../../%s/%s", rel, e->d_name) < (int)sizeof target)
            unlink_build_id_link(w, e->d_name, target);
        if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) != 0)
            rc = -1;
    }
    closedir(d);
    return rc == 0 ? unlinkat(parent, name, AT_REMOVEDIR) : -1;
}

/* One jitted-<pid>-<n>.so entry; 1 if it was removed. */
static int visit_entry(const cache_walk *w, int parent, const char *name, const char *rel, long pid,
                       const struct stat *st)
{
    if (!owned(w, st))
        return 0; /* another user's: none of ours, not even mentioned */
    const char *root = w->o->cache_dir;
    int fd = open_dir_at(parent, name);
    if (fd < 0)
        return 0;
    unsigned long long bytes = 0;
    const char *why_gone = NULL, *keep = NULL;
    if (w->o->older_than >= 0 && (long long)(time(NULL) - st->st_mtime) < w->o->older_than)
        keep = "newer than --older-than";
    else if (!(why_gone = jft_clean_gone_reason(pid, st)))
        keep = "its process is running";
    else
        keep = check_entry(w, fd, &bytes);
    if (keep) {
        printf("kept %s/%s: %s\n", root, rel, keep);
        w->t->kept++;
        close(fd);
        return 0;
    }
    if (!w->o->dry_run && remove_entry(w, parent, name, fd, rel) != 0) {
        fprintf(stderr, "jitframes clean: cannot remove %s/%s: %s\n", root, rel, strerror(errno));
        w->t->failed++;
        close(fd);
        return 0;
    }
    close(fd);
    printf("%s %s/%s (process %ld: %s)\n", w->o->dry_run ? "would remove" : "removed", root, rel, pid,
           why_gone);
    w->t->removed++;
    w->t->bytes += bytes;
    return 1;
}

/* Walk the directory dir (rel from the cache's root); 1 if anything in
 * it was removed. */
static int walk(const cache_walk *w, int dir, const char *rel, int depth)
{
    DIR *d = reopen_dir(dir);
    if (!d) {
        return 0;
    }
    int removed = 0;
    for (struct dirent *e; (e = next_entry(d));) {
        struct stat st;
        if ((depth == 0 && strcmp(e->d_name, ".build-id") == 0) ||
            fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
            continue;
        char sub[PATH_MAX];
        if (snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name) >= (int)sizeof sub)
            continue;
        long pid;
        file_kind kind;
        if (jft_clean_parse_name(e->d_name, &pid, &kind) && kind == CLEAN_INJECTED) {
            removed |= visit_entry(w, dir, e->d_name, sub, pid, &st);
            continue;
        }
        int fd = depth < MAX_DEPTH ? open_dir_at(dir, e->d_name) : -1;
        if (fd < 0)
            continue;
        int below = walk(w, fd, sub, depth + 1);
        close(fd);
        /* A directory our removals emptied (perf made it for them). */
        if (below && !w->o->dry_run && owned(w, &st) && unlinkat(dir, e->d_name, AT_REMOVEDIR) == 0)
            below = 1;
        removed |= below;
    }
    closedir(d);
    return removed;
}

void jft_clean_build_id_cache(const clean_options *o, const held_files *held, tally *t)
{
    int root = open(o->cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) {
        if (errno != ENOENT)
            fprintf(stderr, "jitframes clean: %s: %s\n", o->cache_dir, strerror(errno));
        return;
    }
    cache_walk w = {o, held, t, open_dir_at(root, ".build-id"), geteuid()};
    walk(&w, root, "", 0);
    if (w.build_ids >= 0)
        close(w.build_ids);
    close(root);
}
