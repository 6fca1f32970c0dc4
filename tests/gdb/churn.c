/*
 * JIT functions in 16-byte regions packed in one mapping (x86_64), registered
 * one by one and churned: 1,000 registrations, 500 unregistrations, those
 * 500 registered again at the same addresses; then 10 more registered one by
 * one right after them (the last registered, as a JIT registers code it is
 * about to run). The library merges and rebuilds symfiles all along. Then a
 * chain of CHAIN functions, 10 spread over the churned slots and the 10 new
 * ones, is called: each calls the next, the last traps, and a debugger must
 * name every one of them (churn_<slot>) down to main.
 * Each function is a standard frame:
 *   push %rbp; mov %rsp,%rbp; call <next> | int3; pop %rbp; ret
 * Usage: churn        (prints the chain's slots, innermost first)
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { SLOTS = 1000, FRESH = 10, SLOT = 16, CHAIN = 20 };

static const unsigned char call_fn[] = {0x55, 0x48, 0x89, 0xe5, 0xe8, 0, 0, 0, 0, 0x5d, 0xc3};
static const unsigned char trap_fn[] = {0x55, 0x48, 0x89, 0xe5, 0xcc, 0x5d, 0xc3};

static char names[SLOTS + FRESH][16];

/* The chain's slots, outermost first: churned ones (registered once or
 * twice: both parities), then the fresh ones. */
static int chain_slot(int k)
{
    return k < CHAIN - FRESH ? 37 + k * 101 : SLOTS + k - (CHAIN - FRESH);
}

static void write_function(unsigned char *code, int k)
{
    if (k == CHAIN - 1) {
        memcpy(code, trap_fn, sizeof trap_fn);
        return;
    }
    memcpy(code, call_fn, sizeof call_fn);
    int rel = (chain_slot(k + 1) - chain_slot(k)) * SLOT - 9; /* from the call's end */
    memcpy(code + 5, &rel, 4);
}

static jf_cfi *frame_cfi(size_t epilogue)
{
    jf_cfi *cfi = NULL;
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.start = 0, f.end = epilogue + 2, f.after_push = 1, f.after_fp_set = 4;
    f.epilogue_start = epilogue, f.after_pop = epilogue + 1;
    if (jf_cfi_new(&cfi) != 0 || jf_cfi_add_standard_frame(cfi, &f) != 0)
        return NULL;
    return cfi;
}

static int add(unsigned char *arena, int slot, jf_cfi *calls, jf_cfi *traps)
{
    jf_region r = JF_REGION_INIT;
    int trapping = slot == chain_slot(CHAIN - 1);
    r.addr = arena + (size_t)slot * SLOT;
    r.size = SLOT; /* the whole slot: regions touch, as trampolines do */
    r.name = names[slot];
    r.cfi = trapping ? traps : calls;
    return jf_register(&r);
}

static int fail(const char *what)
{
    fprintf(stderr, "churn: %s: %s\n", what, jf_last_error());
    return 1;
}

int main(void)
{
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_GDB;
    jf_cfi *calls = frame_cfi(9), *traps = frame_cfi(5);
    if (jf_init(&cfg) != 0 || !calls || !traps)
        return fail("init");
    unsigned char *arena = mmap(NULL, (SLOTS + FRESH) * SLOT, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (arena == MAP_FAILED)
        return fail("mmap");
    for (int s = 0; s < SLOTS + FRESH; s++) {
        snprintf(names[s], sizeof names[s], "churn_%d", s);
        memcpy(arena + (size_t)s * SLOT, trap_fn, sizeof trap_fn);
    }
    for (int k = 0; k < CHAIN; k++)
        write_function(arena + (size_t)chain_slot(k) * SLOT, k);
    if (mprotect(arena, (SLOTS + FRESH) * SLOT, PROT_READ | PROT_EXEC) != 0)
        return fail("mprotect");
    for (int s = 0; s < SLOTS; s++)
        if (add(arena, s, calls, traps) != 0)
            return fail("register");
    for (int s = 1; s < SLOTS; s += 2)
        if (jf_unregister(arena + (size_t)s * SLOT) != 0)
            return fail("unregister");
    for (int s = 1; s < SLOTS; s += 2)
        if (add(arena, s, calls, traps) != 0)
            return fail("register again");
    for (int s = SLOTS; s < SLOTS + FRESH; s++)
        if (add(arena, s, calls, traps) != 0)
            return fail("register fresh");
    for (int k = CHAIN - 1; k >= 0; k--)
        printf("%s%s", names[chain_slot(k)], k ? " " : "\n");
    fflush(stdout);
    ((void (*)(void))(void *)(arena + (size_t)chain_slot(0) * SLOT))();
    return 0;
}
