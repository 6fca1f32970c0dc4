/* See frames.h. */
#define _GNU_SOURCE
#include "frames.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unwind.h>

void walk_with_backtrace(frame_walk *w)
{
    w->n = backtrace(w->pcs, MAX_FRAMES);
}

typedef _Unwind_Reason_Code (*backtrace_fn)(_Unwind_Trace_Fn, void *);
typedef _Unwind_Ptr (*get_ip_fn)(struct _Unwind_Context *);

typedef struct collect_state {
    frame_walk *w;
    get_ip_fn get_ip;
} collect_state;

static _Unwind_Reason_Code collect(struct _Unwind_Context *ctx, void *arg)
{
    collect_state *s = arg;
    if (s->w->n == MAX_FRAMES)
        return _URC_END_OF_STACK;
    s->w->pcs[s->w->n++] = (void *)s->get_ip(ctx);
    return _URC_NO_REASON;
}

int walk_with_unwind_backtrace(frame_walk *w, void *scope)
{
    void *bt = dlsym(scope, "_Unwind_Backtrace");
    void *ip = dlsym(scope, "_Unwind_GetIP");
    w->n = 0;
    if (!bt || !ip)
        return -1;
    backtrace_fn walk;
    collect_state s = {w, NULL};
    memcpy(&walk, &bt, sizeof walk);
    memcpy(&s.get_ip, &ip, sizeof s.get_ip);
    walk(collect, &s);
    return 0;
}

const char *frame_name(const void *pc, const jit_function *jit, const char *jit_label,
                       const jit_function *tramp, const char *tramp_label)
{
    /* A return address may sit just past the end of a function: look at pc - 1. */
    const void *at = (const void *)((uintptr_t)pc - 1);
    if (jit && jit_contains(jit, at))
        return jit_label;
    if (tramp && jit_contains(tramp, at))
        return tramp_label;
    Dl_info info;
    if (dladdr(at, &info) && info.dli_sname)
        return info.dli_sname;
    return "?";
}

static void print_walk(const frame_walk *w, const char *title, const jit_function *jit,
                       const jit_function *tramp)
{
    fprintf(stderr, "%s (%d frames):\n", title, w->n);
    for (int i = 0; i < w->n; i++)
        fprintf(stderr, "  #%-2d %p %s\n", i, w->pcs[i],
                frame_name(w->pcs[i], jit, "[jit frameless]", tramp, "[jit trampoline]"));
}

int walk_has_in_order(const frame_walk *w, const char *title, const char *const *expected, int n,
                      const jit_function *jit, const jit_function *tramp)
{
    print_walk(w, title, jit, tramp);
    int next = 0;
    for (int i = 0; i < w->n && next < n; i++)
        if (strcmp(frame_name(w->pcs[i], jit, "[jit frameless]", tramp, "[jit trampoline]"),
                   expected[next]) == 0)
            next++;
    if (next < n)
        fprintf(stderr, "  missing, in order: %s\n", expected[next]);
    return next == n;
}

int walk_has(const frame_walk *w, const char *name, const jit_function *jit, const jit_function *tramp)
{
    for (int i = 0; i < w->n; i++)
        if (strcmp(frame_name(w->pcs[i], jit, "[jit frameless]", tramp, "[jit trampoline]"), name) == 0)
            return 1;
    return 0;
}

const char *library_of(void *scope, const char *name)
{
    void *sym = dlsym(scope, name);
    Dl_info info;
    if (!sym || !dladdr(sym, &info) || !info.dli_fname)
        return NULL;
    return info.dli_fname;
}
