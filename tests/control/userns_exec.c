/* Run a command in a new user namespace, with a uid/gid map written from
 * outside (as root may: any range), as a given uid inside: what a
 * container runtime does, for the control channel's tests.
 * Usage: userns_exec [--map INSIDE:OUTSIDE:COUNT] [--as UID] COMMAND...
 * Without --map the namespace maps nothing (as `unshare -U`). The command
 * runs in this process (same pid), so a caller's $! is the command's. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    int ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    if (fd >= 0)
        close(fd);
    if (!ok)
        perror(path);
    return ok ? 0 : -1;
}

/* The child: once the parent has its new namespace, write its maps. */
static int write_maps(pid_t parent, int ready, const char *map)
{
    char byte, path[64], line[64];
    if (read(ready, &byte, 1) != 1)
        return 1;
    unsigned long inside, outside, count;
    if (sscanf(map, "%lu:%lu:%lu", &inside, &outside, &count) != 3) {
        fprintf(stderr, "userns_exec: bad --map %s\n", map);
        return 1;
    }
    snprintf(line, sizeof line, "%lu %lu %lu\n", inside, outside, count);
    snprintf(path, sizeof path, "/proc/%ld/uid_map", (long)parent);
    if (write_file(path, line) != 0)
        return 1;
    snprintf(path, sizeof path, "/proc/%ld/gid_map", (long)parent);
    return write_file(path, line) != 0;
}

int main(int argc, char **argv)
{
    const char *map = NULL;
    long as = -1;
    int i = 1;
    for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (strcmp(argv[i], "--map") == 0)
            map = argv[i + 1];
        else if (strcmp(argv[i], "--as") == 0)
            as = atol(argv[i + 1]);
    }
    if (i >= argc) {
        fprintf(stderr, "usage: userns_exec [--map INSIDE:OUTSIDE:COUNT] [--as UID] COMMAND...\n");
        return 2;
    }
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        return 2;
    pid_t parent = getpid(), child = map ? fork() : 0;
    if (map && child == 0)
        _exit(write_maps(parent, pipe_fds[0], map));
    if (unshare(CLONE_NEWUSER) != 0) {
        perror("userns_exec: unshare(CLONE_NEWUSER)");
        return 2;
    }
    int status = 0;
    if (map && (write(pipe_fds[1], "x", 1) != 1 || waitpid(child, &status, 0) != child || status != 0))
        return 2;
    if (as >= 0 && (setgroups(0, NULL) != 0 || setresgid((gid_t)as, (gid_t)as, (gid_t)as) != 0 ||
                    setresuid((uid_t)as, (uid_t)as, (uid_t)as) != 0)) {
        perror("userns_exec: becoming --as");
        return 2;
    }
    execvp(argv[i], argv + i);
    perror(argv[i]);
    return 127;
}
