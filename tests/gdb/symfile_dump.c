/*
 * Registers a few kinds of regions with the gdb sink, then walks
 * __jit_debug_descriptor as a debugger would and writes every live symfile
 * to OUTDIR/symfile-N.o, for readelf, llvm-dwarfdump and `jitframes check`.
 *
 * Usage: symfile_dump OUTDIR [many]
 *   many: also register 2,000 single regions, so merged symfiles appear.
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gdb_jit_view.h"

static void check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "symfile_dump: %s: %s (%s)\n", what, jf_strerror(rc), jf_last_error());
        exit(2);
    }
}

static int dump_all(const char *dir)
{
    int n = 0;
    for (jf__jit_code_entry *e = __jit_debug_descriptor.first_entry; e; e = e->next_entry) {
        char path[4096];
        snprintf(path, sizeof path, "%s/symfile-%d.o", dir, n++);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(e->symfile_addr, 1, e->symfile_size, f) != e->symfile_size || fclose(f) != 0) {
            perror(path);
            exit(2);
        }
    }
    return n;
}

/* A frameless x86_64-style CFI description that is valid on every host:
 * one FDE, CFA = SP + 16 after the first 4 bytes. */
static jf_cfi *simple_cfi(size_t size)
{
    jf_cfi *c;
    check(jf_cfi_new(&c), "cfi");
    check(jf_cfi_add_frameless(c, 0, 4, 0), "frameless");
    check(jf_cfi_add_frameless(c, 4, size, 16), "frameless");
    return c;
}

/* Two functions in one region: each FDE starts in the entry state (its first
 * rule after an advance), so the symfile names each with its own symbol. */
static jf_cfi *two_functions_cfi(void)
{
    jf_cfi *c;
    check(jf_cfi_new(&c), "cfi");
    for (size_t at = 0; at < 64; at += 32) {
        check(jf_cfi_begin_fde(c, at, at + 32), "fde");
        check(jf_cfi_advance_to(c, at + 4), "advance");
        check(jf_cfi_def_cfa_offset(c, 16), "cfa");
        check(jf_cfi_advance_to(c, at + 28), "advance");
        check(jf_cfi_def_cfa_offset(c, 8), "cfa");
    }
    return c;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: symfile_dump OUTDIR [many]\n");
        return 2;
    }
    int many = argc > 2 && strcmp(argv[2], "many") == 0;
    uint8_t *code = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return 2;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.sinks = JF_SINK_GDB;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    check(jf_init(&cfg), "jf_init");

    /* A batch: names only, lines from two files, CFI, everything. */
    static const jf_line lines[] = {{0, 3, NULL}, {8, 4, "other.src"}, {16, 9, NULL}, {24, 0, NULL}};
    jf_cfi *cfi = simple_cfi(64), *two = two_functions_cfi();
    jf_region batch[5];
    for (int i = 0; i < 5; i++) {
        jf_region r = JF_REGION_INIT;
        r.addr = code + 64 * i;
        r.size = 48;
        batch[i] = r;
    }
    batch[0].name = "plain";
    batch[1].name = "with_lines";
    batch[1].file = "prog.src";
    batch[1].line = 3;
    batch[1].lines = lines;
    batch[1].n_lines = 4;
    batch[2].name = "with_cfi";
    batch[2].size = 64;
    batch[2].cfi = cfi;
    batch[3].name = "everything";
    batch[3].size = 64;
    batch[3].file = "prog.src";
    batch[3].lines = lines;
    batch[3].n_lines = 4;
    batch[3].cfi = cfi;
    batch[4] = batch[3]; /* the same, at its own address, holding two functions */
    batch[4].addr = code + 64 * 4;
    batch[4].name = "two_functions";
    batch[4].cfi = two;
    check(jf_register_batch(batch, 5), "batch");

    jf_region single = JF_REGION_INIT;
    single.addr = code + 4096;
    single.size = 32;
    single.name = "file_and_line_only";
    single.file = "/abs/path/prog.src";
    single.line = 42;
    check(jf_register(&single), "single");

    for (int i = 0; many && i < 2000; i++) {
        char name[32];
        snprintf(name, sizeof name, "fn_%d", i);
        jf_region r = JF_REGION_INIT;
        r.addr = code + 8192 + 80 * i; /* 80-byte slots: 16-byte gaps make separate spans */
        r.size = i % 3 ? 64 : 70;
        r.name = name;
        r.cfi = i % 2 ? cfi : NULL;
        check(jf_register(&r), "many");
    }
    jf_cfi_free(cfi);
    jf_cfi_free(two);

    struct jf_stats st = JF_STATS_INIT;
    check(jf_stats(&st), "stats");
    int n = dump_all(argv[1]);
    printf("symfiles: %d (stats: %llu)\n", n, (unsigned long long)st.sink[2].objects);
    if ((uint64_t)n != st.sink[2].objects)
        return 1;
    check(jf_shutdown(), "shutdown");
    if (__jit_debug_descriptor.first_entry) {
        fprintf(stderr, "symfile_dump: symfiles left after shutdown\n");
        return 1;
    }
    return 0;
}
