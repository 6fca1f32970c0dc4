/*
 * A bounds-checked byte writer for the binary formats (.eh_frame, jitdump
 * records, ELF images, the control channel). Integers go out in the
 * writer's byte order: the host's unless set otherwise (the consumers of
 * those formats on this machine read them in its order; the control
 * channel's wire format is little-endian everywhere). Writers never touch memory past
 * `cap`: a write that does not fit sets `overflow` and writes nothing, but
 * `pos` keeps counting, so after a pass `pos` is the size the output needs.
 * A writer over (NULL, 0) therefore measures without writing.
 *
 * Everything is written byte by byte: no pointer casts, no alignment needs.
 */
#ifndef JF_BYTE_WRITER_H
#define JF_BYTE_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "byte_order.h"

typedef struct jf__writer {
    uint8_t *buf; /* may be NULL when cap is 0 */
    size_t cap;
    size_t pos;     /* bytes emitted so far, written or not; saturates at SIZE_MAX */
    int overflow;   /* 1 once anything did not fit */
    int big_endian; /* byte order of the integers written */
} jf__writer;

static inline void jf__writer_init_order(jf__writer *w, void *buf, size_t cap, int big_endian)
{
    w->buf = buf;
    w->cap = buf ? cap : 0;
    w->pos = 0;
    w->overflow = 0;
    w->big_endian = big_endian;
}

/* A writer in the host's byte order. */
static inline void jf__writer_init(jf__writer *w, void *buf, size_t cap)
{
    jf__writer_init_order(w, buf, cap, JF_HOST_BIG_ENDIAN);
}

/* 1 if every byte so far was written. */
static inline int jf__writer_ok(const jf__writer *w)
{
    return !w->overflow;
}

/* Reserve n bytes: returns where to write them, or NULL (overflow recorded,
 * pos still advanced) if they do not fit. */
static inline uint8_t *jf__writer_reserve(jf__writer *w, size_t n)
{
    size_t at = w->pos;
    w->pos = n > SIZE_MAX - at ? SIZE_MAX : at + n;
    if (w->overflow || at > w->cap || n > w->cap - at) {
        w->overflow = 1;
        return NULL;
    }
    return w->buf + at;
}

static inline void jf__put_bytes(jf__writer *w, const void *src, size_t n)
{
    uint8_t *p = jf__writer_reserve(w, n);
    if (p && n)
        memcpy(p, src, n);
}

static inline void jf__put_zeros(jf__writer *w, size_t n)
{
    uint8_t *p = jf__writer_reserve(w, n);
    if (p && n)
        memset(p, 0, n);
}

/* v in n bytes, in the writer's byte order. */
static inline void jf__put_uint(jf__writer *w, uint64_t v, size_t n)
{
    uint8_t *p = jf__writer_reserve(w, n);
    if (p)
        jf__store_uint(p, v, n, w->big_endian);
}

static inline void jf__put_u8(jf__writer *w, uint8_t v)
{
    jf__put_uint(w, v, 1);
}
static inline void jf__put_u16(jf__writer *w, uint16_t v)
{
    jf__put_uint(w, v, 2);
}
static inline void jf__put_u32(jf__writer *w, uint32_t v)
{
    jf__put_uint(w, v, 4);
}
static inline void jf__put_u64(jf__writer *w, uint64_t v)
{
    jf__put_uint(w, v, 8);
}
static inline void jf__put_s32(jf__writer *w, int32_t v)
{
    jf__put_uint(w, (uint32_t)v, 4);
}

/* A NUL-terminated string, terminator included. */
static inline void jf__put_cstr(jf__writer *w, const char *s)
{
    jf__put_bytes(w, s, strlen(s) + 1);
}

static inline void jf__put_uleb128(jf__writer *w, uint64_t v)
{
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        jf__put_u8(w, (uint8_t)(byte | (v ? 0x80 : 0)));
    } while (v);
}

static inline void jf__put_sleb128(jf__writer *w, int64_t v)
{
    for (;;) {
        uint8_t byte = (uint8_t)((uint64_t)v & 0x7f);
        /* Arithmetic shift without relying on implementation-defined >> of negatives. */
        v = v < 0 ? ~(~v >> 7) : v >> 7;
        int done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
        jf__put_u8(w, (uint8_t)(byte | (done ? 0 : 0x80)));
        if (done)
            return;
    }
}

/* Zero-pad until pos is a multiple of `align` (a power of two), counted from
 * the start of the buffer. */
static inline void jf__put_align(jf__writer *w, size_t align)
{
    size_t rem = align ? w->pos & (align - 1) : 0;
    if (rem)
        jf__put_zeros(w, align - rem);
}

/* Overwrite n bytes at an earlier offset `at` (length fields known only
 * later). Out of range: overflow recorded, nothing written. */
static inline void jf__patch_uint(jf__writer *w, size_t at, uint64_t v, size_t n)
{
    if (w->overflow || at > w->cap || n > w->cap - at) {
        w->overflow = 1;
        return;
    }
    jf__store_uint(w->buf + at, v, n, w->big_endian);
}

static inline void jf__patch_u32(jf__writer *w, size_t at, uint32_t v)
{
    jf__patch_uint(w, at, v, 4);
}
static inline void jf__patch_u64(jf__writer *w, size_t at, uint64_t v)
{
    jf__patch_uint(w, at, v, 8);
}

#endif
