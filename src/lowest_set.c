/* A set of numbers taken lowest first (see lowest_set.h). */
#define _GNU_SOURCE
#include "lowest_set.h"

#include <string.h>
#include <sys/mman.h>

static uint32_t words_for(uint32_t bits)
{
    return (uint32_t)(((uint64_t)bits + 63) / 64);
}

/* All levels in one anonymous mapping: zero pages until a bit is set, and
 * none of malloc's heap (a bitmap of megabytes freed and made again moved
 * malloc's threshold for mapping large blocks, and with it where the
 * registry's own copies went). */
int jf__lowest_set_init(jf__lowest_set *s, uint32_t capacity)
{
    memset(s, 0, sizeof *s);
    size_t total = 0;
    uint32_t bits = capacity ? capacity : 1;
    do {
        if (s->levels == JF__LOWEST_SET_LEVELS)
            return -1; /* past 2^30: capacity 0, so nothing is added */
        s->words[s->levels++] = words_for(bits);
        total += s->words[s->levels - 1];
        bits = s->words[s->levels - 1];
    } while (bits > 1);
    void *p = mmap(NULL, total * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                   0);
    if (p == MAP_FAILED) {
        memset(s, 0, sizeof *s);
        return -1;
    }
    uint64_t *at = p;
    for (uint32_t k = 0; k < s->levels; k++, at += s->words[k - 1])
        s->bits[k] = at;
    s->map_bytes = total * sizeof(uint64_t);
    s->capacity = capacity;
    return 0;
}

void jf__lowest_set_destroy(jf__lowest_set *s)
{
    if (s->map_bytes)
        munmap(s->bits[0], s->map_bytes);
    memset(s, 0, sizeof *s);
}

int jf__lowest_set_grow(jf__lowest_set *s, uint32_t capacity)
{
    jf__lowest_set t;
    if (jf__lowest_set_init(&t, capacity) != 0)
        return -1;
    memcpy(t.bits[0], s->bits[0], (size_t)s->words[0] * sizeof(uint64_t));
    for (uint32_t k = 0; k + 1 < t.levels; k++) /* each level's words summarised above it */
        for (uint32_t w = 0; w < t.words[k]; w++)
            if (t.bits[k][w])
                t.bits[k + 1][w / 64] |= UINT64_C(1) << (w % 64);
    t.count = s->count;
    jf__lowest_set_destroy(s);
    *s = t;
    return 0;
}

void jf__lowest_set_add_above(jf__lowest_set *s, uint32_t w)
{
    for (uint32_t k = 1; k < s->levels; k++, w /= 64) {
        uint64_t *word = &s->bits[k][w / 64];
        int was_empty = *word == 0;
        *word |= UINT64_C(1) << (w % 64);
        if (!was_empty)
            break; /* the levels above already say this word has a member */
    }
}

uint32_t jf__lowest_set_take(jf__lowest_set *s)
{
    if (s->count == 0)
        return UINT32_MAX;
    uint32_t i = 0;
    for (uint32_t k = s->levels; k-- > 0;) {
        uint64_t word = s->bits[k][i];
        if (!word) {
            s->count = 0; /* not reached: count says a bit is set */
            return UINT32_MAX;
        }
        i = i * 64 + (uint32_t)__builtin_ctzll(word);
    }
    uint32_t taken = i;
    for (uint32_t k = 0; k < s->levels; k++, i /= 64) {
        uint64_t *word = &s->bits[k][i / 64];
        *word &= ~(UINT64_C(1) << (i % 64));
        if (*word)
            break; /* the word still has members: the levels above stay */
    }
    s->count--;
    return taken;
}
