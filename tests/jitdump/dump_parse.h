/*
 * A deliberately small, independent jitdump reader for the tests: it reads
 * the file the way perf's reader does (records back to back, stop at a
 * header whose size is < 16 or that runs past the end) and exposes every
 * record. It shares no code with the library it checks.
 */
#ifndef JF_TEST_DUMP_PARSE_H
#define JF_TEST_DUMP_PARSE_H

#include <stddef.h>
#include <stdint.h>

typedef struct dump_record {
    uint32_t id;
    uint32_t size;
    uint64_t timestamp;
    size_t offset;       /* of the record header in the file */
    const uint8_t *body; /* after the 16-byte record header */
} dump_record;

typedef struct dump_file {
    uint8_t *data;
    size_t file_size;   /* bytes in the file */
    size_t records_end; /* where the record chain ends */
    int tail_is_zero;   /* every byte from records_end on is 0 */
    dump_record *records;
    size_t n_records;
} dump_file;

/* 0 on success; -1 if the file cannot be read or has no valid header. */
int dump_load(const char *path, dump_file *out);
void dump_free(dump_file *d);

uint32_t dump_u32(const uint8_t *p);
uint64_t dump_u64(const uint8_t *p);

/* CODE_LOAD accessors. */
typedef struct dump_load_info {
    uint32_t pid, tid;
    uint64_t vma, code_addr, code_size, code_index;
    const char *name;
    const uint8_t *code; /* code_size bytes */
} dump_load_info;

int dump_code_load(const dump_record *r, dump_load_info *out);

/* Count the records with id `id`. */
size_t dump_count(const dump_file *d, uint32_t id);

/* Run `jitframes check` on path (the tool built with the tests, if any).
 * Returns 0 if it passes, 1 if it reports a violation (its message in msg),
 * -1 if there is no tool or it cannot read jitdumps yet. */
int dump_tool_check(const char *path, char *msg, size_t cap);

#ifdef fail_msg
/* In a cmocka test: `jitframes check` accepts the dump at path. */
#define assert_dump_checks(path)                                               \
    do {                                                                       \
        char check_msg_[512];                                                  \
        int verdict_ = dump_tool_check((path), check_msg_, sizeof check_msg_); \
        if (verdict_ == 1)                                                     \
            fail_msg("jitframes check: %s", check_msg_);                       \
        assert_int_equal(verdict_, 0);                                         \
    } while (0)
#endif

/* Path of jit-<pid>.dump in dir (static buffer). */
const char *dump_path(const char *dir, long pid);

/* Record ids (perf's jitdump spec). */
enum { ID_LOAD = 0, ID_MOVE = 1, ID_DEBUG = 2, ID_CLOSE = 3, ID_UNWIND = 4 };

/* A fresh directory per test group: cmocka group setup/teardown. */
extern char test_dir[256];
int make_dir(void **state);
int remove_dir(void **state);

#endif
