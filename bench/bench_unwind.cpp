/*
 * What registered JIT unwind tables cost the rest of the process: a C++
 * throw + catch that never touches JIT code, timed with
 *   (0) the unwind sink on and nothing registered (baseline),
 *   (1) 10,000 regions registered through jitframes in batches of 100,
 *   (2) 10,000 regions registered through jitframes one by one,
 *   (3) for reference, 10,000 single-FDE tables given straight to
 *       __register_frame, one per function, as naive JITs do.
 * On GCC <= 12 every unwind step searches the registered tables linearly, so
 * (3) grows with the number of functions; jitframes shares tables. Target:
 * (1) and (2) within 2x of (0). The configurations are interleaved: each of
 * ROUNDS rounds measures (0), (1), (2) and (3) in turn (a round of one is the
 * median of 3 runs of ITER throws), and each figure is the median over the
 * rounds, so load from other processes hits them alike.
 * Usage: bench_unwind [regions]   (default 10000)
 */
#include "jitframes.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <vector>

namespace
{

const int ITER = 10000;
const int NAIVE_ITER = 200; /* (3) is two orders of magnitude slower */
const int ROUNDS = 5;
const size_t REGION_SIZE = 16;
const size_t BATCH = 100;

size_t n_regions = 10000;
uint8_t *code;
jf_cfi *cfi;

double now()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) void thrower(int x)
{
    throw x;
}

__attribute__((noinline)) int catcher(int x)
{
    try {
        thrower(x);
    } catch (int v) {
        return v;
    }
    return -1;
}

/* Median of 3 runs: nanoseconds per throw + catch. */
double time_throws(int iter = ITER)
{
    double runs[3];
    for (double &ns : runs) {
        long sum = 0;
        double t0 = now();
        for (int i = 0; i < iter; i++)
            sum += catcher(i);
        ns = (now() - t0) * 1e9 / iter;
        if (sum < 0)
            puts("impossible");
    }
    std::sort(runs, runs + 3);
    return runs[1];
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

jf_region region(size_t i)
{
    static char name[32];
    snprintf(name, sizeof name, "bench_jit_%zu", i);
    jf_region r = JF_REGION_INIT;
    r.addr = code + i * REGION_SIZE;
    r.size = REGION_SIZE;
    r.name = name; /* copied by jitframes */
    r.cfi = cfi;
    return r;
}

void die(const char *what)
{
    fprintf(stderr, "bench_unwind: %s: %s\n", what, jf_last_error());
    exit(1);
}

void register_batched()
{
    std::vector<jf_region> batch(BATCH);
    std::vector<std::vector<char>> names(BATCH, std::vector<char>(32));
    for (size_t b = 0; b < n_regions; b += BATCH) {
        size_t n = std::min(BATCH, n_regions - b);
        for (size_t i = 0; i < n; i++) {
            batch[i] = region(b + i);
            snprintf(names[i].data(), 32, "bench_jit_%zu", b + i);
            batch[i].name = names[i].data();
        }
        if (jf_register_batch(batch.data(), n) != 0)
            die("jf_register_batch");
    }
}

void register_singly()
{
    for (size_t i = 0; i < n_regions; i++) {
        jf_region r = region(i);
        if (jf_register(&r) != 0)
            die("jf_register");
    }
}

void unregister_all()
{
    for (size_t i = 0; i < n_regions; i++)
        if (jf_unregister(code + i * REGION_SIZE) != 0)
            die("jf_unregister");
}

uint64_t tables()
{
    struct jf_stats st = JF_STATS_INIT;
    jf_stats(&st);
    return st.sink[3].objects;
}

/* One .eh_frame per function (CIE, FDE with absolute addresses, terminator):
 * what a JIT calling __register_frame per function registers. */
const size_t NAIVE_SIZE = 56;

void put_u32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

void build_naive_table(uint8_t *t, uintptr_t pc)
{
    static const uint8_t cie[24] = {
        20,   0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x00, /* absptr */
        0x0c, 7, 8,                                                      /* def_cfa rsp+8 */
        0x90, 1,                                                         /* ra at cfa-8 */
        0,    0,                                                         /* nops */
    };
    memcpy(t, cie, sizeof cie);
    uint8_t *fde = t + 24;
    memset(fde, 0, 28);
    put_u32(fde, 24);
    put_u32(fde + 4, 28); /* back to the CIE */
    uint64_t begin = pc, range = REGION_SIZE;
    memcpy(fde + 8, &begin, 8);
    memcpy(fde + 16, &range, 8);
    put_u32(t + 52, 0);
}

typedef void (*frame_fn)(void *);

frame_fn lookup(const char *name)
{
    void *sym = dlsym(RTLD_DEFAULT, name);
    if (!sym) {
        fprintf(stderr, "bench_unwind: %s not found\n", name);
        exit(1);
    }
    frame_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    return fn;
}

double time_naive()
{
    frame_fn reg = lookup("__register_frame"), dereg = lookup("__deregister_frame");
    std::vector<uint8_t> all(n_regions * NAIVE_SIZE);
    for (size_t i = 0; i < n_regions; i++) {
        build_naive_table(&all[i * NAIVE_SIZE], (uintptr_t)(code + i * REGION_SIZE));
        reg(&all[i * NAIVE_SIZE]);
    }
    double ns = time_throws(NAIVE_ITER);
    for (size_t i = 0; i < n_regions; i++)
        dereg(&all[i * NAIVE_SIZE]);
    return ns;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc > 1)
        n_regions = strtoul(argv[1], NULL, 10);
    code = static_cast<uint8_t *>(
        mmap(NULL, n_regions * REGION_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (code == MAP_FAILED)
        return 1;
    memset(code, 0xc3, n_regions * REGION_SIZE);
    mprotect(code, n_regions * REGION_SIZE, PROT_READ | PROT_EXEC);
    if (jf_cfi_new(&cfi) != 0 || jf_cfi_add_frameless(cfi, 0, REGION_SIZE, 8) != 0)
        die("cfi");
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_UNWIND;
    if (jf_init(&cfg) != 0)
        die("jf_init");

    time_throws(); /* warm up: the first throw initialises the unwinder */
    std::vector<double> base, batched, single, naive;
    double reg_batched = 0, reg_single = 0;
    uint64_t tables_batched = 0, tables_single = 0;
    for (int round = 0; round < ROUNDS; round++) {
        base.push_back(time_throws());

        double t0 = now();
        register_batched();
        reg_batched += now() - t0;
        tables_batched = tables();
        batched.push_back(time_throws());
        unregister_all();

        t0 = now();
        register_singly();
        reg_single += now() - t0;
        tables_single = tables();
        single.push_back(time_throws());
        unregister_all();

        naive.push_back(time_naive());
    }
    double b = median(base), bt = median(batched), sg = median(single), nv = median(naive);

    printf("C++ throw+catch outside JIT code, %zu JIT regions, median of %d interleaved rounds\n", n_regions,
           ROUNDS);
    printf("  nothing registered            %8.0f ns\n", b);
    printf("  jitframes, batches of %-4zu     %8.0f ns   %.2fx   %llu tables, registered in %.3f s\n", BATCH,
           bt, bt / b, (unsigned long long)tables_batched, reg_batched / ROUNDS);
    printf("  jitframes, one by one         %8.0f ns   %.2fx   %llu tables, registered in %.3f s\n", sg,
           sg / b, (unsigned long long)tables_single, reg_single / ROUNDS);
    printf("  __register_frame per function %8.0f ns   %.2fx   %zu tables (reference)\n", nv, nv / b,
           n_regions);
    int ok = bt / b <= 2.0 && sg / b <= 2.0;
    printf("target <= 2x: %s\n", ok ? "met" : "MISSED");
    jf_shutdown();
    jf_cfi_free(cfi);
    return ok ? 0 : 1;
}
