/*
 * _jf_null_hook: the do-nothing PEP 523 evaluator, the floor every eval hook
 * pays (each Python call then goes through C). bench_python.py compares
 * jitframes and CPython's own -X perf against it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *null_eval(PyThreadState *ts, struct _PyInterpreterFrame *frame, int throwflag)
{
    return _PyEval_EvalFrameDefault(ts, frame, throwflag);
}

static PyObject *install(PyObject *self, PyObject *unused)
{
    _PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(), null_eval);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"install", install, METH_NOARGS, "Install the do-nothing evaluator."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_jf_null_hook", NULL, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__jf_null_hook(void);

PyMODINIT_FUNC PyInit__jf_null_hook(void)
{
    return PyModule_Create(&module);
}
