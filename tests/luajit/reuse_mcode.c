/*
 * LD_PRELOAD shim for the flush test: makes LuaJIT's next machine code area
 * land where its last one was unmapped, as it does when the kernel hands the
 * freed range back. After jit.flush() LuaJIT unmaps its mcode area and maps
 * a new one at a random hint near the VM (lj_mcode.c, mcode_alloc), so the
 * traces of the code that runs next reuse the old addresses only by chance;
 * this turns the chance into a certainty, to test that the jitdump tells the
 * two apart. Machine code areas are told from LuaJIT's other mappings (its
 * allocator maps with hints too) by the mprotect that makes them
 * executable; only a hinted, non-fixed mapping of the size of the last such
 * area unmapped is redirected.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/types.h>

/* The project builds with hidden visibility: these must interpose. */
#define INTERPOSED __attribute__((visibility("default")))

INTERPOSED int mprotect(void *addr, size_t len, int prot);
INTERPOSED int munmap(void *addr, size_t len);
INTERPOSED void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
INTERPOSED void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);

static void *last_unmapped;
static size_t last_unmapped_len;
static void *exec_area; /* the last range made executable */
static size_t exec_area_len;

int mprotect(void *addr, size_t len, int prot)
{
    static int (*real_mprotect)(void *, size_t, int);
    if (!real_mprotect)
        real_mprotect = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "mprotect");
    if (prot & PROT_EXEC) {
        exec_area = addr;
        exec_area_len = len;
    }
    return real_mprotect(addr, len, prot);
}

int munmap(void *addr, size_t len)
{
    static int (*real_munmap)(void *, size_t);
    if (!real_munmap)
        real_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
    int rc = real_munmap(addr, len);
    if (rc == 0 && addr == exec_area) {
        last_unmapped = addr;
        last_unmapped_len = len;
        exec_area = NULL;
    }
    return rc;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
    if (!real_mmap)
        real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
    if (addr && !(flags & MAP_FIXED) && last_unmapped && len == last_unmapped_len) {
        addr = last_unmapped;
        last_unmapped = NULL;
    }
    return real_mmap(addr, len, prot, flags, fd, off);
}

/* Built with _FILE_OFFSET_BITS=64 (Debian's LuaJIT is), callers link mmap64. */
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap(addr, len, prot, flags, fd, off);
}
