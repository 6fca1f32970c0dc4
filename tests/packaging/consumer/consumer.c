/* A program that uses jitframes as an installed package: registers a
 * region with the perf map sink and checks its line. Built by
 * install_and_consume.sh through pkg-config and through find_package. */
#include <jitframes.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const unsigned char code[32];

int main(void)
{
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_PERFMAP;
    if (jf_init(&cfg) != 0) {
        fprintf(stderr, "consumer: jf_init: %s\n", jf_last_error());
        return 1;
    }
    jf_region r = JF_REGION_INIT;
    r.addr = code;
    r.size = sizeof code;
    r.name = "consumer:installed";
    int rc = jf_register(&r);
    jf_shutdown();
    char path[64], line[256] = "";
    snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        fclose(f);
    }
    unlink(path);
    printf("jitframes %s: %s", jf_version_string(), line);
    return rc == 0 && strstr(line, " consumer:installed\n") ? 0 : 1;
}
