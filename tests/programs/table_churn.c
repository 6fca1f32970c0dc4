/*
 * A large published table that keeps changing, for the readers' per-slot
 * proofs: STABLE regions registered once (each with a file, a 4-row line
 * table and unwind rules), then CHURN more that move to the other of two
 * banks under a new name, one at a time, RATE changes per second (0: as
 * fast as it can), until stdin reaches end of file. The regions are never
 * run (the table, not perf, is what is tested): plain readable memory.
 * Regions are 64 bytes, STRIDE bytes apart (default 64: packed).
 * Usage: table_churn STABLE CHURN RATE [STRIDE]      prints "pid <pid>" once
 * the stable regions are registered.
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { SIZE = 64 };
static size_t SLOT = SIZE; /* stride */

static int register_at(uint8_t *addr, const char *name, const jf_cfi *cfi)
{
    static const jf_line lines[4] = {{0, 10, NULL}, {16, 11, NULL}, {32, 12, "other.js"}, {48, 13, NULL}};
    jf_region r = JF_REGION_INIT;
    r.addr = addr;
    r.size = SIZE;
    r.name = name;
    r.file = "table_churn.js";
    r.line = 10;
    r.lines = lines;
    r.n_lines = 4;
    r.cfi = cfi;
    return jf_register(&r);
}

static int stdin_ended(void)
{
    struct pollfd p = {0, POLLIN, 0};
    char buf[64];
    return poll(&p, 1, 0) == 1 && read(0, buf, sizeof buf) <= 0;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5)
        return fprintf(stderr, "usage: table_churn STABLE CHURN RATE [STRIDE]\n"), 2;
    if (argc == 5 && (SLOT = strtoul(argv[4], NULL, 10)) < SIZE)
        return fprintf(stderr, "table_churn: STRIDE is at least %d\n", SIZE), 2;
    size_t stable = strtoul(argv[1], NULL, 10), churn = strtoul(argv[2], NULL, 10);
    long rate = strtol(argv[3], NULL, 10);
    size_t bytes = (stable + 2 * churn) * SLOT;
    uint8_t *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    jf_cfi *cfi = NULL;
    if (mem == MAP_FAILED || jf_init(NULL) != 0 || jf_cfi_new(&cfi) != 0 ||
        jf_cfi_add_frameless(cfi, 0, SIZE, 8) != 0)
        return fprintf(stderr, "table_churn: setup: %s\n", jf_last_error()), 1;
    char name[64];
    for (size_t i = 0; i < stable; i++) {
        snprintf(name, sizeof name, "stable_%zu", i);
        if (register_at(mem + i * SLOT, name, cfi) != 0)
            return fprintf(stderr, "table_churn: %s: %s\n", name, jf_last_error()), 1;
    }
    uint8_t *banks = mem + stable * SLOT;
    for (size_t j = 0; j < churn; j++) {
        snprintf(name, sizeof name, "churn_%zu_0", j);
        if (register_at(banks + j * SLOT, name, cfi) != 0)
            return fprintf(stderr, "table_churn: %s: %s\n", name, jf_last_error()), 1;
    }
    printf("pid %ld\n", (long)getpid());
    fflush(stdout);
    struct timespec pause = {0, rate > 0 ? 1000000000L / rate : 0};
    unsigned char *bank = calloc(churn ? churn : 1, 1); /* where churner j is: 0 or 1 */
    for (unsigned long k = 0; churn && bank && !stdin_ended(); k++) {
        size_t j = k % churn;
        if (jf_unregister(banks + (bank[j] * churn + j) * SLOT) != 0)
            return fprintf(stderr, "table_churn: unregister: %s\n", jf_last_error()), 1;
        bank[j] ^= 1;
        snprintf(name, sizeof name, "churn_%zu_%lu", j, k / churn + 1);
        if (register_at(banks + (bank[j] * churn + j) * SLOT, name, cfi) != 0)
            return fprintf(stderr, "table_churn: %s: %s\n", name, jf_last_error()), 1;
        if (rate > 0)
            nanosleep(&pause, NULL);
    }
    free(bank);
    char buf[64];
    while (!churn && read(0, buf, sizeof buf) > 0) /* no churn: wait for end of file */
        ;
    jf_cfi_free(cfi);
    return 0;
}
