/*
 * deny_exec_memory PROGRAM [ARG...]: run PROGRAM on a "host" that forbids
 * making memory executable at run time, as SELinux execmem or PaX MPROTECT
 * do: a seccomp filter fails every mprotect that asks for PROT_EXEC with
 * EACCES. The dynamic loader maps code with mmap, so programs still start;
 * only run-time code generation (jitframes trampolines) is refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "seccomp_refuse.h"

/* mprotect(addr, len, prot) with PROT_EXEC in prot: EACCES. */
static int install_filter(void)
{
    return test_seccomp_refuse(__NR_mprotect, 2, PROT_EXEC, PROT_EXEC, EACCES);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: deny_exec_memory PROGRAM [ARG...]\n");
        return 2;
    }
    if (install_filter() != 0) {
        fprintf(stderr, "deny_exec_memory: cannot install the seccomp filter: %s\n", strerror(errno));
        return 2;
    }
    execv(argv[1], argv + 1);
    fprintf(stderr, "deny_exec_memory: cannot run %s: %s\n", argv[1], strerror(errno));
    return 127;
}
