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
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jitframes.h"
#include "seccomp_refuse.h"

__attribute__((noinline)) static long twice(long x)
{
    return 2 * x;
}

/* Fail mprotect and mmap asking for PROT_EXEC with EACCES. */
static int forbid_exec_memory(void)
{
    if (test_seccomp_refuse(__NR_mprotect, 2, PROT_EXEC, PROT_EXEC, EACCES) != 0)
        return -1;
    return test_seccomp_refuse(__NR_mmap, 2, PROT_EXEC, PROT_EXEC, EACCES);
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
