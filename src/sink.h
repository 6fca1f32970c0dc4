/*
 * The interface between the registry and the sinks. The registry calls these
 * with its lock held, so a sink needs no locking of its own for state that
 * only these entry points touch. A sink never includes another sink.
 */
#ifndef JF_SINK_H
#define JF_SINK_H

#include "region.h"

typedef struct jf__sink_ops {
    const char *word; /* as in $JITFRAMES */
    unsigned bit;     /* JF_SINK_* */

    /* Start writing (open files...). Returns 0 or a JF_E* code with the
     * message set. `dump_dir` is the configured jitdump directory. */
    int (*start)(const char *dump_dir, jf_sink_stats *stats);

    /* Describe regions registered together (one group). Returns 0;
     * JF_ERANGE when it left out regions it cannot describe (too large for
     * its format): the others are written, the message names what was left
     * out, and the sink stays enabled; any other code: the sink failed, and
     * the registry disables it. */
    int (*add)(jf__live *const *regions, size_t n, jf_sink_stats *stats);

    /* Forget regions (optional: NULL when the sink cannot express removal). */
    int (*remove)(jf__live *const *regions, size_t n, jf_sink_stats *stats);

    /* Regions moved: each regions[i]->start is already its new address,
     * old_starts[i] its old one. Optional: NULL when the sink does it by
     * remove (at the old address) then add (at the new one), or, without
     * remove, by add alone. Returns as add does. */
    int (*move)(jf__live *const *regions, const uintptr_t *old_starts, size_t n, jf_sink_stats *stats);

    /* Stop: `final` is 1 at shutdown (write trailers), 0 when disabling.
     * `stats` are the sink's counters, to zero what it no longer holds. */
    void (*stop)(int final, jf_sink_stats *stats);

    /* In a child right after fork(): drop the parent's resources without
     * writing to them. start() and a replay follow. Must not allocate. */
    void (*forget_after_fork)(void);
} jf__sink_ops;

/* For sinks, asked with the registry's lock held (from add): whether a live
 * region's code starts in [lo, hi). */
int jf__live_region_starts_in(uintptr_t lo, uintptr_t hi);

extern const jf__sink_ops jf__perfmap_sink;
extern const jf__sink_ops jf__gdb_sink;
extern const jf__sink_ops jf__jitdump_sink;
extern const jf__sink_ops jf__unwind_sink;

#endif
