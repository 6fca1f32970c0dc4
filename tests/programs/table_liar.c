/*
 * A hostile process for the readers of the published table: it calls
 * jf_init (so it has a table), registers one real function it keeps
 * running, then rewrites its own table over and over with lies — entry
 * counts far beyond the mapping, sizes of 2^40 bytes, names and files with
 * "../" that claim thousands of bytes, offsets past the heap, a generation
 * left odd (always "changing"), a ring of huge capacity with removals in the
 * future, and every pass new names (so a reader that keeps what it sees
 * meets new regions all the time). The lies fill its table's first 2 MiB.
 * It is honest until a line arrives on stdin, then lies until end of file.
 * Usage: table_liar      prints "pid <pid>" once ready.
 */
#define _GNU_SOURCE
#include "jitframes.h"
#include "pub_layout.h"

#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(__x86_64__)
int main(void)
{
    fprintf(stderr, "table_liar: x86_64 only\n");
    return 77;
}
#else

/* uint64_t spin(uint64_t n) */
static const unsigned char spin_code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8, 0x48,
                                          0x83, 0xe8, 0x01, 0x75, 0xfa, 0x5d, 0xc3};

/* The table: the mapping named JF_PUB_NAME in /proc/self/maps. */
static pub_header *find_table(size_t *size)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long lo, hi;
    while (f && fgets(line, sizeof line, f)) {
        if (strstr(line, JF_PUB_NAME) && sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
            fclose(f);
            *size = hi - lo;
            return (pub_header *)lo;
        }
    }
    if (f)
        fclose(f);
    return NULL;
}

/* 1: a line arrived, -1: end of file, 0: nothing yet. */
static int stdin_state(void)
{
    struct pollfd p = {0, POLLIN, 0};
    char buf[64];
    if (poll(&p, 1, 0) != 1)
        return 0;
    return read(0, buf, sizeof buf) > 0 ? 1 : -1;
}

/* One pass of lies, pass number k, in a table of size bytes. */
static void lie(pub_header *h, size_t size, unsigned long k, uintptr_t code)
{
    uint8_t *base = (uint8_t *)h;
    if (size > (2u << 20))
        size = 2u << 20;
    size_t heap_off = size / 2, heap_cap = size - heap_off;
    char *heap = (char *)base + heap_off;
    snprintf(heap, heap_cap, "../../../../../../tmp/jf-liar-pwned-%lu/x", k);
    size_t name_len = strlen(heap);
    snprintf(heap + 256, heap_cap - 256, "../../../../etc/jf-liar-file-%lu", k);
    h->heap_off = heap_off;
    h->heap_capacity = (uint32_t)heap_cap;
    h->heap_used = k % 3 ? 0xffffffffu : (uint32_t)heap_cap;
    h->entries_off = sizeof *h;
    size_t fit = (heap_off - sizeof *h) / sizeof(pub_entry);
    h->entries_capacity = k % 2 ? 0xffffffffu : (uint32_t)fit;
    h->entries_used = k % 2 ? 0xfffffff0u : (uint32_t)fit / 2;
    h->live_count = 0xffffffffu;
    h->ring_off = (uint32_t)(sizeof *h + fit / 2 * sizeof(pub_entry));
    h->ring_capacity = k % 4 == 1 ? 0xffffffffu : (uint32_t)(fit / 2);
    h->ring_written = UINT64_MAX - k;
    pub_entry *e = (pub_entry *)(base + sizeof *h);
    for (size_t i = 0; i < fit; i++) {
        pub_entry x = {0};
        x.flags = i < fit / 2 ? JF_PUB_LIVE : JF_PUB_REMOVED;
        x.start = code + (i % 16);
        x.size = i % 3 == 0 ? (uint64_t)1 << 40 : i % 3 == 1 ? sizeof spin_code : UINT64_MAX - code;
        x.name_off = 0;
        x.name_len = i % 5 == 0 ? 0xfffffff0u : (uint32_t)name_len;
        x.file_off = 256;
        x.file_len = i % 7 == 0 ? 0x7fffffffu : 40;
        x.line = (uint32_t)k;
        x.lines_len = i % 2 ? 0xffffff00u : 0;
        x.lines_off = (uint32_t)heap_cap - 4;
        x.cfi_len = i % 4 == 3 ? 0xfffffff0u : 0;
        x.cfi_off = 8;
        x.published_gen = k;
        x.published_ns = UINT64_MAX - i;
        x.removed_ns = UINT64_MAX - k;
        e[i] = x;
    }
    h->generation = k % 8 == 7 ? 2 * k + 1 : 2 * k; /* odd: "being changed" */
}

int main(void)
{
    if (jf_init(NULL) != 0)
        return fprintf(stderr, "table_liar: jf_init: %s\n", jf_last_error()), 1;
    uint8_t *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return perror("mmap"), 1;
    memcpy(mem, spin_code, sizeof spin_code);
    if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) != 0)
        return perror("mprotect"), 1;
    jf_region r = JF_REGION_INIT;
    r.addr = mem;
    r.size = sizeof spin_code;
    r.name = "liar_spin";
    if (jf_register(&r) != 0)
        return fprintf(stderr, "table_liar: jf_register: %s\n", jf_last_error()), 1;
    size_t size;
    pub_header *h = find_table(&size);
    if (!h || size < 8192)
        return fprintf(stderr, "table_liar: no table of its own\n"), 1;
    printf("pid %ld\n", (long)getpid());
    fflush(stdout);
    uint64_t (*spin)(uint64_t) = (uint64_t (*)(uint64_t))(void *)mem;
    volatile uint64_t sink = 0;
    int lying = 0;
    for (unsigned long k = 0; k < 100000000ul; k++) {
        int in = stdin_state();
        if (in < 0)
            break;
        lying |= in > 0;
        if (lying)
            lie(h, size, k, (uintptr_t)mem);
        sink += spin(2000000);
    }
    (void)sink;
    return 0; /* no jf_shutdown: its table is not its own any more */
}
#endif
