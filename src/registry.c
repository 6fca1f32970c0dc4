/*
 * The registry: process-wide lifecycle, the table of live regions, and the
 * fan-out of every registration, unregistration and move to the enabled
 * sinks. One mutex guards all
 * of it and every sink call, which gives sinks atomic record groups for free
 * and makes fork handling simple (the lock is held across fork()).
 */
#define _GNU_SOURCE
#include "control.h"
#include "error.h"
#include "log.h"
#include "process_mark.h"
#include "published.h"
#include "registry.h"
#include "region.h"
#include "region_slab.h"
#include "region_index.h"
#include "sink.h"
#include "sys.h"

#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Indexed like jf_stats.sink[]: sink_table[i]->bit is 1u << i. */
static const jf__sink_ops *const sink_table[JF_SINK_COUNT] = {
    [JF_SINK_INDEX_PERFMAP] = &jf__perfmap_sink,
    [JF_SINK_INDEX_JITDUMP] = &jf__jitdump_sink,
    [JF_SINK_INDEX_GDB] = &jf__gdb_sink,
    [JF_SINK_INDEX_UNWIND] = &jf__unwind_sink,
};
_Static_assert(JF_SINK_PERFMAP == 1u << JF_SINK_INDEX_PERFMAP &&
                   JF_SINK_JITDUMP == 1u << JF_SINK_INDEX_JITDUMP && JF_SINK_GDB == 1u << JF_SINK_INDEX_GDB &&
                   JF_SINK_UNWIND == 1u << JF_SINK_INDEX_UNWIND,
               "a sink's bit is 1u << its index (fan_out_add walks the bits)");

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* Everything below is guarded by registry_lock. init_count is also read
 * without it (atomically) to fail fast before jf_init. */
static int init_count;
static unsigned enabled_sinks; /* started and not failed */
static unsigned failed_sinks;  /* disabled themselves after an error */
static jf__region_index live_regions;
static jf_sink_stats sink_stats[JF_SINK_COUNT];
static char dump_dir[PATH_MAX] = "/tmp";
static int table_wanted; /* the published table, unless JF_CONFIG_NO_TABLE */

/* Regions are handed to sinks in chunks of this many (stack-allocated, so a
 * replay in a child after fork allocates nothing). */
enum { REPLAY_CHUNK = 256 };

/* The bits one word of a sink list names (case-insensitive); 0: unknown. */
static unsigned sink_word_bits(const char *word, size_t len)
{
    if ((len == 3 && strncasecmp(word, "all", 3) == 0) || (len == 1 && word[0] == '1'))
        return JF_SINK_ALL;
    for (int i = 0; i < JF_SINK_COUNT; i++)
        if (strlen(sink_table[i]->word) == len && strncasecmp(word, sink_table[i]->word, len) == 0)
            return sink_table[i]->bit;
    return 0;
}

/* "perfmap, jitdump, gdb, unwind, all": the words a sink list may use. */
static void known_sink_words(char *out, size_t cap)
{
    size_t at = 0;
    for (int i = 0; i < JF_SINK_COUNT && at < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, "%s, ", sink_table[i]->word);
    if (at < cap)
        snprintf(out + at, cap - at, "all");
}

int jf_parse_sinks(const char *list, unsigned *sinks_out)
{
    jf__clear_error();
    if (!list || !sinks_out)
        return jf__fail(JF_EINVAL, "jf_parse_sinks: NULL argument");
    unsigned bits = 0;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        const char *word = p;
        size_t word_len = len;
        while (word_len > 0 && isspace((unsigned char)*word))
            word++, word_len--;
        while (word_len > 0 && isspace((unsigned char)word[word_len - 1]))
            word_len--;
        unsigned named = sink_word_bits(word, word_len);
        if (!named && word_len > 0) {
            char known[64];
            known_sink_words(known, sizeof known);
            return jf__fail(JF_EINVAL, "unknown sink '%.*s' (known: %s)",
                            (int)(word_len > 64 ? 64 : word_len), word, known);
        }
        bits |= named;
        p += len;
        if (*p == ',')
            p++;
    }
    *sinks_out = bits;
    return 0;
}

const char *jf_sink_name(unsigned sink)
{
    for (int i = 0; i < JF_SINK_COUNT; i++)
        if (sink_table[i]->bit == sink)
            return sink_table[i]->word;
    return NULL;
}

/* A sink failed: disable it, count it and say so once. Keeps the sink's
 * message as the thread's last error. */
static void sink_failed(int i, int rc)
{
    sink_stats[i].errors++;
    if (!(enabled_sinks & sink_table[i]->bit))
        return;
    enabled_sinks &= ~sink_table[i]->bit;
    failed_sinks |= sink_table[i]->bit;
    sink_table[i]->stop(0, &sink_stats[i]);
    jf__log(JF_LOG_ERROR, "%s sink disabled: %s (%s)", sink_table[i]->word, jf_last_error(), jf_strerror(rc));
}

/* Hand a group to every enabled sink in `mask`; returns the first error. */
static int fan_out_add(unsigned mask, jf__live *const *regions, size_t n)
{
    int first_error = 0;
    /* The enabled sinks' bits in index order (none in standby): no visit of
     * the others. A sink only ever disables itself. */
    for (unsigned bits = mask & enabled_sinks; bits; bits &= bits - 1) {
        int i = __builtin_ctz(bits);
        int rc = sink_table[i]->add(regions, n, &sink_stats[i]);
        if (rc == JF_ERANGE) { /* regions left out; the sink goes on */
            sink_stats[i].errors++;
            jf__log(JF_LOG_WARNING, "%s", jf_last_error());
        } else if (rc) {
            sink_failed(i, rc);
        }
        if (rc && !first_error)
            first_error = rc;
    }
    return first_error;
}

typedef struct replay_state {
    unsigned mask;
    size_t used;
    int first_error;
    jf__live *chunk[REPLAY_CHUNK];
} replay_state;

static int replay_visit(jf__live *r, void *ctx)
{
    replay_state *s = ctx;
    s->chunk[s->used++] = r;
    if (s->used == REPLAY_CHUNK) {
        int rc = fan_out_add(s->mask, s->chunk, s->used);
        if (rc && !s->first_error)
            s->first_error = rc;
        s->used = 0;
    }
    return 0;
}

/* Send every live region to the sinks in `mask` (late enabling, fork). */
static int replay_live_regions(unsigned mask)
{
    replay_state s = {.mask = mask};
    jf__region_index_foreach(&live_regions, replay_visit, &s);
    if (s.used) {
        int rc = fan_out_add(mask, s.chunk, s.used);
        if (rc && !s.first_error)
            s.first_error = rc;
    }
    return s.first_error;
}

static int publish_visit(jf__live *r, void *ctx)
{
    (void)ctx;
    jf__pub_add(&r, 1);
    return 0;
}

/* A fresh published table holding every live region (a forked child). */
static void publish_live_regions(void)
{
    jf__pub_start();
    jf__region_index_foreach(&live_regions, publish_visit, NULL);
}

/* JITFRAMES_LOG=info: where a sink that just started writes. */
static void log_sink_started(int i)
{
    switch (sink_table[i]->bit) {
    case JF_SINK_PERFMAP: jf__log(JF_LOG_INFO, "perfmap sink on: /tmp/perf-%ld.map", (long)getpid()); break;
    case JF_SINK_JITDUMP:
        jf__log(JF_LOG_INFO, "jitdump sink on: %s/jit-%ld.dump", dump_dir, (long)getpid());
        break;
    case JF_SINK_GDB:
        jf__log(JF_LOG_INFO, "gdb sink on: the GDB JIT interface (__jit_debug_descriptor)");
        break;
    default: jf__log(JF_LOG_INFO, "%s sink on", sink_table[i]->word);
    }
}

static int start_sinks(unsigned sinks)
{
    int first_error = 0;
    unsigned started = 0;
    for (int i = 0; i < JF_SINK_COUNT; i++) {
        unsigned bit = sink_table[i]->bit;
        if (!(sinks & bit) || (enabled_sinks & bit))
            continue;
        int rc = sink_table[i]->start(dump_dir, &sink_stats[i]);
        if (rc) {
            sink_stats[i].errors++;
            failed_sinks |= bit;
            jf__fail(rc, "the %s sink could not start: %s (%s)", sink_table[i]->word, jf_last_error(),
                     jf_strerror(rc));
            jf__log(JF_LOG_ERROR, "%s", jf_last_error());
            if (!first_error)
                first_error = rc;
            continue;
        }
        enabled_sinks |= bit;
        failed_sinks &= ~bit;
        started |= bit;
        log_sink_started(i);
    }
    int rc = started ? replay_live_regions(started) : 0;
    return first_error ? first_error : rc;
}

/* The registry lock, then the log lock (the order every logging path
 * takes them) and the record slab's, are held across fork() so the child's
 * copies are free. */
static void atfork_prepare(void)
{
    jf__control_lock_for_fork();
    pthread_mutex_lock(&registry_lock);
    jf__log_lock_for_fork();
    jf__slab_lock_for_fork();
}

static void atfork_parent(void)
{
    jf__slab_unlock_after_fork();
    jf__log_unlock_after_fork();
    pthread_mutex_unlock(&registry_lock);
    jf__control_unlock_after_fork_parent();
}

/* The child has a new pid: each sink drops the parent's files without
 * touching them and starts its own, with the regions the child inherited. */
static void atfork_child(void)
{
    jf__process_mark();
    jf__slab_unlock_after_fork();
    jf__log_unlock_after_fork();
    jf__pub_forget_after_fork();
    if (init_count > 0 && table_wanted)
        publish_live_regions();
    unsigned running = enabled_sinks;
    for (int i = 0; i < JF_SINK_COUNT; i++)
        if (running & sink_table[i]->bit)
            sink_table[i]->forget_after_fork();
    enabled_sinks = 0;
    if (init_count > 0 && running)
        start_sinks(running);
    pthread_mutex_unlock(&registry_lock);
    jf__control_restart_after_fork_child();
}

static void install_atfork(void)
{
    jf__process_mark();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* A child made by a raw fork or clone system call ran no atfork handler:
 * its table is not mapped and its sinks hold the parent's files. The first
 * call in it does the handlers' work, as fork() would have (the check
 * again under the locks: another thread of the child may have done it). */
static void adopt_unmarked_child(void)
{
    atfork_prepare();
    if (jf__process_unmarked())
        atfork_child();
    else
        atfork_parent();
}

/* Every entry point takes the registry lock through here. */
static inline void lock_registry(void)
{
    if (__builtin_expect(jf__process_unmarked(), 0))
        adopt_unmarked_child();
    pthread_mutex_lock(&registry_lock);
}

/* $JITFRAMES_CONTROL: "1" asks for the control channel; "0" or empty not;
 * anything else is logged and ignored (the host starts as it would without). */
static int control_from_env(void)
{
    const char *v = jf__getenv("JITFRAMES_CONTROL");
    if (!v || !*v || strcmp(v, "0") == 0)
        return 0;
    if (strcmp(v, "1") == 0)
        return 1;
    jf__log(JF_LOG_WARNING, "JITFRAMES_CONTROL=%.64s is not 1 or 0: no control channel", v);
    return 0;
}

/* First initialisation: read the environment. Returns the sinks it asks
 * for, and whether it asks for the control channel. */
static int configure_from_env(const jf_config *config, unsigned *sinks, int *control)
{
    *sinks = 0;
    if (config && (config->flags & JF_CONFIG_IGNORE_ENV))
        return 0;
    jf__log_configure_from_env();
    *control |= control_from_env();
    const char *list = jf__getenv("JITFRAMES");
    if (list && jf_parse_sinks(list, sinks) != 0) {
        jf__fail(JF_EINVAL, "JITFRAMES=%s: %s", list, jf_last_error());
        jf__log(JF_LOG_WARNING, "%s; jitframes is not initialised", jf_last_error());
        return JF_EINVAL;
    }
    const char *dir = jf__getenv("JITFRAMES_DIR");
    if (dir && *dir && snprintf(dump_dir, sizeof dump_dir, "%s", dir) >= (int)sizeof dump_dir)
        return jf__fail(JF_EINVAL, "JITFRAMES_DIR is too long");
    return 0;
}

/* After a successful jf_init (rc 0 or JF_ESINK): the control channel, if
 * asked for; its failure is the caller's JF_ESINK. */
static int start_control(int wanted, int rc)
{
    if (!wanted || (rc != 0 && rc != JF_ESINK))
        return rc;
    char sinks_failure[sizeof "initialised, but " + 512];
    snprintf(sinks_failure, sizeof sinks_failure, "%s", rc ? jf_last_error() : "");
    if (jf__control_start() == 0) {
        if (rc)
            jf__fail(rc, "%s", sinks_failure);
        return rc;
    }
    if (rc)
        return jf__fail(JF_ESINK, "%s; %s", sinks_failure, jf_last_error());
    return jf__fail(JF_ESINK, "initialised, but %s", jf_last_error());
}

int jf_init(const jf_config *config)
{
    jf__clear_error();
    if (config && config->struct_size < offsetof(jf_config, dump_dir) + sizeof(char *))
        return jf__fail(JF_EINVAL, "jf_config.struct_size is %zu; set it to sizeof(jf_config)",
                        config->struct_size);
    const unsigned known_flags = JF_CONFIG_IGNORE_ENV | JF_CONFIG_CONTROL | JF_CONFIG_NO_TABLE;
    if (config && (config->flags & ~known_flags))
        return jf__fail(JF_EINVAL, "jf_config.flags has unknown bits 0x%x", config->flags & ~known_flags);
    unsigned extra = config ? config->sinks : 0;
    if (extra & ~JF_SINK_ALL)
        return jf__fail(JF_EINVAL, "jf_config.sinks has unknown bits 0x%x", extra & ~JF_SINK_ALL);
    pthread_once(&atfork_once, install_atfork);

    int control = config && (config->flags & JF_CONFIG_CONTROL);
    lock_registry();
    int rc = 0;
    if (init_count == 0) {
        /* A failed first init must not leave its directory behind. */
        snprintf(dump_dir, sizeof dump_dir, "/tmp");
        unsigned env_sinks;
        rc = configure_from_env(config, &env_sinks, &control);
        if (rc == 0 && config && config->dump_dir &&
            snprintf(dump_dir, sizeof dump_dir, "%s", config->dump_dir) >= (int)sizeof dump_dir)
            rc = jf__fail(JF_EINVAL, "jf_config.dump_dir is too long");
        extra |= env_sinks;
    }
    if (rc == 0) {
        if (init_count == INT_MAX)
            rc = jf__fail(JF_ERANGE, "jf_init called too many times");
        else
            __atomic_store_n(&init_count, init_count + 1, __ATOMIC_RELAXED);
        if (rc == 0 && init_count == 1) {
            table_wanted = !(config && (config->flags & JF_CONFIG_NO_TABLE));
            if (table_wanted)
                jf__pub_start(); /* never fails the host: a failure is kept for jf_published_table */
        }
    }
    if (rc == 0 && start_sinks(extra) != 0)
        rc = jf__fail(JF_ESINK, "initialised, but %s", jf_last_error());
    pthread_mutex_unlock(&registry_lock);
    return start_control(control, rc);
}

static int free_visit(jf__live *r, void *ctx)
{
    (void)ctx;
    jf__live_free(r);
    return 0;
}

int jf_shutdown(void)
{
    jf__clear_error();
    lock_registry();
    if (init_count == 0) {
        pthread_mutex_unlock(&registry_lock);
        return jf__fail(JF_ENOTINIT, "jf_shutdown without a matching jf_init");
    }
    __atomic_store_n(&init_count, init_count - 1, __ATOMIC_RELAXED);
    if (init_count == 0) {
        for (int i = 0; i < JF_SINK_COUNT; i++)
            if (enabled_sinks & sink_table[i]->bit)
                sink_table[i]->stop(1, &sink_stats[i]);
        enabled_sinks = failed_sinks = 0;
        jf__pub_stop();
        jf__region_index_foreach(&live_regions, free_visit, NULL);
        jf__region_index_clear(&live_regions);
        memset(sink_stats, 0, sizeof sink_stats);
        snprintf(dump_dir, sizeof dump_dir, "/tmp");
    }
    pthread_mutex_unlock(&registry_lock);
    jf__control_stop_if_unused();
    return 0;
}

int jf_published_table(const void **addr, size_t *size)
{
    jf__clear_error();
    lock_registry();
    int rc = jf__pub_status(addr, size);
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

int jf__initialised(void)
{
    return __atomic_load_n(&init_count, __ATOMIC_RELAXED) > 0;
}

void jf__dump_dir(char *out, size_t cap)
{
    lock_registry();
    snprintf(out, cap, "%s", dump_dir);
    pthread_mutex_unlock(&registry_lock);
}

int jf_enable(unsigned sinks)
{
    jf__clear_error();
    if (sinks & ~JF_SINK_ALL)
        return jf__fail(JF_EINVAL, "jf_enable: unknown sink bits 0x%x", sinks & ~JF_SINK_ALL);
    lock_registry();
    int rc = init_count ? start_sinks(sinks) : jf__fail(JF_ENOTINIT, "jf_enable before jf_init");
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

int jf_disable(unsigned sinks)
{
    jf__clear_error();
    if (sinks & ~JF_SINK_ALL)
        return jf__fail(JF_EINVAL, "jf_disable: unknown sink bits 0x%x", sinks & ~JF_SINK_ALL);
    lock_registry();
    int rc = 0;
    if (!init_count) {
        rc = jf__fail(JF_ENOTINIT, "jf_disable before jf_init");
    } else {
        for (int i = 0; i < JF_SINK_COUNT; i++) {
            if (sinks & enabled_sinks & sink_table[i]->bit) {
                sink_table[i]->stop(0, &sink_stats[i]);
                jf__log(JF_LOG_INFO, "%s sink off (jf_disable)", sink_table[i]->word);
            }
        }
        enabled_sinks &= ~sinks;
    }
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

unsigned jf_enabled_sinks(void)
{
    jf__clear_error();
    lock_registry();
    unsigned bits = init_count ? enabled_sinks : 0;
    pthread_mutex_unlock(&registry_lock);
    return bits;
}

/* Validate and copy a caller's batch (no lock held). */
static int make_live_batch(const jf_region *regions, size_t n, jf__live **out)
{
    for (size_t i = 0; i < n; i++) {
        jf_region r;
        int rc = jf__region_read(regions, i, &r);
        if (rc == 0)
            rc = jf__region_validate(&r, i);
        if (rc == 0 && !(out[i] = jf__live_new(&r)))
            rc = jf__fail(JF_ENOMEM, "region %zu: %s", i, jf_last_error());
        if (rc) {
            while (i > 0)
                jf__live_free(out[--i]);
            return rc;
        }
    }
    return 0;
}

int jf__live_region_starts_in(uintptr_t lo, uintptr_t hi)
{
    return jf__region_index_any_start_in(&live_regions, lo, hi);
}

/* Insert a batch into the table, all or nothing. Lock held. */
static int insert_batch(jf__live **lives, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = jf__region_index_insert(&live_regions, lives[i]);
        if (rc != 0) {
            for (size_t k = 0; k < i; k++)
                jf__region_index_remove(&live_regions, lives[k]->start);
            if (rc == JF_ENOMEM)
                return jf__fail(JF_ENOMEM, "out of memory growing the region index");
            return jf__fail(JF_EEXIST, "region %zu (%s): a live region already starts at %p", i,
                            lives[i]->name, (void *)lives[i]->start);
        }
    }
    return 0;
}

int jf__register_batch(const jf_region *regions, size_t n, int *inserted_out)
{
    jf__clear_error();
    if (inserted_out)
        *inserted_out = 0;
    if (n == 0)
        return 0;
    if (!regions)
        return jf__fail(JF_EINVAL, "jf_register_batch: regions is NULL");
    if (n > SIZE_MAX / sizeof(jf__live *))
        return jf__fail(JF_EINVAL, "jf_register_batch: too many regions");
    jf__live *one;
    jf__live **lives = n == 1 ? &one : malloc(n * sizeof *lives);
    if (!lives)
        return jf__fail(JF_ENOMEM, "out of memory for a batch of %zu regions", n);

    /* One lock round trip per call: the early checks need none. */
    int ready = __atomic_load_n(&init_count, __ATOMIC_RELAXED) > 0;
    int rc = ready ? make_live_batch(regions, n, lives) : jf__fail(JF_ENOTINIT, "jf_register before jf_init");
    if (rc == 0) {
        int inserted = 0;
        lock_registry();
        if (!init_count)
            rc = jf__fail(JF_ENOTINIT, "jitframes was shut down during registration");
        else if ((rc = insert_batch(lives, n)) == 0) {
            inserted = 1;
            jf__pub_add(lives, n);
            rc = fan_out_add(JF_SINK_ALL, lives, n);
        }
        pthread_mutex_unlock(&registry_lock);
        if (!inserted)
            for (size_t i = 0; i < n; i++)
                jf__live_free(lives[i]);
        if (inserted_out)
            *inserted_out = inserted;
    }
    if (lives != &one)
        free(lives);
    return rc;
}

int jf_register_batch(const jf_region *regions, size_t n)
{
    return jf__register_batch(regions, n, NULL);
}

int jf_register(const jf_region *region)
{
    if (!region) {
        jf__clear_error();
        return jf__fail(JF_EINVAL, "jf_register: region is NULL");
    }
    return jf_register_batch(region, 1);
}

/* Tell every enabled sink in `mask` that can express removal that regions
 * go; returns the first error (a failing sink disables itself). */
static int fan_out_remove(unsigned mask, jf__live *const *regions, size_t n)
{
    int first_error = 0;
    for (unsigned bits = mask & enabled_sinks; bits; bits &= bits - 1) {
        int i = __builtin_ctz(bits);
        if (!sink_table[i]->remove)
            continue;
        int rc = sink_table[i]->remove(regions, n, &sink_stats[i]);
        if (rc) {
            sink_failed(i, rc);
            if (!first_error)
                first_error = rc;
        }
    }
    return first_error;
}

int jf_unregister(const void *addr)
{
    jf__clear_error();
    lock_registry();
    if (!init_count) {
        pthread_mutex_unlock(&registry_lock);
        return jf__fail(JF_ENOTINIT, "jf_unregister before jf_init");
    }
    jf__live *r = jf__region_index_remove(&live_regions, (uintptr_t)addr);
    if (r)
        jf__pub_remove(&r, 1);
    int rc = r ? fan_out_remove(JF_SINK_ALL, &r, 1)
               : jf__fail(JF_ENOENT, "jf_unregister: no live region starts at %p", addr);
    pthread_mutex_unlock(&registry_lock);
    jf__live_free(r);
    return rc;
}

/* ---- Moving regions ------------------------------------------------------ */

/* One move of a batch: the region, where it was and where it goes, and the
 * caller's index for messages. */
typedef struct planned_move {
    jf__live *region;
    uintptr_t from, to;
    size_t index;
} planned_move;

static int by_from(const void *a, const void *b)
{
    uintptr_t x = ((const planned_move *)a)->from, y = ((const planned_move *)b)->from;
    return (x > y) - (x < y);
}

static int by_to(const void *a, const void *b)
{
    uintptr_t x = ((const planned_move *)a)->to, y = ((const planned_move *)b)->to;
    return (x > y) - (x < y);
}

/* Find each move's region and check what needs no other region; then drop
 * the moves to where a region already is. Returns 0 with *n_out planned. */
static int plan_moves(const jf_region_move *moves, size_t n, planned_move *plan, size_t *n_out)
{
    for (size_t i = 0; i < n; i++) {
        uintptr_t from = (uintptr_t)moves[i].from, to = (uintptr_t)moves[i].to;
        jf__live *r = jf__region_index_find(&live_regions, from);
        if (!r)
            return jf__fail(JF_ENOENT, "move %zu: no live region starts at %p", i, moves[i].from);
        if (!to || to + r->size < to)
            return jf__fail(JF_EINVAL, "move %zu (%s): cannot move %zu bytes to %p", i, r->name, r->size,
                            moves[i].to);
        plan[i] = (planned_move){r, from, to, i};
    }
    qsort(plan, n, sizeof *plan, by_from);
    for (size_t i = 1; i < n; i++)
        if (plan[i].from == plan[i - 1].from)
            return jf__fail(JF_EINVAL, "move %zu (%s): the region is moved twice (also move %zu)",
                            plan[i].index, plan[i].region->name, plan[i - 1].index);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (plan[i].from != plan[i].to)
            plan[k++] = plan[i];
    *n_out = k;
    return 0;
}

/* With the moved regions detached: does any destination meet a region that
 * stays, or another destination? */
static int check_destinations(planned_move *plan, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const planned_move *m = &plan[i];
        jf__live *other = jf__region_index_overlapping(&live_regions, m->to, m->to + m->region->size);
        if (other)
            return jf__fail(JF_EEXIST, "move %zu (%s): [%p, +%zu) would overlap live region %s at %p",
                            m->index, m->region->name, (void *)m->to, m->region->size, other->name,
                            (void *)other->start);
    }
    qsort(plan, n, sizeof *plan, by_to);
    for (size_t i = 1; i < n; i++)
        if (plan[i - 1].to + plan[i - 1].region->size > plan[i].to)
            return jf__fail(JF_EEXIST, "move %zu (%s) and move %zu (%s) would overlap at %p",
                            plan[i - 1].index, plan[i - 1].region->name, plan[i].index, plan[i].region->name,
                            (void *)plan[i].to);
    return 0;
}

/* Put detached regions back at their own start: cannot fail (their pages
 * were kept). */
static void reattach(planned_move *plan, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (jf__region_index_insert(&live_regions, plan[i].region) != 0)
            (void)jf__internal("a detached region could not be put back");
}

static void set_starts(planned_move *plan, size_t n, int to_new)
{
    for (size_t i = 0; i < n; i++)
        plan[i].region->start = to_new ? plan[i].to : plan[i].from;
}

/* Move the regions in the table, all or nothing. Lock held. */
static int move_in_table(planned_move *plan, size_t n)
{
    for (size_t i = 0; i < n; i++)
        jf__region_index_detach(&live_regions, plan[i].from);
    int rc = check_destinations(plan, n);
    size_t inserted = 0;
    if (rc == 0) {
        set_starts(plan, n, 1);
        while (inserted < n && jf__region_index_insert(&live_regions, plan[inserted].region) == 0)
            inserted++;
        if (inserted < n) {
            rc = jf__fail(JF_ENOMEM, "out of memory growing the region index");
            for (size_t i = 0; i < inserted; i++)
                jf__region_index_detach(&live_regions, plan[i].to);
            set_starts(plan, n, 0);
        }
    }
    if (rc)
        reattach(plan, n);
    for (size_t i = 0; i < n; i++)
        jf__region_index_release_empty(&live_regions, rc ? plan[i].to : plan[i].from);
    return rc;
}

/* Tell the sinks: those without a move of their own remove the regions at
 * their old start and add them at the new one. Lock held. */
static int move_in_sinks(planned_move *plan, size_t n, jf__live **regions, uintptr_t *old_starts)
{
    unsigned by_parts = 0;
    for (int i = 0; i < JF_SINK_COUNT; i++)
        if (!sink_table[i]->move)
            by_parts |= sink_table[i]->bit;
    for (size_t i = 0; i < n; i++) {
        regions[i] = plan[i].region;
        old_starts[i] = plan[i].from;
    }
    set_starts(plan, n, 0);
    int rc = fan_out_remove(by_parts, regions, n);
    set_starts(plan, n, 1);
    int add_rc = fan_out_add(by_parts, regions, n);
    rc = rc ? rc : add_rc;
    for (int i = 0; i < JF_SINK_COUNT; i++) {
        if (!(enabled_sinks & sink_table[i]->bit) || !sink_table[i]->move)
            continue;
        int sink_rc = sink_table[i]->move(regions, old_starts, n, &sink_stats[i]);
        if (sink_rc)
            sink_failed(i, sink_rc);
        rc = rc ? rc : sink_rc;
    }
    return rc;
}

int jf_move_batch(const jf_region_move *moves, size_t n)
{
    jf__clear_error();
    if (n == 0)
        return 0;
    if (!moves)
        return jf__fail(JF_EINVAL, "jf_move_batch: moves is NULL");
    size_t item = sizeof(planned_move) + sizeof(jf__live *) + sizeof(uintptr_t);
    if (n > SIZE_MAX / item)
        return jf__fail(JF_EINVAL, "jf_move_batch: too many moves");
    planned_move *plan = malloc(n * item);
    if (!plan)
        return jf__fail(JF_ENOMEM, "out of memory for a batch of %zu moves", n);
    jf__live **regions = (jf__live **)(plan + n);
    uintptr_t *old_starts = (uintptr_t *)(regions + n);
    size_t planned = 0;
    lock_registry();
    int rc = init_count ? plan_moves(moves, n, plan, &planned)
                        : jf__fail(JF_ENOTINIT, "jf_move before jf_init");
    if (rc == 0 && planned)
        rc = move_in_table(plan, planned);
    if (rc == 0 && planned) {
        rc = move_in_sinks(plan, planned, regions, old_starts);
        jf__pub_move(regions, old_starts, planned);
    }
    pthread_mutex_unlock(&registry_lock);
    free(plan);
    return rc;
}

int jf_move(const void *old_addr, const void *new_addr)
{
    jf_region_move one = {old_addr, new_addr};
    return jf_move_batch(&one, 1);
}

int jf_stats(struct jf_stats *stats)
{
    jf__clear_error();
    if (!stats || stats->struct_size < offsetof(struct jf_stats, live_regions) + sizeof(uint64_t))
        return jf__fail(JF_EINVAL, "jf_stats: NULL, or struct_size not set (use JF_STATS_INIT)");
    struct jf_stats all = JF_STATS_INIT;
    lock_registry();
    all.live_regions = live_regions.count;
    all.table_dropped = jf__pub_dropped();
    for (int i = 0; i < JF_SINK_COUNT; i++) {
        all.sink[i] = sink_stats[i];
        all.sink[i].enabled = (enabled_sinks >> i) & 1;
        all.sink[i].failed = (failed_sinks >> i) & 1;
    }
    pthread_mutex_unlock(&registry_lock);
    /* A caller compiled against another version gets the fields both know. */
    size_t size = stats->struct_size < sizeof all ? stats->struct_size : sizeof all;
    memcpy((char *)stats + sizeof all.struct_size, (char *)&all + sizeof all.struct_size,
           size - sizeof all.struct_size);
    return 0;
}
