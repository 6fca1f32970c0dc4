/* Shared helpers of the tool's parsers (see jft_common.h). */
#include "jft_common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int jft_vfail(jft_error *err, uint64_t where, const char *fmt, va_list ap)
{
    if (!err || err->set)
        return -1;
    err->set = 1;
    err->where = where;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return -1;
}

int jft_fail(jft_error *err, uint64_t where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    jft_vfail(err, where, fmt, ap);
    va_end(ap);
    return -1;
}

void jft_rules_init(jft_rules *r, jft_error *err, int keep_going)
{
    memset(r, 0, sizeof *r);
    r->err = err ? err : &r->fallback;
    r->keep_going = keep_going;
}

int jft_violation(jft_rules *r, uint64_t where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    jft_vfail(r->err, where, fmt, ap);
    va_end(ap);
    r->count++;
    return r->keep_going ? 0 : -1;
}

void jft_reader_init(jft_reader *r, const uint8_t *data, size_t len, int big_endian)
{
    r->data = data;
    r->len = len;
    r->pos = 0;
    r->big_endian = big_endian;
    r->overrun = 0;
}

size_t jft_left(const jft_reader *r)
{
    return r->len - r->pos;
}

const uint8_t *jft_skip(jft_reader *r, size_t n)
{
    if (r->overrun || n > jft_left(r)) {
        r->overrun = 1;
        return NULL;
    }
    const uint8_t *p = r->data + r->pos;
    r->pos += n;
    return p;
}

/* Read an n-byte unsigned integer in the reader's byte order. */
static uint64_t read_uint(jft_reader *r, size_t n)
{
    const uint8_t *p = jft_skip(r, n);
    if (!p)
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = r->big_endian ? i : n - 1 - i;
        v = (v << 8) | p[k];
    }
    return v;
}

uint8_t jft_u8(jft_reader *r)
{
    return (uint8_t)read_uint(r, 1);
}

uint16_t jft_u16(jft_reader *r)
{
    return (uint16_t)read_uint(r, 2);
}

uint32_t jft_u32(jft_reader *r)
{
    return (uint32_t)read_uint(r, 4);
}

uint64_t jft_u64(jft_reader *r)
{
    return read_uint(r, 8);
}

/* LEB128 values wider than 64 bits are treated as an overrun: no valid
 * DWARF we check needs them, and they would silently truncate. */
uint64_t jft_uleb128(jft_reader *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        const uint8_t *p = jft_skip(r, 1);
        if (!p)
            return 0;
        if (shift >= 64 || (shift == 63 && (*p & 0x7e))) {
            r->overrun = 1;
            return 0;
        }
        v |= (uint64_t)(*p & 0x7f) << shift;
        if (!(*p & 0x80))
            return v;
    }
}

int64_t jft_sleb128(jft_reader *r)
{
    uint64_t v = 0;
    unsigned shift = 0;
    const uint8_t *p;
    do {
        p = jft_skip(r, 1);
        if (!p)
            return 0;
        if (shift >= 64) {
            r->overrun = 1;
            return 0;
        }
        v |= (uint64_t)(*p & 0x7f) << shift;
        shift += 7;
    } while (*p & 0x80);
    if (shift < 64 && (*p & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

size_t jft_utf8_length(const uint8_t *s, size_t n)
{
    if (n == 0)
        return 0;
    uint8_t c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    uint8_t lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80; /* overlong */
        hi = c == 0xed ? 0x9f : 0xbf; /* UTF-16 surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        lo = c == 0xf0 ? 0x90 : 0x80; /* overlong */
        hi = c == 0xf4 ? 0x8f : 0xbf; /* above U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

int jft_check_name(const uint8_t *s, size_t n, size_t *bad_index, char *why, size_t why_size)
{
    *bad_index = 0;
    if (n == 0) {
        snprintf(why, why_size, "empty name");
        return -1;
    }
    for (size_t i = 0; i < n;) {
        *bad_index = i;
        if (s[i] < 0x20 || s[i] == 0x7f) {
            snprintf(why, why_size, "control character 0x%02x in name at byte %zu", s[i], i);
            return -1;
        }
        size_t len = jft_utf8_length(s + i, n - i);
        if (len == 0) {
            snprintf(why, why_size, "invalid UTF-8 (byte 0x%02x) in name at byte %zu", s[i], i);
            return -1;
        }
        i += len;
    }
    return 0;
}

uint64_t jft_round_up(uint64_t v, uint64_t align)
{
    return (v + align - 1) / align * align;
}

int jft_fits(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

void jft_stream_from_buffer(jft_stream *s, const uint8_t *buf, size_t len)
{
    jft_stream_from_fd(s, -1, buf, len);
}

void jft_stream_from_fd(jft_stream *s, int fd, const uint8_t *head, size_t len)
{
    memset(s, 0, sizeof *s);
    s->fd = fd;
    s->mem = head;
    s->mem_len = head ? len : 0;
}

size_t jft_stream_read(jft_stream *s, uint8_t *buf, size_t n)
{
    size_t got = 0;
    size_t from_mem = s->mem_len - s->mem_pos < n ? s->mem_len - s->mem_pos : n;
    if (from_mem) {
        memcpy(buf, s->mem + s->mem_pos, from_mem);
        s->mem_pos += from_mem;
        got = from_mem;
    }
    while (got < n && s->fd >= 0 && !s->error) {
        ssize_t r = read(s->fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            s->error = errno;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

uint64_t jft_stream_skip(jft_stream *s, uint64_t n, int *all_zero)
{
    uint8_t chunk[1 << 14];
    uint64_t done = 0;
    if (all_zero)
        *all_zero = 1;
    while (done < n) {
        size_t want = n - done < sizeof chunk ? (size_t)(n - done) : sizeof chunk;
        size_t got = jft_stream_read(s, chunk, want);
        for (size_t i = 0; all_zero && *all_zero && i < got; i++)
            *all_zero = chunk[i] == 0;
        done += got;
        if (got < want)
            break;
    }
    return done;
}
