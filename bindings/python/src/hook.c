/*
 * The frame-evaluation hook (PEP 523). CPython calls it for every Python
 * frame it evaluates; it finds the code object's trampoline (made on the
 * first call, cached in a code extra slot, destroyed with the code object)
 * and evaluates the frame through it, so each Python function runs under a
 * native frame of its own: py::<qualname>:<filename>, as CPython names them.
 *
 * This is the one file that reads CPython's internal frame layout, hence
 * Py_BUILD_CORE_MODULE. Everything here runs with the GIL held.
 */
#define Py_BUILD_CORE_MODULE 1
#include "hook.h"

#include <internal/pycore_frame.h>

#include <jitframes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030E0000
#error "jitframes supports CPython 3.11, 3.12 and 3.13"
#endif
#ifdef Py_GIL_DISABLED
#error "jitframes does not support the free-threaded build (its cache relies on the GIL)"
#endif

typedef PyObject *(*eval_fn)(PyThreadState *, struct _PyInterpreterFrame *, int);

static Py_ssize_t extra_index = -1;
static unsigned long long created, failed;

/* A code object whose trampoline could not be made caches the default
 * evaluator itself, so it runs directly (and is not retried each call). */
#define DIRECT_EVAL ((void *)_PyEval_EvalFrameDefault)

static PyObject *frame_code(struct _PyInterpreterFrame *frame)
{
#if PY_VERSION_HEX >= 0x030D0000
    return frame->f_executable;
#else
    return (PyObject *)frame->f_code;
#endif
}

/* ---- the C stack guard ------------------------------------------------------
 * With any eval hook every Python call recurses in C. CPython 3.11 has no C
 * recursion limit, so a deep recursion under a raised sys.setrecursionlimit
 * overflows the thread's stack and crashes. The hook raises RecursionError
 * instead when less than a margin of the stack is left. The limit is per
 * thread; initial-exec TLS keeps the check to one load and one compare. */

/* Stored inverted, so that its initial 0 reads as "no room" and sends the
 * thread's first call to the slow path, which computes it. */
static __thread __attribute__((tls_model("initial-exec"))) uintptr_t inverted_stack_floor;

enum { STACK_MARGIN = 256 * 1024 };

/* The lowest address this thread's stack may reach before the guard trips;
 * 1 (never trips) when the stack's extent cannot be read. */
static __attribute__((noinline, cold)) uintptr_t compute_stack_floor(void)
{
    pthread_attr_t attr;
    void *low;
    size_t size;
    uintptr_t floor = 1;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return floor;
    if (pthread_attr_getstack(&attr, &low, &size) == 0 && size > 0) {
        size_t margin = size / 4 < STACK_MARGIN ? size / 4 : STACK_MARGIN;
        floor = (uintptr_t)low + margin;
    }
    pthread_attr_destroy(&attr);
    return floor;
}

/* The slow path of the check: the thread's first call, or a full stack. */
static __attribute__((noinline, cold)) int stack_check_slow(uintptr_t here)
{
    if (inverted_stack_floor == 0) {
        uintptr_t floor = compute_stack_floor();
        inverted_stack_floor = ~floor;
        return here <= floor;
    }
    return 1;
}

/* Raise RecursionError in the frame as if its first instruction had raised
 * it: the default evaluator, asked to throw, unwinds and frees the frame as
 * it does for any exception (returning NULL here would leak the frame). */
static __attribute__((noinline, cold)) PyObject *throw_recursion_error(PyThreadState *ts,
                                                                       struct _PyInterpreterFrame *frame)
{
    PyErr_SetString(PyExc_RecursionError, "maximum recursion depth exceeded: the C stack is nearly full "
                                          "(every Python call uses C stack while jitframes is active)");
    return _PyEval_EvalFrameDefault(ts, frame, 1);
}

/* ---- the code extra slot ---------------------------------------------------------
 * The hook reads the slot on every call. _PyCode_GetExtra is an out-of-line
 * call; CPython's block behind co_extra (Objects/codeobject.c) has been
 * {size, slots[]} since 3.6, so it is read inline — after a self-check at
 * the first activation proves the layout, else through the call. */

typedef struct code_extra_block {
    Py_ssize_t size;
    void *slots[1];
} code_extra_block;

static int extra_layout_checked;

/* The slot, read inline (extra_layout_checked) or through CPython's API. */
static void *entry_of(PyCodeObject *code)
{
    const code_extra_block *b = code->co_extra;
    return b && extra_index < b->size ? b->slots[extra_index] : NULL;
}

static void *entry_through_api(PyCodeObject *code)
{
    void *entry = NULL;
    return _PyCode_GetExtra((PyObject *)code, extra_index, &entry) == 0 ? entry : NULL;
}

/* Set a slot through CPython's API and read it back inline. */
static void check_extra_layout(void)
{
    PyObject *code = Py_CompileString("0", "<jitframes layout check>", Py_eval_input);
    static char marker;
    if (code && _PyCode_SetExtra(code, extra_index, &marker) == 0) {
        const code_extra_block *b = ((PyCodeObject *)code)->co_extra;
        extra_layout_checked = b && extra_index < b->size && b->slots[extra_index] == &marker;
        _PyCode_SetExtra(code, extra_index, NULL);
    }
    PyErr_Clear();
    Py_XDECREF(code);
}

/* ---- trampolines -------------------------------------------------------------- */

static int keep_dead_trampolines;

/* The code extra slot's free function: the code object is gone. */
static void destroy_trampoline(void *entry)
{
    if (entry && entry != DIRECT_EVAL && !keep_dead_trampolines)
        (void)jf_trampoline_destroy((jf_fn)entry); /* ENOTINIT at exit: nothing to do */
}

/* A str's UTF-8 bytes, or "?" when it has none (lone surrogates). The
 * caller saved any pending exception. */
static const char *utf8_or_placeholder(PyObject *s)
{
    const char *u = s && PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
    if (!u) {
        PyErr_Clear();
        return "?";
    }
    return u;
}

/* The exception being thrown into a frame (throwflag) must survive the
 * trampoline's creation. */
#if PY_VERSION_HEX >= 0x030C0000
typedef PyObject *saved_exception;
static saved_exception save_exception(void)
{
    return PyErr_GetRaisedException();
}
static void restore_exception(saved_exception e)
{
    PyErr_SetRaisedException(e);
}
#else
typedef struct {
    PyObject *type, *value, *tb;
} saved_exception;
static saved_exception save_exception(void)
{
    saved_exception e;
    PyErr_Fetch(&e.type, &e.value, &e.tb);
    return e;
}
static void restore_exception(saved_exception e)
{
    PyErr_Restore(e.type, e.value, e.tb);
}
#endif

/* Make code's trampoline and cache it; returns what to call (the default
 * evaluator when no trampoline can be had). Out of line: its name buffer
 * must not weigh on every Python call's stack. */
static __attribute__((noinline, cold)) void *make_trampoline(PyCodeObject *code)
{
    saved_exception pending = save_exception();
    char name[JF_NAME_MAX + 1];
    const char *file = utf8_or_placeholder(code->co_filename);
    snprintf(name, sizeof name, "py::%s:%s", utf8_or_placeholder(code->co_qualname), file);

    jf_trampoline_options opts = JF_TRAMPOLINE_OPTIONS_INIT;
    opts.file = file;
    opts.line = code->co_firstlineno > 0 ? (uint32_t)code->co_firstlineno : 0;
    jf_fn entry = NULL;
    void *result = DIRECT_EVAL;
    if (jf_trampoline_create((jf_fn)_PyEval_EvalFrameDefault, name, &opts, &entry) == 0) {
        result = (void *)entry;
        created++;
    } else {
        failed++;
    }
    if (_PyCode_SetExtra((PyObject *)code, extra_index, result) != 0) {
        PyErr_Clear(); /* out of memory: run directly, try again next call */
        destroy_trampoline(result);
        result = DIRECT_EVAL;
    }
    restore_exception(pending);
    return result;
}

/* The evaluator's rare paths, out of line so that its common path saves no
 * register and ends in a jump to the trampoline. */
static __attribute__((noinline, cold)) PyObject *eval_first_call(PyThreadState *ts,
                                                                 struct _PyInterpreterFrame *frame,
                                                                 int throwflag)
{
    eval_fn entry = (eval_fn)make_trampoline((PyCodeObject *)frame_code(frame));
    return entry(ts, frame, throwflag);
}

static PyObject *jitframes_eval(PyThreadState *ts, struct _PyInterpreterFrame *frame, int throwflag);

static __attribute__((noinline, cold)) PyObject *eval_low_on_stack(PyThreadState *ts,
                                                                   struct _PyInterpreterFrame *frame,
                                                                   int throwflag)
{
    if (stack_check_slow((uintptr_t)__builtin_frame_address(0)))
        return throw_recursion_error(ts, frame);
    return jitframes_eval(ts, frame, throwflag); /* the thread's first call: its floor is set now */
}

/* Where the inline read of the slot is not proven: CPython's API. */
static __attribute__((noinline)) PyObject *eval_through_api(PyThreadState *ts,
                                                            struct _PyInterpreterFrame *frame, int throwflag)
{
    eval_fn entry = (eval_fn)entry_through_api((PyCodeObject *)frame_code(frame));
    if (!entry)
        return eval_first_call(ts, frame, throwflag);
    return entry(ts, frame, throwflag);
}

static PyObject *jitframes_eval(PyThreadState *ts, struct _PyInterpreterFrame *frame, int throwflag)
{
    if (__builtin_expect((uintptr_t)__builtin_frame_address(0) <= ~inverted_stack_floor, 0))
        return eval_low_on_stack(ts, frame, throwflag);
    PyObject *code = frame_code(frame);
    if (__builtin_expect(!PyCode_Check(code), 0))
        return _PyEval_EvalFrameDefault(ts, frame, throwflag);
    if (__builtin_expect(!extra_layout_checked, 0))
        return eval_through_api(ts, frame, throwflag);
    eval_fn entry = (eval_fn)entry_of((PyCodeObject *)code);
    if (__builtin_expect(!entry, 0))
        return eval_first_call(ts, frame, throwflag);
    return entry(ts, frame, throwflag);
}

/* ---- installation ------------------------------------------------------------- */

int jfpy_hook_prepare(void)
{
    if (extra_index >= 0)
        return 0;
    extra_index = _PyEval_RequestCodeExtraIndex(destroy_trampoline);
    if (extra_index < 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "jitframes: no code extra slot left (CPython allows 255 per interpreter)");
        return -1;
    }
    check_extra_layout();
    return 0;
}

int jfpy_default_evaluator_installed(PyInterpreterState *interp)
{
    return _PyInterpreterState_GetEvalFrameFunc(interp) == _PyEval_EvalFrameDefault;
}

void jfpy_hook_install(PyInterpreterState *interp)
{
    _PyInterpreterState_SetEvalFrameFunc(interp, jitframes_eval);
}

void jfpy_hook_remove(PyInterpreterState *interp)
{
    _PyInterpreterState_SetEvalFrameFunc(interp, _PyEval_EvalFrameDefault);
}

void jfpy_hook_keep_dead_trampolines(void)
{
    keep_dead_trampolines = 1;
}

unsigned long long jfpy_hook_trampolines_created(void)
{
    return created;
}
unsigned long long jfpy_hook_trampolines_failed(void)
{
    return failed;
}
