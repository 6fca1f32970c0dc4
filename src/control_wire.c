/*
 * Encoding and checking the control channel's messages (control_wire.h).
 * Layouts, byte offsets (all little-endian):
 *   request  0 "jfrq", 4 u16 version, 6 u16 op, 8 u32 sinks, 12 u32 reserved (0)
 *   reply    0 "jfrp", 4 u16 version, 6 u16 op, 8 s32 status, 12 u32 size,
 *            16 u32 pid, 20 u32 uid, 24 u32 enabled, 28 u32 failed,
 *            32 u64 live regions, 40 u64 regions[4], 72 u64 bytes[4],
 *            104 u64 errors[4], 136 u16 version[3], 142 u16 message length,
 *            144 u16 dump_dir length, 146 6 reserved bytes (0),
 *            152 message, then dump_dir (neither NUL-terminated)
 */
#define _POSIX_C_SOURCE 200809L
#include "control_wire.h"
#include "byte_writer.h"
#include "error.h"

#include <string.h>

static const uint8_t request_magic[4] = {'j', 'f', 'r', 'q'};
static const uint8_t reply_magic[4] = {'j', 'f', 'r', 'p'};

enum { REPLY_TEXT_LENGTHS = 142 };

_Static_assert(JF_CTL_REQUEST_SIZE == 16, "request layout above");
_Static_assert(JF_CTL_REPLY_HEADER_SIZE == REPLY_TEXT_LENGTHS + 4 + 6, "reply layout above");

static uint64_t load_le(const uint8_t *p, size_t n)
{
    return jf__load_uint(p, n, 0);
}

/* Both messages open with magic, version and op. */
static void put_preamble(jf__writer *w, const uint8_t magic[4], uint16_t version, uint16_t op)
{
    jf__put_bytes(w, magic, 4);
    jf__put_u16(w, version);
    jf__put_u16(w, op);
}

void jf__ctl_encode_request(const jf__ctl_request *req, uint8_t out[JF_CTL_REQUEST_SIZE])
{
    jf__writer w;
    jf__writer_init_order(&w, out, JF_CTL_REQUEST_SIZE, 0);
    put_preamble(&w, request_magic, req->version, req->op);
    jf__put_u32(&w, req->sinks);
    jf__put_u32(&w, 0);
}

int jf__ctl_decode_request(const uint8_t buf[JF_CTL_REQUEST_SIZE], jf__ctl_request *req)
{
    if (memcmp(buf, request_magic, sizeof request_magic) != 0)
        return jf__fail(JF_EINVAL, "not a jitframes control request (bad magic)");
    req->version = (uint16_t)load_le(buf + 4, 2);
    req->op = (uint16_t)load_le(buf + 6, 2);
    req->sinks = (uint32_t)load_le(buf + 8, 4);
    if (req->version != JF_CTL_VERSION)
        return jf__fail(JF_ENOTSUP, "control protocol version %u is not supported (this library speaks %d)",
                        req->version, JF_CTL_VERSION);
    if (req->op < JF_CTL_STATUS || req->op > JF_CTL_DISABLE)
        return jf__fail(JF_EINVAL, "unknown control request %u", req->op);
    if (req->sinks & ~JF_SINK_ALL)
        return jf__fail(JF_EINVAL, "unknown sink bits 0x%x in the request", req->sinks & ~JF_SINK_ALL);
    if (req->op == JF_CTL_STATUS && req->sinks)
        return jf__fail(JF_EINVAL, "a status request names no sinks");
    if (load_le(buf + 12, 4) != 0)
        return jf__fail(JF_EINVAL, "reserved bytes of the request are not zero");
    return 0;
}

static size_t text_length(const char *s, size_t max)
{
    size_t n = strnlen(s, max + 1);
    return n > max ? max : n;
}

size_t jf__ctl_encode_reply(const jf__ctl_reply *r, uint8_t out[JF_CTL_REPLY_MAX])
{
    size_t message_len = text_length(r->message, JF_CTL_MESSAGE_MAX);
    size_t dir_len = text_length(r->dump_dir, JF_CTL_DIR_MAX);
    size_t size = JF_CTL_REPLY_HEADER_SIZE + message_len + dir_len;
    jf__writer w;
    jf__writer_init_order(&w, out, JF_CTL_REPLY_MAX, 0);
    put_preamble(&w, reply_magic, r->version, r->op);
    jf__put_s32(&w, r->status);
    jf__put_u32(&w, (uint32_t)size);
    jf__put_u32(&w, r->pid);
    jf__put_u32(&w, r->uid);
    jf__put_u32(&w, r->enabled);
    jf__put_u32(&w, r->failed);
    jf__put_u64(&w, r->live_regions);
    for (int i = 0; i < JF_SINK_COUNT; i++)
        jf__put_u64(&w, r->regions[i]);
    for (int i = 0; i < JF_SINK_COUNT; i++)
        jf__put_u64(&w, r->bytes[i]);
    for (int i = 0; i < JF_SINK_COUNT; i++)
        jf__put_u64(&w, r->errors[i]);
    for (int i = 0; i < 3; i++)
        jf__put_u16(&w, r->lib_version[i]);
    jf__put_u16(&w, (uint16_t)message_len);
    jf__put_u16(&w, (uint16_t)dir_len);
    jf__put_zeros(&w, 6);
    jf__put_bytes(&w, r->message, message_len);
    jf__put_bytes(&w, r->dump_dir, dir_len);
    return w.pos;
}

size_t jf__ctl_reply_size(const uint8_t h[JF_CTL_REPLY_HEADER_SIZE])
{
    if (memcmp(h, reply_magic, sizeof reply_magic) != 0) {
        jf__fail(JF_EINVAL, "not a jitframes control reply (bad magic)");
        return 0;
    }
    uint64_t version = load_le(h + 4, 2);
    if (version != JF_CTL_VERSION) {
        jf__fail(JF_EINVAL, "control reply of version %u (this side speaks %d)", (unsigned)version,
                 JF_CTL_VERSION);
        return 0;
    }
    uint64_t size = load_le(h + 12, 4);
    uint64_t texts = load_le(h + REPLY_TEXT_LENGTHS, 2) + load_le(h + REPLY_TEXT_LENGTHS + 2, 2);
    if (size > JF_CTL_REPLY_MAX || size != JF_CTL_REPLY_HEADER_SIZE + texts) {
        jf__fail(JF_EINVAL, "control reply: size %u does not match its texts", (unsigned)size);
        return 0;
    }
    return (size_t)size;
}

static void load_u64s(const uint8_t *p, uint64_t *out, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = load_le(p + 8 * i, 8);
}

int jf__ctl_decode_reply(const uint8_t *buf, size_t len, jf__ctl_reply *r)
{
    if (len < JF_CTL_REPLY_HEADER_SIZE || jf__ctl_reply_size(buf) != len)
        return jf__fail(JF_EINVAL, "control reply: %s",
                        len < JF_CTL_REPLY_HEADER_SIZE ? "too short" : jf_last_error());
    memset(r, 0, sizeof *r);
    r->version = (uint16_t)load_le(buf + 4, 2);
    r->op = (uint16_t)load_le(buf + 6, 2);
    r->status = (int32_t)(uint32_t)load_le(buf + 8, 4);
    r->pid = (uint32_t)load_le(buf + 16, 4);
    r->uid = (uint32_t)load_le(buf + 20, 4);
    r->enabled = (uint32_t)load_le(buf + 24, 4);
    r->failed = (uint32_t)load_le(buf + 28, 4);
    r->live_regions = load_le(buf + 32, 8);
    load_u64s(buf + 40, r->regions, JF_SINK_COUNT);
    load_u64s(buf + 72, r->bytes, JF_SINK_COUNT);
    load_u64s(buf + 104, r->errors, JF_SINK_COUNT);
    for (int i = 0; i < 3; i++)
        r->lib_version[i] = (uint16_t)load_le(buf + 136 + 2 * i, 2);
    size_t message_len = (size_t)load_le(buf + REPLY_TEXT_LENGTHS, 2);
    size_t dir_len = (size_t)load_le(buf + REPLY_TEXT_LENGTHS + 2, 2);
    if (message_len > JF_CTL_MESSAGE_MAX || dir_len > JF_CTL_DIR_MAX)
        return jf__fail(JF_EINVAL, "control reply: a text is longer than its maximum");
    memcpy(r->message, buf + JF_CTL_REPLY_HEADER_SIZE, message_len);
    memcpy(r->dump_dir, buf + JF_CTL_REPLY_HEADER_SIZE + message_len, dir_len);
    return 0;
}
