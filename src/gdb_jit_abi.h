/*
 * The GDB JIT interface's ABI, as the GDB manual lays it out (chapter "JIT
 * Compilation Interface", section "JIT Declarations"; lldb reads the same):
 * a list of in-memory symfiles hung off a descriptor that the debugger finds
 * by the symbol name __jit_debug_descriptor, and a function it keeps a
 * breakpoint on, __jit_debug_register_code. The field order and widths and
 * the two symbol names are the debugger's; only the C type names are ours.
 *
 * Defined in src/sink_gdb.c; tests walk the descriptor through this header
 * (tests/support/gdb_jit_view.h), so the layout is written once.
 */
#ifndef JF_GDB_JIT_ABI_H
#define JF_GDB_JIT_ABI_H

#include <stddef.h>
#include <stdint.h>

/* One symfile: an in-memory ELF object the debugger reads whole. */
typedef struct jf__jit_code_entry {
    struct jf__jit_code_entry *next_entry;
    struct jf__jit_code_entry *prev_entry; /* NULL for the first entry */
    const char *symfile_addr;
    uint64_t symfile_size;
} jf__jit_code_entry;

/* The list and what changed in it when the breakpoint was hit. */
typedef struct jf__jit_descriptor {
    uint32_t version;     /* 1, set statically: gdb may check it before any call */
    uint32_t action_flag; /* a jf__jit_action, 32 bits wide as gdb reads it */
    jf__jit_code_entry *relevant_entry;
    jf__jit_code_entry *first_entry;
} jf__jit_descriptor;

/* gdb's jit_actions_t: the values are fixed by the debugger. */
typedef enum jf__jit_action { JIT_NOACTION = 0, JIT_REGISTER_FN = 1, JIT_UNREGISTER_FN = 2 } jf__jit_action;

/* The layout gdb reads: pointers in order, then the 64-bit size. */
_Static_assert(offsetof(jf__jit_code_entry, symfile_size) == 3 * sizeof(void *), "jit_code_entry layout");
_Static_assert(offsetof(jf__jit_descriptor, relevant_entry) == 8, "jit_descriptor layout");
_Static_assert(sizeof(jf__jit_descriptor) == 8 + 2 * sizeof(void *), "jit_descriptor size");

/* Looked up by these exact names (not prefixed: the debugger's names). */
void __jit_debug_register_code(void);
extern jf__jit_descriptor __jit_debug_descriptor;

#endif
