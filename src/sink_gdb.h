/*
 * Internal knobs of the gdb sink, for benchmarks and tests only.
 */
#ifndef JF_SINK_GDB_H
#define JF_SINK_GDB_H

/* 1 (default): symfiles of similar size are merged in levels, keeping the
 * number of live symfiles logarithmic. 0: one symfile per registration call,
 * never merged (the naive layout, for comparison). Applies to later
 * registrations; set it before registering. */
void jf__gdb_set_merging(int enabled);

#endif
