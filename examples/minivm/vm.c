/* The evaluator: a switch-dispatched stack machine, one C call per interpreted call. */
#include "vm.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define MVM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MVM_COLD __attribute__((cold, noinline))
#else
#define MVM_UNLIKELY(x) (x)
#define MVM_COLD
#endif

/* Value stack cap: 16 Mi slots (128 MiB of address space, touched only as used). */
#define MVM_STACK_SLOTS_MAX ((size_t)1 << 24)

int mvm_vm_init(struct mvm_vm *vm, const struct mvm_program *prog, uint32_t max_depth, struct mvm_diag *diag,
                FILE *out, const int64_t *argv, uint32_t argc)
{
    memset(vm, 0, sizeof *vm);
    uint32_t largest = 1;
    for (uint32_t i = 0; i < prog->n_functions; i++)
        if (prog->functions[i].frame_size > largest)
            largest = prog->functions[i].frame_size;
    /* Frames of huge functions may not fit max_depth times: the limit drops to what fits. */
    if ((size_t)max_depth > MVM_STACK_SLOTS_MAX / largest)
        max_depth = (uint32_t)(MVM_STACK_SLOTS_MAX / largest);
    if (max_depth == 0)
        max_depth = 1;
    size_t slots = (size_t)max_depth * largest;
    vm->stack = calloc(slots, sizeof *vm->stack);
    if (!vm->stack)
        return -1;
    vm->prog = prog;
    vm->max_depth = max_depth;
    vm->diag = diag;
    vm->out = out;
    vm->argv = argv;
    vm->argc = argc;
    return 0;
}

void mvm_vm_free(struct mvm_vm *vm)
{
    free(vm->stack);
    vm->stack = NULL;
}

/* ---- runtime errors (cold paths) ---------------------------------------- */

static struct mvm_pos insn_pos(const struct mvm_function *fn, const struct mvm_insn *insn)
{
    return fn->insn_pos[insn - fn->code];
}

static MVM_COLD int64_t fail_arith(struct mvm_vm *vm, const struct mvm_function *fn,
                                   const struct mvm_insn *insn, int64_t a, int64_t b)
{
    static const char *const symbols[] = {
        [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/", [OP_MOD] = "%"};
    if ((insn->op == OP_DIV || insn->op == OP_MOD) && b == 0)
        mvm_diag_runtime(vm->diag, insn_pos(fn, insn), "division by zero: %" PRId64 " %s 0", a,
                         symbols[insn->op]);
    else if (insn->op == OP_NEG)
        mvm_diag_runtime(vm->diag, insn_pos(fn, insn), "integer overflow: -(%" PRId64 ")", a);
    else
        mvm_diag_runtime(vm->diag, insn_pos(fn, insn), "integer overflow: %" PRId64 " %s %" PRId64, a,
                         symbols[insn->op], b);
    vm->failed = 1;
    return 0;
}

static MVM_COLD int64_t fail_call(struct mvm_vm *vm, const struct mvm_function *fn,
                                  const struct mvm_insn *insn, const struct mvm_function *callee)
{
    mvm_diag_runtime(vm->diag, insn_pos(fn, insn), "call depth limit (%u) exceeded calling '%s'",
                     vm->max_depth, callee->name);
    vm->failed = 1;
    return 0;
}

/* A callee failed: add this frame to the trace and keep unwinding. */
static MVM_COLD int64_t unwind_frame(struct mvm_vm *vm, const struct mvm_function *fn,
                                     const struct mvm_insn *insn)
{
    mvm_diag_add_frame(vm->diag, fn->name, insn_pos(fn, insn));
    return 0;
}

static MVM_COLD int64_t fail_arg(struct mvm_vm *vm, const struct mvm_function *fn,
                                 const struct mvm_insn *insn, int64_t index)
{
    mvm_diag_runtime(vm->diag, insn_pos(fn, insn), "arg(%" PRId64 "): %u program argument%s given", index,
                     vm->argc, vm->argc == 1 ? "" : "s");
    vm->failed = 1;
    return 0;
}

static void print_value(struct mvm_vm *vm, const struct mvm_insn *insn, int64_t v)
{
    fprintf(vm->out, insn->flag ? " %" PRId64 : "%" PRId64, v);
}

static void print_string(struct mvm_vm *vm, const struct mvm_insn *insn)
{
    const struct mvm_string *s = &vm->prog->strings[insn->arg];
    if (insn->flag)
        fputc(' ', vm->out);
    fwrite(s->s, 1, s->len, vm->out);
}

/* ---- the loop ------------------------------------------------------------ */

/* Pop b, replace a by `value` (binary operators). */
#define MVM_BINARY_RESULT(value) (sp[-2] = (value), sp--)

/*
 * Invariants (established by the compiler): the operand stack never exceeds
 * fn->frame_size - fn->n_slots, jump targets are inside fn->code, and every
 * path ends in OP_RETURN. mvm_vm_init sized the value stack so that
 * max_depth frames of the largest function fit: the depth check is the only
 * check a call needs.
 */
int64_t mvm_eval_function(struct mvm_vm *vm, const struct mvm_function *fn, int64_t *args)
{
    const struct mvm_function *functions = vm->prog->functions;
    const struct mvm_insn *ip = fn->code;
    int64_t *sp = args + fn->n_slots;
    int64_t r;
    for (uint32_t i = fn->n_params; i < fn->n_slots; i++)
        args[i] = 0;
    for (;;) {
        const struct mvm_insn *insn = ip++;
        switch ((enum mvm_opcode)insn->op) {
        case OP_INT: *sp++ = insn->arg; break;
        case OP_CONST: *sp++ = fn->consts[insn->arg]; break;
        case OP_LOAD: *sp++ = args[insn->arg]; break;
        case OP_STORE: args[insn->arg] = *--sp; break;
        case OP_POP: sp--; break;
        case OP_ADD:
            if (MVM_UNLIKELY(__builtin_add_overflow(sp[-2], sp[-1], &r)))
                return fail_arith(vm, fn, insn, sp[-2], sp[-1]);
            MVM_BINARY_RESULT(r);
            break;
        case OP_SUB:
            if (MVM_UNLIKELY(__builtin_sub_overflow(sp[-2], sp[-1], &r)))
                return fail_arith(vm, fn, insn, sp[-2], sp[-1]);
            MVM_BINARY_RESULT(r);
            break;
        case OP_MUL:
            if (MVM_UNLIKELY(__builtin_mul_overflow(sp[-2], sp[-1], &r)))
                return fail_arith(vm, fn, insn, sp[-2], sp[-1]);
            MVM_BINARY_RESULT(r);
            break;
        case OP_DIV:
        case OP_MOD:
            if (MVM_UNLIKELY(sp[-1] == 0 || (sp[-2] == INT64_MIN && sp[-1] == -1)))
                return fail_arith(vm, fn, insn, sp[-2], sp[-1]);
            MVM_BINARY_RESULT(insn->op == OP_DIV ? sp[-2] / sp[-1] : sp[-2] % sp[-1]);
            break;
        case OP_NEG:
            if (MVM_UNLIKELY(sp[-1] == INT64_MIN))
                return fail_arith(vm, fn, insn, sp[-1], 0);
            sp[-1] = -sp[-1];
            break;
        case OP_NOT: sp[-1] = !sp[-1]; break;
        case OP_BOOL: sp[-1] = sp[-1] != 0; break;
        case OP_EQ: MVM_BINARY_RESULT(sp[-2] == sp[-1]); break;
        case OP_NE: MVM_BINARY_RESULT(sp[-2] != sp[-1]); break;
        case OP_LT: MVM_BINARY_RESULT(sp[-2] < sp[-1]); break;
        case OP_LE: MVM_BINARY_RESULT(sp[-2] <= sp[-1]); break;
        case OP_GT: MVM_BINARY_RESULT(sp[-2] > sp[-1]); break;
        case OP_GE: MVM_BINARY_RESULT(sp[-2] >= sp[-1]); break;
        case OP_JUMP: ip = fn->code + insn->arg; break;
        case OP_JUMP_IF_FALSE:
            if (*--sp == 0)
                ip = fn->code + insn->arg;
            break;
        case OP_CALL: {
            const struct mvm_function *callee = &functions[insn->arg];
            int64_t *callee_args = sp - callee->n_params;
            if (MVM_UNLIKELY(vm->depth >= vm->max_depth))
                return fail_call(vm, fn, insn, callee);
            vm->depth++;
            r = callee->entry(vm, callee, callee_args);
            vm->depth--;
            if (MVM_UNLIKELY(vm->failed))
                return unwind_frame(vm, fn, insn);
            sp = callee_args;
            *sp++ = r;
            break;
        }
        case OP_RETURN: return sp[-1];
        case OP_ARGC: *sp++ = vm->argc; break;
        case OP_ARG:
            if (MVM_UNLIKELY(sp[-1] < 0 || (uint64_t)sp[-1] >= vm->argc))
                return fail_arg(vm, fn, insn, sp[-1]);
            sp[-1] = vm->argv[sp[-1]];
            break;
        case OP_PRINT_INT: print_value(vm, insn, sp[-insn->arg]); break;
        case OP_PRINT_STR: print_string(vm, insn); break;
        case OP_PRINT_END:
            fputc('\n', vm->out);
            sp -= insn->arg;
            break;
        }
    }
}

int mvm_vm_run(struct mvm_vm *vm, int64_t *result)
{
    const struct mvm_function *main_fn = &vm->prog->functions[vm->prog->main_index];
    vm->failed = 0;
    vm->depth = 1;
    *result = main_fn->entry(vm, main_fn, vm->stack);
    vm->depth = 0;
    return vm->failed ? -1 : 0;
}
