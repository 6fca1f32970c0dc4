/*
 * The PEP 523 frame-evaluation hook that gives every Python code object its
 * own jitframes trampoline. Kept apart from the module's Python API because
 * this file alone reads CPython's internal frame layout (it differs per minor
 * version; the extension is built once per interpreter).
 */
#ifndef JITFRAMES_PY_HOOK_H
#define JITFRAMES_PY_HOOK_H

#include <Python.h>

/* Reserve the code-object extra slot that caches each code object's
 * trampoline (its free function destroys the trampoline with the code
 * object). Once per process; -1 with a Python exception on failure. */
int jfpy_hook_prepare(void);

/* 1 if the interpreter evaluates frames with CPython's own evaluator (no
 * other PEP 523 hook: -X perf, a debugger's, ours...). */
int jfpy_default_evaluator_installed(PyInterpreterState *interp);

/* Install or remove our evaluator. Install only over the default one. */
void jfpy_hook_install(PyInterpreterState *interp);
void jfpy_hook_remove(PyInterpreterState *interp);

/* From now on, a code object that dies keeps its trampoline instead of
 * destroying it (whose copy would then be reused for another function): a
 * perf map cannot say that an address changed owner, so once the perf map
 * sink is on no trampoline address may ever name two functions. CPython's
 * -X perf keeps every trampoline too. */
void jfpy_hook_keep_dead_trampolines(void);

/* Trampolines made so far, and creations that failed (the code object then
 * runs directly on the default evaluator). */
unsigned long long jfpy_hook_trampolines_created(void);
unsigned long long jfpy_hook_trampolines_failed(void);

#endif
