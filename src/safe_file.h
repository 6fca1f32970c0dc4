/*
 * Opening per-process files in shared directories such as /tmp, where
 * another user may plant a symlink or a file under our name, and growing
 * them without SIGXFSZ.
 */
#ifndef JF_SAFE_FILE_H
#define JF_SAFE_FILE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Open dir/name for writing, never following a symlink, mode 0600, O_CLOEXEC
 * (plus `extra_flags`, e.g. O_APPEND). An existing file is used only if it is
 * a regular file with one link owned by us; then it is kept (appended to) if
 * this process already writes or wrote it — another writer in the host — and
 * truncated if it is stale, left by a dead process that had our pid.
 * Returns the fd, or a negative JF_E* code with the message set.
 * *reused is set to 1 when an existing file of this process was kept.
 */
int jf__safe_file_open(const char *dir, const char *name, int extra_flags, int *reused);

/*
 * A file that is only ever seen complete: jf__safe_file_create_unnamed
 * opens an unnamed file in dir (O_TMPFILE, mode 0600; JF_ENOTSUP where the
 * file system has none: then use jf__safe_file_open; other failures are
 * worded as jf__safe_file_open's, for dir/name), the caller writes
 * what a reader must never miss, and jf__safe_file_link gives it its name,
 * never replacing another file: a stale one of ours (as above) is removed
 * first; one this process writes or wrote is left alone and 1 returned
 * (open it with jf__safe_file_open); anything else is refused (negative
 * JF_E* code, message set). A SIGKILL before the link leaves nothing.
 */
int jf__safe_file_create_unnamed(const char *dir, const char *name);
int jf__safe_file_link(int fd, const char *dir, const char *name);

/* Fail with JF_EFBIG if growing a file to `new_size` bytes would exceed
 * RLIMIT_FSIZE (a write or fallocate past it raises SIGXFSZ). Reads the
 * limit every time: the host may lower it at any moment. */
int jf__safe_file_check_size_limit(off_t new_size);

#endif
