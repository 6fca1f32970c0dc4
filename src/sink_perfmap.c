/*
 * Sink: /tmp/perf-<pid>.map, one "<start> <size> <name>\n" line per region
 * in the strictest form every reader accepts (lowercase hex without 0x,
 * single spaces, a newline after every line). Lines are formatted here and
 * stored by perfmap_writer.c into reserved space of a shared mapping — in
 * the kernel when the call returns, so a killed process leaves every
 * registered line behind, with no system call per line. perf's location is
 * fixed: /tmp, our own getpid().
 */
#define _GNU_SOURCE
#include "error.h"
#include "region.h"
#include "perfmap_writer.h"
#include "short_copy.h"
#include "sink.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PERFMAP_DIR "/tmp"

/* Lines are formatted here, then stored in the map once room is made for
 * all of them (a group that does not fit is written in pieces of this
 * size). The registry lock serialises every use. */
static char line_buffer[64 * 1024];

/* "000102...feff": two hex digits per byte, one load each. */
static const char hex_pairs[513] =
#define P16(h) h "0" h "1" h "2" h "3" h "4" h "5" h "6" h "7" h "8" h "9" h "a" h "b" h "c" h "d" h "e" h "f"
    P16("0") P16("1") P16("2") P16("3") P16("4") P16("5") P16("6") P16("7") P16("8") P16("9") P16("a")
        P16("b") P16("c") P16("d") P16("e") P16("f");
#undef P16

/* v in lowercase hex without leading zeros, written at dst; its length. */
static inline __attribute__((always_inline)) size_t put_hex(char *dst, uint64_t v)
{
    size_t n = (size_t)(67 - __builtin_clzll(v | 1)) / 4;
    size_t i = n;
    for (; i >= 2; i -= 2, v >>= 8)
        memcpy(dst + i - 2, hex_pairs + 2 * (v & 0xff), 2);
    if (i)
        dst[0] = hex_pairs[2 * v + 1];
    return n;
}

/* Format r's line at dst (room for 2*16 + 3 + JF_NAME_MAX bytes). */
static size_t format_line(char *dst, const jf__live *r)
{
    size_t n = put_hex(dst, r->start);
    dst[n++] = ' ';
    n += put_hex(dst + n, r->size);
    dst[n++] = ' ';
    jf__short_copy(dst + n, r->name, r->name_len);
    n += r->name_len;
    dst[n++] = '\n';
    return n;
}

enum { MAX_LINE = 2 * 16 + 3 + JF_NAME_MAX };
_Static_assert(sizeof line_buffer >= MAX_LINE, "line buffer holds at least one line");

static int perfmap_start(const char *dump_dir, jf_sink_stats *stats)
{
    (void)dump_dir;
    (void)stats;
    char name[64];
    snprintf(name, sizeof name, "perf-%ld.map", (long)getpid());
    return jf__pmw_open(PERFMAP_DIR, name);
}

/* Store the buffered lines of `lines` regions; counts only what is stored.
 * Room for all of them first: on failure none is written. */
static int flush_lines(size_t used, size_t lines, jf_sink_stats *stats)
{
    int rc = jf__pmw_reserve(used, lines);
    if (rc)
        return rc;
    for (size_t at = 0; at < used;) {
        size_t n = (size_t)((const char *)memchr(line_buffer + at, '\n', used - at) - (line_buffer + at)) + 1;
        jf__pmw_put_line(line_buffer + at, n);
        at += n;
    }
    stats->bytes += used;
    stats->regions += lines;
    return 0;
}

static int perfmap_add(jf__live *const *regions, size_t n, jf_sink_stats *stats)
{
    if (!jf__pmw_is_open())
        return jf__fail(JF_EDISABLED, "perf map is not open");
    if (n == 1) { /* jf_register: one line, straight through */
        size_t len = format_line(line_buffer, regions[0]);
        int rc = jf__pmw_reserve(len, 1);
        if (rc)
            return rc;
        jf__pmw_put_line(line_buffer, len);
        stats->bytes += len;
        stats->regions++;
        return 0;
    }
    size_t used = 0, pending = 0;
    for (size_t i = 0; i < n; i++) {
        if (sizeof line_buffer - used < MAX_LINE) {
            int rc = flush_lines(used, pending, stats);
            if (rc)
                return rc;
            used = pending = 0;
        }
        used += format_line(line_buffer + used, regions[i]);
        pending++;
    }
    return flush_lines(used, pending, stats);
}

static void perfmap_stop(int final, jf_sink_stats *stats)
{
    (void)stats;
    (void) final;
    jf__pmw_close();
}

static void perfmap_forget_after_fork(void)
{
    jf__pmw_forget();
}

const jf__sink_ops jf__perfmap_sink = {
    .word = "perfmap",
    .bit = JF_SINK_PERFMAP,
    .start = perfmap_start,
    .add = perfmap_add,
    .remove = NULL, /* a perf map cannot express removal */
    .stop = perfmap_stop,
    .forget_after_fork = perfmap_forget_after_fork,
};
