/*
 * The GDB JIT interface as a debugger sees it, for tests that walk the
 * library's __jit_debug_descriptor in-process. The layout is the library's
 * own declaration (src/gdb_jit_abi.h), reached by its path so that targets
 * without src/ on their include path read the same one.
 */
#ifndef JF_TEST_GDB_JIT_VIEW_H
#define JF_TEST_GDB_JIT_VIEW_H

#include "../../src/gdb_jit_abi.h"

#endif
