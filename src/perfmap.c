/*
 * Sink: /tmp/perf-<pid>.map, one "<start> <size> <name>\n" line per region
 * in the strictest form every reader accepts (lowercase hex without 0x,
 * single spaces, a newline after every line). Lines go straight to the
 * kernel with write(2) — no stdio buffer — so a killed process leaves every
 * registered line behind. perf's location is fixed: /tmp, our own getpid().
 */
#define _GNU_SOURCE
#include "internal.h"
#include "safe_file.h"
#include "sink.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PERFMAP_DIR "/tmp"

static int map_fd = -1;
/* Lines are formatted here and written in as few calls as possible.
 * The registry lock serialises every use. */
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
    if (map_fd >= 0)
        return 0;
    char name[64];
    snprintf(name, sizeof name, "perf-%ld.map", (long)getpid());
    int reused;
    int fd = jf__safe_file_open(PERFMAP_DIR, name, O_APPEND, &reused);
    if (fd < 0)
        return fd;
    map_fd = fd;
    return 0;
}

/* Write the buffered lines of `lines` regions; counts only what is written. */
static int flush_lines(size_t used, size_t lines, jf_sink_stats *stats)
{
    int rc = jf__safe_file_append(map_fd, line_buffer, used);
    if (rc)
        return rc;
    stats->bytes += used;
    stats->regions += lines;
    return 0;
}

static int perfmap_add(jf_live *const *regions, size_t n, jf_sink_stats *stats)
{
    if (map_fd < 0)
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
    if (map_fd >= 0)
        close(map_fd);
    map_fd = -1;
}

static void perfmap_forget_after_fork(void)
{
    perfmap_stop(0);
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
