/* The lexer: program text to tokens with line and column. */
#include "lexer.h"

#include <stdio.h>
#include <string.h>

void mvm_lexer_init(struct mvm_lexer *lx, const char *text, size_t len)
{
    lx->cur = text;
    lx->end = text + len;
    lx->pos.line = 1;
    lx->pos.col = 1;
    lx->error[0] = '\0';
}

static int lexer_peek(const struct mvm_lexer *lx, size_t ahead)
{
    return (size_t)(lx->end - lx->cur) > ahead ? (unsigned char)lx->cur[ahead] : -1;
}

static void lexer_advance(struct mvm_lexer *lx)
{
    if (*lx->cur == '\n') {
        lx->pos.line++;
        lx->pos.col = 1;
    } else {
        lx->pos.col++;
    }
    lx->cur++;
}

static int is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}
static int is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_ident_char(int c)
{
    return is_ident_start(c) || is_digit(c);
}

static void lexer_skip_space_and_comments(struct mvm_lexer *lx)
{
    for (;;) {
        int c = lexer_peek(lx, 0);
        if (is_space(c)) {
            lexer_advance(lx);
        } else if (c == '/' && lexer_peek(lx, 1) == '/') {
            while (lexer_peek(lx, 0) != -1 && lexer_peek(lx, 0) != '\n')
                lexer_advance(lx);
        } else {
            return;
        }
    }
}

static struct mvm_token lexer_error(struct mvm_lexer *lx, struct mvm_pos pos, const char *msg)
{
    snprintf(lx->error, sizeof lx->error, "%s", msg);
    struct mvm_token t = {.kind = TOK_ERROR, .pos = pos, .start = lx->cur};
    return t;
}

static struct mvm_token lexer_number(struct mvm_lexer *lx, struct mvm_token t)
{
    uint64_t v = 0;
    while (is_digit(lexer_peek(lx, 0))) {
        unsigned d = (unsigned)(lexer_peek(lx, 0) - '0');
        if (v > (MVM_INT_LITERAL_MAX - d) / 10)
            return lexer_error(lx, t.pos, "integer literal too large");
        v = v * 10 + d;
        lexer_advance(lx);
    }
    if (is_ident_char(lexer_peek(lx, 0)))
        return lexer_error(lx, lx->pos, "invalid character in integer literal");
    t.kind = TOK_INT;
    t.value = v;
    return t;
}

static const struct {
    const char *word;
    enum mvm_token_kind kind;
} keywords[] = {
    {"fn", TOK_FN},       {"var", TOK_VAR},       {"if", TOK_IF},       {"else", TOK_ELSE},
    {"while", TOK_WHILE}, {"return", TOK_RETURN}, {"print", TOK_PRINT},
};

static struct mvm_token lexer_word(struct mvm_lexer *lx, struct mvm_token t)
{
    while (is_ident_char(lexer_peek(lx, 0)))
        lexer_advance(lx);
    t.len = (size_t)(lx->cur - t.start);
    t.kind = TOK_IDENT;
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (strlen(keywords[i].word) == t.len && memcmp(keywords[i].word, t.start, t.len) == 0)
            t.kind = keywords[i].kind;
    return t;
}

/* A string literal: printable ASCII and the escapes \n \t \\ \" on one line. */
static struct mvm_token lexer_string(struct mvm_lexer *lx, struct mvm_token t)
{
    lexer_advance(lx); /* opening quote */
    for (;;) {
        int c = lexer_peek(lx, 0);
        if (c == -1 || c == '\n')
            return lexer_error(lx, t.pos, "unterminated string literal");
        if (c == '"')
            break;
        if (c == '\\') {
            int e = lexer_peek(lx, 1);
            if (e != 'n' && e != 't' && e != '\\' && e != '"')
                return lexer_error(lx, lx->pos, "unknown escape sequence in string literal");
            lexer_advance(lx);
        } else if (c < 0x20 || c > 0x7e) {
            return lexer_error(lx, lx->pos, "invalid character in string literal");
        }
        lexer_advance(lx);
    }
    lexer_advance(lx); /* closing quote */
    t.kind = TOK_STRING;
    t.len = (size_t)(lx->cur - t.start);
    return t;
}

/* Punctuation of one or two characters; TOK_EOF if `c` is none. */
static enum mvm_token_kind punct_kind(int c, int next, size_t *len)
{
    *len = 2;
    if (c == '=' && next == '=')
        return TOK_EQ;
    if (c == '!' && next == '=')
        return TOK_NE;
    if (c == '<' && next == '=')
        return TOK_LE;
    if (c == '>' && next == '=')
        return TOK_GE;
    if (c == '&' && next == '&')
        return TOK_AND;
    if (c == '|' && next == '|')
        return TOK_OR;
    *len = 1;
    switch (c) {
    case '(': return TOK_LPAREN;
    case ')': return TOK_RPAREN;
    case '{': return TOK_LBRACE;
    case '}': return TOK_RBRACE;
    case ',': return TOK_COMMA;
    case ';': return TOK_SEMI;
    case '=': return TOK_ASSIGN;
    case '+': return TOK_PLUS;
    case '-': return TOK_MINUS;
    case '*': return TOK_STAR;
    case '/': return TOK_SLASH;
    case '%': return TOK_PERCENT;
    case '<': return TOK_LT;
    case '>': return TOK_GT;
    case '!': return TOK_NOT;
    default: return TOK_EOF;
    }
}

static struct mvm_token lexer_bad_char(struct mvm_lexer *lx, int c)
{
    char msg[64];
    if (c > 0x20 && c < 0x7f)
        snprintf(msg, sizeof msg, "unexpected character '%c'", c);
    else
        snprintf(msg, sizeof msg, "unexpected byte 0x%02x", (unsigned)c);
    return lexer_error(lx, lx->pos, msg);
}

struct mvm_token mvm_lexer_next(struct mvm_lexer *lx)
{
    lexer_skip_space_and_comments(lx);
    struct mvm_token t = {.kind = TOK_EOF, .pos = lx->pos, .start = lx->cur};
    int c = lexer_peek(lx, 0);
    if (c == -1)
        return t;
    if (is_digit(c))
        return lexer_number(lx, t);
    if (is_ident_start(c))
        return lexer_word(lx, t);
    if (c == '"')
        return lexer_string(lx, t);
    size_t len;
    t.kind = punct_kind(c, lexer_peek(lx, 1), &len);
    if (t.kind == TOK_EOF)
        return lexer_bad_char(lx, c);
    for (size_t i = 0; i < len; i++)
        lexer_advance(lx);
    t.len = len;
    return t;
}

const char *mvm_token_kind_name(enum mvm_token_kind kind)
{
    static const char *const names[] = {
        [TOK_EOF] = "end of file", [TOK_ERROR] = "invalid token",
        [TOK_INT] = "integer",     [TOK_IDENT] = "identifier",
        [TOK_STRING] = "string",   [TOK_FN] = "'fn'",
        [TOK_VAR] = "'var'",       [TOK_IF] = "'if'",
        [TOK_ELSE] = "'else'",     [TOK_WHILE] = "'while'",
        [TOK_RETURN] = "'return'", [TOK_PRINT] = "'print'",
        [TOK_LPAREN] = "'('",      [TOK_RPAREN] = "')'",
        [TOK_LBRACE] = "'{'",      [TOK_RBRACE] = "'}'",
        [TOK_COMMA] = "','",       [TOK_SEMI] = "';'",
        [TOK_ASSIGN] = "'='",      [TOK_PLUS] = "'+'",
        [TOK_MINUS] = "'-'",       [TOK_STAR] = "'*'",
        [TOK_SLASH] = "'/'",       [TOK_PERCENT] = "'%'",
        [TOK_EQ] = "'=='",         [TOK_NE] = "'!='",
        [TOK_LT] = "'<'",          [TOK_LE] = "'<='",
        [TOK_GT] = "'>'",          [TOK_GE] = "'>='",
        [TOK_NOT] = "'!'",         [TOK_AND] = "'&&'",
        [TOK_OR] = "'||'",
    };
    if ((unsigned)kind < sizeof names / sizeof names[0] && names[kind])
        return names[kind];
    return "token";
}
