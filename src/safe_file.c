/*
 * Safe creation of per-process files in /tmp-like directories (see
 * safe_file.h). The stale-versus-shared decision matters because a host
 * runtime may have its own perf map writer: its file must be appended to,
 * while a file left by a dead process that had our pid must be replaced.
 */
#define _GNU_SOURCE
#include "safe_file.h"

#include "error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Does any descriptor of this process other than `self_fd` refer to st? */
static int open_elsewhere_in_process(const struct stat *st, int self_fd)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end || end == e->d_name || fd == self_fd || fd == dirfd(d))
            continue;
        struct stat other;
        if (fstat((int)fd, &other) == 0 && other.st_dev == st->st_dev && other.st_ino == st->st_ino)
            found = 1;
    }
    closedir(d);
    return found;
}

/* This process's start time on the CLOCK_REALTIME scale, in ns (0 if unknown). */
static int64_t process_start_realtime_ns(void)
{
    FILE *f = fopen("/proc/self/stat", "re");
    if (!f)
        return 0;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* Field 22 (starttime, clock ticks since boot); skip "pid (comm)" safely. */
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    unsigned long long ticks = 0;
    int field = 2;
    for (p++; *p && field < 22; p++)
        if (*p == ' ')
            field++;
    if (field != 22 || sscanf(p, "%llu", &ticks) != 1)
        return 0;
    long hz = sysconf(_SC_CLK_TCK);
    struct timespec real, boot;
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_BOOTTIME, &boot);
    int64_t boot_ns = (int64_t)boot.tv_sec * 1000000000 + boot.tv_nsec;
    int64_t real_ns = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec;
    int64_t start_since_boot = (int64_t)ticks * (1000000000 / (hz > 0 ? hz : 100));
    return real_ns - (boot_ns - start_since_boot);
}

/* A file is this process's if it is open here or was modified since we
 * started (two clock ticks of slack for the tick granularity). */
static int belongs_to_this_process(const struct stat *st, int fd)
{
    if (open_elsewhere_in_process(st, fd))
        return 1;
    int64_t start = process_start_realtime_ns();
    int64_t mtime = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    return start == 0 || mtime >= start - 20000000;
}

/* An existing file at path: 1 if this process writes or wrote it, 0 if it
 * is stale (ours, left by a dead process that had our pid), or a negative
 * JF_E* code if it is not ours to touch. */
static int inspect_existing(int fd, const char *path)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return jf__fail(jf__errno_code(errno), "%s: fstat: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return jf__fail(JF_EUNSAFE, "%s: not a regular file; refusing to use it", path);
    if (st.st_uid != geteuid())
        return jf__fail(JF_EUNSAFE, "%s: owned by uid %u, not by us (uid %u); refusing to use it", path,
                        (unsigned)st.st_uid, (unsigned)geteuid());
    if (st.st_nlink != 1)
        return jf__fail(JF_EUNSAFE, "%s: has %lu hard links; refusing to use it", path,
                        (unsigned long)st.st_nlink);
    return belongs_to_this_process(&st, fd);
}

static int check_existing(int fd, const char *path)
{
    int kept = inspect_existing(fd, path);
    if (kept != 0)
        return kept;
    if (ftruncate(fd, 0) != 0 || fchmod(fd, 0600) != 0)
        return jf__fail(jf__errno_code(errno), "%s: cannot replace stale file: %s", path, strerror(errno));
    return 0;
}

/* Why `path` could not be created, in the words of the case: the common
 * ones name the directory at fault. */
static int create_failed(const char *dir, const char *path, int err)
{
    int code = jf__errno_code(err);
    switch (err) {
    case ENOENT: return jf__fail(code, "cannot create %s: the directory %s does not exist", path, dir);
    case ENOTDIR: return jf__fail(code, "cannot create %s: %s is not a directory", path, dir);
    case EACCES: return jf__fail(code, "cannot create %s: no permission to write in %s", path, dir);
    case EROFS: return jf__fail(code, "cannot create %s: %s is on a read-only file system", path, dir);
    default: return jf__fail(code, "cannot create %s: %s", path, strerror(err));
    }
}

/* Open the file already at path (flags without O_CREAT): the fd, -1 with
 * errno ENOENT if it went away meanwhile, or a negative JF_E* code. */
static int open_existing(const char *path, int flags)
{
    /* O_NONBLOCK: a FIFO planted at the path must not block us. */
    int fd = open(path, flags | O_NONBLOCK);
    if (fd >= 0 || errno == ENOENT)
        return fd;
    if (errno == ELOOP)
        return jf__fail(JF_EUNSAFE, "%s is a symbolic link; refusing to follow it", path);
    if (errno == ENXIO || errno == EISDIR) /* FIFO without reader, socket, directory */
        return jf__fail(JF_EUNSAFE, "%s: not a regular file; refusing to use it", path);
    return jf__fail(jf__errno_code(errno), "cannot open %s: %s", path, strerror(errno));
}

int jf__safe_file_open(const char *dir, const char *name, int extra_flags, int *reused)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return jf__fail(JF_EINVAL, "path too long: %s/%s", dir, name);
    int flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC | extra_flags;
    if (extra_flags & O_RDWR)
        flags &= ~O_WRONLY;
    *reused = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        int fd = open(path, flags | O_CREAT | O_EXCL, 0600);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            return create_failed(dir, path, errno);
        fd = open_existing(path, flags);
        if (fd == -1)
            continue; /* removed in between: create it again */
        if (fd < 0)
            return fd;
        int kept = check_existing(fd, path);
        if (kept < 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
            close(fd);
            return kept < 0 ? kept : jf__fail(JF_EIO, "%s: fcntl: %s", path, strerror(errno));
        }
        *reused = kept;
        return fd;
    }
    return jf__fail(JF_EIO, "%s keeps disappearing; giving up", path);
}

int jf__safe_file_create_unnamed(const char *dir, const char *name)
{
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)
        return jf__fail(JF_ENOTSUP, "%s: cannot create an unnamed file: %s", dir, strerror(errno));
    char path[PATH_MAX];
    int err = errno;
    snprintf(path, sizeof path, "%s/%s", dir, name); /* for the message only */
    return create_failed(dir, path, err);
#else
    (void)name;
    return jf__fail(JF_ENOTSUP, "%s: no O_TMPFILE here", dir);
#endif
}

/* linkat() of an unnamed file: through /proc/self/fd, which needs no
 * privilege, else AT_EMPTY_PATH (CAP_DAC_READ_SEARCH on older kernels). */
static int link_fd(int fd, const char *path)
{
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0)
        return 0;
    if (errno == EEXIST)
        return -1;
    return linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH);
}

/* A file at path where ours should go: 1 if this process's, 0 once a stale
 * one is removed (or it went away), else a negative JF_E* code. */
static int clear_stale(const char *path)
{
    int fd = open_existing(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd == -1)
        return 0;
    if (fd < 0)
        return fd;
    int kept = inspect_existing(fd, path);
    close(fd);
    if (kept == 0 && unlink(path) != 0 && errno != ENOENT)
        return jf__fail(jf__errno_code(errno), "%s: cannot replace stale file: %s", path, strerror(errno));
    return kept;
}

int jf__safe_file_link(int fd, const char *dir, const char *name)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return jf__fail(JF_EINVAL, "path too long: %s/%s", dir, name);
    for (int attempt = 0; attempt < 3; attempt++) {
        if (link_fd(fd, path) == 0)
            return 0;
        if (errno != EEXIST)
            return create_failed(dir, path, errno);
        int kept = clear_stale(path);
        if (kept != 0)
            return kept;
    }
    return jf__fail(JF_EIO, "%s keeps reappearing; giving up", path);
}

int jf__safe_file_check_size_limit(off_t new_size)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_FSIZE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
        return 0;
    if (new_size < 0 || (unsigned long long)new_size > (unsigned long long)lim.rlim_cur)
        return jf__fail(JF_EFBIG, "file would grow to %lld bytes, over RLIMIT_FSIZE (%llu)",
                        (long long)new_size, (unsigned long long)lim.rlim_cur);
    return 0;
}
