/*
 * The parser: tokens to a syntax tree, by recursive descent.
 *
 * Grammar (braces are mandatory around bodies, so there is no dangling else):
 *   program   := function*
 *   function  := "fn" IDENT "(" [IDENT ("," IDENT)*] ")" block
 *   block     := "{" statement* "}"
 *   statement := "var" IDENT ["=" expr] ";" | IDENT "=" expr ";"
 *              | "if" "(" expr ")" block ["else" (block | if-statement)]
 *              | "while" "(" expr ")" block | "return" [expr] ";"
 *              | "print" "(" [arg ("," arg)*] ")" ";" | call ";" | block
 *   expr      := or;  or := and ("||" and)*;  and := equality ("&&" equality)*
 *   equality  := relation (("==" | "!=") relation)*
 *   relation  := sum (("<" | "<=" | ">" | ">=") sum)*
 *   sum       := product (("+" | "-") product)*
 *   product   := unary (("*" | "/" | "%") unary)*
 *   unary     := ("-" | "!") unary | primary
 *   primary   := INT | IDENT | call | "(" expr ")";  call := IDENT "(" [expr ("," expr)*] ")"
 */
#ifndef MVM_PARSER_H
#define MVM_PARSER_H

#include "arena.h"
#include "ast.h"
#include "diag.h"

#include <stddef.h>

/* Deepest nesting of expressions and blocks: keeps the recursion bounded. */
#define MVM_NESTING_MAX 200

/* Parse a whole program. Returns 0, or -1 with the first error in *diag. */
int mvm_parse(const char *text, size_t len, struct mvm_arena *arena, struct mvm_diag *diag,
              struct mvm_ast *out);

#endif
