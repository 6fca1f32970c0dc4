/*
 * Simulating a host's policy in a test process: a seccomp filter that
 * refuses one system call with an errno when one of its arguments matches,
 * and lets everything else through (another architecture's calls too).
 * Filters stack: call it once per rule. Linux only; a process that
 * installs one cannot gain privileges afterwards (PR_SET_NO_NEW_PRIVS).
 */
#ifndef JF_TEST_SECCOMP_REFUSE_H
#define JF_TEST_SECCOMP_REFUSE_H

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define TEST_AUDIT_ARCH AUDIT_ARCH_RISCV64
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TEST_AUDIT_ARCH AUDIT_ARCH_PPC64LE
#elif defined(__s390x__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_S390X
#else
#error "seccomp_refuse.h: unknown architecture"
#endif

/* The low 32 bits of a system call's argument (seccomp_data keeps 64). */
#define TEST_SECCOMP_ARG_LOW(k) \
    (offsetof(struct seccomp_data, args[k]) + (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0))

/* From now on, system call `nr` fails with `err` when the low 32 bits of
 * its argument `arg` AND `mask` equal `value`. 0, or -1 with errno set. */
static inline int test_seccomp_refuse(long nr, unsigned arg, uint32_t mask, uint32_t value, int err)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)TEST_SECCOMP_ARG_LOW(arg)),
        BPF_STMT(BPF_ALU | BPF_AND | BPF_K, mask),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((uint32_t)err & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof code / sizeof code[0], code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

#endif
