/*
 * The lexer: turns program text into tokens, each with its position.
 *
 * Tokens: integer literals (decimal), identifiers, string literals (only used
 * as print arguments), the keywords fn var if else while return print, and
 * the punctuation ( ) { } , ; = + - * / % == != < <= > >= ! && ||.
 * Comments run from // to the end of the line.
 */
#ifndef MVM_LEXER_H
#define MVM_LEXER_H

#include "diag.h"

#include <stddef.h>
#include <stdint.h>

enum mvm_token_kind {
    TOK_EOF,
    TOK_ERROR, /* bad input: the message is in the lexer's `error` */
    TOK_INT,
    TOK_IDENT,
    TOK_STRING,
    /* keywords */
    TOK_FN,
    TOK_VAR,
    TOK_IF,
    TOK_ELSE,
    TOK_WHILE,
    TOK_RETURN,
    TOK_PRINT,
    /* punctuation */
    TOK_LPAREN,
    TOK_RPAREN,
    TOK_LBRACE,
    TOK_RBRACE,
    TOK_COMMA,
    TOK_SEMI,
    TOK_ASSIGN,
    TOK_PLUS,
    TOK_MINUS,
    TOK_STAR,
    TOK_SLASH,
    TOK_PERCENT,
    TOK_EQ,
    TOK_NE,
    TOK_LT,
    TOK_LE,
    TOK_GT,
    TOK_GE,
    TOK_NOT,
    TOK_AND,
    TOK_OR,
};

/* Integer literals up to 2^63 are lexed; only `-9223372036854775808` may use 2^63. */
#define MVM_INT_LITERAL_MAX ((uint64_t)1 << 63)

struct mvm_token {
    enum mvm_token_kind kind;
    struct mvm_pos pos;
    const char *start; /* into the source text */
    size_t len;
    uint64_t value; /* TOK_INT: magnitude, <= MVM_INT_LITERAL_MAX */
};

struct mvm_lexer {
    const char *cur;
    const char *end;
    struct mvm_pos pos;
    char error[64]; /* why the last TOK_ERROR was returned */
};

void mvm_lexer_init(struct mvm_lexer *lx, const char *text, size_t len);

/*
 * The next token; TOK_ERROR on a bad character or literal, with the message
 * in lx->error (the parser reports it only when it reaches that token, so an
 * earlier syntax error is reported first).
 */
struct mvm_token mvm_lexer_next(struct mvm_lexer *lx);

/* How a token kind is spelled in messages: "';'", "identifier", "end of file". */
const char *mvm_token_kind_name(enum mvm_token_kind kind);

#endif
