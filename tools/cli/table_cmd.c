/*
 * The published-table verbs (table_cmd.h): find the table in
 * /proc/PID/maps, read it with the bounds of table_reader.c, print it. The
 * target is never written to; an output file is created new (O_EXCL,
 * O_NOFOLLOW), never one that exists, so a root run cannot be pointed at
 * another file.
 */
#define _GNU_SOURCE
#include "table_cmd.h"

#include "cli_args.h"
#include "exit_status.h"
#include "json_out.h"
#include "table_follow.h"
#include "table_jitdump.h"
#include "table_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct table_options {
    const char *verb;
    pid_t pid;
    int json;
    const char *out_path;     /* NULL: stdout */
    const char *jitdump_path; /* perfmap --jitdump FILE, or NULL */
    int follow;               /* perfmap --follow */
} table_options;

static int parse_pid(const char *s, pid_t *pid)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v <= 0 || v > 0x3fffffff)
        return -1;
    *pid = (pid_t)v;
    return 0;
}

static const jft_option regions_options[] = {{"--json", 0, 0}, {NULL, 0, 0}};
static const jft_option perfmap_options[] = {
    {"--output", 'o', 1}, {"--jitdump", 0, 1}, {"--follow", 0, 0}, {NULL, 0, 0}};

static int on_table_option(void *ctx, int which, const char *value)
{
    table_options *o = ctx;
    if (strcmp(o->verb, "regions") == 0)
        o->json = 1;
    else if (which == 0)
        o->out_path = value;
    else if (which == 1)
        o->jitdump_path = value;
    else
        o->follow = 1;
    return 0;
}

/* JFT_ARGS_OK with o filled, JFT_ARGS_HELP, or JFT_ARGS_BAD (said). */
static int parse_options(int argc, char **argv, table_options *o)
{
    const jft_option *opts = strcmp(o->verb, "perfmap") == 0 ? perfmap_options : regions_options;
    int n;
    int parsed = jft_parse_args(argc, argv, opts, on_table_option, o, &n);
    if (parsed != JFT_ARGS_OK)
        return parsed;
    if (n != 1 || parse_pid(argv[1], &o->pid) != 0) {
        fprintf(stderr, "jitframes %s: one PID expected\n", o->verb);
        jft_usage_synopsis(stderr, o->verb);
        return JFT_ARGS_BAD;
    }
    if (o->follow && !o->jitdump_path) {
        fprintf(stderr, "jitframes perfmap: --follow needs --jitdump FILE\n");
        return JFT_ARGS_BAD;
    }
    return JFT_ARGS_OK;
}

static void print_region_json(FILE *out, const tr_region *r, int removed)
{
    fprintf(out, "{\"start\": %" PRIu64 ", \"size\": %" PRIu64 ", \"name\": ", r->start, r->size);
    json_string(out, r->name);
    fprintf(out, ", \"file\": ");
    if (r->file)
        json_string(out, r->file);
    else
        fprintf(out, "null");
    fprintf(out, ", \"line\": %u, \"lines\": [", r->line);
    for (size_t k = 0; k < r->n_lines; k++) {
        fprintf(out, "%s[%u, %u, ", k ? ", " : "", r->lines[k].offset, r->lines[k].line);
        if (r->lines[k].file)
            json_string(out, r->lines[k].file);
        else
            fprintf(out, "null");
        fprintf(out, "]");
    }
    fprintf(out, "], \"published_ns\": %" PRIu64 ", \"published_gen\": %" PRIu64 ", \"unwind_bytes\": %u",
            r->published_ns, r->published_gen, r->unwind_len);
    if (removed)
        fprintf(out, ", \"removed_ns\": %" PRIu64 ", \"removed_gen\": %" PRIu64, r->removed_ns,
                r->removed_gen);
    fprintf(out, "}");
}

/* The slots a read could not prove (table_reader.h). */
static void print_unproven_json(FILE *out, const tr_snapshot *s)
{
    fprintf(
        out,
        "\"torn\": %zu, \"reread\": %zu, \"unproven\": %zu, \"unproven_removed\": %zu, \"unproven_slots\": [",
        s->torn, s->reread, s->unproven, s->unproven_removed);
    for (size_t i = 0; i < s->n_unproven_slots; i++)
        fprintf(out, "%s%u", i ? ", " : "", s->unproven_slots[i]);
    fprintf(out, "]");
}

/* pid: the kernel's; the table's own claim is shown beside it. */
static void print_json(FILE *out, pid_t pid, const tr_snapshot *s)
{
    fprintf(out,
            "{\"pid\": %ld, \"table_pid\": %u, \"pid_mismatch\": %s, \"consistent\": %s, \"attempts\": %u, ",
            (long)pid, s->pid, s->pid != (uint32_t)pid ? "true" : "false", s->consistent ? "true" : "false",
            s->attempts);
    print_unproven_json(out, s);
    fprintf(out, ", \"dropped\": %" PRIu64 ", \"live\": [", s->dropped);
    for (size_t i = 0; i < s->n_live; i++) {
        fprintf(out, i ? ",\n  " : "\n  ");
        print_region_json(out, &s->live[i], 0);
    }
    fprintf(out, "],\n \"removed\": [");
    for (size_t i = 0; i < s->n_removed; i++) {
        fprintf(out, i ? ",\n  " : "\n  ");
        print_region_json(out, &s->removed[i], 1);
    }
    fprintf(out, "]}\n");
}

static void print_text(FILE *out, const tr_snapshot *s)
{
    fprintf(out, "%zu live regions, %zu recently removed", s->n_live, s->n_removed);
    if (s->unproven || s->unproven_removed)
        fprintf(out, ", %zu live and %zu removed-ring slots changing too fast to be read (not listed):",
                s->unproven, s->unproven_removed);
    for (size_t i = 0; i < s->n_unproven_slots; i++)
        fprintf(out, " %u", s->unproven_slots[i]);
    fputc('\n', out);
    for (size_t i = 0; i < s->n_live; i++) {
        const tr_region *r = &s->live[i];
        fprintf(out, "%016" PRIx64 " %8" PRIx64 " %s", r->start, r->size, r->name);
        if (r->file)
            fprintf(out, "  %s:%u", r->file, r->line);
        fputc('\n', out);
    }
}

/* Perf map lines: live regions, then removed ones whose range no live
 * region covers (a sample taken before the removal still gets a name). */
static void print_perfmap(FILE *out, const tr_snapshot *s)
{
    for (size_t i = 0; i < s->n_live; i++)
        fprintf(out, "%" PRIx64 " %" PRIx64 " %s\n", s->live[i].start, s->live[i].size, s->live[i].name);
    for (size_t i = 0; i < s->n_removed; i++) {
        const tr_region *r = &s->removed[i];
        if (tr_lookup(s, r->start) == r)
            fprintf(out, "%" PRIx64 " %" PRIx64 " %s\n", r->start, r->size, r->name);
    }
}

static FILE *open_output(const char *path)
{
    if (!path)
        return stdout;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "jitframes: %s: %s%s\n", path, strerror(errno),
                errno == EEXIST ? " (it is never overwritten: remove it first)" : "");
        return NULL;
    }
    FILE *f = fdopen(fd, "w");
    if (!f)
        close(fd);
    return f;
}

static int read_snapshot(pid_t pid, tr_snapshot *s)
{
    char err[256];
    tr_limits lim = TR_LIMITS_DEFAULT;
    if (tr_read_pid(pid, &lim, s, err, sizeof err) != 0) {
        fprintf(stderr, "jitframes: process %ld: %s%s\n", (long)pid, err,
                errno == EPERM ? " (reading needs the right to ptrace it)" : "");
        return -1;
    }
    if (!s->consistent)
        fprintf(stderr,
                "jitframes: process %ld changed its table during all %u reads: each region "
                "shown is consistent (%zu slots that changed were read again alone, %zu could not be "
                "proven), the list as a whole may not be\n",
                (long)pid, s->attempts, s->reread, s->unproven + s->unproven_removed);
    if (s->pid != (uint32_t)pid)
        fprintf(stderr, "jitframes: process %ld's table claims to be process %u's\n", (long)pid, s->pid);
    if (s->dropped)
        fprintf(stderr,
                "jitframes: process %ld could not publish %" PRIu64 " regions (no memory for its table)\n",
                (long)pid, s->dropped);
    return 0;
}

/* The jitdump beside the perf map: code bytes read from the target. */
static int write_jitdump(const table_options *o, const tr_snapshot *s)
{
    FILE *f = open_output(o->jitdump_path);
    if (!f)
        return JFT_EXIT_FAILED;
    char err[256];
    size_t skipped;
    long n = tj_write_jitdump(f, o->pid, s, &skipped, err, sizeof err);
    if (fclose(f) != 0 && n >= 0) {
        n = -1;
        snprintf(err, sizeof err, "%s", strerror(errno));
    }
    if (n < 0) {
        fprintf(stderr, "jitframes perfmap: %s: %s\n", o->jitdump_path, err);
        return JFT_EXIT_FAILED;
    }
    if (skipped)
        fprintf(stderr,
                "jitframes perfmap: %zu regions left out of the jitdump: their code could not be read\n",
                skipped);
    return JFT_EXIT_OK;
}

/* ---- --follow: read the table until stdin ends (table_follow.c) ---- */

enum { FOLLOW_PERIOD_MS = 25 };
#define FOLLOW_MAX_REGIONS ((size_t)1 << 18)
#define FOLLOW_MAX_BYTES ((uint64_t)256 << 20)

static volatile sig_atomic_t follow_stop;

static void on_stop_signal(int sig)
{
    (void)sig;
    follow_stop = 1;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

enum { FOLLOW_GOES_ON, FOLLOW_TOLD_TO_STOP, FOLLOW_TARGET_EXITED };

/* Wait one period; whether following should end: stdin ended or a signal
 * (told to stop), or the target exited (its pidfd is readable). */
static int follow_should_end(int pidfd)
{
    struct pollfd p[2] = {{0, POLLIN, 0}, {pidfd, POLLIN, 0}};
    int n = poll(p, pidfd >= 0 ? 2 : 1, FOLLOW_PERIOD_MS);
    if (follow_stop)
        return FOLLOW_TOLD_TO_STOP;
    if (n <= 0)
        return FOLLOW_GOES_ON;
    if (p[1].revents)
        return FOLLOW_TARGET_EXITED;
    char buf[64];
    if ((p[0].revents & (POLLIN | POLLHUP)) && read(0, buf, sizeof buf) <= 0)
        return FOLLOW_TOLD_TO_STOP;
    return FOLLOW_GOES_ON;
}

static void follow_table(tf_state *st, pid_t pid)
{
    struct sigaction sa = {.sa_handler = on_stop_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    tr_limits lim = TR_LIMITS_DEFAULT;
    lim.seconds = 1.0; /* one read: the next one tries again */
    char err[256];
    int end;
    do {
        if (tf_poll(st, &lim, err, sizeof err) != 0 && st->failed_reads == 1)
            fprintf(stderr, "jitframes perfmap: process %ld: %s (further failures are counted)\n", (long)pid,
                    err);
    } while (!(end = follow_should_end(pidfd)));
    /* Told to stop (stdin ended, a signal) after the recording stopped: one
     * read more, so a region published since the last one (up to a period
     * ago, maybe sampled) is kept too. A target that exited has no table. */
    if (end == FOLLOW_TOLD_TO_STOP)
        (void)tf_poll(st, &lim, err, sizeof err);
    if (pidfd >= 0)
        close(pidfd);
}

static void print_follow_summary(const tf_state *st, double seconds)
{
    fprintf(stderr,
            "jitframes perfmap: followed process %ld for %.1f s: %zu reads (%zu failed, %zu not consistent), "
            "%zu regions kept (%zu removed before a read saw them, %zu whose code could not be read, "
            "%zu over %u MiB left out)%s\n",
            (long)st->pid, seconds, st->reads, st->failed_reads, st->inconsistent_reads, st->n_kept,
            st->died_unseen, st->unread, st->too_big, (unsigned)(TJ_CODE_MAX >> 20),
            st->full ? "; the bound on regions or bytes kept was reached: later "
                       "regions are not named"
                     : "");
}

static int follow_command(const table_options *o)
{
    char err[256];
    uint64_t base, size;
    if (tr_find_table(o->pid, &base, &size, err, sizeof err) != 0) {
        fprintf(stderr, "jitframes: process %ld: %s\n", (long)o->pid, err);
        return JFT_EXIT_FAILED;
    }
    FILE *dump = open_output(o->jitdump_path);
    if (!dump)
        return JFT_EXIT_FAILED;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tf_state st;
    tf_init(&st, o->pid, base, size, FOLLOW_MAX_REGIONS, FOLLOW_MAX_BYTES);
    follow_table(&st, o->pid);
    tj_entry *v = tf_entries(&st);
    long n = v ? tj_write_entries(dump, o->pid, v, st.n_kept, err, sizeof err) : -1;
    if (!v)
        snprintf(err, sizeof err, "out of memory");
    if (fclose(dump) != 0 && n >= 0) {
        n = -1;
        snprintf(err, sizeof err, "%s", strerror(errno));
    }
    int rc = n < 0 ? JFT_EXIT_FAILED : JFT_EXIT_OK;
    if (n < 0)
        fprintf(stderr, "jitframes perfmap: %s: %s\n", o->jitdump_path, err);
    FILE *out = rc == JFT_EXIT_OK ? open_output(o->out_path) : NULL;
    for (size_t i = 0; out && i < st.n_kept; i++)
        fprintf(out, "%" PRIx64 " %" PRIx64 " %s\n", v[i].r->start, v[i].r->size, v[i].r->name);
    if (rc == JFT_EXIT_OK && (!out || (out != stdout && fclose(out) != 0)))
        rc = JFT_EXIT_FAILED;
    print_follow_summary(&st, seconds_since(&t0));
    free(v);
    tf_free(&st);
    return rc;
}

int jft_table_command(int argc, char **argv)
{
    table_options o = {.verb = argv[0]};
    int parsed = parse_options(argc, argv, &o);
    if (parsed == JFT_ARGS_HELP)
        return jft_usage(stdout, o.verb), JFT_EXIT_OK;
    if (parsed != JFT_ARGS_OK)
        return JFT_EXIT_USAGE;
    if (o.follow)
        return follow_command(&o);
    tr_snapshot s;
    if (read_snapshot(o.pid, &s) != 0)
        return JFT_EXIT_FAILED;
    FILE *out = open_output(o.out_path);
    int rc = out ? JFT_EXIT_OK : JFT_EXIT_FAILED;
    if (out && strcmp(o.verb, "perfmap") == 0)
        print_perfmap(out, &s);
    else if (out && o.json)
        print_json(out, o.pid, &s);
    else if (out)
        print_text(out, &s);
    if (out && out != stdout && fclose(out) != 0)
        rc = JFT_EXIT_FAILED;
    if (rc == JFT_EXIT_OK && o.jitdump_path)
        rc = write_jitdump(&o, &s);
    tr_snapshot_free(&s);
    return rc;
}
