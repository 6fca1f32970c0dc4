/*
 * Reader and validator for perf jitdump files (jit-<pid>.dump), written
 * from the format description (docs/formats.md) and checked against what
 * perf's reader (tools/perf/util/jitdump.c, genelf.c) actually relies on.
 */
#ifndef JFT_JITDUMP_READER_H
#define JFT_JITDUMP_READER_H

#include "eh_frame_decoder.h"
#include "jft_common.h"

#define JD_MAGIC 0x4A695444u
#define JD_HEADER_SIZE 40u
#define JD_PREFIX_SIZE 16u
#define JD_FLAG_ARCH_TIMESTAMP 1u

/*
 * What the walker holds at most, so that it reads any input, an endless
 * stream too, within about 40 MiB (the tool promises 64 MiB resident):
 * - one record of at most 8 MiB (perf has no limit; a CODE_LOAD carries one
 *   function's code, which no known JIT makes that large);
 * - a CODE_DEBUG_INFO and a CODE_UNWINDING_INFO of at most 1 MiB each, kept
 *   until their CODE_LOAD with their decoded line table or .eh_frame (each
 *   a few times the record's size);
 * - 524,288 live code regions (loads whose code no later load or move
 *   replaced: 40 bytes each), for the overlap and CODE_MOVE checks.
 * A larger record, or one more live region, is a violation that names the
 * limit.
 */
#define JD_MAX_RECORD_SIZE (8u << 20)
#define JD_MAX_HELD_RECORD_SIZE (1u << 20)
#define JD_MAX_LIVE_REGIONS (1u << 19)

enum jd_record_id {
    JD_CODE_LOAD = 0,
    JD_CODE_MOVE = 1,
    JD_CODE_DEBUG_INFO = 2,
    JD_CODE_CLOSE = 3,
    JD_CODE_UNWINDING_INFO = 4,
};

typedef struct jd_header {
    int big_endian;
    uint32_t version, total_size, elf_mach, reserved, pid;
    uint64_t timestamp, flags;
} jd_header;

typedef struct jd_load {
    uint32_t pid, tid;
    uint64_t vma, code_addr, code_size, code_index;
    const char *name; /* NUL-terminated inside the record */
    const uint8_t *code;
} jd_load;

typedef struct jd_move {
    uint32_t pid, tid;
    uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
} jd_move;

typedef struct jd_line {
    uint64_t addr;
    uint32_t lineno, discrim;
    const char *file; /* NUL-terminated inside the record */
} jd_line;

typedef struct jd_debug {
    uint64_t code_addr, nr_entry;
    const jd_line *lines; /* nr_entry decoded entries */
} jd_debug;

typedef struct jd_unwind {
    uint64_t unwinding_size, eh_frame_hdr_size, mapped_size;
    const uint8_t *eh_frame; /* unwinding_size - eh_frame_hdr_size bytes */
    const uint8_t *eh_frame_hdr;
    uint64_t eh_frame_size;
    ehf_layout layout;      /* .eh_frame placed as perf's synthesized DSO places it */
    const ehf_table *table; /* decoded .eh_frame (NULL if it could not be decoded) */
} jd_unwind;

typedef struct jd_record {
    uint64_t offset; /* of the record in the file */
    uint64_t index;  /* 0-based record number */
    uint32_t id, total_size;
    uint64_t timestamp;
    union {
        jd_load load;
        jd_move move;
        jd_debug debug;
        jd_unwind unwind;
    } u;
} jd_record;

/* Callbacks for `dump`. Debug and unwinding records are reported together
 * with the CODE_LOAD they describe (their eh_frame needs its code_size).
 * A record's pointers are valid only during the call. */
typedef struct jd_visitor {
    void (*header)(void *ctx, const jd_header *h);
    void (*record)(void *ctx, const jd_record *r, uint32_t elf_mach);
} jd_visitor;

typedef struct jd_summary {
    uint64_t records, loads, moves, debug_infos, unwind_infos, closes;
    uint64_t end_offset;  /* where the records end (start of a zero or unpublished tail) */
    uint64_t reopened;    /* records after a CODE_CLOSE: the writer was closed and opened again */
    uint64_t unpublished; /* bytes of a record group whose first size is still 0 (a writer
                             killed mid-registration; perf stops reading there) */
    uint64_t warnings;    /* rules perf does not enforce, broken; the first is `warning` */
    jft_error warning;
} jd_summary;

/*
 * Walk and validate a whole jitdump. With `keep_going`, violations of the
 * semantic rules are recorded (the first one wins) and decoding continues
 * as long as the structure can be parsed; otherwise the walk stops at the
 * first violation. Returns 0 if the dump is valid, -1 with err set.
 */
int jd_walk(const uint8_t *buf, size_t len, const jd_visitor *v, void *ctx, int keep_going,
            jd_summary *summary, jft_error *err);

/* The same over a stream (a pipe, a file, standard input), read once front
 * to back in bounded memory. */
int jd_walk_stream(jft_stream *in, const jd_visitor *v, void *ctx, int keep_going, jd_summary *summary,
                   jft_error *err);

/* Validate (no output). */
int jd_check(const uint8_t *buf, size_t len, jd_summary *summary, jft_error *err);

/* Print every record, decoded, to out (jitdump_print.c). */
int jd_dump(const uint8_t *buf, size_t len, void *out_file, jd_summary *summary, jft_error *err);
int jd_dump_stream(jft_stream *in, void *out_file, jd_summary *summary, jft_error *err);

/* "CODE_LOAD" etc., or "unknown". */
const char *jd_record_name(uint32_t id);

#endif
