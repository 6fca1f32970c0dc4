/*
 * The GDB JIT interface as a debugger sees it, for tests that walk the
 * library's __jit_debug_descriptor in-process (the layout is fixed by gdb's
 * documentation; the library's own definition is in src/sink_gdb.c).
 */
#ifndef JF_TEST_GDB_JIT_VIEW_H
#define JF_TEST_GDB_JIT_VIEW_H

#include <stdint.h>

struct jit_code_entry {
    struct jit_code_entry *next_entry;
    struct jit_code_entry *prev_entry;
    const char *symfile_addr;
    uint64_t symfile_size;
};

struct jit_descriptor {
    uint32_t version;
    uint32_t action_flag;
    struct jit_code_entry *relevant_entry;
    struct jit_code_entry *first_entry;
};

extern struct jit_descriptor __jit_debug_descriptor;

#endif
