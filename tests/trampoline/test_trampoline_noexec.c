/*
 * A host that forbids executable memory (SELinux execmem, PaX MPROTECT, a
 * seccomp policy) gets JF_EACCES from jf_trampoline_create, with a message
 * naming the fallback, and nothing is created. The policy is simulated with
 * a seccomp filter in a child process that fails mprotect/mmap with PROT_EXEC
 * (EACCES, as SELinux does). Negative control: an unfiltered child creates
 * and calls a trampoline.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jitframes.h"

#if defined(__x86_64__)
#define HOST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define HOST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define HOST_AUDIT_ARCH AUDIT_ARCH_RISCV64
#endif

__attribute__((noinline)) static long twice(long x)
{
    return 2 * x;
}

/* Fail mprotect and mmap asking for PROT_EXEC with EACCES. */
static int forbid_exec_memory(void)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HOST_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof code / sizeof code[0], code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/* In a child: 0 if creating behaves as expected with/without the policy. */
static int child(int forbid)
{
    if (forbid && forbid_exec_memory() != 0)
        return 10;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    if (jf_init(&cfg) != 0)
        return 11;
    jf_fn entry = NULL;
    int rc = jf_trampoline_create((jf_fn)twice, "denied", NULL, &entry);
    if (forbid)
        return rc == JF_EACCES && entry == NULL && strstr(jf_last_error(), "call the target directly") ? 0
                                                                                                       : 12;
    return rc == 0 && ((long (*)(long))entry)(21) == 42 ? 0 : 13;
}

static int run_child(int forbid)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(child(forbid));
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static void denied_exec_memory_is_jf_eacces_with_the_fallback(void **state)
{
    (void)state;
    assert_int_equal(run_child(1), 0);
}

static void negative_control_without_the_policy_creates(void **state)
{
    (void)state;
    assert_int_equal(run_child(0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(denied_exec_memory_is_jf_eacces_with_the_fallback),
        cmocka_unit_test(negative_control_without_the_policy_creates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
