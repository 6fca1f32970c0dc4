/*
 * The shape helpers against the hardware (x86_64 hosts): real machine code
 * described with jf_cfi_add_standard_frame / jf_cfi_add_frameless runs in a
 * traced child; the parent single-steps it and, at EVERY instruction, unwinds
 * one frame with the rules libdw reads from our emitted .eh_frame, applied to
 * the child's real registers and stack. The recovered CFA, return address and
 * caller's rbp must equal what they were at the function's entry.
 * Negative control: a deliberately wrong description must be caught.
 */
#define _GNU_SOURCE
#include "cfi.h"
#include "cfi_view.h"

#include <dwarf.h>
#include <errno.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)

#define MAX_STEPS 200000
#define PTRACE_UNAVAILABLE 77 /* the child's exit status when it cannot be traced */

static int ptrace_unavailable;

/* Framed: push rbp; mov rbp,rsp; sub rsp,32; mov eax,7; mov rsp,rbp; pop rbp; ret */
static const uint8_t framed_code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x20, 0xb8,
                                      0x07, 0x00, 0x00, 0x00, 0x48, 0x89, 0xec, 0x5d, 0xc3};
/* Frameless: sub rsp,40; mov eax,9; nop; add rsp,40; ret */
static const uint8_t frameless_code[] = {0x48, 0x83, 0xec, 0x28, 0xb8, 0x09, 0x00, 0x00,
                                         0x00, 0x90, 0x48, 0x83, 0xc4, 0x28, 0xc3};
/* Framed with `leave`: push rbp; mov rbp,rsp; push rbx; pop rbx; leave; ret */
static const uint8_t leave_code[] = {0x55, 0x48, 0x89, 0xe5, 0x53, 0x5b, 0xc9, 0xc3};

typedef struct jit_fn {
    const char *name;
    const uint8_t *code;
    size_t size;
    size_t offset; /* in the code page */
    jf_cfi *cfi;
} jit_fn;

static int describe_framed(jf_cfi *c, int wrong)
{
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.end = sizeof framed_code, f.after_push = 1, f.after_fp_set = 4;
    f.epilogue_start = 16, f.after_pop = 17;
    if (wrong)
        f.epilogue_start = 13; /* before mov rsp,rbp: rsp is not at the frame record yet */
    return jf_cfi_add_standard_frame(c, &f);
}

static int describe_frameless(jf_cfi *c)
{
    int rc = jf_cfi_add_frameless(c, 0, 4, 8); /* before sub: entry state */
    if (!rc)
        rc = jf_cfi_add_frameless(c, 4, 14, 48);
    if (!rc)
        rc = jf_cfi_add_frameless(c, 14, 15, 8);
    return rc;
}

static int describe_leave(jf_cfi *c)
{
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.end = sizeof leave_code, f.after_push = 1, f.after_fp_set = 4, f.after_pop = 7;
    return jf_cfi_add_standard_frame(c, &f);
}

static int failures;

#define FAIL(...) (fprintf(stderr, "FAIL " __VA_ARGS__), fputc('\n', stderr), failures++)

static uint64_t dwarf_reg(const struct user_regs_struct *r, unsigned reg)
{
    switch (reg) {
    case 6: return r->rbp;
    case 7: return r->rsp;
    default: return 0;
    }
}

/* The caller's value of `reg` per libdw's rule, read from the child. */
static int recover(pid_t pid, Dwarf_Frame *frame, unsigned reg, uint64_t cfa,
                   const struct user_regs_struct *r, uint64_t *value)
{
    int64_t at = 0;
    int rule = frame_rule(frame, reg, &at);
    if (rule == FRAME_RULE_SAME) {
        *value = dwarf_reg(r, reg);
        return 0;
    }
    if (rule != FRAME_RULE_AT)
        return -1;
    errno = 0;
    long word = ptrace(PTRACE_PEEKDATA, pid, (void *)(uintptr_t)(cfa + (uint64_t)at), NULL);
    if (errno)
        return -1;
    *value = (uint64_t)word;
    return 0;
}

typedef struct entry_state {
    uint64_t cfa, ra, rbp;
} entry_state;

/* Unwind one frame at the child's current pc; 0 if it matches the entry. */
static int check_step(pid_t pid, Dwarf_CFI *dcfi, const struct user_regs_struct *r, const entry_state *e,
                      char *why, size_t why_size)
{
    Dwarf_Frame *frame;
    if (dwarf_cfi_addrframe(dcfi, r->rip, &frame) != 0) {
        snprintf(why, why_size, "no unwind info");
        return -1;
    }
    int rc = -1;
    uint64_t ra = 0, rbp = 0;
    unsigned cfa_reg = 0;
    int64_t cfa_off = 0;
    if (frame_cfa(frame, &cfa_reg, &cfa_off) != 0) {
        snprintf(why, why_size, "CFA is not reg+offset");
        goto out;
    }
    uint64_t cfa = dwarf_reg(r, cfa_reg) + (uint64_t)cfa_off;
    if (cfa != e->cfa) {
        snprintf(why, why_size, "CFA %#" PRIx64 ", entry CFA %#" PRIx64, cfa, e->cfa);
        goto out;
    }
    if (recover(pid, frame, 16, cfa, r, &ra) != 0 || ra != e->ra) {
        snprintf(why, why_size, "return address %#" PRIx64 ", expected %#" PRIx64, ra, e->ra);
        goto out;
    }
    if (recover(pid, frame, 6, cfa, r, &rbp) != 0 || rbp != e->rbp) {
        snprintf(why, why_size, "caller rbp %#" PRIx64 ", expected %#" PRIx64, rbp, e->rbp);
        goto out;
    }
    rc = 0;
out:
    free(frame);
    return rc;
}

typedef void (*void_fn)(void);

/* The child: calls every function once, then exits. */
static __attribute__((noinline)) void child_run(uint8_t *page, const jit_fn *fns, size_t n)
{
    if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
        _exit(PTRACE_UNAVAILABLE);
    raise(SIGSTOP);
    for (size_t i = 0; i < n; i++) {
        void_fn f = (void_fn)(uintptr_t)(page + fns[i].offset);
        f();
    }
    _exit(0);
}

/* Single-step the child; check every instruction inside fns. Returns the
 * number of mismatching instructions; *checked counts those examined. */
static int trace(pid_t pid, uint8_t *page, const jit_fn *fns, size_t n, Dwarf_CFI **dcfi, size_t *checked,
                 int quiet)
{
    int status, bad = 0;
    entry_state e = {0, 0, 0};
    if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) { /* the SIGSTOP */
        ptrace_unavailable = WIFEXITED(status) && WEXITSTATUS(status) == PTRACE_UNAVAILABLE;
        return 0;
    }
    for (int steps = 0; steps < MAX_STEPS; steps++) {
        if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) != 0 || waitpid(pid, &status, 0) != pid ||
            !WIFSTOPPED(status))
            return bad;
        struct user_regs_struct r;
        ptrace(PTRACE_GETREGS, pid, NULL, &r);
        for (size_t i = 0; i < n; i++) {
            uint64_t start = (uint64_t)(uintptr_t)(page + fns[i].offset);
            if (r.rip < start || r.rip >= start + fns[i].size)
                continue;
            if (r.rip == start) { /* entry: remember what unwinding must give back */
                errno = 0;
                e.ra = (uint64_t)ptrace(PTRACE_PEEKDATA, pid, (void *)(uintptr_t)r.rsp, NULL);
                e.cfa = r.rsp + 8;
                e.rbp = r.rbp;
            }
            char why[160];
            (*checked)++;
            if (dcfi[i] && check_step(pid, dcfi[i], &r, &e, why, sizeof why) != 0) {
                bad++;
                if (!quiet)
                    FAIL("%s+%" PRIu64 ": %s", fns[i].name, (uint64_t)(r.rip - start), why);
            }
        }
    }
    FAIL("child did not finish within %d steps", MAX_STEPS);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return bad;
}

/* Lay the functions out in one page, fork a traced child running them. */
static int run(jit_fn *fns, size_t n, size_t *checked, int quiet)
{
    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return FAIL("mmap"), 1;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        fns[i].offset = at;
        memcpy(page + at, fns[i].code, fns[i].size);
        at += (fns[i].size + 15) & ~(size_t)15;
    }
    mprotect(page, 4096, PROT_READ | PROT_EXEC);
    cfi_view views[8];
    Dwarf_CFI *dcfi[8] = {0};
    for (size_t i = 0; i < n; i++) {
        uint64_t code = (uint64_t)(uintptr_t)(page + fns[i].offset);
        /* the image's address only has to be near the code */
        if (!fns[i].cfi || cfi_view_open(&views[i], fns[i].cfi, 62, code, fns[i].size,
                                         (code & ~(uint64_t)0xfff) + 0x100000) != 0)
            FAIL("%s: no CFI to check", fns[i].name);
        dcfi[i] = fns[i].cfi ? views[i].cfi : NULL;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        child_run(page, fns, n);
    int bad = trace(pid, page, fns, n, dcfi, checked, quiet);
    waitpid(pid, NULL, WNOHANG);
    for (size_t i = 0; i < n; i++)
        if (fns[i].cfi)
            cfi_view_close(&views[i]);
    munmap(page, 4096);
    return bad;
}

static jf_cfi *build(int (*describe)(jf_cfi *))
{
    jf_cfi *c = NULL;
    if (jf__cfi_new_arch(JF_CFI_ARCH_X86_64, &c) != 0 || describe(c) != 0) {
        FAIL("describe: %s", jf_last_error());
        jf_cfi_free(c);
        return NULL;
    }
    return c;
}

static int describe_framed_right(jf_cfi *c)
{
    return describe_framed(c, 0);
}
static int describe_framed_wrong(jf_cfi *c)
{
    return describe_framed(c, 1);
}

int main(void)
{
    elf_version(EV_CURRENT);
    jit_fn fns[] = {
        {"framed", framed_code, sizeof framed_code, 0, build(describe_framed_right)},
        {"frameless", frameless_code, sizeof frameless_code, 0, build(describe_frameless)},
        {"leave", leave_code, sizeof leave_code, 0, build(describe_leave)},
    };
    size_t checked = 0;
    run(fns, 3, &checked, 0);
    if (ptrace_unavailable) {
        puts("SKIP: ptrace is not permitted here (PTRACE_TRACEME failed)");
        return 77;
    }
    for (size_t i = 0; i < 3; i++)
        jf_cfi_free(fns[i].cfi);
    const size_t want = 7 + 5 + 6; /* instructions executed: 7 framed, 5 frameless, 6 leave */
    if (checked != want)
        FAIL("checked %zu instructions, expected %zu", checked, want);

    /* Negative control: the CFA switched to rsp before rsp reached the frame record. */
    jit_fn wrong[] = {{"framed-wrong", framed_code, sizeof framed_code, 0, build(describe_framed_wrong)}};
    size_t wrong_checked = 0;
    int caught = run(wrong, 1, &wrong_checked, 1);
    jf_cfi_free(wrong[0].cfi);
    if (caught == 0)
        FAIL("negative control: a wrong epilogue description was not caught");

    if (failures)
        return 1;
    printf("every instruction unwinds to its caller (%zu checked); wrong CFI caught at %d\n", checked,
           caught);
    return 0;
}

#else

int main(void)
{
    puts("SKIP: the stepping test drives x86_64 code only");
    return 77;
}

#endif
