/*
 * The perf map's file, written with no system call per line.
 *
 * Why it is written this way:
 * - Space is reserved by appending newlines with one O_APPEND writev: the
 *   kernel places that write at the end of the file atomically with respect
 *   to every other O_APPEND writer (CPython's PyUnstable_WritePerfMapEntry,
 *   a second runtime), so the reserved segment is ours alone and their lines
 *   go after it. Lines are then stored into the segment through a MAP_SHARED
 *   mapping: in the page cache, hence in the kernel, as soon as the stores
 *   are done — as durable as a write(2), with no system call. Readers skip
 *   the blank lines that are left (perf, bcc and bpftrace all do), so the
 *   file is never truncated: truncating could cut a line another writer
 *   appended after our reserve, and no system call can truncate "only if
 *   nothing was appended". The tail left at the end is at most one segment.
 * - No SIGXFSZ: RLIMIT_FSIZE is checked before every growth, and a store
 *   inside the file's size never raises it. No SIGBUS: the blocks of a
 *   segment are allocated (the writev, then fallocate) before it is mapped,
 *   and only bytes inside the file are touched. (A writer that truncates the
 *   live file defeats this; jitframes.h says so.)
 * - No torn line, whenever the process is killed: a line's span is first
 *   filled with JF_PMW_HIDDEN, then its bytes after the first aligned 8-byte
 *   word are copied in, and finally that word — which holds at least the
 *   line's first two bytes — is stored with one aligned store. Until then
 *   the span reads as a line starting "##", which bcc and bpftrace skip and
 *   perf turns into an empty symbol at address 0 (no sample ever lands
 *   there); a partial fill leaves blank lines and runs of '#'. Segments and
 *   words are 8-aligned so that the word never reaches outside our segment.
 *
 * The registry lock serialises every entry point.
 */
#define _GNU_SOURCE
#include "perfmap_writer.h"

#include "error.h"
#include "safe_file.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* Growth: the space reserved so far, clamped to [MIN, MAX]: a process that
 * registers a few regions leaves a page of blank lines, a big map at most
 * MAX_SEGMENT. */
#define MIN_SEGMENT ((size_t)4096)
#define MAX_SEGMENT ((size_t)1 << 20)
enum { FILLER_IOV = 1024, WORD = 8 };

static char filler[4096]; /* JF_PMW_FILLER bytes, set at the first open */

/*
 * The open file. Invariants: bytes [pos, end) of the file are ours, all
 * JF_PMW_FILLER; lines go at pos and below usable_end() only; the mapping
 * covers [map_off, end) (map_off page-aligned, <= pos) or is NULL when
 * pos == end.
 */
typedef struct map_file {
    int fd;
    char *map;
    off_t map_off;
    size_t map_len;
    off_t pos;
    off_t end;
    size_t reserved; /* filler bytes appended to this file so far */
    dev_t dev;
    ino_t ino;
} map_file;

static map_file mf = {.fd = -1};

/* Where our space was when the file was last closed (resumed by open). */
static struct {
    int valid;
    dev_t dev;
    ino_t ino;
    off_t pos, end;
    size_t reserved;
} resume;

static off_t usable_end(void)
{
    return mf.end & ~(off_t)(WORD - 1);
}

static void unmap(void)
{
    if (mf.map)
        munmap(mf.map, mf.map_len);
    mf.map = NULL;
    mf.map_len = 0;
}

/* Map [page of pos, end) writable, its pages faulted in by one call. */
static int map_window(void)
{
    unmap();
    mf.map_off = mf.pos & ~(off_t)(jf__page_size() - 1);
    if (mf.end <= mf.map_off)
        return 0;
    size_t len = (size_t)(mf.end - mf.map_off);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mf.fd, mf.map_off);
    if (p == MAP_FAILED)
        return jf__fail(jf__errno_code(errno), "perf map: cannot map %zu bytes: %s", len, strerror(errno));
    mf.map = p;
    mf.map_len = len;
#ifdef MADV_POPULATE_WRITE
    (void)madvise(mf.map, len, MADV_POPULATE_WRITE); /* a hint: faults are the fallback */
#endif
    return 0;
}

/* Append len (<= FILLER_IOV * sizeof filler) filler bytes in one O_APPEND
 * write. Returns the bytes written (maybe short), or a negative JF_E* code. */
static ssize_t append_filler(size_t len)
{
    struct iovec iov[FILLER_IOV];
    int n = 0;
    for (size_t left = len; left > 0; n++) {
        iov[n].iov_base = filler;
        iov[n].iov_len = left < sizeof filler ? left : sizeof filler;
        left -= iov[n].iov_len;
    }
    for (;;) {
        ssize_t got = writev(mf.fd, iov, n);
        if (got > 0)
            return got;
        if (got < 0 && errno == EINTR)
            continue;
        int err = got < 0 ? errno : ENOSPC;
        return jf__fail(jf__errno_code(err), "perf map: cannot reserve %zu bytes: %s", len, strerror(err));
    }
}

/* Take [start, stop) as ours: it extends our segment if it follows it,
 * else our lines go on there (8-aligned) and the rest of the old segment
 * stays blank. */
static void adopt_segment(off_t start, off_t stop)
{
    if (start != mf.end)
        mf.pos = (start + WORD - 1) & ~(off_t)(WORD - 1);
    mf.end = stop;
}

/* One growth of at least `need` bytes: the limit checked, the newlines
 * appended, their blocks allocated. */
static int grow(size_t need)
{
    struct stat st;
    if (fstat(mf.fd, &st) != 0)
        return jf__fail(jf__errno_code(errno), "perf map: fstat: %s", strerror(errno));
    if (st.st_size < mf.end)
        return jf__fail(JF_EIO,
                        "perf map: another writer truncated it under us (%lld bytes, "
                        "ours reach %lld)",
                        (long long)st.st_size, (long long)mf.end);
    size_t want = mf.reserved < MIN_SEGMENT   ? MIN_SEGMENT
                  : mf.reserved > MAX_SEGMENT ? MAX_SEGMENT
                                              : mf.reserved;
    if (want < need)
        want = (need + MIN_SEGMENT - 1) & ~(MIN_SEGMENT - 1);
    /* Near RLIMIT_FSIZE, take just what is needed: the last lines that fit. */
    if (jf__safe_file_check_size_limit(st.st_size + (off_t)want) != 0) {
        want = need;
        int rc = jf__safe_file_check_size_limit(st.st_size + (off_t)want);
        if (rc)
            return rc;
    }
    ssize_t got = append_filler(want);
    if (got < 0)
        return (int)got;
    off_t stop = lseek(mf.fd, 0, SEEK_CUR);
    if (stop < got)
        return jf__fail(JF_EIO, "perf map: lseek: %s", strerror(errno));
    off_t start = stop - got;
    /* The writev reserved the space on most file systems; fallocate makes
     * sure before the pages are touched through the mapping. */
    if (fallocate(mf.fd, 0, start, got) != 0 && errno != EOPNOTSUPP && errno != ENOSYS && errno != EINTR)
        return jf__fail(jf__errno_code(errno), "perf map: cannot allocate %zd bytes: %s", got,
                        strerror(errno));
    mf.reserved += (size_t)got;
    adopt_segment(start, stop);
    return 0;
}

static int room_for(size_t bytes, size_t lines)
{
    return mf.map && usable_end() - mf.pos >= (off_t)(bytes + lines);
}

int jf__pmw_reserve(size_t bytes, size_t lines)
{
    if (mf.fd < 0)
        return jf__fail(JF_EDISABLED, "perf map is not open");
    if (room_for(bytes, lines))
        return 0;
    /* Each line may skip one byte (see put_line); a new segment starts up
     * to 7 bytes in and its last word may be unusable. */
    size_t need = bytes + lines + 2 * WORD;
    if (bytes > (size_t)FILLER_IOV * sizeof filler - lines - 2 * WORD)
        return jf__fail(JF_ERANGE, "perf map: %zu bytes of lines at once", bytes);
    for (int attempt = 0; usable_end() - mf.pos < (off_t)(bytes + lines); attempt++) {
        if (attempt == 8) /* only short writes of a nearly full disk get here */
            return jf__fail(JF_ENOSPC, "perf map: cannot reserve %zu bytes", need);
        int rc = grow(need);
        if (rc)
            return rc;
    }
    return map_window();
}

void jf__pmw_put_line(const char *text, size_t n)
{
    off_t p = mf.pos + ((mf.pos & (WORD - 1)) == WORD - 1); /* >= 2 bytes in the word */
    size_t in_word = WORD - (size_t)(p & (WORD - 1));
    if (in_word > n)
        in_word = n;
    char *line = mf.map + (p - mf.map_off);
    char *word = line - (p & (WORD - 1));
    memset(line, JF_PMW_HIDDEN, n - 1); /* text[n - 1] is the newline already there */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    if (n - 1 > in_word)
        memcpy(line + in_word, text + in_word, n - 1 - in_word);
    uint64_t value;
    memcpy(&value, word, sizeof value);
    memcpy((char *)&value + (p & (WORD - 1)), text, in_word);
    __atomic_store_n((uint64_t *)(void *)word, value, __ATOMIC_RELEASE);
    mf.pos = p + (off_t)n;
}

/* Is [pos, end) of the file still ours (all filler)? A resumed file might
 * have been rewritten by someone since. */
static int space_still_ours(void)
{
    if (!mf.map)
        return 1;
    const char *p = mf.map + (mf.pos - mf.map_off);
    for (off_t i = 0; i < mf.end - mf.pos; i++)
        if (p[i] != JF_PMW_FILLER)
            return 0;
    return 1;
}

/* Our space from the last close, if this is the same file, at least as long. */
static int resume_space(const struct stat *st)
{
    if (!resume.valid || st->st_dev != resume.dev || st->st_ino != resume.ino || st->st_size < resume.end)
        return 0;
    mf.pos = resume.pos;
    mf.end = resume.end;
    mf.reserved = resume.reserved;
    if (map_window() == 0 && space_still_ours())
        return 1;
    unmap();
    mf.pos = mf.end = 0;
    mf.reserved = 0;
    return 0;
}

int jf__pmw_open(const char *dir, const char *name)
{
    if (mf.fd >= 0)
        return 0;
    if (filler[0] != JF_PMW_FILLER)
        memset(filler, JF_PMW_FILLER, sizeof filler);
    int reused;
    int fd = jf__safe_file_open(dir, name, O_RDWR | O_APPEND, &reused);
    if (fd < 0)
        return fd;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int rc = jf__fail(jf__errno_code(errno), "%s/%s: fstat: %s", dir, name, strerror(errno));
        close(fd);
        return rc;
    }
    mf = (map_file){.fd = fd, .dev = st.st_dev, .ino = st.st_ino};
    if (reused)
        resume_space(&st);
    resume.valid = 0;
    return 0;
}

int jf__pmw_is_open(void)
{
    return mf.fd >= 0;
}

void jf__pmw_close(void)
{
    if (mf.fd < 0)
        return;
    unmap();
    close(mf.fd);
    resume.valid = 1;
    resume.dev = mf.dev;
    resume.ino = mf.ino;
    resume.pos = mf.pos;
    resume.end = mf.end;
    resume.reserved = mf.reserved;
    mf = (map_file){.fd = -1};
}

void jf__pmw_forget(void)
{
    unmap();
    if (mf.fd >= 0)
        close(mf.fd);
    mf = (map_file){.fd = -1};
    resume.valid = 0;
}
