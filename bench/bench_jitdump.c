/*
 * jitdump registration throughput: jf_register with the jitdump sink (each
 * region 64 bytes with a 2-row line table and unwind rules, so every
 * registration writes DEBUG_INFO + UNWINDING_INFO + CODE_LOAD) against two
 * baselines that write the same three records per region, measured in the
 * same run, median of 5 interleaved runs in a rotating order, jitframes'
 * time including jf_shutdown (CODE_CLOSE, the trim) as (a)'s includes fclose:
 *   (a) fwrite into a 2 MiB stdio buffer, never flushed until the end — fast
 *       but not durable: a crash loses up to 2 MiB of the newest records;
 *   (b) one write(2) per record — durable, a syscall per record.
 * The baselines copy a prebuilt unwind table; jitframes builds each from the
 * region's CFI. Targets: jitframes >= 0.5x (a) and >= 1.5x (b).
 * Those runs share one process, so only the first pays the page faults of
 * the library's mappings; the fresh section then runs jitframes in a new
 * process per run, the published table on against JF_CONFIG_NO_TABLE
 * interleaved, with CPU time (page faults included), minor faults and peak
 * memory of each (bench_util.h).
 * Usage: bench_jitdump [N [jitframes|jitframes-notable|a|b]] (default
 * 1000000; naming one writer runs only it, once; -notable: without the
 * table). Files go to $TMPDIR or /tmp and are removed.
 * On tmpfs the shared mapping pays for reserving pages (posix_fallocate)
 * and mapping them, where write(2) only copies: compare both
 * (TMPDIR=/dev/shm for tmpfs).
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include "bench_util.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

enum { RUNS = 5, CODE_SIZE = 64 };

static size_t n_regions = 1000000;
static char **names;
static uint8_t *code; /* n_regions * stride readable bytes */
static size_t stride;
static jf_cfi *cfi;
static const char *tmp_dir = "/tmp";
static unsigned table_flag; /* 0 or JF_CONFIG_NO_TABLE */

/* A frameless shape: CFA = SP + 48 after a 4-byte prologue, back to 8
 * before the final ret. */
static void build_cfi(void)
{
    if (jf_cfi_new(&cfi) || jf_cfi_begin_fde(cfi, 0, CODE_SIZE) || jf_cfi_advance_to(cfi, 4) ||
        jf_cfi_def_cfa_offset(cfi, 48) || jf_cfi_advance_to(cfi, CODE_SIZE - 1) ||
        jf_cfi_def_cfa_offset(cfi, 8)) {
        fprintf(stderr, "cfi: %s\n", jf_last_error());
        exit(1);
    }
}

static void prepare_inputs(void)
{
    build_cfi();
    stride = (jf_jitdump_footprint(CODE_SIZE, cfi) + 15) & ~(size_t)15;
    code = mmap(NULL, n_regions * stride, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        bench_die("mmap");
    for (size_t i = 0; i < n_regions; i++)
        memset(code + i * stride, 0x90, CODE_SIZE);
    names = calloc(n_regions, sizeof *names);
    if (!names)
        bench_die("calloc");
    for (size_t i = 0; i < n_regions; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "jit_fn_%zu", i);
        names[i] = strdup(buf);
    }
}

static const jf_line line_table[2] = {{0, 10, NULL}, {32, 11, NULL}};

static double run_jitframes(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/jf-bench-jitdump.XXXXXX", tmp_dir);
    if (!mkdtemp(dir))
        bench_die("mkdtemp");
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV | table_flag;
    cfg.sinks = JF_SINK_JITDUMP;
    cfg.dump_dir = dir;
    if (jf_init(&cfg) != 0) {
        fprintf(stderr, "jf_init: %s\n", jf_last_error());
        exit(1);
    }
    double t0 = bench_now_seconds();
    for (size_t i = 0; i < n_regions; i++) {
        jf_region r = JF_REGION_INIT;
        r.addr = code + i * stride;
        r.size = CODE_SIZE;
        r.name = names[i];
        r.file = "bench.mj";
        r.lines = line_table;
        r.n_lines = 2;
        r.cfi = cfi;
        if (jf_register(&r) != 0) {
            fprintf(stderr, "jf_register: %s\n", jf_last_error());
            exit(1);
        }
    }
    jf_shutdown(); /* CODE_CLOSE and the trim are part of writing, as fclose is for (a) */
    double t = bench_now_seconds() - t0;
    char path[600];
    snprintf(path, sizeof path, "%s/jit-%ld.dump", dir, (long)getpid());
    unlink(path);
    rmdir(dir);
    return t;
}

/* ---- the baselines' record formatting --------------------------------- */

static size_t put_u32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
    return 4;
}

static size_t put_u64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
    return 8;
}

static size_t put_str(uint8_t *p, const char *s)
{
    size_t n = strlen(s) + 1;
    memcpy(p, s, n);
    return n;
}

static uint64_t timestamp_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t record_header(uint8_t *p, uint32_t id, uint64_t ts)
{
    put_u32(p, id);
    put_u32(p + 4, 0);
    put_u64(p + 8, ts);
    return 16;
}

static size_t finish(uint8_t *p, size_t n, int pad)
{
    while (pad && n % 8)
        p[n++] = 0;
    put_u32(p + 4, (uint32_t)n);
    return n;
}

static size_t format_debug(uint8_t *p, uintptr_t addr, uint64_t ts)
{
    size_t n = record_header(p, 2, ts);
    n += put_u64(p + n, addr);
    n += put_u64(p + n, 3);
    static const uint32_t rows[3][2] = {{0, 10}, {32, 11}, {CODE_SIZE, 11}};
    for (int k = 0; k < 3; k++) {
        n += put_u64(p + n, addr + rows[k][0]);
        n += put_u32(p + n, rows[k][1]);
        n += put_u32(p + n, 0);
        n += put_str(p + n, "bench.mj");
    }
    return finish(p, n, 1);
}

static size_t format_unwind(uint8_t *p, uint64_t ts)
{
    static const uint8_t image[72] = {0x14, 0, 0,    0,    0, 0,    0,    0, 1, 'z',  'R',
                                      0,    1, 0x78, 0x10, 1, 0x1b, 0x0c, 7, 8, 0x90, 1};
    size_t n = record_header(p, 4, ts);
    n += put_u64(p + n, sizeof image);
    n += put_u64(p + n, 20);
    n += put_u64(p + n, 80);
    memcpy(p + n, image, sizeof image);
    n += sizeof image;
    return finish(p, n, 1);
}

static size_t format_load(uint8_t *p, size_t i, uint64_t ts)
{
    uintptr_t addr = (uintptr_t)(code + i * stride);
    size_t n = record_header(p, 0, ts);
    n += put_u32(p + n, (uint32_t)getpid());
    n += put_u32(p + n, (uint32_t)getpid());
    n += put_u64(p + n, addr);
    n += put_u64(p + n, addr);
    n += put_u64(p + n, CODE_SIZE);
    n += put_u64(p + n, i + 1);
    n += put_str(p + n, names[i]);
    memcpy(p + n, code + i * stride, CODE_SIZE);
    return finish(p, n + CODE_SIZE, 0);
}

static FILE *open_baseline(char *path, size_t cap)
{
    snprintf(path, cap, "%s/jf-bench-jitdump-baseline.XXXXXX", tmp_dir);
    int fd = mkstemp(path);
    if (fd < 0)
        bench_die("mkstemp");
    FILE *f = fdopen(fd, "w");
    if (!f)
        bench_die("fdopen");
    return f;
}

/* (a) records formatted into a 2 MiB stdio buffer, flushed only at the end. */
static double run_stdio(void)
{
    char path[600];
    FILE *f = open_baseline(path, sizeof path);
    static char buffer[2 << 20];
    setvbuf(f, buffer, _IOFBF, sizeof buffer);
    uint8_t rec[1024];
    double t0 = bench_now_seconds();
    for (size_t i = 0; i < n_regions; i++) {
        uint64_t ts = timestamp_ns();
        uintptr_t addr = (uintptr_t)(code + i * stride);
        fwrite(rec, 1, format_debug(rec, addr, ts), f);
        fwrite(rec, 1, format_unwind(rec, ts), f);
        fwrite(rec, 1, format_load(rec, i, ts), f);
    }
    fclose(f);
    double t = bench_now_seconds() - t0;
    unlink(path);
    return t;
}

/* (b) one write(2) per record. */
static double run_write(void)
{
    char path[600];
    FILE *f = open_baseline(path, sizeof path);
    int fd = fileno(f);
    uint8_t rec[1024];
    double t0 = bench_now_seconds();
    for (size_t i = 0; i < n_regions; i++) {
        uint64_t ts = timestamp_ns();
        uintptr_t addr = (uintptr_t)(code + i * stride);
        size_t n = format_debug(rec, addr, ts);
        if (write(fd, rec, n) != (ssize_t)n)
            bench_die("write");
        n = format_unwind(rec, ts);
        if (write(fd, rec, n) != (ssize_t)n)
            bench_die("write");
        n = format_load(rec, i, ts);
        if (write(fd, rec, n) != (ssize_t)n)
            bench_die("write");
    }
    double t = bench_now_seconds() - t0;
    fclose(f);
    unlink(path);
    return t;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        n_regions = strtoul(argv[1], NULL, 10);
    if (getenv("TMPDIR"))
        tmp_dir = getenv("TMPDIR");
    prepare_inputs();
    table_flag = bench_wants_no_table(argc, argv) ? JF_CONFIG_NO_TABLE : 0;
    if (bench_fresh_child(argc, argv, run_jitframes))
        return 0;
    if (argc > 2) {
        double t = strcmp(argv[2], "a") == 0   ? run_stdio()
                   : strcmp(argv[2], "b") == 0 ? run_write()
                                               : run_jitframes();
        printf("%s: %.0f registrations/s\n", argv[2], (double)n_regions / t);
        return 0;
    }
    double jf[RUNS], a[RUNS], b[RUNS];
    for (int r = 0; r < RUNS; r++) {
        /* Rotate the order so no writer always runs first (page cache, CPU clock). */
        for (int k = 0; k < 3; k++) {
            switch ((r + k) % 3) {
            case 0: jf[r] = run_jitframes(); break;
            case 1: a[r] = run_stdio(); break;
            default: b[r] = run_write(); break;
            }
        }
    }
    double rate_jf = (double)n_regions / bench_median(jf, RUNS);
    double rate_a = (double)n_regions / bench_median(a, RUNS);
    double rate_b = (double)n_regions / bench_median(b, RUNS);
    struct statfs fs;
    int on_tmpfs = statfs(tmp_dir, &fs) == 0 && fs.f_type == 0x01021994; /* TMPFS_MAGIC */
    printf("%zu registrations of %d-byte regions, 3 records each (debug, unwind, load); "
           "median of %d interleaved runs; files in %s (%s)\n",
           n_regions, CODE_SIZE, RUNS, tmp_dir, on_tmpfs ? "tmpfs" : "not tmpfs");
    printf("jitframes (durable, shared mapping): %10.0f registrations/s  %10.0f records/s\n", rate_jf,
           3 * rate_jf);
    printf("(a) 2 MiB stdio buffer (not durable): %10.0f registrations/s  ratio %.2fx (target >= 0.5x)\n",
           rate_a, rate_jf / rate_a);
    printf("(b) one write(2) per record:          %10.0f registrations/s  ratio %.2fx (target >= 1.5x)\n",
           rate_b, rate_jf / rate_b);
    bench_fresh_table_on_off(argv[0], n_regions); /* children: "<N> jitframes[-notable] fresh" */
    return 0;
}
