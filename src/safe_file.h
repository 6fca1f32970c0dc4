/*
 * Opening and appending to per-process files in shared directories such as
 * /tmp, where another user may plant a symlink or a file under our name.
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
 * Append len bytes at the end of fd (opened O_APPEND), retrying on EINTR and
 * short writes. Reads RLIMIT_FSIZE before every write, never cached (the
 * host may lower it at any moment, and a write past it would raise SIGXFSZ),
 * so the host never gets SIGXFSZ. On failure the file is cut back to its
 * size before the call, so it only ever holds whole records. Returns 0 or a
 * JF_E* code with the message set.
 */
int jf__safe_file_append(int fd, const void *buf, size_t len);

/* Fail with JF_EFBIG if growing fd to `new_size` bytes would exceed
 * RLIMIT_FSIZE. */
int jf__safe_file_check_size_limit(off_t new_size);

#endif
