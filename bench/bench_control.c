/*
 * The control channel's cost: what an idle process with the channel on
 * spends (utime + stime of the whole process and of the listener thread,
 * from /proc, over IDLE seconds of sleep: should be 0 ticks), and what one
 * request costs from outside (connect, status, reply: median of 1,000
 * round trips through the tool's client code, the process answering
 * itself), and `enable perfmap` through the channel with 100,000 live
 * regions to replay.
 * Usage: bench_control [IDLE_SECONDS]   (default 10)
 */
#define _GNU_SOURCE
#include "control_client.h"
#include "jitframes.h"

#include "bench_util.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ROUND_TRIPS = 1000, REGIONS = 100000 };

static uint8_t code[REGIONS * 16];

/* utime + stime (ticks) of /proc/self/<path>/stat. */
static unsigned long long ticks_of(const char *path)
{
    char file[300], line[1024];
    snprintf(file, sizeof file, "/proc/self/%s/stat", path);
    FILE *f = fopen(file, "r");
    if (!f || !fgets(line, sizeof line, f))
        bench_die(file);
    fclose(f);
    unsigned long long utime = 0, stime = 0;
    const char *p = strrchr(line, ')');
    if (!p || sscanf(p + 2, "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu", &utime, &stime) != 2)
        bench_die("parse stat");
    return utime + stime;
}

/* "task/<tid>" of the thread named jf-control. */
static void listener_task(char *out, size_t cap)
{
    DIR *d = opendir("/proc/self/task");
    out[0] = '\0';
    for (struct dirent *e; d && !out[0] && (e = readdir(d));) {
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f) && strcmp(comm, "jf-control\n") == 0)
            snprintf(out, cap, "task/%s", e->d_name);
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    if (!out[0])
        bench_die("no jf-control thread");
}

static double request_seconds(uint16_t op, uint32_t sinks)
{
    jf_ctl_request req = {JF_CTL_VERSION, op, sinks};
    static jf_ctl_reply reply;
    jfc_error err;
    double t0 = bench_now_seconds();
    if (jfc_request(getpid(), &req, &reply, &err) != 0 || reply.status != 0) {
        fprintf(stderr, "request: %s %s\n", err.msg, reply.message);
        exit(1);
    }
    return bench_now_seconds() - t0;
}

int main(int argc, char **argv)
{
    int idle = argc > 1 ? atoi(argv[1]) : 10;
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV | JF_CONFIG_CONTROL;
    if (jf_init(&c) != 0)
        bench_die("jf_init");
    char task[300];
    listener_task(task, sizeof task);
    unsigned long long process0 = ticks_of("."), thread0 = ticks_of(task);
    sleep((unsigned)idle);
    printf("idle %d s with the channel on: process %llu CPU ticks, listener thread %llu (%ld ticks/s)\n", idle,
           ticks_of(".") - process0, ticks_of(task) - thread0, sysconf(_SC_CLK_TCK));

    static double rt[ROUND_TRIPS];
    for (int i = 0; i < ROUND_TRIPS; i++)
        rt[i] = request_seconds(JF_CTL_STATUS, 0);
    printf("status round trip (find the socket in /proc, connect, request, reply): median %.1f us\n",
           bench_median(rt, ROUND_TRIPS) * 1e6);

    static jf_region regions[REGIONS];
    static char names[REGIONS][24];
    for (int i = 0; i < REGIONS; i++) {
        snprintf(names[i], sizeof names[i], "bench_ctl_%d", i);
        regions[i] = (jf_region){.struct_size = sizeof(jf_region), .addr = code + 16 * i, .size = 16, .name = names[i]};
    }
    if (jf_register_batch(regions, REGIONS) != 0)
        bench_die("jf_register_batch");
    printf("enable perfmap through the channel, %d live regions replayed: %.1f ms\n", REGIONS,
           request_seconds(JF_CTL_ENABLE, JF_SINK_PERFMAP) * 1e3);
    jf_shutdown();
    char map[64];
    snprintf(map, sizeof map, "/tmp/perf-%ld.map", (long)getpid());
    unlink(map);
    return 0;
}
