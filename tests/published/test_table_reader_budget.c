/*
 * The table reader's budget (tools/readers/table_reader.h) on tables built in a
 * buffer and read through a callback: the deadline is checked inside a
 * read (not only between whole reads), and a slot that changed during the
 * whole read is read again alone and listed when it holds still.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pub_layout.h"
#include "table_reader.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { SLOTS = 3000, HEAP = 4096 };

typedef struct fake {
    uint8_t *mem;
    size_t size;
    size_t reads;
    long sleep_ns;       /* per read: a slow target */
    size_t steady_after; /* from this read on, every slot is stable (0: never) */
} fake;

static jf__pub_header *header(fake *f)
{
    return (jf__pub_header *)(void *)f->mem;
}

static jf__pub_entry *slot(fake *f, size_t i)
{
    return (jf__pub_entry *)(void *)(f->mem + sizeof(jf__pub_header)) + i;
}

/* Slots of odd seq (being changed) until steady_after reads were made. */
static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    fake *f = ctx;
    f->reads++;
    if (f->sleep_ns) {
        struct timespec t = {0, f->sleep_ns};
        nanosleep(&t, NULL);
    }
    int steady = f->steady_after && f->reads >= f->steady_after;
    for (size_t i = 0; i < SLOTS; i++)
        slot(f, i)->seq = steady ? 2 : (uint32_t)(2 * f->reads + 1);
    header(f)->generation = steady ? 4 : 2 * f->reads + 1;
    if (addr > f->size || len > f->size - addr)
        return -1;
    memcpy(buf, f->mem + addr, len);
    return 0;
}

static void make_table(fake *f)
{
    f->size = sizeof(jf__pub_header) + SLOTS * sizeof(jf__pub_entry) + HEAP;
    f->mem = calloc(1, f->size);
    jf__pub_header *h = header(f);
    memcpy(h->signature, JF_PUB_SIGNATURE, 8);
    h->version = JF_PUB_VERSION;
    h->header_size = sizeof *h;
    h->entry_size = sizeof(jf__pub_entry);
    h->map_size = f->size;
    h->entries_off = sizeof *h;
    h->entries_capacity = h->entries_used = h->live_count = SLOTS;
    h->ring_off = (uint32_t)(sizeof *h + SLOTS * sizeof(jf__pub_entry));
    h->heap_off = h->ring_off;
    h->heap_capacity = h->heap_used = HEAP;
    strcpy((char *)f->mem + h->heap_off, "slot_name");
    for (size_t i = 0; i < SLOTS; i++) {
        jf__pub_entry *e = slot(f, i);
        e->flags = JF_PUB_LIVE;
        e->start = 0x10000 + 64 * i;
        e->size = 64;
        e->name_len = 9;
    }
}

/* Every slot changing for ever, each read 1 ms: the old reader read the
 * whole table again until its deadline and returned it with no region;
 * now the slots are read again alone and the deadline stops that inside
 * the read: refused, within about the deadline's worth of reads. */
static void the_deadline_is_checked_inside_a_read(void **state)
{
    (void)state;
    fake f = {0};
    make_table(&f);
    f.sleep_ns = 1000000;
    tr_limits lim = TR_LIMITS_DEFAULT;
    lim.seconds = 0.2;
    tr_snapshot s;
    char err[256];
    assert_int_equal(tr_read_table(fake_read, &f, 0, f.size, &lim, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "deadline"));
    assert_in_range(f.reads, 1, 400); /* 200 ms of 1 ms reads, with room for a slow machine */
    free(f.mem);
}

/* The whole read sees every slot changing; read alone a moment later, each
 * holds still: all are listed, none unproven. */
static void slots_torn_in_the_whole_read_are_proven_alone(void **state)
{
    (void)state;
    fake f = {0};
    make_table(&f);
    f.steady_after = 7; /* after the first whole read (6 reads) */
    tr_limits lim = TR_LIMITS_DEFAULT;
    lim.max_attempts = 1;
    tr_snapshot s;
    char err[256];
    assert_int_equal(tr_read_table(fake_read, &f, 0, f.size, &lim, &s, err, sizeof err), 0);
    assert_false(s.consistent);
    assert_int_equal(s.torn, SLOTS);
    assert_int_equal(s.reread, SLOTS);
    assert_int_equal(s.unproven, 0);
    assert_int_equal(s.n_live, SLOTS);
    assert_string_equal(s.live[SLOTS - 1].name, "slot_name");
    tr_snapshot_free(&s);
    free(f.mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_deadline_is_checked_inside_a_read),
        cmocka_unit_test(slots_torn_in_the_whole_read_are_proven_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
