/*
 * Helpers for tests that read /tmp/perf-<pid>.map: locate, read, remove and
 * validate a map strictly (the form docs/formats.md asks writers to produce).
 */
#ifndef JF_TEST_MAP_UTIL_H
#define JF_TEST_MAP_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jitframes.h"

/* "/tmp/perf-<pid>.map" into buf (at least 64 bytes). */
const char *map_path(char *buf, size_t cap, pid_t pid);

/* Remove the map of pid (no error if absent). */
void map_remove(pid_t pid);

/* The whole map of pid, NUL-terminated, malloc'd; NULL if it does not exist.
 * *len (if not NULL) gets its size in bytes. */
char *map_read(pid_t pid, size_t *len);

/* Number of entries in data if every line is strictly "<hex> <hex> <name>\n"
 * (lowercase hex, no 0x, no leading zeros, size > 0, printable name without
 * tabs) or blank (space the writer reserved and has not used); otherwise -1
 * with a description in why. */
long map_validate(const char *data, size_t len, char *why, size_t why_cap);

/* Remove the blank lines of data[0, len) in place (NUL-terminated): the
 * entries as a writer without reserved space would have written them.
 * Returns the new length. */
size_t map_strip_padding(char *data, size_t len);

/* The exact line a region produces: "<addr hex> <size hex> <name>\n". */
void map_format_line(char *buf, size_t cap, uintptr_t addr, size_t size, const char *name);

/* Does data contain exactly this line (at a line start)? */
int map_has_line(const char *data, uintptr_t addr, size_t size, const char *name);

/* How many lines of data name `name` exactly. */
long map_count_name(const char *data, const char *name);

/* A region with the current struct_size and these fields. */
struct jf_region test_region(const void *addr, size_t size, const char *name);

/* Wait for child pid at most `seconds`; a child still running then is
 * killed. Returns the wait status, or -1 after a kill. */
int test_wait_child(pid_t pid, int seconds);

/* Entries of a directory other than . and ..; -1 if it cannot be read. */
int test_dir_entries(const char *path);

/* jf_init with the environment ignored and exactly `sinks` enabled. */
int test_init_with(unsigned sinks);

/* Drop every jitframes reference and remove this process's map: the state
 * each test starts from and leaves behind. Returns 0 (cmocka fixture). */
int test_reset(void **state);

#endif
