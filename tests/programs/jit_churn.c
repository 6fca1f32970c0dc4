/*
 * A JIT that keeps changing its code's names and places, for the tests of
 * the published table: FUNCS copies of a spin function in each of two banks
 * of executable memory; every cycle calls each live function, then retires
 * one (jf_unregister) and registers it again in the other bank under a new
 * name. jf_init(NULL): nothing is switched on unless the environment says so.
 * Ground truth goes to LOG: "reg START SIZE NAME T" and "unreg START T"
 * (hex addresses, CLOCK_MONOTONIC ns). Runs CYCLES cycles, or until stdin
 * reaches end of file when CYCLES is 0 (then at most 10 million cycles).
 * Each call spins SPIN times (default 20000): more makes the code live longer
 * and churn slower.
 * A large table: BULK more name-only regions ("bulk_N", never run) are
 * registered at start in reserved address space; from the first SIGUSR1 (a
 * test sends it once its sampler runs), every EVERY cycles (0: never) a bulk event: the first GROWTHS events each register bulk regions
 * until the published table grows into a new mapping ("grow T" in LOG once
 * it has moved); with GROWTHS 0 every event registers every bulk region
 * again under a new name ("rename T" in LOG), so all their generations change.
 * Usage: jit_churn FUNCS CYCLES LOG [SPIN [BULK [EVERY [GROWTHS]]]]
 * prints "pid <pid>" once ready.
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if !defined(__x86_64__)
int main(void)
{
    fprintf(stderr, "jit_churn: x86_64 only\n");
    return 77;
}
#else

enum { SLOT = 64, MAX_FUNCS = 256, BULK_SLOT = 16, MAX_BULK = 1 << 21 };

/* uint64_t spin(uint64_t n), with a frame record. */
static const unsigned char spin_code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8, 0x48,
                                          0x83, 0xe8, 0x01, 0x75, 0xfa, 0x5d, 0xc3};
typedef uint64_t (*spin_fn)(uint64_t);

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

__attribute__((noinline)) uint64_t call_jit(spin_fn fn, uint64_t n);
__attribute__((noinline)) uint64_t call_jit(spin_fn fn, uint64_t n)
{
    uint64_t r = fn(n);
    __asm__ volatile("" : "+r"(r));
    return r + 1;
}

static void die(const char *what)
{
    fprintf(stderr, "jit_churn: %s: %s\n", what, jf_last_error());
    exit(1);
}

static void register_slot(FILE *log, uint8_t *at, unsigned gen, unsigned f)
{
    char name[64];
    snprintf(name, sizeof name, "churn_g%u_f%u", gen, f);
    jf_region r = JF_REGION_INIT;
    r.addr = at;
    r.size = sizeof spin_code;
    r.name = name;
    r.file = "churn.jit";
    r.line = gen;
    if (jf_register(&r) != 0)
        die("jf_register");
    fprintf(log, "reg %lx %zx %s %llu\n", (unsigned long)(uintptr_t)at, sizeof spin_code, name,
            (unsigned long long)now_ns());
}

/* The bulk regions: name-only, in PROT_NONE address space never run. */
static struct {
    uint8_t *mem;
    unsigned long n, renamed;
} bulk;

static void bulk_register(unsigned long i)
{
    char name[64];
    snprintf(name, sizeof name, "bulk_%lu_r%lu", i, bulk.renamed);
    jf_region r = JF_REGION_INIT;
    r.addr = bulk.mem + i * BULK_SLOT;
    r.size = BULK_SLOT;
    r.name = name;
    if (jf_register(&r) != 0)
        die("jf_register (bulk)");
}

static void bulk_add(unsigned long n)
{
    if (bulk.n + n > MAX_BULK)
        die("too many bulk regions");
    for (unsigned long i = bulk.n; i < bulk.n + n; i++)
        bulk_register(i);
    bulk.n += n;
}

/* Register bulk regions until the table is in a new mapping. */
static void bulk_grow(FILE *log)
{
    const void *was = NULL;
    if (jf_published_table(&was, NULL) != 0)
        die("jf_published_table");
    const void *now = was;
    while (now == was && bulk.n < MAX_BULK) {
        bulk_add(1);
        if (jf_published_table(&now, NULL) != 0)
            die("jf_published_table (growing)");
    }
    if (now == was)
        die("the table did not grow");
    fprintf(log, "grow %llu\n", (unsigned long long)now_ns());
}

static void bulk_rename(FILE *log)
{
    bulk.renamed++;
    for (unsigned long i = 0; i < bulk.n; i++) {
        if (jf_unregister(bulk.mem + i * BULK_SLOT) != 0)
            die("jf_unregister (bulk)");
        bulk_register(i);
    }
    fprintf(log, "rename %llu\n", (unsigned long long)now_ns());
}

static volatile sig_atomic_t armed;

static void arm(int sig)
{
    (void)sig;
    armed = 1;
}

static int stdin_closed(void)
{
    struct pollfd p = {0, POLLIN, 0};
    char buf[64];
    return poll(&p, 1, 0) == 1 && read(0, buf, sizeof buf) <= 0;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 8)
        return fprintf(stderr, "usage: jit_churn FUNCS CYCLES LOG [SPIN [BULK [EVERY [GROWTHS]]]]\n"), 2;
    uint64_t spin = argc > 4 ? strtoull(argv[4], NULL, 10) : 20000;
    unsigned long n_bulk = argc > 5 ? strtoul(argv[5], NULL, 10) : 0;
    unsigned long every = argc > 6 ? strtoul(argv[6], NULL, 10) : 0;
    unsigned long growths = argc > 7 ? strtoul(argv[7], NULL, 10) : 0;
    int renames = growths == 0;
    unsigned funcs = (unsigned)atoi(argv[1]);
    unsigned long cycles = strtoul(argv[2], NULL, 10);
    FILE *log = fopen(argv[3], "w");
    if (!log || funcs == 0 || funcs > MAX_FUNCS)
        return fprintf(stderr, "jit_churn: bad arguments\n"), 2;
    if (jf_init(NULL) != 0)
        die("jf_init");
    bulk.mem = mmap(NULL, (size_t)MAX_BULK * BULK_SLOT, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (bulk.mem == MAP_FAILED)
        return perror("mmap"), 1;
    bulk_add(n_bulk);
    signal(SIGUSR1, arm);
    unsigned long since_armed = 0;
    size_t bank = (size_t)funcs * SLOT;
    uint8_t *mem = mmap(NULL, 2 * bank, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return perror("mmap"), 1;
    for (size_t i = 0; i < 2 * (size_t)funcs; i++)
        memcpy(mem + i * SLOT, spin_code, sizeof spin_code);
    if (mprotect(mem, 2 * bank, PROT_READ | PROT_EXEC) != 0)
        return perror("mprotect"), 1;
    unsigned side[MAX_FUNCS] = {0}, gen = 0;
    for (unsigned f = 0; f < funcs; f++)
        register_slot(log, mem + f * SLOT, gen++, f);
    printf("pid %ld\n", (long)getpid());
    fflush(stdout);
    uint64_t sink = 0;
    unsigned long limit = cycles ? cycles : 10000000ul;
    for (unsigned long c = 0; c < limit && !(cycles == 0 && c % 16 == 0 && stdin_closed()); c++) {
        for (unsigned f = 0; f < funcs; f++)
            sink += call_jit((spin_fn)(mem + side[f] * bank + f * SLOT), spin);
        unsigned f = (unsigned)(c % funcs);
        uint8_t *old = mem + side[f] * bank + f * SLOT;
        if (jf_unregister(old) != 0)
            die("jf_unregister");
        fprintf(log, "unreg %lx %llu\n", (unsigned long)(uintptr_t)old, (unsigned long long)now_ns());
        side[f] ^= 1;
        register_slot(log, mem + side[f] * bank + f * SLOT, gen++, f);
        since_armed += armed;
        if (every && since_armed && since_armed % every == 0 && growths) {
            growths--;
            bulk_grow(log);
        } else if (every && since_armed && since_armed % every == 0 && renames) {
            bulk_rename(log);
        }
    }
    fclose(log);
    fprintf(stderr, "jit_churn: %llu\n", (unsigned long long)sink);
    jf_shutdown();
    return 0;
}
#endif
