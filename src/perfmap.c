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
#include "internal.h"
#include "perfmap_writer.h"
#include "sink.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PERFMAP_DIR "/tmp"

/* Lines are formatted here, then stored in the map once room is made for
 * all of them (a group that does not fit is written in pieces of this
 * size). The registry lock serialises every use. */
static char line_buffer[64 * 1024];

static size_t put_hex(char *dst, uint64_t v)
{
    char tmp[16];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v & 0xf];
        v >>= 4;
    } while (v);
    for (size_t i = 0; i < n; i++)
        dst[i] = tmp[n - 1 - i];
    return n;
}

/* Format r's line at dst (room for 2*16 + 3 + JF_NAME_MAX bytes). */
static size_t format_line(char *dst, const jf_live *r)
{
    size_t n = put_hex(dst, r->start);
    dst[n++] = ' ';
    n += put_hex(dst + n, r->size);
    dst[n++] = ' ';
    size_t name_len = strlen(r->name);
    memcpy(dst + n, r->name, name_len);
    n += name_len;
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
        const char *nl = memchr(line_buffer + at, '\n', used - at);
        size_t n = (size_t)(nl - (line_buffer + at)) + 1;
        jf__pmw_put_line(line_buffer + at, n);
        at += n;
    }
    stats->bytes += used;
    stats->regions += lines;
    return 0;
}

static int perfmap_add(jf_live *const *regions, size_t n, jf_sink_stats *stats)
{
    if (!jf__pmw_is_open())
        return jf__fail(JF_EDISABLED, "perf map is not open");
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

static void perfmap_stop(int final)
{
    (void)final;
    jf__pmw_close();
}

static void perfmap_forget_after_fork(void)
{
    jf__pmw_forget();
}

const sink_ops jf_perfmap_sink = {
    .word = "perfmap",
    .bit = JF_SINK_PERFMAP,
    .start = perfmap_start,
    .add = perfmap_add,
    .remove = NULL, /* a perf map cannot express removal */
    .stop = perfmap_stop,
    .forget_after_fork = perfmap_forget_after_fork,
};
