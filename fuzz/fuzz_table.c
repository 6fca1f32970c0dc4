/*
 * libFuzzer target: random and adversarial published tables
 * (src/pub_layout.h) fed to the readers root runs against a hostile
 * process: tools/readers/table_reader.c (the whole table, unwind descriptions
 * rebuilt by the library's checks and emitter) and tools/readers/table_lookup.c
 * (the eBPF sampler's twin: the generation read at sample time, the pc
 * resolved afterwards). The input's first byte picks after how many reads
 * the "target" starts answering from a mutated copy (a writer racing the
 * reader); the next 8 are a pc; the rest is the mapping. Readers must stay
 * in bounds, end, and return only sound regions: names without control
 * characters, inside the mapping's strings, the live list sorted without
 * duplicates, unwind data within what was emitted, a resolved region
 * holding the pc and live at the generation.
 * Seeds: fuzz/corpus-table, written by make_table_corpus.py.
 */
#include "table_lookup.h"
#include "table_reader.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { BASE = 0x100000 };

typedef struct fake_target {
    const uint8_t *image, *mutated;
    size_t size;
    unsigned reads, switch_after;
} fake_target;

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    fake_target *t = ctx;
    if (addr < BASE || addr - BASE > t->size || len > t->size - (addr - BASE))
        return -1;
    const uint8_t *from = t->reads++ < t->switch_after ? t->image : t->mutated;
    memcpy(buf, from + (addr - BASE), len);
    return 0;
}

static void check_name(const char *s)
{
    if (!s)
        abort();
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            abort();
}

static void check_region(const tr_region *r)
{
    check_name(r->name);
    if ((r->unwind == NULL) != (r->unwind_len == 0) || r->unwind_hdr_len > r->unwind_len)
        abort();
    if (r->unwind_len) /* every byte readable (ASan checks) */
        (void)(volatile uint8_t)r->unwind[r->unwind_len - 1];
}

static void check_snapshot(const tr_snapshot *s)
{
    for (size_t i = 0; i < s->n_live; i++) {
        check_region(&s->live[i]);
        if (i && s->live[i].start <= s->live[i - 1].start)
            abort();
    }
    for (size_t i = 0; i < s->n_removed; i++)
        check_region(&s->removed[i]);
}

static int live_at(const tr_region *r, uint64_t g)
{
    return r->published_gen <= g && (r->removed_gen == 0 || r->removed_gen > g);
}

/* The twin: the generation "at sample time", then the pc resolved. */
static void lookup(fake_target *t, const tr_snapshot *s, uint64_t pc)
{
    uint64_t g;
    if (tr_sample_generation(fake_read, t, BASE, t->size, &g) != TR_FOUND)
        g = s->generation;
    const tr_region *r = tr_resolve(s, pc, g);
    if (r && (pc < r->start || pc - r->start >= r->size ||
              !(live_at(r, g) || ((g & 1) && (live_at(r, g - 1) || live_at(r, g + 1))))))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 9)
        return 0;
    uint64_t pc;
    memcpy(&pc, data + 1, sizeof pc);
    fake_target t = {data + 9, NULL, size - 9, 0, data[0]};
    uint8_t *mutated = malloc(t.size ? t.size : 1);
    if (!mutated)
        return 0;
    memcpy(mutated, t.image, t.size);
    for (size_t i = data[0]; i < t.size; i += 61) /* a writer changing bytes everywhere */
        mutated[i] ^= (uint8_t)(data[0] | 1);
    t.mutated = mutated;

    tr_limits lim = {4096, 4096, 1u << 20, 256, 3, 5.0, 64u << 20};
    tr_snapshot s;
    char err[256];
    if (tr_read_table(fake_read, &t, BASE, t.size, &lim, &s, err, sizeof err) == 0) {
        check_snapshot(&s);
        for (size_t i = 0; i < s.n_live && i < 8; i++)
            lookup(&t, &s, s.live[i].start + s.live[i].size / 2);
        t.reads = 0;
        lookup(&t, &s, pc);
        tr_snapshot_free(&s);
    }
    free(mutated);
    return 0;
}
