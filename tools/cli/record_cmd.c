/*
 * `jitframes record`: the recording itself (perf record, perf inject, the
 * flame graph, putting the sinks back) is a Python script; this finds it
 * and hands over, telling it where this program is ($JITFRAMES_CLI) so it
 * talks to the process through the same tool.
 */
#define _GNU_SOURCE
#include "record_cmd.h"
#include "exit_status.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where the script may be, relative to this program's directory. */
static const char *const script_places[] = {
    "jitframes-record",                      /* a build tree: tools/ */
    "../libexec/jitframes/jitframes-record", /* installed: bin/ */
};

int jft_record_command(int argc, char **argv)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "jitframes record: cannot tell where this program is: %s\n", strerror(errno));
        return JFT_EXIT_USAGE;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    size_t dir_len = slash ? (size_t)(slash - self) : 0;
    char script[PATH_MAX + 64];
    for (size_t i = 0; i < sizeof script_places / sizeof script_places[0]; i++) {
        snprintf(script, sizeof script, "%.*s/%s", (int)dir_len, self, script_places[i]);
        if (access(script, X_OK) != 0)
            continue;
        setenv("JITFRAMES_CLI", self, 1);
        argv[0] = script;
        (void)argc;
        execv(script, argv);
        fprintf(stderr, "jitframes record: cannot run %s: %s\n", script, strerror(errno));
        return JFT_EXIT_USAGE;
    }
    fprintf(stderr, "jitframes record: jitframes-record not found beside %s or in ../libexec/jitframes\n",
            self);
    return JFT_EXIT_USAGE;
}
