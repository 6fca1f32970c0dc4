/* The parser: recursive descent over the grammar in parser.h. Stops at the first error. */
#include "parser.h"

#include "lexer.h"

#include <string.h>

struct parser {
    struct mvm_lexer lx;
    struct mvm_token tok;   /* current token */
    struct mvm_token ahead; /* the one after it */
    struct mvm_arena *arena;
    struct mvm_diag *diag;
    unsigned depth; /* current nesting of expressions and blocks */
};

/* ---- tokens ------------------------------------------------------------- */

static void parser_advance(struct parser *p)
{
    p->tok = p->ahead;
    if (p->tok.kind == TOK_ERROR)
        mvm_diag_error(p->diag, p->tok.pos, "%s", p->lx.error);
    else if (p->tok.kind != TOK_EOF)
        p->ahead = mvm_lexer_next(&p->lx);
}

static int parser_failed(const struct parser *p)
{
    return p->diag->set;
}

/* Report "expected X, found Y" at the current token (unless the lexer already reported). */
static void parser_expected(struct parser *p, const char *what)
{
    if (p->tok.kind == TOK_ERROR)
        return;
    if (p->tok.kind == TOK_IDENT || p->tok.kind == TOK_INT)
        mvm_diag_error(p->diag, p->tok.pos, "expected %s, found '%.*s'", what,
                       (int)(p->tok.len > 40 ? 40 : p->tok.len), p->tok.start);
    else
        mvm_diag_error(p->diag, p->tok.pos, "expected %s, found %s", what, mvm_token_kind_name(p->tok.kind));
}

/* Consume a token of `kind`, or report it missing and return 0. */
static int parser_expect(struct parser *p, enum mvm_token_kind kind, const char *context)
{
    if (p->tok.kind == kind) {
        parser_advance(p);
        return 1;
    }
    char what[64];
    snprintf(what, sizeof what, "%s%s", mvm_token_kind_name(kind), context);
    parser_expected(p, what);
    return 0;
}

static int parser_accept(struct parser *p, enum mvm_token_kind kind)
{
    if (p->tok.kind != kind)
        return 0;
    parser_advance(p);
    return 1;
}

static void *parser_alloc(struct parser *p, size_t size)
{
    void *node = mvm_arena_alloc(p->arena, size);
    if (!node)
        mvm_diag_error(p->diag, p->tok.pos, "out of memory");
    return node;
}

static struct mvm_name token_name(const struct mvm_token *t)
{
    struct mvm_name n = {t->start, t->len};
    return n;
}

/* Enter one level of nesting; report and return 0 past MVM_NESTING_MAX. */
static int parser_nest(struct parser *p)
{
    if (++p->depth <= MVM_NESTING_MAX)
        return 1;
    mvm_diag_error(p->diag, p->tok.pos, "nesting deeper than %d levels", MVM_NESTING_MAX);
    return 0;
}

/* ---- expressions -------------------------------------------------------- */

static struct mvm_expr *parse_expr(struct parser *p);

static struct mvm_expr *new_expr(struct parser *p, enum mvm_expr_kind kind, struct mvm_pos pos)
{
    struct mvm_expr *e = parser_alloc(p, sizeof *e);
    if (e) {
        e->kind = kind;
        e->pos = pos;
    }
    return e;
}

/* Arguments of a call or print, after the '(' has been consumed, up to the ')'. */
static struct mvm_expr *parse_call(struct parser *p, struct mvm_token callee)
{
    struct mvm_expr *call = new_expr(p, EXPR_CALL, callee.pos);
    if (!call || !parser_expect(p, TOK_LPAREN, " after function name"))
        return NULL;
    call->u.call.callee = token_name(&callee);
    struct mvm_expr **tail = &call->u.call.args;
    if (!parser_accept(p, TOK_RPAREN)) {
        do {
            struct mvm_expr *arg = parse_expr(p);
            if (!arg)
                return NULL;
            *tail = arg;
            tail = &arg->next;
            call->u.call.n_args++;
        } while (parser_accept(p, TOK_COMMA));
        if (!parser_expect(p, TOK_RPAREN, " after call arguments"))
            return NULL;
    }
    return call;
}

static struct mvm_expr *parse_int(struct parser *p, int negate, struct mvm_pos pos)
{
    uint64_t magnitude = p->tok.value;
    if (magnitude == MVM_INT_LITERAL_MAX && !negate) {
        mvm_diag_error(p->diag, p->tok.pos, "integer literal too large");
        return NULL;
    }
    parser_advance(p);
    struct mvm_expr *e = new_expr(p, EXPR_INT, pos);
    if (e) /* two's complement negation in uint64_t, then a value-preserving conversion */
        e->u.value = negate ? (magnitude == MVM_INT_LITERAL_MAX ? INT64_MIN : -(int64_t)magnitude)
                            : (int64_t)magnitude;
    return e;
}

static struct mvm_expr *parse_primary(struct parser *p)
{
    struct mvm_token t = p->tok;
    if (t.kind == TOK_INT)
        return parse_int(p, 0, t.pos);
    if (t.kind == TOK_IDENT) {
        parser_advance(p);
        if (p->tok.kind == TOK_LPAREN)
            return parse_call(p, t);
        struct mvm_expr *e = new_expr(p, EXPR_VAR, t.pos);
        if (e)
            e->u.name = token_name(&t);
        return e;
    }
    if (parser_accept(p, TOK_LPAREN)) {
        struct mvm_expr *e = parse_expr(p);
        if (!e || !parser_expect(p, TOK_RPAREN, " to close '('"))
            return NULL;
        return e;
    }
    parser_expected(p, "an expression");
    return NULL;
}

static struct mvm_expr *parse_unary(struct parser *p)
{
    struct mvm_token op = p->tok;
    if (op.kind != TOK_MINUS && op.kind != TOK_NOT)
        return parse_primary(p);
    parser_advance(p);
    if (op.kind == TOK_MINUS && p->tok.kind == TOK_INT)
        return parse_int(p, 1, op.pos); /* so that INT64_MIN can be written */
    if (!parser_nest(p))
        return NULL;
    struct mvm_expr *operand = parse_unary(p);
    p->depth--;
    if (!operand)
        return NULL;
    struct mvm_expr *e = new_expr(p, op.kind == TOK_MINUS ? EXPR_NEG : EXPR_NOT, op.pos);
    if (e)
        e->u.operand = operand;
    return e;
}

/* One precedence level: which tokens it takes and what they become. */
struct binary_level {
    enum mvm_token_kind tokens[4];
    enum mvm_binop ops[4];
    enum mvm_expr_kind kind; /* EXPR_BINARY, or EXPR_AND / EXPR_OR */
};

static const struct binary_level levels[] = {
    {{TOK_OR}, {0}, EXPR_OR},
    {{TOK_AND}, {0}, EXPR_AND},
    {{TOK_EQ, TOK_NE}, {BIN_EQ, BIN_NE}, EXPR_BINARY},
    {{TOK_LT, TOK_LE, TOK_GT, TOK_GE}, {BIN_LT, BIN_LE, BIN_GT, BIN_GE}, EXPR_BINARY},
    {{TOK_PLUS, TOK_MINUS}, {BIN_ADD, BIN_SUB}, EXPR_BINARY},
    {{TOK_STAR, TOK_SLASH, TOK_PERCENT}, {BIN_MUL, BIN_DIV, BIN_MOD}, EXPR_BINARY},
};
#define N_LEVELS (sizeof levels / sizeof levels[0])

/* Index of the current token among the level's operators, or -1. */
static int level_match(const struct binary_level *lv, enum mvm_token_kind kind)
{
    for (int i = 0; i < 4 && lv->tokens[i] != TOK_EOF; i++)
        if (lv->tokens[i] == kind)
            return i;
    return -1;
}

static struct mvm_expr *parse_level(struct parser *p, size_t level)
{
    if (level == N_LEVELS)
        return parse_unary(p);
    const struct binary_level *lv = &levels[level];
    struct mvm_expr *lhs = parse_level(p, level + 1);
    int i;
    while (lhs && (i = level_match(lv, p->tok.kind)) >= 0) {
        struct mvm_expr *e = new_expr(p, lv->kind, p->tok.pos);
        parser_advance(p);
        struct mvm_expr *rhs = parse_level(p, level + 1);
        if (!e || !rhs)
            return NULL;
        e->u.binary.op = lv->ops[i];
        e->u.binary.lhs = lhs;
        e->u.binary.rhs = rhs;
        lhs = e;
    }
    return lhs;
}

static struct mvm_expr *parse_expr(struct parser *p)
{
    if (!parser_nest(p))
        return NULL;
    struct mvm_expr *e = parse_level(p, 0);
    p->depth--;
    return e;
}

/* ---- statements --------------------------------------------------------- */

static struct mvm_stmt *parse_block(struct parser *p);
static struct mvm_stmt *parse_if(struct parser *p);

static struct mvm_stmt *new_stmt(struct parser *p, enum mvm_stmt_kind kind, struct mvm_pos pos)
{
    struct mvm_stmt *s = parser_alloc(p, sizeof *s);
    if (s) {
        s->kind = kind;
        s->pos = pos;
    }
    return s;
}

static int parse_semicolon(struct parser *p)
{
    return parser_expect(p, TOK_SEMI, " after statement");
}

/* "var" IDENT ["=" expr] ";" */
static struct mvm_stmt *parse_var(struct parser *p)
{
    struct mvm_stmt *s = new_stmt(p, STMT_VAR, p->tok.pos);
    parser_advance(p);
    if (!s)
        return NULL;
    if (p->tok.kind != TOK_IDENT) {
        parser_expected(p, "a variable name after 'var'");
        return NULL;
    }
    s->pos = p->tok.pos;
    s->u.assign.name = token_name(&p->tok);
    parser_advance(p);
    if (parser_accept(p, TOK_ASSIGN) && !(s->u.assign.value = parse_expr(p)))
        return NULL;
    return parse_semicolon(p) ? s : NULL;
}

/* IDENT "=" expr ";"  or  call ";" */
static struct mvm_stmt *parse_assign_or_call(struct parser *p)
{
    struct mvm_token name = p->tok;
    if (p->ahead.kind == TOK_ASSIGN) {
        struct mvm_stmt *s = new_stmt(p, STMT_ASSIGN, name.pos);
        parser_advance(p);
        parser_advance(p);
        if (!s || !(s->u.assign.value = parse_expr(p)) || !parse_semicolon(p))
            return NULL;
        s->u.assign.name = token_name(&name);
        return s;
    }
    struct mvm_expr *e = parse_expr(p);
    if (!e)
        return NULL;
    if (e->kind != EXPR_CALL) {
        mvm_diag_error(p->diag, name.pos, "expected a statement; only calls may be used as statements");
        return NULL;
    }
    struct mvm_stmt *s = new_stmt(p, STMT_CALL, name.pos);
    if (!s || !parse_semicolon(p))
        return NULL;
    s->u.value = e;
    return s;
}

/* "if" "(" expr ")" block ["else" (block | if)] and "while" "(" expr ")" block */
static struct mvm_stmt *parse_branch(struct parser *p, enum mvm_stmt_kind kind)
{
    struct mvm_stmt *s = new_stmt(p, kind, p->tok.pos);
    parser_advance(p);
    if (!s || !parser_expect(p, TOK_LPAREN, kind == STMT_IF ? " after 'if'" : " after 'while'"))
        return NULL;
    if (!(s->u.branch.cond = parse_expr(p)) || !parser_expect(p, TOK_RPAREN, " after condition"))
        return NULL;
    if (!(s->u.branch.body = parse_block(p)))
        return NULL;
    if (kind == STMT_IF && parser_accept(p, TOK_ELSE)) {
        s->u.branch.otherwise = p->tok.kind == TOK_IF ? parse_if(p) : parse_block(p);
        if (!s->u.branch.otherwise)
            return NULL;
    }
    return s;
}

static struct mvm_stmt *parse_if(struct parser *p)
{
    if (!parser_nest(p))
        return NULL;
    struct mvm_stmt *s = parse_branch(p, STMT_IF);
    p->depth--;
    return s;
}

/* "return" [expr] ";" */
static struct mvm_stmt *parse_return(struct parser *p)
{
    struct mvm_stmt *s = new_stmt(p, STMT_RETURN, p->tok.pos);
    parser_advance(p);
    if (!s)
        return NULL;
    if (p->tok.kind != TOK_SEMI && !(s->u.value = parse_expr(p)))
        return NULL;
    return parse_semicolon(p) ? s : NULL;
}

/* Decode a string literal token (escapes checked by the lexer) into the arena. */
static struct mvm_print_arg *parse_string_arg(struct parser *p)
{
    struct mvm_print_arg *a = parser_alloc(p, sizeof *a);
    char *s = a ? parser_alloc(p, p->tok.len) : NULL;
    if (!s)
        return NULL;
    size_t n = 0;
    for (size_t i = 1; i + 1 < p->tok.len; i++) {
        char c = p->tok.start[i];
        if (c == '\\') {
            c = p->tok.start[++i];
            c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
        }
        s[n++] = c;
    }
    a->str = s;
    a->str_len = n;
    parser_advance(p);
    return a;
}

static struct mvm_print_arg *parse_print_arg(struct parser *p)
{
    if (p->tok.kind == TOK_STRING)
        return parse_string_arg(p);
    struct mvm_print_arg *a = parser_alloc(p, sizeof *a);
    if (!a || !(a->expr = parse_expr(p)))
        return NULL;
    return a;
}

/* "print" "(" [arg ("," arg)*] ")" ";" */
static struct mvm_stmt *parse_print(struct parser *p)
{
    struct mvm_stmt *s = new_stmt(p, STMT_PRINT, p->tok.pos);
    parser_advance(p);
    if (!s || !parser_expect(p, TOK_LPAREN, " after 'print'"))
        return NULL;
    struct mvm_print_arg **tail = &s->u.print;
    if (!parser_accept(p, TOK_RPAREN)) {
        do {
            if (!(*tail = parse_print_arg(p)))
                return NULL;
            tail = &(*tail)->next;
        } while (parser_accept(p, TOK_COMMA));
        if (!parser_expect(p, TOK_RPAREN, " after print arguments"))
            return NULL;
    }
    return parse_semicolon(p) ? s : NULL;
}

static struct mvm_stmt *parse_statement(struct parser *p)
{
    switch (p->tok.kind) {
    case TOK_VAR: return parse_var(p);
    case TOK_IF: return parse_if(p);
    case TOK_WHILE: return parse_branch(p, STMT_WHILE);
    case TOK_RETURN: return parse_return(p);
    case TOK_PRINT: return parse_print(p);
    case TOK_LBRACE: return parse_block(p);
    case TOK_IDENT: return parse_assign_or_call(p);
    default: parser_expected(p, "a statement"); return NULL;
    }
}

/* "{" statement* "}" */
static struct mvm_stmt *parse_block(struct parser *p)
{
    struct mvm_stmt *block = new_stmt(p, STMT_BLOCK, p->tok.pos);
    if (!block || !parser_expect(p, TOK_LBRACE, "") || !parser_nest(p))
        return NULL;
    struct mvm_stmt **tail = &block->u.block;
    while (p->tok.kind != TOK_RBRACE) {
        if (p->tok.kind == TOK_EOF) {
            mvm_diag_error(p->diag, block->pos, "'{' is never closed");
            return NULL;
        }
        if (!(*tail = parse_statement(p)))
            return NULL;
        tail = &(*tail)->next;
    }
    parser_advance(p);
    p->depth--;
    return block;
}

/* ---- functions ---------------------------------------------------------- */

static int parse_params(struct parser *p, struct mvm_func_decl *f)
{
    if (!parser_expect(p, TOK_LPAREN, " after function name"))
        return 0;
    if (parser_accept(p, TOK_RPAREN))
        return 1;
    struct mvm_param **tail = &f->params;
    do {
        if (p->tok.kind != TOK_IDENT) {
            parser_expected(p, "a parameter name");
            return 0;
        }
        struct mvm_param *param = parser_alloc(p, sizeof *param);
        if (!param)
            return 0;
        param->name = token_name(&p->tok);
        param->pos = p->tok.pos;
        parser_advance(p);
        *tail = param;
        tail = &param->next;
        f->n_params++;
    } while (parser_accept(p, TOK_COMMA));
    return parser_expect(p, TOK_RPAREN, " after parameters");
}

/* "fn" IDENT "(" params ")" block */
static struct mvm_func_decl *parse_function(struct parser *p)
{
    if (!parser_expect(p, TOK_FN, " to start a function"))
        return NULL;
    if (p->tok.kind != TOK_IDENT) {
        parser_expected(p, "a function name after 'fn'");
        return NULL;
    }
    struct mvm_func_decl *f = parser_alloc(p, sizeof *f);
    if (!f)
        return NULL;
    f->name = token_name(&p->tok);
    f->pos = p->tok.pos;
    parser_advance(p);
    if (!parse_params(p, f) || !(f->body = parse_block(p)))
        return NULL;
    return f;
}

int mvm_parse(const char *text, size_t len, struct mvm_arena *arena, struct mvm_diag *diag,
              struct mvm_ast *out)
{
    struct parser p;
    memset(&p, 0, sizeof p);
    p.arena = arena;
    p.diag = diag;
    memset(out, 0, sizeof *out);
    mvm_lexer_init(&p.lx, text, len);
    p.ahead = mvm_lexer_next(&p.lx);
    parser_advance(&p);
    struct mvm_func_decl **tail = &out->funcs;
    while (p.tok.kind != TOK_EOF && !parser_failed(&p)) {
        if (!(*tail = parse_function(&p)))
            break;
        tail = &(*tail)->next;
        out->n_funcs++;
    }
    return parser_failed(&p) ? -1 : 0;
}
