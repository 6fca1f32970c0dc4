/*
 * JIT functions in separate mappings (x86_64), so the symfiles that describe
 * them hold several code spans: lldb must name each function whatever span
 * it sits in. Each function is a standard frame around int3:
 *   push %rbp; mov %rsp,%rbp; int3; pop %rbp; ret
 * Usage: spans batch|merged|packed|multi N
 *   batch   the functions registered by one jf_register_batch (one symfile,
 *           N spans)
 *   merged  registered one by one: the library merges their symfiles
 *   packed  one mapping, one span (the layout the suite used to test alone)
 *   multi   as merged, but the last region holds two functions (two FDEs):
 *           A calls B, which traps; N must be 7
 * then function N (0-based) is called and traps.
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { FUNCTIONS = 8, FN_SIZE = 16 };

static const unsigned char fn_code[FN_SIZE] = {0x55, 0x48, 0x89, 0xe5, 0xcc, 0x5d, 0xc3};

/* A: push %rbp; mov %rsp,%rbp; call B; pop %rbp; ret   (at 0)
 * B: push %rbp; mov %rsp,%rbp; int3; pop %rbp; ret     (at 16) */
enum { MULTI_SIZE = 32 };
static const unsigned char multi_code[MULTI_SIZE] = {0x55, 0x48, 0x89, 0xe5, 0xe8, 0x07, 0x00, 0x00,
                                                     0x00, 0x5d, 0xc3, 0,    0,    0,    0,    0,
                                                     0x55, 0x48, 0x89, 0xe5, 0xcc, 0x5d, 0xc3};

/* Each function in its own page, with an unmapped page between (so no two
 * are adjacent), or all in one page. */
static unsigned char *place(int i, int packed, const unsigned char *bytes, size_t n, unsigned char **pool)
{
    long page = sysconf(_SC_PAGESIZE);
    if (!*pool) {
        *pool = mmap(NULL, (size_t)page * 2 * FUNCTIONS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
        if (*pool == MAP_FAILED)
            return NULL;
    }
    unsigned char *at = packed ? *pool + i * 64 : *pool + (size_t)page * 2 * (size_t)i;
    memcpy(at, bytes, n);
    return at;
}

/* A standard frame whose pop is at `epilogue` from `start`, ret after it. */
static int add_frame(jf_cfi *cfi, size_t start, size_t epilogue)
{
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.start = start, f.end = start + epilogue + 2, f.after_push = start + 1, f.after_fp_set = start + 4;
    f.epilogue_start = start + epilogue, f.after_pop = start + epilogue + 1;
    return jf_cfi_add_standard_frame(cfi, &f);
}

static jf_cfi *frame_cfi(int two_functions)
{
    jf_cfi *cfi = NULL;
    if (jf_cfi_new(&cfi) != 0)
        return NULL;
    int rc = two_functions ? add_frame(cfi, 0, 9) || add_frame(cfi, 16, 5) : add_frame(cfi, 0, 5);
    return rc ? NULL : cfi;
}

static int protect(unsigned char *pool, int packed)
{
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < (packed ? 1 : FUNCTIONS); i++)
        if (mprotect(pool + (size_t)page * 2 * (size_t)i, (size_t)page, PROT_READ | PROT_EXEC) != 0)
            return -1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    const char *mode = argv[1];
    int call = atoi(argv[2]), packed = strcmp(mode, "packed") == 0, multi = strcmp(mode, "multi") == 0;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_GDB;
    jf_cfi *cfi = frame_cfi(0), *multi_cfi = frame_cfi(1);
    if (jf_init(&cfg) != 0 || !cfi || !multi_cfi || call < 0 || call >= FUNCTIONS) {
        fprintf(stderr, "spans: %s\n", jf_last_error());
        return 1;
    }
    unsigned char *pool = NULL, *fn[FUNCTIONS];
    static char names[FUNCTIONS][32];
    jf_region regions[FUNCTIONS];
    for (int i = 0; i < FUNCTIONS; i++) {
        int two = multi && i == FUNCTIONS - 1;
        if (!(fn[i] = place(i, packed, two ? multi_code : fn_code, two ? MULTI_SIZE : FN_SIZE, &pool)))
            return 1;
        snprintf(names[i], sizeof names[i], "span_fn_%d", i);
        jf_region r = JF_REGION_INIT;
        r.addr = fn[i], r.size = two ? MULTI_SIZE : 7, r.name = names[i], r.cfi = two ? multi_cfi : cfi;
        regions[i] = r;
    }
    if (protect(pool, packed) != 0)
        return 1;
    int rc = 0;
    if (strcmp(mode, "merged") == 0 || multi)
        for (int i = 0; i < FUNCTIONS && rc == 0; i++)
            rc = jf_register(&regions[i]);
    else
        rc = jf_register_batch(regions, FUNCTIONS);
    if (rc != 0) {
        fprintf(stderr, "spans: register: %s\n", jf_last_error());
        return 1;
    }
    ((void (*)(void))(void *)fn[call])();
    return 0;
}
