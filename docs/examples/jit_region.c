/*
 * docs/guide.md, "JIT regions": describe generated code to jitframes with a
 * name, source lines and unwind rules, then unregister it. The "generated
 * code" here is a buffer the example never runs: registration only needs
 * its address and size (and, with the jitdump sink, readable bytes).
 * Run: JITFRAMES=perfmap,jitdump ./jit_region
 */
#include <jitframes.h>

#include <stdio.h>
#include <string.h>

static unsigned char code[64]; /* stands in for a JIT's executable memory */

static int fail(const char *what, int rc)
{
    fprintf(stderr, "%s: %s (%s)\n", what, jf_strerror(rc), jf_last_error());
    return 1;
}

int main(void)
{
    int rc = jf_init(NULL); /* sinks from $JITFRAMES */
    if (rc != 0 && rc != JF_ESINK)
        return fail("jf_init", rc);
    if (rc == JF_ESINK) /* initialised; one sink is off, and says why */
        fprintf(stderr, "warning: %s\n", jf_last_error());

    /* Unwind rules: a frameless function that moved its stack pointer by
     * 24 bytes after a 4-byte prologue (x86_64: sub $24,%rsp). */
    jf_cfi *cfi = NULL;
    if ((rc = jf_cfi_new(&cfi)) != 0 || (rc = jf_cfi_begin_fde(cfi, 0, sizeof code)) != 0 ||
        (rc = jf_cfi_advance_to(cfi, 4)) != 0 || (rc = jf_cfi_def_cfa_offset(cfi, 32)) != 0)
        return fail("CFI", rc); /* JF_ENOTSUP on an architecture without CFI support */

    static const jf_line lines[] = {{0, 10, NULL}, {16, 11, NULL}, {40, 12, "helpers.js"}};
    jf_region r = JF_REGION_INIT;
    r.addr = code;
    r.size = sizeof code;
    r.name = "js:computeTotal";
    r.file = "shop.js";
    r.line = 10;
    r.lines = lines;
    r.n_lines = sizeof lines / sizeof lines[0];
    r.cfi = cfi;
    rc = jf_register(&r); /* everything is copied: cfi and lines may go now */
    jf_cfi_free(cfi);
    if (rc != 0)
        return fail("jf_register", rc);

    /* ... the code runs; profilers and debuggers see it by name ... */

    if ((rc = jf_unregister(code)) != 0) /* before the memory is reused */
        return fail("jf_unregister", rc);
    jf_shutdown();
    printf("registered and unregistered js:computeTotal\n");
    return 0;
}
