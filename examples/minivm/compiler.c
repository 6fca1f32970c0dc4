/* The compiler: resolves names and emits stack-machine bytecode (program.h). */
#include "compiler.h"

#include "vm.h"

#include <stdlib.h>
#include <string.h>

/* A variable in scope: its slot, and the block depth that declared it. */
struct scope_var {
    struct mvm_name name;
    uint32_t slot;
    uint32_t depth;
};

/* The function being compiled. */
struct builder {
    struct mvm_insn *code;
    struct mvm_pos *pos;
    uint32_t n_code, cap_code, cap_pos;
    int64_t *consts;
    uint32_t n_consts, cap_consts;
    struct scope_var vars[MVM_SLOTS_MAX]; /* in scope, innermost last */
    uint32_t n_vars;
    uint32_t depth; /* block nesting */
    uint32_t n_slots;
    int32_t stack; /* operand stack depth after the last instruction */
    int32_t max_stack;
};

/* A function declaration and its index in source order (= in the program). */
struct decl_ref {
    const struct mvm_func_decl *decl;
    uint32_t index;
};

struct compiler {
    struct mvm_diag *diag;
    struct mvm_program *prog;
    struct decl_ref *by_name; /* sorted by name, then position */
    uint32_t n_funcs;
    uint32_t cap_strings; /* capacity of prog->strings */
    struct builder *b;
};

/*
 * Make room for element n of an array of `size`-byte elements whose capacity
 * is *cap. Returns the array (moved if it grew), or NULL when out of memory
 * (the old array is then still valid).
 */
static void *grow(void *array, uint32_t n, uint32_t *cap, size_t size)
{
    if (n < *cap)
        return array;
    if (*cap > INT32_MAX / 2)
        return NULL;
    uint32_t new_cap = *cap ? *cap * 2 : 16;
    void *p = realloc(array, (size_t)new_cap * size);
    if (p)
        *cap = new_cap;
    return p;
}

static int names_equal(struct mvm_name a, struct mvm_name b)
{
    return a.len == b.len && memcmp(a.s, b.s, a.len) == 0;
}

static int name_compare(struct mvm_name a, struct mvm_name b)
{
    int c = memcmp(a.s, b.s, a.len < b.len ? a.len : b.len);
    return c ? c : (a.len > b.len) - (a.len < b.len);
}

/* Quote a name for messages, cut to keep messages short. */
#define NAME_FMT "'%.*s'"
#define NAME_ARG(n) (int)((n).len > 64 ? 64 : (n).len), (n).s

/* ---- emission ------------------------------------------------------------ */

/* Operand stack effect of an opcode (OP_CALL and OP_PRINT_END: given to emit_full). */
static int32_t stack_effect(enum mvm_opcode op)
{
    switch (op) {
    case OP_INT:
    case OP_CONST:
    case OP_LOAD:
    case OP_ARGC: return 1;
    case OP_NEG:
    case OP_NOT:
    case OP_BOOL:
    case OP_ARG:
    case OP_JUMP:
    case OP_PRINT_INT:
    case OP_PRINT_STR:
    case OP_PRINT_END:
    case OP_CALL: return 0;
    default: return -1; /* binary operators, stores, pops, conditional jumps, returns */
    }
}

/* Append one instruction; returns its index, or -1 (error recorded). */
static int32_t emit_full(struct compiler *c, enum mvm_opcode op, int32_t arg, uint8_t flag, int32_t effect,
                         struct mvm_pos pos)
{
    struct builder *b = c->b;
    struct mvm_insn *code = grow(b->code, b->n_code, &b->cap_code, sizeof *code);
    if (code)
        b->code = code;
    struct mvm_pos *positions = code ? grow(b->pos, b->n_code, &b->cap_pos, sizeof *positions) : NULL;
    if (positions)
        b->pos = positions;
    if (!code || !positions) {
        mvm_diag_error(c->diag, pos, "out of memory");
        return -1;
    }
    struct mvm_insn insn = {.op = (uint8_t)op, .flag = flag, .arg = arg};
    b->code[b->n_code] = insn;
    b->pos[b->n_code] = pos;
    b->stack += effect;
    if (b->stack > b->max_stack)
        b->max_stack = b->stack;
    return (int32_t)b->n_code++;
}

static int32_t emit(struct compiler *c, enum mvm_opcode op, int32_t arg, struct mvm_pos pos)
{
    return emit_full(c, op, arg, 0, stack_effect(op), pos);
}

/* Point the jump at `at` to the next instruction to be emitted. */
static void patch_here(struct compiler *c, int32_t at)
{
    c->b->code[at].arg = (int32_t)c->b->n_code;
}

static int emit_constant(struct compiler *c, int64_t value, struct mvm_pos pos)
{
    struct builder *b = c->b;
    if (value >= INT32_MIN && value <= INT32_MAX)
        return emit(c, OP_INT, (int32_t)value, pos) < 0 ? -1 : 0;
    int64_t *consts = grow(b->consts, b->n_consts, &b->cap_consts, sizeof *consts);
    if (!consts) {
        mvm_diag_error(c->diag, pos, "out of memory");
        return -1;
    }
    b->consts = consts;
    b->consts[b->n_consts] = value;
    return emit(c, OP_CONST, (int32_t)b->n_consts++, pos) < 0 ? -1 : 0;
}

/* ---- names --------------------------------------------------------------- */

static int compare_decls(const void *a, const void *b)
{
    const struct decl_ref *ra = a, *rb = b;
    int c = name_compare(ra->decl->name, rb->decl->name);
    return c ? c : (ra->index > rb->index) - (ra->index < rb->index);
}

/* The function named `name`, or NULL. */
static const struct decl_ref *find_function(const struct compiler *c, struct mvm_name name)
{
    uint32_t lo = 0, hi = c->n_funcs;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int cmp = name_compare(c->by_name[mid].decl->name, name);
        if (cmp == 0)
            return &c->by_name[mid];
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Slot of the innermost variable named `name`, or -1. */
static int32_t find_variable(const struct builder *b, struct mvm_name name)
{
    for (uint32_t i = b->n_vars; i-- > 0;)
        if (names_equal(b->vars[i].name, name))
            return (int32_t)b->vars[i].slot;
    return -1;
}

/* Give `name` a new slot in the current block; is_param only changes the message. */
static int declare_variable(struct compiler *c, struct mvm_name name, struct mvm_pos pos, int is_param)
{
    struct builder *b = c->b;
    for (uint32_t i = b->n_vars; i-- > 0 && b->vars[i].depth == b->depth;)
        if (names_equal(b->vars[i].name, name)) {
            if (is_param)
                mvm_diag_error(c->diag, pos, "duplicate parameter " NAME_FMT, NAME_ARG(name));
            else
                mvm_diag_error(c->diag, pos, "variable " NAME_FMT " is already declared in this block",
                               NAME_ARG(name));
            return -1;
        }
    if (b->n_slots == MVM_SLOTS_MAX) {
        mvm_diag_error(c->diag, pos, "more than %d variables in one function", MVM_SLOTS_MAX);
        return -1;
    }
    struct scope_var v = {name, b->n_slots++, b->depth};
    b->vars[b->n_vars++] = v;
    return (int)v.slot;
}

/* ---- expressions ------------------------------------------------------- */

static int compile_expr(struct compiler *c, const struct mvm_expr *e);

static int compile_args(struct compiler *c, const struct mvm_expr *arg)
{
    for (; arg; arg = arg->next)
        if (compile_expr(c, arg))
            return -1;
    return 0;
}

static int check_arity(struct compiler *c, const struct mvm_expr *e, uint32_t want)
{
    uint32_t got = e->u.call.n_args;
    if (got == want)
        return 0;
    mvm_diag_error(c->diag, e->pos, "function " NAME_FMT " takes %u argument%s, %u given",
                   NAME_ARG(e->u.call.callee), want, want == 1 ? "" : "s", got);
    return -1;
}

/* argc() and arg(i); returns 1 if `e` is not a builtin call. */
static int compile_builtin(struct compiler *c, const struct mvm_expr *e)
{
    static const struct mvm_name argc_name = {"argc", 4}, arg_name = {"arg", 3};
    if (names_equal(e->u.call.callee, argc_name))
        return check_arity(c, e, 0) || emit(c, OP_ARGC, 0, e->pos) < 0 ? -1 : 0;
    if (names_equal(e->u.call.callee, arg_name))
        return check_arity(c, e, 1) || compile_args(c, e->u.call.args) || emit(c, OP_ARG, 0, e->pos) < 0 ? -1
                                                                                                         : 0;
    return 1;
}

static int compile_call(struct compiler *c, const struct mvm_expr *e)
{
    int builtin = compile_builtin(c, e);
    if (builtin <= 0)
        return builtin;
    const struct decl_ref *callee = find_function(c, e->u.call.callee);
    if (!callee) {
        mvm_diag_error(c->diag, e->pos, "call to undefined function " NAME_FMT, NAME_ARG(e->u.call.callee));
        return -1;
    }
    uint32_t n_params = callee->decl->n_params;
    if (check_arity(c, e, n_params) || compile_args(c, e->u.call.args))
        return -1;
    return emit_full(c, OP_CALL, (int32_t)callee->index, 0, 1 - (int32_t)n_params, e->pos) < 0 ? -1 : 0;
}

static const enum mvm_opcode binop_opcodes[] = {
    [BIN_ADD] = OP_ADD, [BIN_SUB] = OP_SUB, [BIN_MUL] = OP_MUL, [BIN_DIV] = OP_DIV,
    [BIN_MOD] = OP_MOD, [BIN_EQ] = OP_EQ,   [BIN_NE] = OP_NE,   [BIN_LT] = OP_LT,
    [BIN_LE] = OP_LE,   [BIN_GT] = OP_GT,   [BIN_GE] = OP_GE,
};

/*
 * a && b:  a; JUMP_IF_FALSE F; b; BOOL; JUMP E; F: INT 0; E:
 * a || b:  a; JUMP_IF_FALSE R; INT 1; JUMP E; R: b; BOOL; E:
 * Both branches leave one value; the depth is rewound before the second.
 */
static int compile_logical(struct compiler *c, const struct mvm_expr *e)
{
    int is_and = e->kind == EXPR_AND;
    if (compile_expr(c, e->u.binary.lhs))
        return -1;
    int32_t to_second = emit(c, OP_JUMP_IF_FALSE, 0, e->pos);
    if (to_second < 0)
        return -1;
    if (is_and ? compile_expr(c, e->u.binary.rhs) || emit(c, OP_BOOL, 0, e->pos) < 0
               : emit(c, OP_INT, 1, e->pos) < 0)
        return -1;
    int32_t to_end = emit(c, OP_JUMP, 0, e->pos);
    if (to_end < 0)
        return -1;
    c->b->stack--;
    patch_here(c, to_second);
    if (is_and ? emit(c, OP_INT, 0, e->pos) < 0
               : compile_expr(c, e->u.binary.rhs) || emit(c, OP_BOOL, 0, e->pos) < 0)
        return -1;
    patch_here(c, to_end);
    return 0;
}

static int compile_var_ref(struct compiler *c, const struct mvm_expr *e)
{
    int32_t slot = find_variable(c->b, e->u.name);
    if (slot < 0) {
        mvm_diag_error(c->diag, e->pos, "undefined variable " NAME_FMT, NAME_ARG(e->u.name));
        return -1;
    }
    return emit(c, OP_LOAD, slot, e->pos) < 0 ? -1 : 0;
}

static int compile_expr(struct compiler *c, const struct mvm_expr *e)
{
    switch (e->kind) {
    case EXPR_INT: return emit_constant(c, e->u.value, e->pos);
    case EXPR_VAR: return compile_var_ref(c, e);
    case EXPR_CALL: return compile_call(c, e);
    case EXPR_NEG:
    case EXPR_NOT:
        if (compile_expr(c, e->u.operand))
            return -1;
        return emit(c, e->kind == EXPR_NEG ? OP_NEG : OP_NOT, 0, e->pos) < 0 ? -1 : 0;
    case EXPR_BINARY:
        if (compile_expr(c, e->u.binary.lhs) || compile_expr(c, e->u.binary.rhs))
            return -1;
        return emit(c, binop_opcodes[e->u.binary.op], 0, e->pos) < 0 ? -1 : 0;
    case EXPR_AND:
    case EXPR_OR: return compile_logical(c, e);
    }
    return -1;
}

/* ---- statements ---------------------------------------------------------- */

static int compile_stmt(struct compiler *c, const struct mvm_stmt *s);

static int compile_block(struct compiler *c, const struct mvm_stmt *block)
{
    struct builder *b = c->b;
    b->depth++;
    int rc = 0;
    for (const struct mvm_stmt *s = block->u.block; s && !rc; s = s->next)
        rc = compile_stmt(c, s);
    while (b->n_vars > 0 && b->vars[b->n_vars - 1].depth == b->depth)
        b->n_vars--;
    b->depth--;
    return rc;
}

/* The initialiser is compiled before the name is declared: `var x = x;` reads an outer x. */
static int compile_var(struct compiler *c, const struct mvm_stmt *s)
{
    const struct mvm_expr *init = s->u.assign.value;
    if (init ? compile_expr(c, init) : emit(c, OP_INT, 0, s->pos) < 0)
        return -1;
    int slot = declare_variable(c, s->u.assign.name, s->pos, 0);
    return slot < 0 || emit(c, OP_STORE, slot, s->pos) < 0 ? -1 : 0;
}

static int compile_assign(struct compiler *c, const struct mvm_stmt *s)
{
    int32_t slot = find_variable(c->b, s->u.assign.name);
    if (slot < 0) {
        mvm_diag_error(c->diag, s->pos, "assignment to undefined variable " NAME_FMT,
                       NAME_ARG(s->u.assign.name));
        return -1;
    }
    if (compile_expr(c, s->u.assign.value))
        return -1;
    return emit(c, OP_STORE, slot, s->pos) < 0 ? -1 : 0;
}

/* cond; JUMP_IF_FALSE ELSE; body; [JUMP END;] ELSE: otherwise; END: */
static int compile_if(struct compiler *c, const struct mvm_stmt *s)
{
    if (compile_expr(c, s->u.branch.cond))
        return -1;
    int32_t to_else = emit(c, OP_JUMP_IF_FALSE, 0, s->pos);
    if (to_else < 0 || compile_block(c, s->u.branch.body))
        return -1;
    if (!s->u.branch.otherwise) {
        patch_here(c, to_else);
        return 0;
    }
    int32_t to_end = emit(c, OP_JUMP, 0, s->pos);
    if (to_end < 0)
        return -1;
    patch_here(c, to_else);
    if (compile_stmt(c, s->u.branch.otherwise))
        return -1;
    patch_here(c, to_end);
    return 0;
}

/* TOP: cond; JUMP_IF_FALSE END; body; JUMP TOP; END: */
static int compile_while(struct compiler *c, const struct mvm_stmt *s)
{
    int32_t top = (int32_t)c->b->n_code;
    if (compile_expr(c, s->u.branch.cond))
        return -1;
    int32_t to_end = emit(c, OP_JUMP_IF_FALSE, 0, s->pos);
    if (to_end < 0 || compile_block(c, s->u.branch.body) || emit(c, OP_JUMP, top, s->pos) < 0)
        return -1;
    patch_here(c, to_end);
    return 0;
}

static int add_string(struct compiler *c, const struct mvm_print_arg *a, struct mvm_pos pos)
{
    struct mvm_program *prog = c->prog;
    struct mvm_string *strings = grow(prog->strings, prog->n_strings, &c->cap_strings, sizeof *strings);
    char *copy = strings ? malloc(a->str_len + 1) : NULL;
    if (strings)
        prog->strings = strings;
    if (!copy) {
        mvm_diag_error(c->diag, pos, "out of memory");
        return -1;
    }
    memcpy(copy, a->str, a->str_len);
    copy[a->str_len] = '\0';
    prog->strings[prog->n_strings].s = copy;
    prog->strings[prog->n_strings].len = a->str_len;
    return (int)prog->n_strings++;
}

/*
 * Every expression argument is evaluated first, then the line is printed:
 * a call printing something inside an argument does not split the line.
 * OP_PRINT_INT k prints the k-th value from the top; OP_PRINT_END k drops k values.
 */
static int compile_print(struct compiler *c, const struct mvm_stmt *s)
{
    int32_t n_values = 0;
    for (const struct mvm_print_arg *a = s->u.print; a; a = a->next)
        if (!a->str && (n_values++, compile_expr(c, a->expr)))
            return -1;
    uint8_t space = 0;
    int32_t k = n_values;
    for (const struct mvm_print_arg *a = s->u.print; a; a = a->next, space = 1) {
        if (a->str) {
            int index = add_string(c, a, s->pos);
            if (index < 0 || emit_full(c, OP_PRINT_STR, index, space, 0, s->pos) < 0)
                return -1;
        } else if (emit_full(c, OP_PRINT_INT, k--, space, stack_effect(OP_PRINT_INT), s->pos) < 0) {
            return -1;
        }
    }
    return emit_full(c, OP_PRINT_END, n_values, 0, -n_values, s->pos) < 0 ? -1 : 0;
}

static int compile_stmt(struct compiler *c, const struct mvm_stmt *s)
{
    switch (s->kind) {
    case STMT_VAR: return compile_var(c, s);
    case STMT_ASSIGN: return compile_assign(c, s);
    case STMT_IF: return compile_if(c, s);
    case STMT_WHILE: return compile_while(c, s);
    case STMT_RETURN:
        if (s->u.value ? compile_expr(c, s->u.value) : emit(c, OP_INT, 0, s->pos) < 0)
            return -1;
        return emit(c, OP_RETURN, 0, s->pos) < 0 ? -1 : 0;
    case STMT_PRINT: return compile_print(c, s);
    case STMT_CALL: return compile_expr(c, s->u.value) || emit(c, OP_POP, 0, s->pos) < 0 ? -1 : 0;
    case STMT_BLOCK: return compile_block(c, s);
    }
    return -1;
}

/* ---- functions ----------------------------------------------------------- */

/* Parameters take slots 0..n-1 in the function's outermost block. */
static int declare_params(struct compiler *c, const struct mvm_func_decl *d)
{
    for (const struct mvm_param *p = d->params; p; p = p->next)
        if (declare_variable(c, p->name, p->pos, 1) < 0)
            return -1;
    return 0;
}

static char *copy_name(struct mvm_name name)
{
    char *s = malloc(name.len + 1);
    if (s) {
        memcpy(s, name.s, name.len);
        s[name.len] = '\0';
    }
    return s;
}

/* Hand the builder's arrays over to the finished function. */
static int finish_function(struct compiler *c, const struct mvm_func_decl *d, struct mvm_function *out)
{
    struct builder *b = c->b;
    out->entry = mvm_eval_function;
    out->code = b->code;
    out->insn_pos = b->pos;
    out->consts = b->consts;
    out->n_code = b->n_code;
    out->n_params = d->n_params;
    out->n_slots = b->n_slots;
    out->frame_size = b->n_slots + (uint32_t)b->max_stack;
    out->pos = d->pos;
    b->code = NULL;
    b->pos = NULL;
    b->consts = NULL;
    if (!out->name) {
        mvm_diag_error(c->diag, d->pos, "out of memory");
        return -1;
    }
    return 0;
}

static int compile_function(struct compiler *c, const struct mvm_func_decl *d, struct mvm_function *out)
{
    struct builder *b = c->b;
    b->n_code = b->cap_code = b->cap_pos = b->n_consts = b->cap_consts = 0;
    b->n_vars = b->n_slots = 0;
    b->stack = b->max_stack = 0;
    b->depth = 1;
    out->name = copy_name(d->name);
    int rc = declare_params(c, d);
    for (const struct mvm_stmt *s = d->body->u.block; s && !rc; s = s->next)
        rc = compile_stmt(c, s);
    if (!rc) /* falling off the end returns 0 */
        rc = emit(c, OP_INT, 0, d->pos) < 0 || emit(c, OP_RETURN, 0, d->pos) < 0 ? -1 : 0;
    if (!rc)
        rc = finish_function(c, d, out);
    free(b->code);
    free(b->pos);
    free(b->consts);
    b->code = NULL;
    b->pos = NULL;
    b->consts = NULL;
    return rc;
}

/* Duplicate definitions and redefined builtins, found on the sorted table. */
static int check_function_names(struct compiler *c)
{
    static const struct mvm_name builtins[] = {{"argc", 4}, {"arg", 3}};
    for (uint32_t i = 0; i < c->n_funcs; i++) {
        const struct mvm_func_decl *d = c->by_name[i].decl;
        if (i > 0 && names_equal(c->by_name[i - 1].decl->name, d->name)) {
            mvm_diag_error(c->diag, d->pos, "function " NAME_FMT " is already defined at line %u",
                           NAME_ARG(d->name), c->by_name[i - 1].decl->pos.line);
            return -1;
        }
        for (size_t k = 0; k < sizeof builtins / sizeof builtins[0]; k++)
            if (names_equal(d->name, builtins[k])) {
                mvm_diag_error(c->diag, d->pos, NAME_FMT " is a builtin function", NAME_ARG(d->name));
                return -1;
            }
    }
    return 0;
}

static int find_main(struct compiler *c)
{
    static const struct mvm_name main_name = {"main", 4};
    const struct decl_ref *m = find_function(c, main_name);
    if (!m) {
        struct mvm_pos start = {1, 1};
        mvm_diag_error(c->diag, start, "the program has no function 'main'");
        return -1;
    }
    if (m->decl->n_params != 0) {
        mvm_diag_error(c->diag, m->decl->pos,
                       "function 'main' must not take parameters (use argc() and arg(i))");
        return -1;
    }
    c->prog->main_index = m->index;
    return 0;
}

static int compile_program(struct compiler *c, const struct mvm_ast *ast)
{
    uint32_t i = 0;
    for (const struct mvm_func_decl *d = ast->funcs; d; d = d->next, i++)
        c->by_name[i] = (struct decl_ref){d, i};
    qsort(c->by_name, c->n_funcs, sizeof *c->by_name, compare_decls);
    if (check_function_names(c) || find_main(c))
        return -1;
    i = 0;
    for (const struct mvm_func_decl *d = ast->funcs; d; d = d->next, i++)
        if (compile_function(c, d, &c->prog->functions[i]))
            return -1;
    return 0;
}

int mvm_compile(const struct mvm_ast *ast, struct mvm_diag *diag, struct mvm_program *out)
{
    memset(out, 0, sizeof *out);
    struct compiler c = {.diag = diag, .prog = out, .n_funcs = ast->n_funcs};
    size_t n = ast->n_funcs ? ast->n_funcs : 1;
    c.by_name = calloc(n, sizeof *c.by_name);
    c.b = calloc(1, sizeof *c.b);
    out->functions = calloc(n, sizeof *out->functions);
    out->n_functions = ast->n_funcs;
    int rc;
    if (!c.by_name || !c.b || !out->functions) {
        struct mvm_pos start = {1, 1};
        mvm_diag_error(diag, start, "out of memory");
        rc = -1;
    } else {
        rc = compile_program(&c, ast);
    }
    free(c.by_name);
    free(c.b);
    if (rc)
        mvm_program_free(out);
    return rc;
}

void mvm_program_free(struct mvm_program *prog)
{
    for (uint32_t i = 0; prog->functions && i < prog->n_functions; i++) {
        struct mvm_function *f = &prog->functions[i];
        free((void *)f->code);
        free((void *)f->insn_pos);
        free((void *)f->consts);
        free(f->name);
    }
    for (uint32_t i = 0; i < prog->n_strings; i++)
        free(prog->strings[i].s);
    free(prog->functions);
    free(prog->strings);
    memset(prog, 0, sizeof *prog);
}
