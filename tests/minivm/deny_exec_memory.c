/*
 * deny_exec_memory PROGRAM [ARG...]: run PROGRAM on a "host" that forbids
 * making memory executable at run time, as SELinux execmem or PaX MPROTECT
 * do: a seccomp filter fails every mprotect that asks for PROT_EXEC with
 * EACCES. The dynamic loader maps code with mmap, so programs still start;
 * only run-time code generation (jitframes trampolines) is refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define AUDIT_ARCH_HOST AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_HOST AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define AUDIT_ARCH_HOST AUDIT_ARCH_RISCV64
#else
#error "deny_exec_memory: unknown architecture"
#endif

static int install_filter(void)
{
    struct sock_filter code[] = {
        /* another architecture's system call numbers: leave alone */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_HOST, 0, 4),
        /* mprotect(addr, len, prot) with PROT_EXEC in prot: EACCES */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 0, 2),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
    };
    struct sock_fprog prog = {sizeof code / sizeof code[0], code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
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
