/* register_from_env: a host that lets the environment decide (jf_init with
 * no config), registers one region and prints what it got:
 *   pid=<pid> init=<jf_init's rc> sinks=<jf_enabled_sinks()>
 * For the tests of which variables a privileged program obeys. */
#include <jitframes.h>
#include <stdio.h>
#include <unistd.h>

static unsigned char code[64];

int main(void)
{
    int rc = jf_init(NULL);
    unsigned sinks = jf_enabled_sinks();
    jf_region r = JF_REGION_INIT;
    r.addr = code;
    r.size = sizeof code;
    r.name = "register_from_env_region";
    if (rc == 0 || rc == JF_ESINK) {
        if (jf_register(&r) != 0 || jf_unregister(code) != 0)
            return 2;
        jf_shutdown();
    }
    printf("pid=%ld init=%d sinks=%u\n", (long)getpid(), rc, sinks);
    return 0;
}
