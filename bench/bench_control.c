/*
 * The control channel's cost: what an idle process with the channel on
 * spends (utime + stime of the whole process and of the listener thread,
 * from /proc, over IDLE seconds of sleep: should be 0 ticks), and what one
 * request costs from outside (connect, status, reply: median of 1,000
 * round trips through the tool's client code, the process answering
 * itself), and `enable perfmap` through the channel with 100,000 live
 * regions to replay. Then a flood from a child process of the same uid
 * (obeyed): 1,000 idle connections held open, then reopened as fast as it
 * can (a storm), and 50 slow senders adding one byte each per round: how
 * long a status takes to be answered meanwhile (median and worst of 200),
 * and how much slower the process's own work gets (a fixed count of
 * registrations, unregistrations and arithmetic on the main thread; each
 * of 7 rounds does it without then with the flood: median of the ratios
 * of its wall time and of its thread's CPU time), with the listener
 * thread's CPU time meanwhile as a share of the work's. This process (and
 * so its listener) runs on CPU 0 and the flooder on CPU 1, so the
 * listener's CPU is what it takes from the host's work: the bound
 * is 5%.
 * Usage: bench_control [IDLE_SECONDS]   (default 10)
 */
#define _GNU_SOURCE
#include "control_client.h"
#include "jitframes.h"

#include "bench_util.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    ROUND_TRIPS = 1000,
    REGIONS = 100000,
    FLOOD_IDLE = 1000,
    FLOOD_SLOW = 50,
    FLOOD_STATUS = 200,
    WORK_REGIONS = 1000,
    WORK_REPEATS = 100,
    WORK_COMPUTE = 3000000,
    WORK_ROUNDS = 7,
};

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

/* CPU time (ns) of /proc/self/<path>, from its schedstat. */
static double cpu_ns_of(const char *path)
{
    char file[300];
    unsigned long long ns = 0;
    snprintf(file, sizeof file, "/proc/self/%s/schedstat", path);
    FILE *f = fopen(file, "r");
    if (!f || fscanf(f, "%llu", &ns) != 1)
        bench_die(file);
    fclose(f);
    return (double)ns;
}

/* What the flooder did: connections opened, bytes sent (shared with it). */
static volatile uint64_t *flooded;

/* A connection to the abstract name, non-blocking: -1 if refused now. */
static int connect_by_name(const char *name)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    memcpy(addr.sun_path + 1, name, n);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&addr,
                           (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) != 0) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0 && flooded)
        flooded[0]++;
    return fd;
}

/* The flooder (a child: same uid, obeyed), until killed: 1,000 idle
 * connections, held (the flood) or, with `storm`, dropped and
 * opened again as fast as it can; and 50 slow senders adding a byte each
 * every millisecond, reconnecting when answered. Says on `ready` when the
 * 1,000 are open (or refused: a full backlog). */
static void flood_forever(const char *name, int storm, int ready)
{
    static int idle[FLOOD_IDLE];
    int slow[FLOOD_SLOW];
    for (int i = 0; i < FLOOD_SLOW; i++)
        slow[i] = -1;
    for (int i = 0; i < FLOOD_IDLE; i++)
        idle[i] = connect_by_name(name);
    if (write(ready, "r", 1) != 1)
        _exit(1);
    for (;;) {
        for (int i = 0; i < FLOOD_SLOW; i++) {
            if (slow[i] < 0)
                slow[i] = connect_by_name(name);
            if (slow[i] >= 0 && send(slow[i], "j", 1, MSG_NOSIGNAL) != 1) {
                close(slow[i]);
                slow[i] = -1;
            } else if (slow[i] >= 0) {
                flooded[1]++;
            }
        }
        for (int i = 0; storm && i < FLOOD_IDLE; i++) {
            if (idle[i] >= 0)
                close(idle[i]);
            idle[i] = connect_by_name(name);
        }
        if (!storm)
            usleep(1000);
    }
}

/* Seconds from connecting to the whole reply of a status request. */
static double status_by_name_seconds(const char *name)
{
    static uint8_t in[JF_CTL_REPLY_MAX];
    uint8_t out[JF_CTL_REQUEST_SIZE];
    jf__ctl_request req = {JF_CTL_VERSION, JF_CTL_STATUS, 0};
    jf__ctl_encode_request(&req, out);
    double t0 = bench_now_seconds();
    int fd;
    while ((fd = connect_by_name(name)) < 0) /* a full backlog: try again */
        ;
    if (send(fd, out, sizeof out, MSG_NOSIGNAL) != (ssize_t)sizeof out)
        bench_die("send");
    size_t got = 0, want = JF_CTL_REPLY_HEADER_SIZE;
    while (got < want) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n = poll(&p, 1, 10000) == 1 ? recv(fd, in + got, want - got, 0) : 0;
        if (n <= 0)
            bench_die("status under the flood: no reply");
        got += (size_t)n;
        if (got == JF_CTL_REPLY_HEADER_SIZE && !(want = jf__ctl_reply_size(in)))
            bench_die("status under the flood: malformed reply");
    }
    close(fd);
    return bench_now_seconds() - t0;
}

/* One CPU for this process (and so its listener thread, created after),
 * the other for the flooder: what the listener spends is then exactly what
 * it takes from the host's work. 0 if the machine has a single CPU. */
static int pin_to(int cpu)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0;
}

static double thread_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A fixed count of the process's own work units, on the main thread:
 * WORK_REGIONS regions registered and unregistered (the registry's lock,
 * which a status request takes too) and a compute loop. */
typedef struct work_cost {
    double wall, cpu; /* seconds: elapsed, this thread's CPU */
} work_cost;

static volatile uint64_t work_sink;

static work_cost work(void)
{
    static jf_region r[WORK_REGIONS];
    for (int i = 0; i < WORK_REGIONS; i++)
        r[i] = (jf_region){
            .struct_size = sizeof(jf_region), .addr = code + 16 * i, .size = 16, .name = "bench_work"};
    double t0 = bench_now_seconds(), c0 = thread_cpu_seconds();
    uint64_t x = 1;
    for (int k = 0; k < WORK_REPEATS; k++) {
        if (jf_register_batch(r, WORK_REGIONS) != 0)
            bench_die("jf_register_batch");
        for (int i = 0; i < WORK_REGIONS; i++)
            jf_unregister(code + 16 * i);
        for (int i = 0; i < WORK_COMPUTE; i++)
            x = x * 6364136223846793005u + 1442695040888963407u;
    }
    work_sink = x;
    return (work_cost){bench_now_seconds() - t0, thread_cpu_seconds() - c0};
}

/* The flood under way, past its opening burst of connections. */
static pid_t start_flooder(const char *name, int storm, int pinned)
{
    int ready[2];
    char r;
    if (pipe(ready) != 0)
        bench_die("pipe");
    pid_t flooder = fork();
    if (flooder == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the benchmark */
        if (getppid() == 1 || (pinned && !pin_to(1)))
            _exit(1);
        flood_forever(name, storm, ready[1]);
    }
    if (flooder < 0 || read(ready[0], &r, 1) != 1)
        bench_die("flooder");
    close(ready[0]);
    close(ready[1]);
    /* The steady flood is measured: past the burst of connections and the
     * 1 s deadline of those the listener kept (the flooder holds its ends). */
    usleep(1200000);
    return flooder;
}

static void stop_flooder(pid_t flooder)
{
    kill(flooder, SIGKILL);
    waitpid(flooder, NULL, 0);
}

static void report_answers(double *answers, int storm)
{
    double worst = 0;
    for (int i = 0; i < FLOOD_STATUS; i++)
        worst = answers[i] > worst ? answers[i] : worst;
    printf("%s %d idle connections and %d slow senders (same uid): status answered in median %.2f ms, "
           "worst %.2f ms of %d\n",
           storm ? "a storm of" : "held:", FLOOD_IDLE, FLOOD_SLOW, bench_median(answers, FLOOD_STATUS) * 1e3,
           worst * 1e3, FLOOD_STATUS);
}

/* WORK_ROUNDS rounds, each the same work without then with the flood: the
 * median over rounds of each ratio, so that the machine's other load,
 * which changes from round to round, cancels within a round. */
static void flood(const char *task, int storm, int pinned)
{
    char name[108];
    jfc_error err;
    if (jfc_find_socket(getpid(), name, sizeof name, &err) != 0)
        bench_die(err.msg);
    static double wall[WORK_ROUNDS], cpu[WORK_ROUNDS], listener[WORK_ROUNDS], answers[FLOOD_STATUS];
    double quiet_wall[WORK_ROUNDS], of_cpu[WORK_ROUNDS], conns[WORK_ROUNDS], bytes[WORK_ROUNDS];
    for (int round = 0; round < WORK_ROUNDS; round++) {
        work_cost quiet = work();
        pid_t flooder = start_flooder(name, storm, pinned);
        double l0 = cpu_ns_of(task);
        uint64_t c0 = flooded[0], b0 = flooded[1];
        work_cost loud = work();
        double spent = (cpu_ns_of(task) - l0) * 1e-9;
        listener[round] = spent / loud.cpu;
        of_cpu[round] = spent / loud.wall;
        conns[round] = (double)(flooded[0] - c0) / loud.wall;
        bytes[round] = (double)(flooded[1] - b0) / loud.wall;
        if (round == 0)
            for (int i = 0; i < FLOOD_STATUS; i++)
                answers[i] = status_by_name_seconds(name);
        stop_flooder(flooder);
        quiet_wall[round] = quiet.wall;
        wall[round] = loud.wall / quiet.wall;
        cpu[round] = loud.cpu / quiet.cpu;
    }
    report_answers(answers, storm);
    printf("  the process's work (%d x (%d regions registered and unregistered + %d multiply-adds), %.1f ms "
           "quiet), flooded / quiet, median of %d rounds: wall %.3f, its thread's CPU %.3f; the listener "
           "thread's CPU meanwhile: %.1f%% of the work's\n",
           WORK_REPEATS, WORK_REGIONS, WORK_COMPUTE, bench_median(quiet_wall, WORK_ROUNDS) * 1e3, WORK_ROUNDS,
           bench_median(wall, WORK_ROUNDS), bench_median(cpu, WORK_ROUNDS),
           bench_median(listener, WORK_ROUNDS) * 100);
    printf(
        "  the listener thread took %.1f%% of a CPU (the most it can take from a host that has that CPU to "
        "itself) while the flooder opened %.0f connections/s and sent %.0f one-byte sends/s\n",
        bench_median(of_cpu, WORK_ROUNDS) * 100, bench_median(conns, WORK_ROUNDS),
        bench_median(bytes, WORK_ROUNDS));
}

static double request_seconds(uint16_t op, uint32_t sinks)
{
    jf__ctl_request req = {JF_CTL_VERSION, op, sinks};
    static jf__ctl_reply reply;
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
    flooded = mmap(NULL, 2 * sizeof *flooded, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (flooded == MAP_FAILED)
        bench_die("mmap");
    int pinned = pin_to(0); /* before jf_init: the listener thread inherits it */
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV | JF_CONFIG_CONTROL;
    if (jf_init(&c) != 0)
        bench_die("jf_init");
    char task[300];
    listener_task(task, sizeof task);
    unsigned long long process0 = ticks_of("."), thread0 = ticks_of(task);
    sleep((unsigned)idle);
    printf("idle %d s with the channel on: process %llu CPU ticks, listener thread %llu (%ld ticks/s)\n",
           idle, ticks_of(".") - process0, ticks_of(task) - thread0, sysconf(_SC_CLK_TCK));

    static double rt[ROUND_TRIPS];
    for (int i = 0; i < ROUND_TRIPS; i++)
        rt[i] = request_seconds(JF_CTL_STATUS, 0);
    printf("status round trip (find the socket in /proc, connect, request, reply): median %.1f us\n",
           bench_median(rt, ROUND_TRIPS) * 1e6);

    printf("floods: %s\n", pinned ? "this process (and its listener) on CPU 0, the flooder on CPU 1"
                                  : "not pinned (a single CPU)");
    flood(task, 0, pinned);
    flood(task, 1, pinned);

    static jf_region regions[REGIONS];
    static char names[REGIONS][24];
    for (int i = 0; i < REGIONS; i++) {
        snprintf(names[i], sizeof names[i], "bench_ctl_%d", i);
        regions[i] = (jf_region){
            .struct_size = sizeof(jf_region), .addr = code + 16 * i, .size = 16, .name = names[i]};
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
