/* Diagnostics: record the first error of a run and print it for the user. */
#include "diag.h"

#include <stdarg.h>
#include <string.h>

void mvm_diag_init(struct mvm_diag *d, const char *file)
{
    memset(d, 0, sizeof *d);
    d->file = file;
}

static void diag_set(struct mvm_diag *d, enum mvm_diag_kind kind, struct mvm_pos pos, const char *fmt,
                     va_list ap)
{
    if (d->set)
        return;
    d->set = 1;
    d->kind = kind;
    d->pos = pos;
    vsnprintf(d->message, sizeof d->message, fmt, ap);
}

void mvm_diag_error(struct mvm_diag *d, struct mvm_pos pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_set(d, MVM_DIAG_ERROR, pos, fmt, ap);
    va_end(ap);
}

void mvm_diag_runtime(struct mvm_diag *d, struct mvm_pos pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_set(d, MVM_DIAG_RUNTIME, pos, fmt, ap);
    va_end(ap);
}

void mvm_diag_add_frame(struct mvm_diag *d, const char *function, struct mvm_pos call_site)
{
    if (d->n_trace < MVM_TRACE_MAX) {
        d->trace[d->n_trace].function = function;
        d->trace[d->n_trace].pos = call_site;
        d->n_trace++;
    }
    d->trace_total++;
}

void mvm_diag_print(const struct mvm_diag *d, FILE *out)
{
    const char *what = d->kind == MVM_DIAG_RUNTIME ? "runtime error" : "error";
    fprintf(out, "%s:%u:%u: %s: %s\n", d->file, d->pos.line, d->pos.col, what, d->message);
    for (uint32_t i = 0; i < d->n_trace; i++)
        fprintf(out, "  called from %s at %s:%u:%u\n", d->trace[i].function, d->file, d->trace[i].pos.line,
                d->trace[i].pos.col);
    if (d->trace_total > d->n_trace)
        fprintf(out, "  ... and %llu more frames\n", (unsigned long long)(d->trace_total - d->n_trace));
}
