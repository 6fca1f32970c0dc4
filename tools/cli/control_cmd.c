/*
 * The control commands of the jitframes tool: parse the operands, make one
 * request through control_client.c, print the answer. Exit statuses:
 *   0  done (status printed, or the sinks enabled/disabled)
 *   1  the process answered with an error (refused our uid, a sink could
 *      not start...): its message is printed
 *   2  usage error (bad PID, unknown sink word)
 *   4  no such process, it does not listen (no JITFRAMES_CONTROL=1), or it
 *      could not be reached
 */
#include "cli_args.h"
#include "control_cmd.h"
#include "control_client.h"
#include "exit_status.h"
#include "json_out.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_pid(const char *s, pid_t *pid)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v <= 0 || v > INT_MAX)
        return -1;
    *pid = (pid_t)v;
    return 0;
}

/* "perfmap,jitdump" (the sinks in `bits`), or "none". */
static const char *sink_list(unsigned bits, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < JF_SINK_COUNT; i++)
        if (bits & (1u << i) && at < cap)
            at += (size_t)snprintf(out + at, cap - at, "%s%s", at ? "," : "", jf_sink_name(1u << i));
    return at ? out : "none";
}

/* The file a sink writes, as the process sees it ("" for sinks without one). */
static void sink_file(const jf__ctl_reply *r, int i, char *out, size_t cap)
{
    if (i == 0)
        snprintf(out, cap, "/tmp/perf-%" PRIu32 ".map", r->pid);
    else if (i == 1)
        snprintf(out, cap, "%s/jit-%" PRIu32 ".dump", r->dump_dir, r->pid);
    else
        out[0] = '\0';
}

static void print_status_text(pid_t pid, const jf__ctl_reply *r)
{
    printf("process %ld", (long)pid);
    if (r->pid != (uint32_t)pid)
        printf(" (pid %" PRIu32 " in its own namespace)", r->pid);
    printf(": jitframes %u.%u.%u, uid %" PRIu32 ", %" PRIu64 " live regions\n", r->lib_version[0],
           r->lib_version[1], r->lib_version[2], r->uid, r->live_regions);
    for (int i = 0; i < JF_SINK_COUNT; i++) {
        const char *state = r->enabled & (1u << i) ? "on" : r->failed & (1u << i) ? "failed" : "off";
        char file[JF_CTL_DIR_MAX + 64];
        sink_file(r, i, file, sizeof file);
        printf("  %-8s %-6s %10" PRIu64 " regions %12" PRIu64 " bytes %6" PRIu64 " errors",
               jf_sink_name(1u << i), state, r->regions[i], r->bytes[i], r->errors[i]);
        if (file[0])
            printf("  %s (from here: /proc/%ld/root%s)", file, (long)pid, file);
        printf("\n");
    }
}

static void json_sink(pid_t pid, const jf__ctl_reply *r, int i)
{
    char file[JF_CTL_DIR_MAX + 64], here[JF_CTL_DIR_MAX + 96];
    sink_file(r, i, file, sizeof file);
    printf("%s\"%s\": {\"enabled\": %s, \"failed\": %s, \"regions\": %" PRIu64 ", \"bytes\": %" PRIu64
           ", \"errors\": %" PRIu64,
           i ? ", " : "", jf_sink_name(1u << i), r->enabled & (1u << i) ? "true" : "false",
           r->failed & (1u << i) ? "true" : "false", r->regions[i], r->bytes[i], r->errors[i]);
    if (file[0]) {
        snprintf(here, sizeof here, "/proc/%ld/root%s", (long)pid, file);
        printf(", \"file\": ");
        json_string(stdout, file);
        printf(", \"file_from_here\": ");
        json_string(stdout, here);
    }
    printf("}");
}

/* ["perfmap", "gdb"]: the sinks in bits. */
static void json_sink_array(unsigned bits)
{
    printf("[");
    for (int i = 0, n = 0; i < JF_SINK_COUNT; i++)
        if (bits & (1u << i))
            printf("%s\"%s\"", n++ ? ", " : "", jf_sink_name(1u << i));
    printf("]");
}

static void print_status_json(pid_t pid, const jf__ctl_reply *r)
{
    printf("{\"pid\": %ld, \"pid_inside\": %" PRIu32 ", \"uid\": %" PRIu32 ", \"version\": \"%u.%u.%u\", "
           "\"live_regions\": %" PRIu64 ", \"enabled\": ",
           (long)pid, r->pid, r->uid, r->lib_version[0], r->lib_version[1], r->lib_version[2],
           r->live_regions);
    json_sink_array(r->enabled);
    printf(", \"failed\": ");
    json_sink_array(r->failed);
    printf(", \"dump_dir\": ");
    json_string(stdout, r->dump_dir);
    printf(", \"sinks\": {");
    for (int i = 0; i < JF_SINK_COUNT; i++)
        json_sink(pid, r, i);
    printf("}}\n");
}

static int usage_error(const char *cmd, const char *why)
{
    fprintf(stderr, "jitframes %s: %s\n", cmd, why);
    jft_usage_synopsis(stderr, cmd);
    return JFT_EXIT_USAGE;
}

/* status takes --json; enable and disable no option. */
static const jft_option status_options[] = {{"--json", 0, 0}, {NULL, 0, 0}};
static const jft_option no_options[] = {{NULL, 0, 0}};

static int on_json(void *ctx, int which, const char *value)
{
    (void)which, (void)value;
    *(int *)ctx = 1;
    return 0;
}

static int report(pid_t pid, const char *cmd, int json, unsigned asked, const jf__ctl_reply *r)
{
    char list[64];
    if (r->status) {
        fprintf(stderr, "jitframes %s: process %ld: %s\n", cmd, (long)pid,
                r->message[0] ? r->message : jf_strerror(r->status));
        return JFT_EXIT_FAILED;
    }
    if (strcmp(cmd, "status") == 0 && json)
        print_status_json(pid, r);
    else if (strcmp(cmd, "status") == 0)
        print_status_text(pid, r);
    else
        printf("process %ld: %sd %s; enabled now: %s (%" PRIu64 " live regions)\n", (long)pid, cmd,
               sink_list(asked, list, sizeof list), sink_list(r->enabled, list + 32, 32), r->live_regions);
    return JFT_EXIT_OK;
}

int jft_control_command(int argc, char **argv)
{
    const char *cmd = argv[0];
    int json = 0, n_ops;
    int wants_sinks = strcmp(cmd, "status") != 0;
    int parsed = jft_parse_args(argc, argv, wants_sinks ? no_options : status_options, on_json, &json,
                                &n_ops);
    if (parsed == JFT_ARGS_HELP) {
        jft_usage(stdout, cmd);
        return JFT_EXIT_OK;
    }
    if (parsed != JFT_ARGS_OK)
        return JFT_EXIT_USAGE;
    if (n_ops != 1 + wants_sinks)
        return usage_error(cmd, wants_sinks ? "wants PID SINKS" : "wants one PID");
    const char *const *ops = (const char *const *)argv + 1;
    pid_t pid;
    if (parse_pid(ops[0], &pid) != 0)
        return usage_error(cmd, "PID must be a positive process id");
    jf__ctl_request req = {JF_CTL_VERSION, JF_CTL_STATUS, 0};
    if (wants_sinks) {
        req.op = strcmp(cmd, "enable") == 0 ? JF_CTL_ENABLE : JF_CTL_DISABLE;
        if (jf_parse_sinks(ops[1], &req.sinks) != 0)
            return usage_error(cmd, jf_last_error());
        if (!req.sinks)
            return usage_error(cmd, "SINKS names no sink (perfmap, jitdump, gdb, unwind, all)");
    }
    jf__ctl_reply reply;
    jfc_error err;
    if (jfc_request(pid, &req, &reply, &err) != 0) {
        fprintf(stderr, "jitframes %s: %s\n", cmd, err.msg);
        return JFT_EXIT_UNREACHABLE;
    }
    return report(pid, cmd, json, req.sinks, &reply);
}
