/*
 * The control channel's wire format (docs/formats.md, "Control channel"):
 * one fixed-size request, one reply of a fixed header plus two short texts.
 * Shared by the library (the listener) and the jitframes tool (the client),
 * so both sides encode and check it with the same code. Every integer is
 * little-endian, written and read byte by byte.
 */
#ifndef JF_CONTROL_WIRE_H
#define JF_CONTROL_WIRE_H

#include "jitframes.h"

#include <stddef.h>
#include <stdint.h>

/* The abstract AF_UNIX name starts with this (after the leading NUL);
 * /proc/net/unix shows it as "@jitframes/...". */
#define JF_CTL_NAME_PREFIX "jitframes/"

enum {
    JF_CTL_VERSION = 1,
    JF_CTL_REQUEST_SIZE = 16,
    JF_CTL_REPLY_HEADER_SIZE = 152,
    JF_CTL_MESSAGE_MAX = 511, /* bytes of text, as jf_last_error() holds */
    JF_CTL_DIR_MAX = 4095,    /* PATH_MAX - 1 */
    JF_CTL_REPLY_MAX = JF_CTL_REPLY_HEADER_SIZE + JF_CTL_MESSAGE_MAX + JF_CTL_DIR_MAX,
};

enum jf__ctl_op { JF_CTL_STATUS = 1, JF_CTL_ENABLE = 2, JF_CTL_DISABLE = 3 };

typedef struct jf__ctl_request {
    uint16_t version;
    uint16_t op;    /* enum jf__ctl_op */
    uint32_t sinks; /* JF_SINK_* bits for enable and disable; 0 for status */
} jf__ctl_request;

/* What the process answers. Its state (pid onwards) is all zero in a reply
 * to a client whose uid is refused. */
typedef struct jf__ctl_reply {
    uint16_t version;
    uint16_t op;      /* the request's op; 0 if it could not be read */
    int32_t status;   /* 0, or the JF_E* code of the failure */
    uint32_t pid;     /* getpid() in the process: its own pid namespace's view */
    uint32_t uid;     /* its effective uid */
    uint32_t enabled; /* jf_enabled_sinks() after the request */
    uint32_t failed;  /* sinks that disabled themselves after a failure */
    uint64_t live_regions;
    uint64_t regions[JF_SINK_COUNT]; /* jf_stats, indexed like jf_stats.sink[] */
    uint64_t bytes[JF_SINK_COUNT];
    uint64_t errors[JF_SINK_COUNT];
    uint16_t lib_version[3];              /* major, minor, patch */
    char message[JF_CTL_MESSAGE_MAX + 1]; /* why it failed, "" on success */
    char dump_dir[JF_CTL_DIR_MAX + 1];    /* the jitdump directory, as the process sees it */
} jf__ctl_reply;

void jf__ctl_encode_request(const jf__ctl_request *req, uint8_t out[JF_CTL_REQUEST_SIZE]);

/* Check a request: JF_EINVAL (bad magic, op, sink bits, reserved bytes) or
 * JF_ENOTSUP (another version), with a message; 0 and *req filled. */
int jf__ctl_decode_request(const uint8_t buf[JF_CTL_REQUEST_SIZE], jf__ctl_request *req);

/* Encode into out (JF_CTL_REPLY_MAX bytes); returns the bytes used. Texts
 * longer than their maximum are cut. */
size_t jf__ctl_encode_reply(const jf__ctl_reply *reply, uint8_t out[JF_CTL_REPLY_MAX]);

/* From a reply's header: the size of the whole reply (header included), or
 * 0 with a message if the header is not a version-1 reply header. */
size_t jf__ctl_reply_size(const uint8_t header[JF_CTL_REPLY_HEADER_SIZE]);

/* Decode a whole reply of `len` bytes (jf__ctl_reply_size's answer):
 * 0, or JF_EINVAL with a message. The texts come out NUL-terminated. */
int jf__ctl_decode_reply(const uint8_t *buf, size_t len, jf__ctl_reply *reply);

#endif
