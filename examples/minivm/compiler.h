/*
 * The compiler: syntax tree to bytecode. It resolves every name, so the
 * evaluator never looks anything up: variables become frame slots, calls
 * become function indexes with their argument count checked, and the builtins
 * argc() and arg(i) become opcodes.
 */
#ifndef MVM_COMPILER_H
#define MVM_COMPILER_H

#include "ast.h"
#include "diag.h"
#include "program.h"

/* The most locals (parameters included) one function may have. */
#define MVM_SLOTS_MAX 1024

/*
 * Compile `ast`. Every function's entry is set to mvm_eval_function.
 * Returns 0, or -1 with the first error in *diag (and *out empty).
 */
int mvm_compile(const struct mvm_ast *ast, struct mvm_diag *diag, struct mvm_program *out);

#endif
