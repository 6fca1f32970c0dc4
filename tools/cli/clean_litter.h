/*
 * What `jitframes clean`'s two halves share: the per-directory cleaner
 * (clean_cmd.c: perf maps, jitdumps, jitted-*.so) and perf's build-id cache
 * cleaner (clean_cache.c): the options, the proofs that a writer is gone
 * and that no running process holds a file, and the names' grammar.
 */
#ifndef JFT_CLEAN_LITTER_H
#define JFT_CLEAN_LITTER_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

enum { MAX_DIRS = 16 };

typedef struct clean_options {
    const char *dirs[MAX_DIRS];
    int n_dirs;
    const char *cache_dir; /* perf's build-id cache; NULL: none */
    int dry_run;
    long long older_than; /* seconds; -1: any age */
} clean_options;

typedef struct tally {
    unsigned long long removed, bytes, kept, failed;
} tally;

typedef struct file_id {
    dev_t dev;
    ino_t ino;
} file_id;

/* The files running processes have open or mapped. */
typedef struct held_files {
    file_id *ids;
    size_t n, cap;
} held_files;

typedef enum file_kind { CLEAN_MAP, CLEAN_DUMP, CLEAN_INJECTED } file_kind;

int jft_clean_is_held(const held_files *h, const struct stat *st);

/* Why the process `pid` that last wrote a file with status st is gone, or
 * NULL if it may still be running. */
const char *jft_clean_gone_reason(long pid, const struct stat *st);

/* A number in canonical decimal at s ("0", or digits without a leading
 * zero), at most max: its end, or NULL. */
const char *jft_clean_canonical_number(const char *s, unsigned long long max, unsigned long long *v);

/* The pid and kind of perf-<pid>.map, jit-<pid>.dump, jitted-<pid>-<n>.so:
 * 1, or 0 for any other name. */
int jft_clean_parse_name(const char *name, long *pid, file_kind *kind);

/* Remove the jitted-<pid>-<n>.so entries of gone processes from perf's
 * build-id cache o->cache_dir (clean_cache.c). */
void jft_clean_build_id_cache(const clean_options *o, const held_files *held, tally *t);

#endif
