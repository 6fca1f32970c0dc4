/* A repeatable pseudo-random sequence for tests (xorshift64): the same
 * numbers on every run and machine, so a failure can be replayed. */
#ifndef JF_TEST_RANDOM_H
#define JF_TEST_RANDOM_H

#include <stdint.h>

/* The next number of the sequence whose state is *state (never 0). */
static inline uint64_t test_random_next(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

#endif
