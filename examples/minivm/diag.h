/*
 * Diagnostics: where a minivm error happened and what it was.
 *
 * The interpreter core never prints. Every stage (lexer, parser, compiler,
 * evaluator) records its first error in a struct mvm_diag and stops; the
 * command-line driver prints it as "file:line:col: error: message".
 */
#ifndef MVM_DIAG_H
#define MVM_DIAG_H

#include <stdint.h>
#include <stdio.h>

#if defined(__GNUC__)
#define MVM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MVM_PRINTF(f, a)
#endif

/* A position in the source: 1-based line and column (a tab counts as one column). */
struct mvm_pos {
    uint32_t line;
    uint32_t col;
};

enum mvm_diag_kind { MVM_DIAG_ERROR, MVM_DIAG_RUNTIME };

/* Frames of a runtime error's call stack kept for the report (innermost first). */
#define MVM_TRACE_MAX 8

struct mvm_trace_entry {
    const char *function; /* interpreted function name, NUL-terminated */
    struct mvm_pos pos;   /* the call site inside it */
};

struct mvm_diag {
    const char *file; /* program path as shown to the user */
    int set;          /* 1 once an error is recorded; later ones are ignored */
    enum mvm_diag_kind kind;
    struct mvm_pos pos;
    char message[256];
    struct mvm_trace_entry trace[MVM_TRACE_MAX];
    uint32_t n_trace;     /* entries in trace[] */
    uint64_t trace_total; /* call frames unwound by the error (may exceed n_trace) */
};

void mvm_diag_init(struct mvm_diag *d, const char *file);

/* Record the first error: later calls do nothing once one is set. */
void mvm_diag_error(struct mvm_diag *d, struct mvm_pos pos, const char *fmt, ...) MVM_PRINTF(3, 4);
void mvm_diag_runtime(struct mvm_diag *d, struct mvm_pos pos, const char *fmt, ...) MVM_PRINTF(3, 4);

/* Note one caller frame while a runtime error unwinds the interpreted stack. */
void mvm_diag_add_frame(struct mvm_diag *d, const char *function, struct mvm_pos call_site);

/* Print "file:line:col: error: message" (and the call trace of a runtime error). */
void mvm_diag_print(const struct mvm_diag *d, FILE *out);

#endif
