/*
 * SIGKILL at random instants: N children each start jitframes with the perf
 * map sink and register regions without end (single calls and batches,
 * names of 10 to ~300 bytes, so kills land in formatting, in the stores of a
 * line, in its publishing store and in growth); the parent kills each after
 * a random 0-1.5 ms. Every map left behind must pass the tool's checker
 * (pm_check, what `jitframes check` runs) and hold exactly regions 0..k-1 in
 * order (a prefix: nothing torn, nothing lost before the kill) with at most
 * one unpublished "##" line, after them. Samples (every 100th map, and every
 * one that ends in an unpublished line) are copied to OUT_DIR for the real
 * readers (kill_at_random.sh: perf, bcc, `jitframes check`).
 *
 * Usage: kill_at_random N OUT_DIR [SPIN_FILE]
 *   With SPIN_FILE (x86_64), one child only: it first registers a spinning
 *   JIT function ("jf_killed_spin"), writes "<pid> <addr>" to SPIN_FILE and
 *   runs it in a second thread while the main thread registers (for perf).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jitframes.h"
#include "perfmap_reader.h"

#define BASE ((uintptr_t)0x7c0000000000ull)
enum { BATCH_MAX = 40 };

static const char pad[] = "________________________________________________________________"
                          "________________________________________________________________"
                          "________________________________________________________________"
                          "________________________________________________________________";

/* Region i's name: its length varies with i (10 to ~300 bytes). */
static void name_of(uint64_t i, char *buf, size_t cap)
{
    int extra = (int)((i * 2654435761u) % 97);
    if (i % 11 == 0)
        extra += 200;
    snprintf(buf, cap, "k%llu_%.*s", (unsigned long long)i, extra, pad);
}

#if defined(__x86_64__)
/* spin(n): counts n down inside a frame record. */
static const unsigned char spin_code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8, 0x48,
                                          0x83, 0xe8, 0x01, 0x75, 0xfa, 0x5d, 0xc3};

static void *spin_forever(void *code)
{
    uint64_t (*fn)(uint64_t) = (uint64_t(*)(uint64_t))code;
    for (;;)
        fn(100000000u);
    return NULL;
}

/* Register and start the spinning JIT function; tell the driver where. */
static void start_spinner(const char *spin_file)
{
    void *mem = mmap((void *)(BASE - 0x100000), 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                     0);
    if (mem == MAP_FAILED)
        _exit(90);
    memcpy(mem, spin_code, sizeof spin_code);
    if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) != 0)
        _exit(91);
    jf_region r = JF_REGION_INIT;
    r.addr = mem;
    r.size = sizeof spin_code;
    r.name = "jf_killed_spin";
    if (jf_register(&r) != 0)
        _exit(92);
    pthread_t t;
    if (pthread_create(&t, NULL, spin_forever, mem) != 0)
        _exit(93);
    FILE *f = fopen(spin_file, "w");
    if (!f)
        _exit(94);
    fprintf(f, "%ld %lx\n", (long)getpid(), (unsigned long)(uintptr_t)mem);
    fclose(f);
}
#else
static void start_spinner(const char *spin_file)
{
    (void)spin_file;
    _exit(77);
}
#endif

/* The child: register regions 0, 1, 2... until killed. A map a dead
 * process with our pid left (other tests, pid reuse) is not ours to check:
 * it goes first, and then `cleared` (a pipe, or -1) tells the parent so. */
static void register_forever(const char *spin_file, int cleared)
{
    char stale[64];
    snprintf(stale, sizeof stale, "/tmp/perf-%ld.map", (long)getpid());
    unlink(stale);
    if (cleared >= 0 && (write(cleared, "", 1) != 1 || close(cleared) != 0))
        _exit(81);
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_PERFMAP;
    if (jf_init(&cfg) != 0)
        _exit(80);
    if (spin_file)
        start_spinner(spin_file);
    static char names[BATCH_MAX][400];
    jf_region batch[BATCH_MAX];
    for (uint64_t i = 0;;) {
        size_t n = i % 7 == 3 ? 1 + i % BATCH_MAX : 1;
        for (size_t k = 0; k < n; k++) {
            name_of(i + k, names[k], sizeof names[k]);
            batch[k] = (jf_region)JF_REGION_INIT;
            batch[k].addr = (const void *)(BASE + 64 * (i + k));
            batch[k].size = 64;
            batch[k].name = names[k];
        }
        if (jf_register_batch(batch, n) != 0)
            _exit(81);
        i += n;
        if (spin_file) /* perf's run: a map of reasonable size */
            usleep(20);
    }
}

static char *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return NULL;
    char *buf = malloc((size_t)st.st_size + 1);
    ssize_t got = buf ? read(fd, buf, (size_t)st.st_size) : -1;
    close(fd);
    if (got != st.st_size) {
        free(buf);
        return NULL;
    }
    buf[got] = '\0';
    *len = (size_t)got;
    return buf;
}

typedef struct prefix_check {
    uint64_t next; /* the region the next entry must be */
    int bad;
    char why[200];
} prefix_check;

static void expect_next(void *ctx, const pm_entry *e)
{
    prefix_check *c = ctx;
    char want[400];
    name_of(c->next, want, sizeof want);
    if (!c->bad && (e->start != BASE + 64 * c->next || e->size != 64 || e->name_len != strlen(want) ||
                    memcmp(e->name, want, e->name_len) != 0)) {
        c->bad = 1;
        snprintf(c->why, sizeof c->why, "line %llu is not region %llu: '%.*s'", (unsigned long long)e->line,
                 (unsigned long long)c->next, (int)(e->name_len > 60 ? 60 : e->name_len), e->name);
    }
    c->next++;
}

/* Whatever is after the last entry: blank lines and at most one "##" line. */
static int tail_is_clean(const char *buf, size_t len, int *unpublished)
{
    const char *p = buf + len;
    while (p > buf && p[-1] == '\n')
        p--;
    const char *line = p;
    while (line > buf && line[-1] != '\n')
        line--;
    *unpublished = line[0] == '#' && line[1] == '#';
    /* everything before that line ends in entries (checked by the parser) */
    return 1;
}

/* Check one killed child's map. Returns 0 if good (prints why otherwise). */
static int check_map(const char *path, pid_t pid, uint64_t *entries, int *unpublished)
{
    size_t len = 0;
    char *buf = read_file(path, &len);
    if (!buf) {
        *entries = 0; /* killed before jf_init created it */
        *unpublished = 0;
        return 0;
    }
    jft_error err = {0};
    pm_summary s;
    if (pm_check((const uint8_t *)buf, len, &s, &err) != 0) {
        fprintf(stderr, "pid %ld: %s:%llu: %s\n", (long)pid, path, (unsigned long long)err.where, err.msg);
        free(buf);
        return 1;
    }
    prefix_check c = {0};
    pm_parse((const uint8_t *)buf, len, expect_next, &c, &err);
    tail_is_clean(buf, len, unpublished);
    free(buf);
    if (c.bad || s.unpublished > 1 || (s.unpublished == 1 && !*unpublished)) {
        fprintf(stderr, "pid %ld: %s: %s (%llu unpublished lines)\n", (long)pid, path,
                c.bad ? c.why : "unpublished line not last", (unsigned long long)s.unpublished);
        return 1;
    }
    *entries = c.next;
    return 0;
}

static int copy_file(const char *from, const char *to)
{
    size_t len;
    char *buf = read_file(from, &len);
    if (!buf)
        return -1;
    int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int ok = fd >= 0 && write(fd, buf, len) == (ssize_t)len;
    if (fd >= 0)
        close(fd);
    free(buf);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: kill_at_random N OUT_DIR [SPIN_FILE]\n");
        return 2;
    }
    if (argc > 3) { /* one spinning child, killed by the caller */
        register_forever(argv[3], -1);
        return 0;
    }
    long n = strtol(argv[1], NULL, 10);
    const char *out = argv[2];
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    long failures = 0, with_unpublished = 0, empty = 0, samples = 0;
    uint64_t total_entries = 0;
    for (long i = 0; i < n && failures < 5; i++) {
        int cleared[2];
        if (pipe(cleared) != 0) {
            perror("pipe");
            return 2;
        }
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 2;
        }
        if (pid == 0) {
            close(cleared[0]);
            register_forever(NULL, cleared[1]);
        }
        /* The random instant counts from the child's start, once any stale
         * map at its pid is gone (else a leftover would be read as its). */
        close(cleared[1]);
        char byte;
        ssize_t got = read(cleared[0], &byte, 1);
        close(cleared[0]);
        if (got != 1) {
            fprintf(stderr, "child %ld did not start\n", (long)pid);
            return 2;
        }
        usleep((useconds_t)(rand_r(&seed) % 1500));
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
            fprintf(stderr, "child %ld ended on its own (status 0x%x)\n", (long)pid, status);
            failures++;
            continue;
        }
        char path[64];
        snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)pid);
        uint64_t entries = 0;
        int unpublished = 0;
        int bad = check_map(path, pid, &entries, &unpublished);
        failures += bad;
        with_unpublished += unpublished;
        empty += entries == 0;
        total_entries += entries;
        if (bad || unpublished || i % 100 == 0) {
            char keep[512];
            snprintf(keep, sizeof keep, "%s/%s-%ld.map", out, bad ? "bad" : "killed", (long)pid);
            if (access(path, F_OK) == 0 && copy_file(path, keep) == 0)
                samples++;
        }
        unlink(path);
    }
    printf("%ld kills: %ld maps bad, %ld ended in an unpublished line, %ld empty, "
           "%llu entries in all; %ld samples kept in %s\n",
           n, failures, with_unpublished, empty, (unsigned long long)total_entries, samples, out);
    return failures ? 1 : 0;
}
