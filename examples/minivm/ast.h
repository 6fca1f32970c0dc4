/*
 * The syntax tree the parser builds and the compiler reads. Nodes live in an
 * mvm_arena; names point into the source text (not NUL-terminated). Lists are
 * singly linked in source order.
 */
#ifndef MVM_AST_H
#define MVM_AST_H

#include "diag.h"

#include <stddef.h>
#include <stdint.h>

struct mvm_name {
    const char *s;
    size_t len;
};

enum mvm_expr_kind {
    EXPR_INT,    /* u.value */
    EXPR_VAR,    /* u.name */
    EXPR_CALL,   /* u.call */
    EXPR_NEG,    /* u.operand: -x */
    EXPR_NOT,    /* u.operand: !x */
    EXPR_BINARY, /* u.binary: arithmetic and comparisons */
    EXPR_AND,    /* u.binary: short-circuit && */
    EXPR_OR,     /* u.binary: short-circuit || */
};

enum mvm_binop {
    BIN_ADD,
    BIN_SUB,
    BIN_MUL,
    BIN_DIV,
    BIN_MOD,
    BIN_EQ,
    BIN_NE,
    BIN_LT,
    BIN_LE,
    BIN_GT,
    BIN_GE
};

struct mvm_expr {
    enum mvm_expr_kind kind;
    struct mvm_pos pos;    /* operator, literal, name or callee position */
    struct mvm_expr *next; /* next argument in a call's argument list */
    union {
        int64_t value;
        struct mvm_name name;
        struct mvm_expr *operand;
        struct {
            enum mvm_binop op;
            struct mvm_expr *lhs, *rhs;
        } binary;
        struct {
            struct mvm_name callee;
            struct mvm_expr *args;
            uint32_t n_args;
        } call;
    } u;
};

/* One argument of print: a string literal (decoded) or an expression. */
struct mvm_print_arg {
    struct mvm_print_arg *next;
    const char *str; /* NULL for an expression */
    size_t str_len;
    struct mvm_expr *expr;
};

enum mvm_stmt_kind {
    STMT_VAR,
    STMT_ASSIGN,
    STMT_IF,
    STMT_WHILE,
    STMT_RETURN,
    STMT_PRINT,
    STMT_CALL,
    STMT_BLOCK
};

struct mvm_stmt {
    enum mvm_stmt_kind kind;
    struct mvm_pos pos;
    struct mvm_stmt *next;
    union {
        struct { /* STMT_VAR (init may be NULL: 0) and STMT_ASSIGN */
            struct mvm_name name;
            struct mvm_expr *value;
        } assign;
        struct { /* STMT_IF (otherwise may be NULL) and STMT_WHILE (otherwise unused) */
            struct mvm_expr *cond;
            struct mvm_stmt *body;      /* a STMT_BLOCK */
            struct mvm_stmt *otherwise; /* a STMT_BLOCK or a STMT_IF */
        } branch;
        struct mvm_expr *value;      /* STMT_RETURN (NULL: 0), STMT_CALL */
        struct mvm_print_arg *print; /* STMT_PRINT */
        struct mvm_stmt *block;      /* STMT_BLOCK: first statement */
    } u;
};

struct mvm_param {
    struct mvm_param *next;
    struct mvm_name name;
    struct mvm_pos pos;
};

struct mvm_func_decl {
    struct mvm_func_decl *next;
    struct mvm_name name;
    struct mvm_pos pos; /* of the name */
    struct mvm_param *params;
    uint32_t n_params;
    struct mvm_stmt *body; /* a STMT_BLOCK */
};

struct mvm_ast {
    struct mvm_func_decl *funcs;
    uint32_t n_funcs;
};

#endif
