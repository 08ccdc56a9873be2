/* dims._tables._columnar: rows of Python values laid out as Arrow column buffers.
 *
 * Why it exists: the readers build each table as a list of rows (lists or tuples), and
 * pyarrow's conversion of Python values (pa.array of a struct) is slow, one generic
 * conversion per value (docs/benchmarks.md). The values are already checked and typed by then, so
 * laying them out is plain copying, done here in C.
 *
 * Why it can be trusted: it takes only what it is sure of (exact str, float, int, bool and
 * datetime objects, None as null) and answers None for anything else, so that the caller
 * converts that table with pyarrow as before. tests/tables/test_columnar.py checks it against
 * pyarrow's own conversion.
 *
 * columns(rows, kinds) -> list of (null_count, validity, offsets, data) or None
 *   rows   a list of lists or tuples, each exactly len(kinds) long
 *   kinds  one letter per column: s string (utf8), d double, i int64, b bool,
 *          t timestamp in microseconds (a datetime with a time zone, stored in UTC)
 *   validity is None when the column has no null; offsets is None but for strings.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <stdint.h>
#include <string.h>

#include "timestamps.h"

/* Why a column cannot be laid out here; the caller falls back to pyarrow. */
#define UNSUPPORTED 1

static PyObject *utcoffset_name;

static PyObject **row_items(PyObject *row, Py_ssize_t width)
{
    if (PyList_CheckExact(row) && PyList_GET_SIZE(row) == width)
        return ((PyListObject *)row)->ob_item;
    if (PyTuple_CheckExact(row) && PyTuple_GET_SIZE(row) == width)
        return ((PyTupleObject *)row)->ob_item;
    return NULL;
}

/* Microseconds since the epoch, in UTC, of an aware datetime (timestamps.h); a naive one,
 * or one in a zone other than datetime.timezone, goes to pyarrow's rule. */
static int timestamp_of(PyObject *value, int64_t *out)
{
    int status = aware_micros(value, utcoffset_name, out);
    return status > 0 ? UNSUPPORTED : status;
}

/* One fixed-width value (or a bool's bit) into `data` at row i. */
static int put_fixed(char kind, PyObject *value, char *data, Py_ssize_t i)
{
    switch (kind) {
    case 'd':
        if (!PyFloat_CheckExact(value))
            return UNSUPPORTED;
        ((double *)data)[i] = PyFloat_AS_DOUBLE(value);
        return 0;
    case 'i': {
        if (!PyLong_CheckExact(value))
            return UNSUPPORTED;
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow)
            return UNSUPPORTED;
        if (v == -1 && PyErr_Occurred())
            return -1;
        ((int64_t *)data)[i] = (int64_t)v;
        return 0;
    }
    case 'b':
        if (value == Py_True)
            data[i >> 3] |= (char)(1 << (i & 7));
        else if (value != Py_False)
            return UNSUPPORTED;
        return 0;
    case 't':
        return timestamp_of(value, &((int64_t *)data)[i]);
    }
    return UNSUPPORTED;
}

/* A null at row i: cleared in the validity bitmap (made on the first null). */
static int put_null(PyObject **validity, Py_ssize_t n, Py_ssize_t i)
{
    if (*validity == NULL) {
        *validity = PyBytes_FromStringAndSize(NULL, (n + 7) / 8);
        if (*validity == NULL)
            return -1;
        memset(PyBytes_AS_STRING(*validity), 0xff, (size_t)((n + 7) / 8));
    }
    PyBytes_AS_STRING(*validity)[i >> 3] &= (char)~(1 << (i & 7));
    return 0;
}

/* One column being laid out. Fixed-width data is sized up front; string bytes grow. */
typedef struct {
    char kind;
    Py_ssize_t nulls;
    PyObject *validity; /* bytes, made on the first null */
    PyObject *data;     /* bytes: the values (fixed width) */
    PyObject *offsets;  /* bytes: int32 offsets (strings) */
    char *text;         /* string bytes so far (PyMem) */
    Py_ssize_t size, capacity;
} Builder;

static int builder_init(Builder *b, char kind, Py_ssize_t n)
{
    memset(b, 0, sizeof(*b));
    b->kind = kind;
    if (kind == 's') {
        b->offsets = PyBytes_FromStringAndSize(NULL, (n + 1) * (Py_ssize_t)sizeof(int32_t));
        if (b->offsets == NULL)
            return -1;
        ((int32_t *)PyBytes_AS_STRING(b->offsets))[0] = 0;
        b->capacity = 16 * n + 64;
        b->text = PyMem_Malloc((size_t)b->capacity);
        return b->text == NULL ? (PyErr_NoMemory(), -1) : 0;
    }
    Py_ssize_t size = kind == 'b' ? (n + 7) / 8 : n * 8;
    b->data = PyBytes_FromStringAndSize(NULL, size);
    if (b->data == NULL)
        return -1;
    memset(PyBytes_AS_STRING(b->data), 0, (size_t)size); /* nulls read as 0, bools false */
    return 0;
}

static void builder_clear(Builder *b)
{
    Py_CLEAR(b->validity);
    Py_CLEAR(b->data);
    Py_CLEAR(b->offsets);
    PyMem_Free(b->text);
    b->text = NULL;
}

static int put_text(Builder *b, PyObject *value, Py_ssize_t i)
{
    Py_ssize_t size;
    const char *utf8;
    if (!PyUnicode_CheckExact(value))
        return UNSUPPORTED;
    utf8 = PyUnicode_AsUTF8AndSize(value, &size);
    if (utf8 == NULL) {
        PyErr_Clear(); /* a lone surrogate: pyarrow says what is wrong */
        return UNSUPPORTED;
    }
    if (b->size + size > INT32_MAX)
        return UNSUPPORTED;
    if (b->size + size > b->capacity) {
        Py_ssize_t capacity = (b->size + size) * 2;
        char *grown = PyMem_Realloc(b->text, (size_t)capacity);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        b->text = grown;
        b->capacity = capacity;
    }
    memcpy(b->text + b->size, utf8, (size_t)size);
    b->size += size;
    ((int32_t *)PyBytes_AS_STRING(b->offsets))[i + 1] = (int32_t)b->size;
    return 0;
}

static int put(Builder *b, PyObject *value, Py_ssize_t n, Py_ssize_t i)
{
    if (value == Py_None) {
        b->nulls++;
        if (b->kind == 's')
            ((int32_t *)PyBytes_AS_STRING(b->offsets))[i + 1] = (int32_t)b->size;
        return put_null(&b->validity, n, i);
    }
    if (b->kind == 's')
        return put_text(b, value, i);
    return put_fixed(b->kind, value, PyBytes_AS_STRING(b->data), i);
}

/* (null_count, validity, offsets, data): the column's buffers, as bytes. */
static PyObject *builder_finish(Builder *b)
{
    if (b->kind == 's') {
        b->data = PyBytes_FromStringAndSize(b->text, b->size);
        if (b->data == NULL)
            return NULL;
    }
    return Py_BuildValue("(nOOO)", b->nulls, b->validity ? b->validity : Py_None,
                         b->offsets ? b->offsets : Py_None, b->data);
}

/* Every row, every column: each row is visited once (its values are scattered in memory). */
static int lay_out(PyObject *rows, Builder *builders, Py_ssize_t width)
{
    Py_ssize_t n = PyList_GET_SIZE(rows);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject **items = row_items(PyList_GET_ITEM(rows, i), width);
        if (items == NULL)
            return UNSUPPORTED;
        for (Py_ssize_t c = 0; c < width; c++) {
            int status = put(&builders[c], items[c], n, i);
            if (status)
                return status;
        }
    }
    return 0;
}

static PyObject *finish_all(Builder *builders, Py_ssize_t width)
{
    PyObject *out = PyList_New(width);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t c = 0; c < width; c++) {
        PyObject *column = builder_finish(&builders[c]);
        if (column == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, c, column);
    }
    return out;
}

static PyObject *columns(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *rows, *out = NULL;
    const char *kinds;
    Py_ssize_t width;
    if (!PyArg_ParseTuple(args, "O!s#:columns", &PyList_Type, &rows, &kinds, &width))
        return NULL;
    for (Py_ssize_t c = 0; c < width; c++) {
        if (kinds[c] == '\0' || strchr("sdibt", kinds[c]) == NULL)
            return PyErr_Format(PyExc_ValueError, "columns: unknown kind %c at %zd",
                                kinds[c] ? kinds[c] : '?', c);
    }
    Builder *builders = PyMem_Calloc((size_t)(width ? width : 1), sizeof(Builder));
    if (builders == NULL)
        return PyErr_NoMemory();
    Py_ssize_t made = 0, n = PyList_GET_SIZE(rows);
    int status = 0;
    for (; made < width && status == 0; made++)
        status = builder_init(&builders[made], kinds[made], n);
    if (status == 0)
        status = lay_out(rows, builders, width);
    if (status == 0)
        out = finish_all(builders, width);
    for (Py_ssize_t c = 0; c < made; c++)
        builder_clear(&builders[c]);
    PyMem_Free(builders);
    if (status == UNSUPPORTED)
        Py_RETURN_NONE;
    return out;
}

static PyMethodDef methods[] = {
    {"columns", columns, METH_VARARGS,
     "columns(rows, kinds): Arrow buffers of each column, or None to use pyarrow."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_columnar",
    "Rows of Python values laid out as Arrow column buffers.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__columnar(void)
{
    PyDateTime_IMPORT;
    if (PyDateTimeAPI == NULL)
        return NULL;
    utcoffset_name = PyUnicode_InternFromString("utcoffset");
    if (utcoffset_name == NULL)
        return NULL;
    return PyModule_Create(&module);
}
