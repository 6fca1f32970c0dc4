/*
 * Shared pieces of the jitframes tool's parsers: the first-error report,
 * a bounds-checked little/big-endian byte reader, and the name rules.
 * The parsers read a byte buffer or a stream (jft_stream: their only I/O,
 * read() on a descriptor the caller opened; no globals), so the
 * command-line tool, the tests and the fuzzer all call them alike.
 */
#ifndef JFT_COMMON_H
#define JFT_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define JFT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define JFT_PRINTF(f, a)
#endif

/* The first problem found. `where` is a line number (perf map) or a byte
 * offset (jitdump); `msg` says what is wrong, without the file name. */
typedef struct jft_error {
    int set;
    uint64_t where;
    char msg[400];
} jft_error;

/* Record a problem unless one is already recorded (the first one wins).
 * Always returns -1 so parsers can `return jft_fail(...)`. */
int jft_fail(jft_error *err, uint64_t where, const char *fmt, ...) JFT_PRINTF(3, 4);
int jft_vfail(jft_error *err, uint64_t where, const char *fmt, va_list ap) JFT_PRINTF(3, 0);

/* How a walker treats broken rules: `check` stops at the first one,
 * `dump` records the first one and goes on decoding. */
typedef struct jft_rules {
    jft_error *err; /* the caller's, or `fallback` */
    int keep_going;
    uint64_t count; /* violations so far */
    jft_error fallback;
} jft_rules;

void jft_rules_init(jft_rules *r, jft_error *err, int keep_going);

/* Record a violation; returns 0 to go on (keep_going), -1 to stop. */
int jft_violation(jft_rules *r, uint64_t where, const char *fmt, ...) JFT_PRINTF(3, 4);

/* A cursor over [data, data + len). Every read checks the bounds: on a
 * short read it sets `overrun` and yields zero, so callers check once. */
typedef struct jft_reader {
    const uint8_t *data;
    size_t len;
    size_t pos;
    int big_endian;
    int overrun;
} jft_reader;

void jft_reader_init(jft_reader *r, const uint8_t *data, size_t len, int big_endian);
size_t jft_left(const jft_reader *r);
uint8_t jft_u8(jft_reader *r);
uint16_t jft_u16(jft_reader *r);
uint32_t jft_u32(jft_reader *r);
uint64_t jft_u64(jft_reader *r);
uint64_t jft_uleb128(jft_reader *r);
int64_t jft_sleb128(jft_reader *r);
/* Skip n bytes; returns a pointer to them (NULL on overrun). */
const uint8_t *jft_skip(jft_reader *r, size_t n);

/* Length of the valid UTF-8 sequence at s[0..n) (1..4), 0 if invalid
 * (truncated, overlong, surrogate, above U+10FFFF). */
size_t jft_utf8_length(const uint8_t *s, size_t n);

/* Check a symbol name: non-empty, valid UTF-8, no control characters
 * (below 0x20, or DEL). Returns 0, or -1 with a description of the first
 * bad byte (and its index in *bad_index) written to `why`. */
int jft_check_name(const uint8_t *s, size_t n, size_t *bad_index, char *why, size_t why_size);

uint64_t jft_round_up(uint64_t v, uint64_t align);

/* Whether [off, off + len) lies inside [0, size), without overflowing: the
 * one range check of every reader (an offset and a length read from the
 * input may each be anything). An empty range at `size` fits. */
int jft_fits(uint64_t off, uint64_t len, uint64_t size);

/*
 * Where a streaming reader's bytes come from: a file descriptor (a pipe,
 * standard input, a file read front to back) or a buffer in memory (tests,
 * the fuzzer). The readers pull what they need and keep a bounded amount,
 * so an endless input costs time, never unbounded memory.
 */
typedef struct jft_stream {
    int fd;             /* read from here once `mem` is used up; -1: none */
    const uint8_t *mem; /* bytes served first (a buffer, or what was peeked) */
    size_t mem_len, mem_pos;
    int error; /* errno of a failed read (the stream then ends) */
} jft_stream;

void jft_stream_from_buffer(jft_stream *s, const uint8_t *buf, size_t len);
/* `head` (len bytes already read from fd, e.g. to detect the format) comes
 * first; the caller keeps it alive while the stream is used. */
void jft_stream_from_fd(jft_stream *s, int fd, const uint8_t *head, size_t len);

/* Read up to n bytes, fewer only at the end of the stream (or on an error,
 * in s->error). Returns how many were read. */
size_t jft_stream_read(jft_stream *s, uint8_t *buf, size_t n);

/* Read and drop up to n bytes; returns how many were dropped and sets
 * *all_zero to whether they were all zero (NULL: not asked). */
uint64_t jft_stream_skip(jft_stream *s, uint64_t n, int *all_zero);

#endif
