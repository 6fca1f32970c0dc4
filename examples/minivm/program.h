/*
 * A compiled program: one bytecode function per interpreted function.
 *
 * The bytecode is for a stack machine. A function's frame is a window of the
 * VM's value stack: its arguments (pushed by the caller) in slots
 * [0, n_params), its other locals in [n_params, n_slots), then its operand
 * stack, at most max_stack deep (computed by the compiler).
 */
#ifndef MVM_PROGRAM_H
#define MVM_PROGRAM_H

#include "diag.h"

#include <stddef.h>
#include <stdint.h>

enum mvm_opcode {
    OP_INT,   /* push arg (a small constant) */
    OP_CONST, /* push consts[arg] */
    OP_LOAD,  /* push slot[arg] */
    OP_STORE, /* slot[arg] = pop */
    OP_POP,   /* drop the top value */
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_MOD,  /* b = pop, a = pop, push a op b; overflow is an error */
    OP_NEG,  /* push -pop; overflow is an error */
    OP_NOT,  /* push !pop (0 or 1) */
    OP_BOOL, /* push pop != 0 */
    OP_EQ,
    OP_NE,
    OP_LT,
    OP_LE,
    OP_GT,
    OP_GE,            /* b = pop, a = pop, push a op b (0 or 1) */
    OP_JUMP,          /* continue at code[arg] */
    OP_JUMP_IF_FALSE, /* if pop == 0 continue at code[arg] */
    OP_CALL,          /* call functions[arg] with its n_params top values; push its result */
    OP_RETURN,        /* return pop */
    OP_ARGC,          /* push the number of program arguments */
    OP_ARG,           /* push program argument pop (bounds-checked) */
    OP_PRINT_INT,     /* print the arg-th value from the top (1: the top); flag 1: a space first */
    OP_PRINT_STR,     /* print strings[arg]; flag 1: a space first */
    OP_PRINT_END,     /* print a newline, drop arg values */
};

struct mvm_insn {
    uint8_t op; /* enum mvm_opcode */
    uint8_t flag;
    uint16_t unused;
    int32_t arg;
};

struct mvm_vm;
struct mvm_function;

/* The eval function's type: trampolines created for it have the same type. */
typedef int64_t (*mvm_eval_fn)(struct mvm_vm *vm, const struct mvm_function *fn, int64_t *args);

struct mvm_function {
    /* How calls enter this function: the eval function itself, or a
     * trampoline that calls it (jit.c). Read on every call, so it comes first. */
    mvm_eval_fn entry;
    const struct mvm_insn *code;
    const int64_t *consts;
    uint32_t n_params;
    uint32_t n_slots;    /* params + locals */
    uint32_t frame_size; /* n_slots + max operand stack depth */
    uint32_t n_code;
    const struct mvm_pos *insn_pos; /* source position of each instruction */
    char *name;                     /* NUL-terminated */
    struct mvm_pos pos;             /* of the name in `fn NAME(` */
};

struct mvm_string {
    char *s;
    size_t len;
};

struct mvm_program {
    struct mvm_function *functions;
    uint32_t n_functions;
    uint32_t main_index;
    struct mvm_string *strings;
    uint32_t n_strings;
};

void mvm_program_free(struct mvm_program *prog);

#endif
