/*
 * libFuzzer target: random and adversarial published tables
 * (src/pub_layout.h) fed to the readers root runs against a hostile
 * process: tools/table_reader.c (the whole table) and tools/table_lookup.c
 * (one pc, the eBPF program's user-space twin). The input's first byte
 * picks after how many reads the "target" starts answering from a mutated
 * copy (a writer racing the reader); the next 8 are a pc; the rest is the
 * mapping. Both readers must stay in bounds, end, and return only sound
 * regions: names without control characters, inside the mapping's strings,
 * the live list sorted without duplicates, a found region holding the pc.
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

static void check_snapshot(const tr_snapshot *s)
{
    for (size_t i = 0; i < s->n_live; i++) {
        check_name(s->live[i].name);
        if (i && s->live[i].start <= s->live[i - 1].start)
            abort();
    }
    for (size_t i = 0; i < s->n_removed; i++)
        check_name(s->removed[i].name);
}

static void lookup(fake_target *t, uint64_t pc)
{
    tr_hit hit;
    if (tr_lookup_pc(fake_read, t, BASE, t->size, pc, &hit) == TR_FOUND) {
        check_name(hit.name);
        if (pc < hit.start || pc - hit.start >= hit.size)
            abort();
    }
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

    tr_limits lim = {4096, 4096, 1u << 20, 256, 3, 5.0};
    tr_snapshot s;
    char err[256];
    if (tr_read_table(fake_read, &t, BASE, t.size, &lim, &s, err, sizeof err) == 0) {
        check_snapshot(&s);
        for (size_t i = 0; i < s.n_live && i < 8; i++)
            lookup(&t, s.live[i].start + s.live[i].size / 2);
        tr_snapshot_free(&s);
    }
    t.reads = 0;
    lookup(&t, pc);
    free(mutated);
    return 0;
}
