/*
 * libFuzzer target over the tool's parsers: every input is read as a perf
 * map, as a jitdump (as is, and behind a valid header so the fuzzer reaches
 * the records without guessing the magic), as a raw .eh_frame and as a
 * GDB JIT symfile. The
 * checkers and the printers both run. Any crash, sanitizer report or leak
 * fails the run.
 */
#include "eh_frame_decoder.h"
#include "elf_reader.h"
#include "jitdump_reader.h"
#include "perfmap_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink(void)
{
    static FILE *devnull;
    if (!devnull)
        devnull = fopen("/dev/null", "w");
    return devnull;
}

static void count_entry(void *ctx, const pm_entry *e)
{
    *(size_t *)ctx += e->name_len;
}

static void fuzz_perfmap(const uint8_t *data, size_t size)
{
    jft_error err = {0};
    pm_summary s;
    size_t total = 0;
    pm_check(data, size, &s, &err);
    pm_parse(data, size, count_entry, &total, &err);
}

static void fuzz_jitdump(const uint8_t *data, size_t size)
{
    jft_error err = {0};
    jd_summary s;
    jd_check(data, size, &s, &err);
    jd_dump(data, size, sink(), &s, &err);
}

/* A valid x86_64 header followed by the input as records. */
static void fuzz_jitdump_records(const uint8_t *data, size_t size)
{
    static const uint8_t header[40] = {0x44, 0x54, 0x69, 0x4a, 1, 0, 0, 0, 40,   0,    0, 0,
                                       62,   0,    0,    0,    0, 0, 0, 0, 0x92, 0x10, 0, 0};
    uint8_t *buf = malloc(sizeof header + size);
    if (!buf)
        return;
    memcpy(buf, header, sizeof header);
    if (size)
        memcpy(buf + sizeof header, data, size);
    fuzz_jitdump(buf, sizeof header + size);
    free(buf);
}

static void ignore_row(void *ctx, const ehf_fde *fde, const ehf_row *row)
{
    (void)fde;
    /* Modular sums: a fuzzed FDE may claim any range; only the walk matters. */
    *(uint64_t *)ctx += (uint64_t)row->end - (uint64_t)row->start;
}

static void fuzz_eh_frame(const uint8_t *data, size_t size)
{
    ehf_layout layout = {0, 8, 64, 0};
    ehf_table t;
    jft_error err = {0};
    if (ehf_decode(data, size, &layout, &t, &err) == 0) {
        uint64_t covered = 0;
        for (size_t i = 0; i < t.n_fdes; i++)
            ehf_rows(data, size, &layout, &t, i, ignore_row, &covered, &err);
        ehf_check_hdr(data, size, 64 + (int64_t)size, &layout, &t, 0, &err);
    }
    ehf_free(&t);
}

/* Symfiles: as is, and with an ELF64 magic so the fuzzer gets past it. */
static void fuzz_elf(const uint8_t *data, size_t size)
{
    jft_error err = {0};
    elf_summary s;
    elf_check(data, size, &s, &err);
    elf_dump(data, size, sink(), &s, &err);
    if (size < 6)
        return;
    uint8_t *buf = malloc(size);
    if (!buf)
        return;
    memcpy(buf, data, size);
    memcpy(buf, "\177ELF\2", 5);
    jft_error err2 = {0};
    elf_check(buf, size, &s, &err2);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_perfmap(data, size);
    fuzz_jitdump(data, size);
    fuzz_jitdump_records(data, size);
    fuzz_eh_frame(data, size);
    fuzz_elf(data, size);
    return 0;
}
