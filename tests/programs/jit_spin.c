/*
 * A tiny "JIT" for the perf tests: copies a function with a standard frame
 * (push rbp; mov rbp,rsp; busy loop; pop rbp; ret) into anonymous memory,
 * makes it executable (W^X: written while RW, then RX), registers it with
 * jitframes and calls it from a non-inlined C function for about a second.
 * jitframes is set up by jf_init(NULL), so $JITFRAMES decides the sinks.
 *
 * Usage: jit_spin [SECONDS] [NAME]   prints "pid <pid>" on stdout.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "jitframes.h"

#if !defined(__x86_64__)
int main(void)
{
    fprintf(stderr, "jit_spin: x86_64 only\n");
    return 77;
}
#else

/* uint64_t spin(uint64_t n): counts n down to zero inside a frame record. */
static const unsigned char spin_code[] = {
    0x55,                   /* push %rbp */
    0x48, 0x89, 0xe5,       /* mov %rsp,%rbp */
    0x48, 0x89, 0xf8,       /* mov %rdi,%rax */
    0x48, 0x83, 0xe8, 0x01, /* 1: sub $1,%rax */
    0x75, 0xfa,             /* jnz 1b */
    0x5d,                   /* pop %rbp */
    0xc3,                   /* ret */
};

typedef uint64_t (*spin_fn)(uint64_t);

/* The C caller perf must show right below the JIT frame. Not inlined, and
 * not a tail call (the result is used), so its return address is on the stack. */
__attribute__((noinline)) uint64_t call_jit_code(spin_fn fn, uint64_t n);
__attribute__((noinline)) uint64_t call_jit_code(spin_fn fn, uint64_t n)
{
    uint64_t r = fn(n);
    __asm__ volatile("" : "+r"(r));
    return r + 1;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *copy_to_executable_memory(const void *code, size_t size)
{
    void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return NULL;
    memcpy(mem, code, size);
    if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) != 0)
        return NULL;
    return mem;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    const char *name = argc > 2 ? argv[2] : "jf_jit_spin_probe";
    printf("pid %ld\n", (long)getpid());
    fflush(stdout);

    int rc = jf_init(NULL);
    if (rc != 0) {
        fprintf(stderr, "jit_spin: jf_init: %s: %s\n", jf_strerror(rc), jf_last_error());
        return 1;
    }
    void *mem = copy_to_executable_memory(spin_code, sizeof spin_code);
    if (!mem) {
        perror("jit_spin: mmap/mprotect");
        return 1;
    }
    jf_region region = JF_REGION_INIT;
    region.addr = mem;
    region.size = sizeof spin_code;
    region.name = name;
    if ((rc = jf_register(&region)) != 0) {
        fprintf(stderr, "jit_spin: jf_register: %s: %s\n", jf_strerror(rc), jf_last_error());
        return 1;
    }

    spin_fn fn = (spin_fn)mem;
    uint64_t sink = 0;
    double end = now_seconds() + seconds;
    while (now_seconds() < end)
        sink += call_jit_code(fn, 1000000);
    printf("calls %llu\n", (unsigned long long)sink);
    jf_shutdown();
    return 0;
}
#endif
