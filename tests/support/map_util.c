/* Strict reading of perf maps for tests (see map_util.h). */
#define _GNU_SOURCE
#include "map_util.h"

#include "jitframes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *map_path(char *buf, size_t cap, pid_t pid)
{
    snprintf(buf, cap, "/tmp/perf-%ld.map", (long)pid);
    return buf;
}

void map_remove(pid_t pid)
{
    char path[64];
    unlink(map_path(path, sizeof path, pid));
}

char *map_read(pid_t pid, size_t *len)
{
    char path[64];
    int fd = open(map_path(path, sizeof path, pid), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *data = NULL;
    if (fstat(fd, &st) == 0 && (data = malloc((size_t)st.st_size + 1)) != NULL) {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t n = read(fd, data + got, (size_t)st.st_size - got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        data[got] = '\0';
        if (len)
            *len = got;
    }
    close(fd);
    return data;
}

/* Length of a strict hex field at p ending at `stop`, or 0. */
static size_t hex_field(const char *p, const char *end, char stop)
{
    size_t n = 0;
    while (p + n < end && ((p[n] >= '0' && p[n] <= '9') || (p[n] >= 'a' && p[n] <= 'f')))
        n++;
    if (n == 0 || n > 16 || p + n >= end || p[n] != stop || (n > 1 && p[0] == '0'))
        return 0;
    return n;
}

/* Printable, and not starting with a space (it would read as a second separator). */
static int name_ok(const char *p, size_t n)
{
    if (n == 0 || p[0] == ' ')
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c == 0x7f)
            return 0;
    }
    return 1;
}

long map_validate(const char *data, size_t len, char *why, size_t why_cap)
{
    const char *p = data, *end = data + len;
    long lines = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            snprintf(why, why_cap, "line %ld has no trailing newline", lines + 1);
            return -1;
        }
        if (nl == p) { /* reserved space the writer has not used: padding */
            p++;
            continue;
        }
        size_t a = hex_field(p, nl, ' ');
        size_t s = a ? hex_field(p + a + 1, nl, ' ') : 0;
        const char *name = p + a + 1 + s + 1;
        if (!a || !s || (s == 1 && p[a + 1] == '0') || !name_ok(name, (size_t)(nl - name))) {
            snprintf(why, why_cap, "line %ld is malformed: '%.*s'", lines + 1,
                     (int)((nl - p) > 200 ? 200 : (nl - p)), p);
            return -1;
        }
        lines++;
        p = nl + 1;
    }
    return lines;
}

size_t map_strip_padding(char *data, size_t len)
{
    size_t out = 0;
    for (size_t i = 0; i < len; i++)
        if (data[i] != '\n' || (out > 0 && data[out - 1] != '\n'))
            data[out++] = data[i];
    data[out] = '\0';
    return out;
}

void map_format_line(char *buf, size_t cap, uintptr_t addr, size_t size, const char *name)
{
    snprintf(buf, cap, "%lx %zx %s\n", (unsigned long)addr, size, name);
}

int map_has_line(const char *data, uintptr_t addr, size_t size, const char *name)
{
    size_t cap = strlen(name) + 64;
    char *line = malloc(cap);
    if (!line)
        return 0;
    map_format_line(line, cap, addr, size, name);
    size_t n = strlen(line);
    int found = 0;
    for (const char *p = data; !found && p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        found = strncmp(p, line, n) == 0;
    free(line);
    return found;
}

long map_count_name(const char *data, const char *name)
{
    size_t n = strlen(name);
    long count = 0;
    for (const char *p = data; p && *p;) {
        const char *nl = strchr(p, '\n');
        const char *sp = memchr(p, ' ', nl ? (size_t)(nl - p) : strlen(p));
        sp = sp ? memchr(sp + 1, ' ', (size_t)((nl ? nl : p + strlen(p)) - sp - 1)) : NULL;
        if (sp && nl && (size_t)(nl - sp - 1) == n && memcmp(sp + 1, name, n) == 0)
            count++;
        p = nl ? nl + 1 : NULL;
    }
    return count;
}

int test_init_with(unsigned sinks)
{
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    int rc = jf_init(&cfg);
    /* jf_enable returns a failing sink's own error; jf_init would say
     * JF_ESINK (test_lifecycle checks that). */
    return rc ? rc : jf_enable(sinks);
}

int test_reset(void **state)
{
    (void)state;
    for (int i = 0; i < 1000 && jf_shutdown() == 0; i++)
        ;
    jf_set_log_callback(NULL, NULL);
    map_remove(getpid());
    return 0;
}

jf_region test_region(const void *addr, size_t size, const char *name)
{
    jf_region r = JF_REGION_INIT;
    r.addr = addr;
    r.size = size;
    r.name = name;
    return r;
}

int test_wait_child(pid_t pid, int seconds)
{
    int status = 0;
    for (long polls = 0; polls < (long)seconds * 1000; polls++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return status;
        usleep(1000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

int test_dir_entries(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}
