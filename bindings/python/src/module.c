/*
 * The _jitframes extension module: the Python API (activate, deactivate,
 * standby, is_active, active_sinks, stats) over the jitframes library and the eval
 * hook. Mirrors CPython's sys.activate_stack_trampoline trio; the package's
 * __init__.py adds the version check, start-up activation and `-m`.
 *
 * The library is initialised once, at the first activation, and stays so:
 * code objects keep their trampolines (registered) across deactivation, and
 * a later activation only re-installs the hook and adjusts the sinks.
 */
#define PY_SSIZE_T_CLEAN
#include "hook.h"

#include <jitframes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

static int library_ready;     /* jf_init succeeded (never balanced: see above) */
static unsigned active_sinks; /* 0: inactive */

/* ---- errors ----------------------------------------------------------------- */

/* Raise the Python exception matching a jitframes error code. */
static PyObject *raise_jf_error(int err, const char *doing)
{
    PyObject *type = err == JF_EINVAL   ? PyExc_ValueError
                     : err == JF_ENOMEM ? PyExc_MemoryError
                                        : PyExc_OSError;
    const char *msg = jf_last_error(), *code = jf_strerror(err);
    if (strstr(msg, code)) /* the library's message names the code already */
        return PyErr_Format(type, "jitframes: %s: %s", doing, msg);
    return PyErr_Format(type, "jitframes: %s: %s (%s)", doing, msg, code);
}

/* ---- the environment ---------------------------------------------------------- */

/* getenv(name), except under `python -E` or `-I` (sys.flags.ignore_environment:
 * the interpreter reads no PYTHON* variable, and we read no JITFRAMES* one)
 * and in a setuid or setgid interpreter (AT_SECURE: the caller's variables
 * must not choose where a privileged process writes). */
static const char *python_getenv(const char *name)
{
    if (getauxval(AT_SECURE))
        return NULL;
    PyObject *flags = PySys_GetObject("flags"); /* borrowed */
    PyObject *ignore = flags ? PyObject_GetAttrString(flags, "ignore_environment") : NULL;
    int ignored = ignore ? PyObject_IsTrue(ignore) : 1;
    Py_XDECREF(ignore);
    if (!ignore || ignored < 0)
        PyErr_Clear(); /* cannot tell: read nothing */
    return ignored ? NULL : getenv(name);
}

/* ---- $JITFRAMES_LOG: the library is initialised with JF_CONFIG_IGNORE_ENV
 * (the sinks come from activate(), not $JITFRAMES), so its diagnostics are
 * routed to stderr here. */

static int log_threshold = -1;

static void log_to_stderr(void *ctx, int level, const char *message)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    if (level <= log_threshold)
        dprintf(STDERR_FILENO, "jitframes %s: %s\n", names[level & 3], message);
}

static void configure_logging_from_env(void)
{
    static const char *const words[] = {"error", "warning", "info", "debug"};
    const char *value = python_getenv("JITFRAMES_LOG");
    if (!value || !*value)
        return;
    log_threshold = JF_LOG_WARNING; /* "1" and anything unknown */
    for (int i = 0; i < 4; i++)
        if (strcmp(value, words[i]) == 0)
            log_threshold = i;
    jf_set_log_callback(log_to_stderr, NULL);
}

static int control_open; /* the control channel was asked for */

/* Initialise the library once; `control` also opens the control channel
 * (a later call may add it: jf_init only adds, and stays unbalanced). */
static int ensure_library(int control)
{
    if (library_ready && (control_open || !control))
        return 0;
    if (!library_ready && jfpy_hook_prepare() != 0)
        return -1;
    if (!library_ready)
        configure_logging_from_env();
    jf_config config = JF_CONFIG_INIT;
    config.flags = JF_CONFIG_IGNORE_ENV | (control ? JF_CONFIG_CONTROL : 0);
    const char *dir = python_getenv("JITFRAMES_DIR");
    config.dump_dir = dir && *dir ? dir : NULL;
    int rc = jf_init(&config);
    if (rc != 0) {
        if (rc == JF_ESINK) /* initialised, without the channel */
            jf_shutdown();
        raise_jf_error(rc, control ? "cannot open the control channel" : "cannot initialise");
        return -1;
    }
    library_ready = 1;
    control_open |= control;
    return 0;
}

/* Enable exactly `wanted`: all or nothing (a sink that cannot start, such as
 * jitdump in an unwritable JITFRAMES_DIR, leaves the sinks as they were). */
static int set_sinks(unsigned wanted)
{
    unsigned before = jf_enabled_sinks();
    int rc = jf_enable(wanted & ~before);
    if (rc != 0) {
        PyObject *unused = raise_jf_error(rc, "cannot start a sink");
        (void)unused;
        jf_disable(jf_enabled_sinks() & ~before);
        return -1;
    }
    jf_disable(before & ~wanted);
    if (wanted & JF_SINK_PERFMAP)
        jfpy_hook_keep_dead_trampolines();
    return 0;
}

/* ---- the API ------------------------------------------------------------------ */

static int parse_sinks(const char *list, unsigned *sinks)
{
    int rc = jf_parse_sinks(list, sinks);
    if (rc != 0) {
        PyErr_Format(PyExc_ValueError, "jitframes: invalid sinks '%s': %s", list, jf_last_error());
        return -1;
    }
    if (*sinks == 0) {
        PyErr_SetString(PyExc_ValueError, "jitframes: no sink given (use perfmap, jitdump, gdb, "
                                          "unwind or all, comma-separated)");
        return -1;
    }
    return 0;
}

static PyObject *activate(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"sinks", NULL};
    const char *list = "perfmap";
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|s:activate", keywords, &list))
        return NULL;
    unsigned sinks;
    if (parse_sinks(list, &sinks) != 0)
        return NULL;
    PyInterpreterState *interp = PyInterpreterState_Get();
    if (interp != PyInterpreterState_Main()) /* the code extra slot is the main one's */
        return PyErr_Format(PyExc_RuntimeError, "jitframes: only the main interpreter can be activated");
    if (active_sinks)
        return PyErr_Format(PyExc_RuntimeError,
                            "jitframes is already active; call jitframes.deactivate() first");
    if (!jfpy_default_evaluator_installed(interp))
        return PyErr_Format(PyExc_RuntimeError,
                            "jitframes: another frame evaluator (PEP 523) is installed, e.g. "
                            "CPython's -X perf / sys.activate_stack_trampoline() or a debugger's; "
                            "deactivate it first");
    if (ensure_library(0) != 0 || set_sinks(sinks) != 0)
        return NULL;
    active_sinks = sinks;
    jfpy_hook_install(interp);
    Py_RETURN_NONE;
}

static PyObject *deactivate(PyObject *self, PyObject *unused)
{
    if (!active_sinks)
        return PyErr_Format(PyExc_RuntimeError, "jitframes is not active");
    jfpy_hook_remove(PyInterpreterState_Get());
    active_sinks = 0;
    Py_RETURN_NONE;
}

/* ---- standby: activated from outside ------------------------------------------ */

/* On the interpreter's main thread (a pending call): follow the sinks the
 * control channel left on. The hook goes in when the first sink comes on,
 * out when the last goes off. */
static int follow_sinks(void *unused)
{
    (void)unused;
    unsigned now = jf_enabled_sinks();
    PyInterpreterState *interp = PyInterpreterState_Main();
    if (now & JF_SINK_PERFMAP)
        jfpy_hook_keep_dead_trampolines();
    if (now && !active_sinks) {
        if (!jfpy_default_evaluator_installed(interp)) {
            dprintf(STDERR_FILENO, "jitframes: enabled from outside, but another frame evaluator "
                                   "(PEP 523) is installed: Python functions get no frames\n");
            return 0;
        }
        jfpy_hook_install(interp);
    } else if (!now && active_sinks) {
        jfpy_hook_remove(interp);
    }
    active_sinks = now;
    return 0;
}

/* On the control channel's thread (after it answered the tool). Py_AddPendingCall
 * needs no GIL and runs follow_sinks on the main thread at its next bytecode
 * boundaries (a main thread blocked in C waits until it returns). */
static void on_control(void *ctx, unsigned sinks)
{
    (void)ctx;
    (void)sinks;
    if (Py_AddPendingCall(follow_sinks, NULL) != 0) {
        dprintf(STDERR_FILENO, "jitframes: the interpreter's pending calls are full; "
                               "the change of sinks takes effect at the next one\n");
        return;
    }
#if PY_VERSION_HEX < 0x030D0000
    /* 3.11 and 3.12 flag a pending call added from another thread only when
     * the main thread next recomputes its eval breaker, which may be never:
     * asking for the GIL makes it do so now (it runs its pending calls, then
     * hands the GIL over). Not while the interpreter is finalizing, when a
     * foreign thread taking the GIL is made to exit. */
    if (Py_IsInitialized() && !_Py_IsFinalizing()) {
        PyGILState_STATE g = PyGILState_Ensure();
        PyGILState_Release(g);
    }
#endif
}

static PyObject *standby(PyObject *self, PyObject *unused)
{
    if (PyInterpreterState_Get() != PyInterpreterState_Main())
        return PyErr_Format(PyExc_RuntimeError, "jitframes: only the main interpreter can be in standby");
    jf_set_control_callback(on_control, NULL);
    if (ensure_library(1) != 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *is_active(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(active_sinks != 0);
}

static PyObject *sink_tuple(unsigned sinks)
{
    PyObject *words = PyList_New(0);
    for (int i = 0; words && i < JF_SINK_COUNT; i++) {
        if (!(sinks & (1u << i)))
            continue;
        PyObject *w = PyUnicode_FromString(jf_sink_name(1u << i));
        if (!w || PyList_Append(words, w) != 0) {
            Py_XDECREF(w);
            Py_CLEAR(words);
            break;
        }
        Py_DECREF(w);
    }
    if (!words)
        return NULL;
    PyObject *tuple = PyList_AsTuple(words);
    Py_DECREF(words);
    return tuple;
}

static PyObject *get_active_sinks(PyObject *self, PyObject *unused)
{
    return sink_tuple(active_sinks ? jf_enabled_sinks() : 0);
}

static PyObject *sink_stats_dict(const jf_sink_stats *s)
{
    return Py_BuildValue("{sKsKsKsKsOsO}", "regions", (unsigned long long)s->regions, "bytes",
                         (unsigned long long)s->bytes, "errors", (unsigned long long)s->errors, "objects",
                         (unsigned long long)s->objects, "enabled", s->enabled ? Py_True : Py_False, "failed",
                         s->failed ? Py_True : Py_False);
}

static PyObject *stats(PyObject *self, PyObject *unused)
{
    struct jf_stats st = JF_STATS_INIT;
    if (library_ready && jf_stats(&st) != 0)
        return raise_jf_error(JF_EIO, "jf_stats");
    PyObject *sinks = PyDict_New();
    for (int i = 0; sinks && i < JF_SINK_COUNT; i++) {
        PyObject *d = sink_stats_dict(&st.sink[i]);
        if (!d || PyDict_SetItemString(sinks, jf_sink_name(1u << i), d) != 0)
            Py_CLEAR(sinks);
        Py_XDECREF(d);
    }
    if (!sinks)
        return NULL;
    return Py_BuildValue("{sKsKsKsN}", "live_regions", (unsigned long long)st.live_regions,
                         "trampolines_created", jfpy_hook_trampolines_created(), "trampolines_failed",
                         jfpy_hook_trampolines_failed(), "sinks", sinks);
}

static PyMethodDef methods[] = {
    {"activate", (PyCFunction)(void (*)(void))activate, METH_VARARGS | METH_KEYWORDS,
     "activate(sinks='perfmap')\n--\n\nGive every Python function called from now on its own "
     "native frame, py::<qualname>:<filename>, written to the sinks (a comma list of perfmap, "
     "jitdump, gdb, unwind, or all). ValueError on an unknown sink; RuntimeError if already "
     "active or another frame evaluator is installed; OSError if a sink cannot start."},
    {"deactivate", deactivate, METH_NOARGS,
     "deactivate()\n--\n\nRestore CPython's own evaluator. Files written stay; functions "
     "called from now on get no new frames. RuntimeError if not active."},
    {"standby", standby, METH_NOARGS,
     "standby()\n--\n\nInitialise jitframes with no sink and open its control channel: nothing "
     "is written and no hook runs until `jitframes enable PID SINKS` (or `jitframes record PID`) "
     "turns sinks on from outside; the hook then goes in on the main thread, and out again when "
     "the last sink is disabled. RuntimeError outside the main interpreter; OSError if the channel "
     "cannot open."},
    {"is_active", is_active, METH_NOARGS, "is_active()\n--\n\nTrue while activated."},
    {"active_sinks", get_active_sinks, METH_NOARGS,
     "active_sinks()\n--\n\nThe sinks in use, e.g. ('perfmap', 'jitdump'); () when inactive."},
    {"stats", stats, METH_NOARGS,
     "stats()\n--\n\nCounters: live regions, trampolines made and failed, and per sink what "
     "jf_stats() reports."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "_jitframes",
    "jitframes for CPython: per-function native frames for perf, gdb and lldb.",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__jitframes(void); /* the only symbol CPython looks up */

PyMODINIT_FUNC PyInit__jitframes(void)
{
    PyObject *m = PyModule_Create(&module);
    /* The library's version: the package's, `python -m jitframes --version`. */
    if (m != NULL && PyModule_AddStringConstant(m, "__version__", jf_version_string()) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
