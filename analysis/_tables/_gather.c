/* dims._tables._gather: decoded deployment records read straight into Arrow buffers.
 *
 * Why it exists: after msgspec has decoded a record into typed Structs, copying every
 * value into a Python row and the rows into Arrow buffers would be Python work per value,
 * twice, most of an export's time (docs/benchmarks.md). Here a program compiled from the same plans
 * (analysis/_tables/_gathered.py) walks the Structs once and appends each value to its
 * column's buffers: no row, no second pass, nothing to free.
 *
 * Why it can be trusted: it only copies. Every rule that needs judgement (a date-time, a
 * free-form part's shape and JSON text, a volume's source, a container's quantities, a
 * label that is not text) is a Python function of the plans, called with the value; a type
 * the columns do not expect, or any error, rolls every table back to where the record
 * began and raises, and the caller gives the record to the careful reader, as it did with
 * the Python rows. tests/tables/test_compiled_lane.py holds the result to the careful
 * reader's, table by table.
 *
 * Gatherer(kinds, levels, roots, wide, unknown_col, type_col, dumps, fallback, unset,
 *          id_field, raw_type)
 *   kinds   one string per table: a letter per column (s string, d double, i int64,
 *           b bool, t timestamp in microseconds from an aware datetime)
 *   levels  one (struct type, ops) per Struct type read; ops are tuples, see `compile_op`
 *   roots   the record's level for each Struct type it may come as (strict, lenient)
 *   wide    the table of the record's own row; unknown_col and type_col are in it
 * .read(record, deployment_id, unknown, listed_type) -> None; raises `fallback` (or the
 *   error a rule raised) with every table as it was before the call
 * .read_many(records, start, decode, listed_type, tags) -> (stop, error): the same for raw
 *   records decoded by `decode`, in one call, until one is given back (see below)
 * .take(table) -> (rows, [(null_count, validity, offsets, data), ...]), and empties it
 * .rows(table) -> rows held
 *
 * Held to msgspec's habits (tests/tables/test_gather_safety.py, and `make test-sanitize`
 * runs the table tests under AddressSanitizer and UBSan): no borrowed reference is held
 * across a call into Python (a rule may change or drop what is being read: the values read
 * are owned while rules run, and a list or dict a rule changed gives the record back); a
 * program that would read or write out of bounds is refused when made, and making one runs
 * no Python code; a rule that calls back into the Gatherer is refused (RuntimeError), so a
 * rollback never restores rows already taken; the Gatherer is GC-tracked. One interpreter,
 * with the GIL: single-phase init, a static type and process-wide globals (docs/install.md).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

#include "timestamps.h"

/* Operations of a level (see compile_op for their tuples). */
enum {
    OP_SCALAR = 0,   /* (op, field, table, col): the value as it is */
    OP_DATETIME = 1, /* (op, field, table, col, parse): the common form read here, any
                      * other by parse(text) -> aware datetime */
    OP_NESTED = 2,   /* (op, field, level): a nested Struct, read into the same rows */
    OP_JSON = 3,     /* (op, field, table, col, fn, nullable): fn(value) -> text or None */
    OP_ITEMS = 4,    /* (op, field, table, level, prefix, post, post_cols, count_col) */
    OP_LABELS = 5,   /* (op, field, table, kind, fn): one row per key of a dict */
    OP_EXTRA = 6,    /* (op, field, path, own_type, service_col): a field the spec lacks */
    OP_SOURCES = 7,  /* (op, fields, table, type_col, json_col): the one of several fields
                      * an object sets (a volume's source): its name and its value as JSON
                      * text; several: their names joined by commas and {name: value} */
    OP_ORIGINAL = 8, /* (op, field, table, col, path): the published spelling of a scalar,
                      * read after the spec's own: fills the column that one left null, or,
                      * when the two differ, goes to the unknown fields at `path` */
};

/* Where an item row's leading columns come from. */
enum { FROM_ID = 0, FROM_POSITION = 1, FROM_CONST = 2, FROM_OUTER_POSITION = 3,
       FROM_OUTER_COL = 4 };

typedef struct {
    int col, source;
    PyObject *value; /* FROM_CONST: the value; FROM_OUTER_COL: unused */
    int outer_col;
} Prefix;

typedef struct {
    int op;
    Py_ssize_t offset; /* of the field's slot in the Struct */
    int table, col, level, nullable, count_col, own_type, service_col;
    PyObject *fn;   /* OP_DATETIME, OP_JSON, OP_LABELS: the rule; OP_ITEMS: post */
    PyObject *arg;  /* OP_LABELS: the kind; OP_EXTRA, OP_ORIGINAL: the dotted path */
    Prefix *prefix;
    int nprefix;
    int *post_cols;
    int npost;
    Py_ssize_t *offsets; /* OP_SOURCES: each field's slot; arg holds their names */
    int noffsets;
} Op;

typedef struct {
    PyTypeObject *type;
    Op *ops;
    int nops;
} Level;

typedef struct {
    char kind;
    Py_ssize_t nulls;
    uint8_t *validity; /* one bit per row, always kept */
    char *data;        /* fixed width values, bits for bools, or string bytes */
    Py_ssize_t size;   /* string bytes used */
    Py_ssize_t data_capacity;
    int32_t *offsets; /* strings: rows + 1 */
} Column;

typedef struct {
    int ncols;
    Py_ssize_t rows, capacity;
    Column *cols;
    PyObject **scratch; /* the row being read: a new reference per column, NULL for null */
} Table;

typedef struct {
    PyObject_HEAD
    int ntables, nlevels, nroots, wide, unknown_col, type_col;
    int roots[8]; /* the record's level, one per Struct type it may be decoded into */
    Py_ssize_t id_offsets[8]; /* each root's slot of the record's id */
    PyTypeObject *raw_type;   /* what read_many reads: msgspec.Raw */
    Table *tables;
    Level *levels;
    PyObject *dumps, *fallback, *unset, *keep; /* keep: everything the ops borrow, raw_type */
    int busy; /* a call is running: a rule calling back in is refused (enter) */
} Gatherer;

/* What a record being read knows: its id, and the item row it is inside. */
typedef struct {
    PyObject *deployment_id;
    PyObject *own_type;
    PyObject *unknown; /* NULL until a field the spec lacks is found, when made here */
    int outer_table;
    Py_ssize_t outer_position;
    int owns_unknown;
} Context;

static PyObject *utcoffset_name;

/* ---------------------------------------------------------------- columns */

static int grow(void **buffer, Py_ssize_t *capacity, Py_ssize_t needed, size_t unit)
{
    if (needed <= *capacity)
        return 0;
    Py_ssize_t capacity_now = *capacity ? *capacity : 64;
    while (capacity_now < needed)
        capacity_now *= 2;
    void *grown = PyMem_Realloc(*buffer, (size_t)capacity_now * unit);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *buffer = grown;
    *capacity = capacity_now;
    return 0;
}

/* Room for one more row in every column of a table. */
static int table_reserve(Table *t)
{
    Py_ssize_t needed = t->rows + 1;
    if (needed <= t->capacity)
        return 0;
    Py_ssize_t capacity = t->capacity ? t->capacity * 2 : 1024;
    for (int c = 0; c < t->ncols; c++) {
        Column *col = &t->cols[c];
        uint8_t *validity = PyMem_Realloc(col->validity, (size_t)(capacity + 7) / 8);
        if (validity == NULL)
            return PyErr_NoMemory(), -1;
        col->validity = validity;
        if (col->kind == 's') {
            int32_t *offsets = PyMem_Realloc(col->offsets, (size_t)(capacity + 1) * 4);
            if (offsets == NULL)
                return PyErr_NoMemory(), -1;
            if (col->offsets == NULL)
                offsets[0] = 0;
            col->offsets = offsets;
        } else {
            Py_ssize_t bytes = col->kind == 'b' ? (capacity + 7) / 8 : capacity * 8;
            char *data = PyMem_Realloc(col->data, (size_t)bytes);
            if (data == NULL)
                return PyErr_NoMemory(), -1;
            col->data = data;
        }
    }
    t->capacity = capacity;
    return 0;
}

static inline void set_bit(uint8_t *bits, Py_ssize_t i, int on)
{
    if (on)
        bits[i >> 3] |= (uint8_t)(1 << (i & 7));
    else
        bits[i >> 3] &= (uint8_t) ~(1 << (i & 7));
}

static int digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

/* The instants a timestamp column holds for every reader: years 1-9999 in UTC. */
#define FIRST_MICROS (-62135596800LL * 1000000)     /* 0001-01-01T00:00:00Z */
#define LAST_MICROS (253402300800LL * 1000000 - 1) /* 9999-12-31T23:59:59.999999Z */

/* The common form of a date-time, read here: YYYY-MM-DDTHH:MM:SS, then .fff or .ffffff or
 * nothing, then Z, +HH:MM, -HH:MM or nothing (UTC, as rules.parse_datetime reads it).
 * Second 60 is a leap second where one can be (at 23:59 in UTC), read as second 59.
 * 0 with microseconds since the epoch in UTC; 1 for any other text, or an instant outside
 * years 1-9999 in UTC, which the Python rule reads (it accepts more forms, or says what is
 * wrong). */
static int common_datetime(PyObject *text, int64_t *out)
{
    Py_ssize_t n;
    if (!PyUnicode_IS_ASCII(text))
        return 1;
    const char *s = (const char *)PyUnicode_DATA(text);
    n = PyUnicode_GET_LENGTH(text);
    int year, month, day, hour, minute, second, fraction = 0, sign = 0, oh = 0, om = 0;
    if (n < 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
        return 1;
    if (digits(s, 4, &year) || digits(s + 5, 2, &month) || digits(s + 8, 2, &day) ||
        digits(s + 11, 2, &hour) || digits(s + 14, 2, &minute) || digits(s + 17, 2, &second))
        return 1;
    Py_ssize_t at = 19;
    if (at < n && s[at] == '.') {
        Py_ssize_t size = 0;
        while (at + 1 + size < n && s[at + 1 + size] >= '0' && s[at + 1 + size] <= '9')
            size++;
        if (size == 6) {
            if (digits(s + at + 1, 6, &fraction))
                return 1;
        } else if (size == 3) {
            if (digits(s + at + 1, 3, &fraction))
                return 1;
            fraction *= 1000;
        } else {
            return 1;
        }
        at += 1 + size;
    }
    if (at < n) {
        if (s[at] == 'Z' && at + 1 == n) {
            at++;
        } else if ((s[at] == '+' || s[at] == '-') && at + 6 == n && s[at + 3] == ':') {
            sign = s[at] == '+' ? 1 : -1;
            if (digits(s + at + 1, 2, &oh) || digits(s + at + 4, 2, &om) || oh > 23 || om > 59)
                return 1;
            at += 6;
        } else {
            return 1;
        }
    }
    static const int month_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 ||
        second > 60)
        return 1;
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (day > month_days[month - 1] + (month == 2 && leap))
        return 1;
    int offset_minutes = sign * (oh * 60 + om);
    if (second == 60) {
        int minute_in_utc = ((hour * 60 + minute - offset_minutes) % 1440 + 1440) % 1440;
        if (minute_in_utc != 23 * 60 + 59)
            return 1;
        second = 59;
    }
    int64_t seconds = days_from_civil(year, (unsigned)month, (unsigned)day) * 86400 +
                      hour * 3600 + minute * 60 + second - offset_minutes * 60;
    int64_t micros = seconds * 1000000 + fraction;
    if (micros < FIRST_MICROS || micros > LAST_MICROS)
        return 1;
    *out = micros;
    return 0;
}

/* Microseconds since the epoch, in UTC, of an aware datetime (as _columnar.c reads it), or
 * of such microseconds already (an int, from common_datetime). */
static int timestamp_of(PyObject *value, int64_t *out)
{
    if (PyLong_CheckExact(value)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow || (v == -1 && PyErr_Occurred()))
            return overflow ? 1 : -1;
        *out = (int64_t)v;
        return 0;
    }
    return aware_micros(value, utcoffset_name, out);
}

/* One value into row `i` (room reserved): 0, 1 when its type is not the column's, -1 error. */
static int put(Column *col, PyObject *value, Py_ssize_t i)
{
    if (value == NULL || value == Py_None) {
        col->nulls++;
        set_bit(col->validity, i, 0);
        if (col->kind == 's')
            col->offsets[i + 1] = (int32_t)col->size;
        else if (col->kind == 'b')
            set_bit((uint8_t *)col->data, i, 0);
        else
            ((int64_t *)col->data)[i] = 0;
        return 0;
    }
    switch (col->kind) {
    case 's': {
        const char *text;
        Py_ssize_t size;
        if (PyUnicode_CheckExact(value)) {
            text = PyUnicode_AsUTF8AndSize(value, &size);
            if (text == NULL) {
                PyErr_Clear(); /* a lone surrogate: the careful reader says what is wrong */
                return 1;
            }
        } else if (PyBytes_CheckExact(value)) { /* JSON text as orjson writes it */
            text = PyBytes_AS_STRING(value);
            size = PyBytes_GET_SIZE(value);
        } else {
            return 1;
        }
        if (col->size + size > INT32_MAX)
            return 1;
        if (size > 0) { /* an empty string needs no room (and data may not exist yet) */
            if (grow((void **)&col->data, &col->data_capacity, col->size + size, 1))
                return -1;
            memcpy(col->data + col->size, text, (size_t)size);
        }
        col->size += size;
        col->offsets[i + 1] = (int32_t)col->size;
        break;
    }
    case 'd':
        if (!PyFloat_CheckExact(value))
            return 1;
        ((double *)col->data)[i] = PyFloat_AS_DOUBLE(value);
        break;
    case 'i': {
        if (!PyLong_CheckExact(value))
            return 1;
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow)
            return 1;
        if (v == -1 && PyErr_Occurred())
            return -1;
        ((int64_t *)col->data)[i] = (int64_t)v;
        break;
    }
    case 'b':
        if (value != Py_True && value != Py_False)
            return 1;
        set_bit((uint8_t *)col->data, i, value == Py_True);
        break;
    case 't': {
        int status = timestamp_of(value, &((int64_t *)col->data)[i]);
        if (status)
            return status;
        break;
    }
    default:
        return 1;
    }
    set_bit(col->validity, i, 1);
    return 0;
}

static void clear_scratch(Table *t)
{
    for (int c = 0; c < t->ncols; c++)
        Py_CLEAR(t->scratch[c]);
}

/* Rows from `mark` on dropped: what a record that failed had added. */
static void truncate_table(Table *t, Py_ssize_t mark)
{
    for (int c = 0; c < t->ncols; c++) {
        Column *col = &t->cols[c];
        for (Py_ssize_t i = mark; i < t->rows; i++)
            col->nulls -= !(col->validity[i >> 3] & (1 << (i & 7)));
        if (col->kind == 's')
            col->size = col->offsets ? col->offsets[mark] : 0; /* none: no row yet */
    }
    t->rows = mark;
    clear_scratch(t);
}

static PyObject *fallback_error(Gatherer *g, const char *why)
{
    PyErr_SetString(g->fallback, why);
    return NULL;
}

/* The scratch row appended to the table's columns, and cleared. */
static int commit(Gatherer *g, Table *t)
{
    if (table_reserve(t))
        return -1;
    for (int c = 0; c < t->ncols; c++) {
        int status = put(&t->cols[c], t->scratch[c], t->rows);
        if (status) {
            /* columns before c hold row `rows`: truncate_table forgets them with the row */
            for (int done = 0; done < c; done++) {
                Column *col = &t->cols[done];
                col->nulls -= !(col->validity[t->rows >> 3] & (1 << (t->rows & 7)));
                if (col->kind == 's')
                    col->size = col->offsets[t->rows];
            }
            clear_scratch(t);
            if (status > 0)
                fallback_error(g, "a value of another type than its column's");
            return -1;
        }
    }
    t->rows++;
    clear_scratch(t);
    return 0;
}

static inline void set_value(Table *t, int col, PyObject *value) /* takes a new reference */
{
    Py_XSETREF(t->scratch[col], value);
}

/* ---------------------------------------------------------------- reading */

static int read_level(Gatherer *g, int level, PyObject *obj, Context *ctx);

static inline PyObject *slot(PyObject *obj, Py_ssize_t offset)
{
    return *(PyObject **)((char *)obj + offset);
}

/* Item `i`'s row (the caller owns `item`). */
static int read_item(Gatherer *g, Op *op, PyObject *item, Py_ssize_t i, Context *ctx)
{
    Table *t = &g->tables[op->table];
    for (int p = 0; p < op->nprefix; p++) {
        Prefix *pre = &op->prefix[p];
        PyObject *v;
        switch (pre->source) {
        case FROM_ID:
            v = Py_NewRef(ctx->deployment_id);
            break;
        case FROM_POSITION:
            v = PyLong_FromSsize_t(i);
            break;
        case FROM_CONST:
            v = Py_NewRef(pre->value);
            break;
        case FROM_OUTER_POSITION:
            v = PyLong_FromSsize_t(ctx->outer_position);
            break;
        default: /* FROM_OUTER_COL */
            v = Py_XNewRef(g->tables[ctx->outer_table].scratch[pre->outer_col]);
            break;
        }
        if (v == NULL && pre->source != FROM_OUTER_COL)
            return -1;
        set_value(t, pre->col, v);
    }
    Context inner = *ctx;
    inner.outer_table = op->table;
    inner.outer_position = i;
    if (read_level(g, op->level, item, &inner))
        return -1;
    if (op->fn != Py_None) { /* post: values of the last columns, or None */
        PyObject *values = PyObject_CallOneArg(op->fn, item);
        if (values == NULL)
            return -1;
        if (values != Py_None) {
            if (!PyTuple_CheckExact(values) || PyTuple_GET_SIZE(values) != op->npost) {
                Py_DECREF(values);
                fallback_error(g, "a rule gave values of another shape");
                return -1;
            }
            for (int p = 0; p < op->npost; p++)
                set_value(t, op->post_cols[p], Py_NewRef(PyTuple_GET_ITEM(values, p)));
        }
        Py_DECREF(values);
    }
    /* an item's own items (a container's env entries) are read with the item's row
     * still open, so they can repeat its columns; the item's row is committed last */
    if (commit(g, t))
        return -1;
    return 0;
}

/* Rules run Python and may change the list (read_op owns it): each item is owned while it
 * is read, and a list whose length a rule changed gives the record back. */
static int read_items(Gatherer *g, Op *op, PyObject *value, Context *ctx)
{
    if (!PyList_CheckExact(value)) {
        fallback_error(g, "items are not a list");
        return -1;
    }
    Py_ssize_t n = PyList_GET_SIZE(value);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = Py_NewRef(PyList_GET_ITEM(value, i));
        int status = read_item(g, op, item, i, ctx);
        Py_DECREF(item);
        if (status)
            return -1;
        if (PyList_GET_SIZE(value) != n) {
            fallback_error(g, "a rule changed the items being read");
            return -1;
        }
    }
    if (op->count_col >= 0)
        set_value(&g->tables[g->wide], op->count_col, PyLong_FromSsize_t(n));
    return 0;
}

/* The rule runs Python and may change the dict (read_op owns it): its key and value are
 * owned across the call, and a dict whose size a rule changed gives the record back. */
static int read_labels(Gatherer *g, Op *op, PyObject *value, Context *ctx)
{
    if (!PyDict_CheckExact(value)) {
        fallback_error(g, "labels are not a dict");
        return -1;
    }
    Table *t = &g->tables[op->table];
    Py_ssize_t pos = 0, size = PyDict_GET_SIZE(value);
    PyObject *key, *item;
    while (PyDict_Next(value, &pos, &key, &item)) {
        PyObject *text;
        Py_INCREF(key);
        if (item == Py_None || PyUnicode_CheckExact(item)) {
            text = Py_NewRef(item);
        } else {
            Py_INCREF(item);
            text = PyObject_CallOneArg(op->fn, item);
            Py_DECREF(item);
        }
        if (text != NULL && PyDict_GET_SIZE(value) != size) {
            Py_CLEAR(text);
            fallback_error(g, "a rule changed the labels being read");
        }
        if (text == NULL) {
            Py_DECREF(key);
            return -1;
        }
        set_value(t, 0, Py_NewRef(ctx->deployment_id));
        set_value(t, 1, Py_NewRef(op->arg));
        set_value(t, 2, key);
        set_value(t, 3, text);
        if (commit(g, t))
            return -1;
    }
    return 0;
}

static int read_sources(Gatherer *g, Op *op, PyObject *obj)
{
    PyObject *found = NULL, *name = NULL, *present = NULL, *names = NULL;
    int count = 0, status = -1;
    for (int i = 0; i < op->noffsets; i++) {
        PyObject *value = slot(obj, op->offsets[i]);
        if (value == NULL) {
            fallback_error(g, "a field was never set");
            goto done;
        }
        if (value == Py_None || value == g->unset)
            continue;
        if (++count == 1) {
            found = Py_NewRef(value); /* owned across dumps, which may run Python */
            name = PyTuple_GET_ITEM(op->arg, i);
            continue;
        }
        if (count == 2) { /* several: {name: value} of all of them, names joined */
            present = PyDict_New();
            names = PyList_New(0);
            if (present == NULL || names == NULL || PyDict_SetItem(present, name, found) ||
                PyList_Append(names, name))
                goto done;
        }
        name = PyTuple_GET_ITEM(op->arg, i);
        if (PyDict_SetItem(present, name, value) || PyList_Append(names, name))
            goto done;
    }
    if (count == 0) {
        status = 0;
        goto done;
    }
    Table *t = &g->tables[op->table];
    PyObject *text = PyObject_CallOneArg(g->dumps, count == 1 ? found : present);
    if (text == NULL)
        goto done;
    PyObject *kind;
    if (count == 1) {
        kind = Py_NewRef(name);
    } else {
        PyObject *comma = PyUnicode_FromString(",");
        kind = comma ? PyUnicode_Join(comma, names) : NULL;
        Py_XDECREF(comma);
    }
    if (kind == NULL) {
        Py_DECREF(text);
        goto done;
    }
    set_value(t, op->col, kind);
    set_value(t, op->count_col, text);
    status = 0;
done:
    Py_XDECREF(found);
    Py_XDECREF(present);
    Py_XDECREF(names);
    return status;
}

/* `value` kept in the record's unknown fields at `path` (the dict made on first use). */
static int add_unknown(Context *ctx, PyObject *path, PyObject *value)
{
    if (ctx->unknown == NULL) {
        if ((ctx->unknown = PyDict_New()) == NULL)
            return -1;
        ctx->owns_unknown = 1;
    }
    return PyDict_SetItem(ctx->unknown, path, value);
}

static int read_original(Gatherer *g, Op *op, PyObject *value, Context *ctx)
{
    if (value == Py_None)
        return 0;
    Table *t = &g->tables[op->table];
    PyObject *held = t->scratch[op->col];
    if (held == NULL) {
        set_value(t, op->col, Py_NewRef(value));
        return 0;
    }
    /* own both across the comparison, which may call into Python */
    Py_INCREF(held);
    Py_INCREF(value);
    int same = PyObject_RichCompareBool(held, value, Py_EQ);
    int status = same < 0 ? -1 : same ? 0 : add_unknown(ctx, op->arg, value);
    Py_DECREF(held);
    Py_DECREF(value);
    return status;
}

/* One field's value (read_op owns it while it is read). */
static int read_value(Gatherer *g, Op *op, PyObject *value, Context *ctx)
{
    switch (op->op) {
    case OP_SCALAR:
        if (value != Py_None)
            set_value(&g->tables[op->table], op->col, Py_NewRef(value));
        return 0;
    case OP_DATETIME: {
        if (value == Py_None)
            return 0;
        int64_t micros;
        if (PyUnicode_CheckExact(value) && common_datetime(value, &micros) == 0) {
            PyObject *parsed = PyLong_FromLongLong(micros);
            if (parsed == NULL)
                return -1;
            set_value(&g->tables[op->table], op->col, parsed);
            return 0;
        }
        PyObject *parsed = PyObject_CallOneArg(op->fn, value);
        if (parsed == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_ValueError))
                return -1;
            PyErr_Clear(); /* not a date-time the careful conversion reads: it says why */
            fallback_error(g, "a date-time the careful reader must judge");
            return -1;
        }
        set_value(&g->tables[op->table], op->col, parsed);
        return 0;
    }
    case OP_NESTED:
        return value == Py_None ? 0 : read_level(g, op->level, value, ctx);
    case OP_JSON: {
        if (value == g->unset)
            return 0;
        if (value == Py_None) {
            if (op->nullable)
                return 0;
            fallback_error(g, "null where the spec allows none");
            return -1;
        }
        PyObject *text = PyObject_CallOneArg(op->fn, value);
        if (text == NULL)
            return -1;
        if (op->col >= 0 && text != Py_None)
            set_value(&g->tables[op->table], op->col, text);
        else
            Py_DECREF(text);
        return 0;
    }
    case OP_ITEMS:
        return value == Py_None ? 0 : read_items(g, op, value, ctx);
    case OP_LABELS:
        return value == Py_None ? 0 : read_labels(g, op, value, ctx);
    case OP_ORIGINAL:
        return read_original(g, op, value, ctx);
    case OP_EXTRA:
        if (value == g->unset)
            return 0;
        if (add_unknown(ctx, op->arg, value))
            return -1;
        if (PyUnicode_CheckExact(value)) {
            if (op->own_type)
                Py_XSETREF(ctx->own_type, Py_NewRef(value));
            if (op->service_col >= 0)
                set_value(&g->tables[g->wide], op->service_col, Py_NewRef(value));
        }
        return 0;
    }
    fallback_error(g, "an unknown operation");
    return -1;
}

static int read_op(Gatherer *g, Op *op, PyObject *obj, Context *ctx)
{
    if (op->op == OP_SOURCES)
        return read_sources(g, op, obj);
    PyObject *value = slot(obj, op->offset);
    if (value == NULL) {
        fallback_error(g, "a field was never set");
        return -1;
    }
    /* owned while it is read: a rule may set the field, dropping the Struct's reference */
    Py_INCREF(value);
    int status = read_value(g, op, value, ctx);
    Py_DECREF(value);
    return status;
}

static int read_level(Gatherer *g, int level, PyObject *obj, Context *ctx)
{
    Level *l = &g->levels[level];
    if (Py_TYPE(obj) != l->type) {
        fallback_error(g, "an object of another type than its plan's");
        return -1;
    }
    for (int i = 0; i < l->nops; i++) {
        if (read_op(g, &l->ops[i], obj, ctx))
            return -1;
    }
    return 0;
}

/* The level of a record's Struct type (strict or lenient: each has its own). */
static int root_of(Gatherer *g, PyObject *record)
{
    for (int r = 1; r < g->nroots; r++) {
        if (Py_TYPE(record) == g->levels[g->roots[r]].type)
            return r;
    }
    return 0;
}

/* One record's rows, or -1 with every table as it was. `unknown`: its fields the spec does
 * not name (borrowed), or NULL for none so far (a dict is made when an extra is found). */
static int read_one(Gatherer *g, PyObject *record, PyObject *id, PyObject *unknown,
                    PyObject *listed_type)
{
    Py_ssize_t marks[64];
    for (int t = 0; t < g->ntables; t++)
        marks[t] = g->tables[t].rows;
    Context ctx = {id, NULL, unknown, g->wide, 0, 0};
    Table *wide = &g->tables[g->wide];
    int status = read_level(g, g->roots[root_of(g, record)], record, &ctx);
    if (status == 0 && ctx.unknown != NULL && PyDict_GET_SIZE(ctx.unknown) > 0) {
        PyObject *text = PyObject_CallOneArg(g->dumps, ctx.unknown);
        if (text == NULL)
            status = -1;
        else
            set_value(wide, g->unknown_col, text);
    }
    if (status == 0) {
        PyObject *type = ctx.own_type ? ctx.own_type : listed_type;
        set_value(wide, g->type_col, Py_NewRef(type));
        status = commit(g, wide);
    }
    Py_XDECREF(ctx.own_type);
    if (ctx.owns_unknown)
        Py_XDECREF(ctx.unknown);
    if (status) {
        for (int t = 0; t < g->ntables; t++)
            truncate_table(&g->tables[t], marks[t]);
    }
    return status;
}

/* A call that reads or takes rows is refused while a read runs (a rule calling back in
 * would take rows that the record's rollback then restores, or overwrite the row being
 * read), and once the garbage collector has cleared the Gatherer. */
static int refuse_busy(Gatherer *g)
{
    if (g->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Gatherer called again from a rule while it reads a record");
        return -1;
    }
    if (g->keep == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Gatherer cleared by the garbage collector");
        return -1;
    }
    return 0;
}

/* A read begins (refused as above); leave() when it ends. */
static int enter(Gatherer *g)
{
    if (refuse_busy(g))
        return -1;
    g->busy = 1;
    return 0;
}

static inline void leave(Gatherer *g)
{
    g->busy = 0;
}

static PyObject *gatherer_read(Gatherer *g, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyUnicode_CheckExact(args[1]) || !PyDict_CheckExact(args[2]))
        return PyErr_Format(PyExc_TypeError, "read(record, deployment_id: str, unknown: dict, "
                                             "listed_type)");
    if (enter(g))
        return NULL;
    int status = read_one(g, args[0], args[1], args[2], args[3]);
    leave(g);
    if (status)
        return NULL;
    Py_RETURN_NONE;
}

/* (index, error): where read_many stopped, and why. */
static PyObject *stopped_at(Py_ssize_t index)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (type == NULL)
        return Py_BuildValue("(nO)", index, Py_None);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (traceback != NULL)
        PyException_SetTraceback(value, traceback);
    Py_DECREF(type);
    Py_XDECREF(traceback);
    return Py_BuildValue("(nN)", index, value);
}

static Py_ssize_t read_run(Gatherer *g, PyObject *const *args, Py_ssize_t start);

/* read_many(records, start, decode, listed_type, tags) -> (stop, error)
 * Reads records from `start` while they are raw text (of `raw_type`) that `decode` takes and
 * whose rows can be read, as read() would with no unknown field found apart. It stops at
 * the end (error None), at a record of another type (None), or at one given back: the
 * error says why (the decode's, or the reading's); nothing of that record is kept. A
 * record's listed type is `listed_type`, else tags[id] when `tags` is a dict. */
static PyObject *gatherer_read_many(Gatherer *g, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyList_CheckExact(args[0]))
        return PyErr_Format(PyExc_TypeError,
                            "read_many(records: list, start, decode, listed_type, tags)");
    Py_ssize_t start = PyLong_AsSsize_t(args[1]);
    if (start == -1 && PyErr_Occurred())
        return NULL;
    if (args[4] != Py_None && !PyDict_CheckExact(args[4]))
        return PyErr_Format(PyExc_TypeError, "read_many: tags are a dict or None");
    if (enter(g))
        return NULL;
    Py_ssize_t stop = read_run(g, args, start < 0 ? 0 : start);
    leave(g);
    return stopped_at(stop);
}

/* read_many's records from `i` on: the index it stopped at (an error set, or none). */
static Py_ssize_t read_run(Gatherer *g, PyObject *const *args, Py_ssize_t i)
{
    PyObject *records = args[0], *decode = args[2], *listed = args[3], *tags = args[4];
    for (; i < PyList_GET_SIZE(records); i++) {
        PyObject *raw = PyList_GET_ITEM(records, i);
        if (Py_TYPE(raw) != g->raw_type)
            return i;
        Py_INCREF(raw); /* owned across the decode, which may run Python */
        PyObject *record = PyObject_CallOneArg(decode, raw);
        Py_DECREF(raw);
        if (record == NULL)
            return i;
        int r = root_of(g, record);
        PyObject *id = Py_TYPE(record) == g->levels[g->roots[r]].type
                           ? slot(record, g->id_offsets[r])
                           : NULL;
        if (id == NULL || !PyUnicode_CheckExact(id)) { /* the careful reader says why */
            Py_DECREF(record);
            fallback_error(g, "a record without a text id");
            return i;
        }
        PyObject *type = listed;
        if (type == Py_None && tags != Py_None) {
            type = PyDict_GetItemWithError(tags, id);
            if (type == NULL && PyErr_Occurred()) {
                Py_DECREF(record);
                return i;
            }
            if (type == NULL)
                type = Py_None;
        }
        /* owned across the rules, which run Python: one may change the tags dict, or set
         * the record's id (its slot held the only reference) */
        Py_INCREF(type);
        Py_INCREF(id);
        int status = read_one(g, record, id, NULL, type);
        Py_DECREF(id);
        Py_DECREF(type);
        Py_DECREF(record);
        if (status)
            return i;
    }
    return i;
}

/* ---------------------------------------------------------------- taking */

/* The bits past the last row cleared: the grown buffers were never written there. */
static void clear_padding(uint8_t *bits, Py_ssize_t rows)
{
    if (bits != NULL && rows % 8)
        bits[rows / 8] &= (uint8_t)((1 << (rows % 8)) - 1);
}

static PyObject *column_buffers(Column *col, Py_ssize_t rows)
{
    static const int32_t no_rows[1] = {0}; /* the offsets of a column that never held one */
    PyObject *validity = Py_None, *offsets = Py_None, *data;
    Py_ssize_t bits = (rows + 7) / 8;
    clear_padding(col->validity, rows);
    if (col->kind == 'b')
        clear_padding((uint8_t *)col->data, rows);
    if (col->nulls) {
        validity = PyBytes_FromStringAndSize((char *)col->validity, bits);
        if (validity == NULL)
            return NULL;
    } else {
        Py_INCREF(validity);
    }
    if (col->kind == 's') {
        offsets = col->offsets ? PyBytes_FromStringAndSize((char *)col->offsets, (rows + 1) * 4)
                               : PyBytes_FromStringAndSize((const char *)no_rows, 4);
        data = PyBytes_FromStringAndSize(col->data ? col->data : "", col->size);
    } else {
        Py_INCREF(offsets);
        data = PyBytes_FromStringAndSize(col->data ? col->data : "",
                                         col->kind == 'b' ? bits : rows * 8);
    }
    if (offsets == NULL || data == NULL) {
        Py_DECREF(validity);
        Py_XDECREF(offsets);
        Py_XDECREF(data);
        return NULL;
    }
    return Py_BuildValue("(nNNN)", col->nulls, validity, offsets, data);
}

static int table_index(Gatherer *g, PyObject *arg)
{
    long t = PyLong_AsLong(arg);
    if (t == -1 && PyErr_Occurred())
        return -1;
    if (t < 0 || t >= g->ntables) {
        PyErr_Format(PyExc_IndexError, "no table %ld", t);
        return -1;
    }
    return (int)t;
}

static PyObject *gatherer_take(Gatherer *g, PyObject *arg)
{
    int index = table_index(g, arg);
    if (index < 0 || refuse_busy(g))
        return NULL;
    Table *t = &g->tables[index];
    PyObject *columns = PyList_New(t->ncols);
    if (columns == NULL)
        return NULL;
    for (int c = 0; c < t->ncols; c++) {
        PyObject *buffers = column_buffers(&t->cols[c], t->rows);
        if (buffers == NULL) {
            Py_DECREF(columns);
            return NULL;
        }
        PyList_SET_ITEM(columns, c, buffers);
    }
    PyObject *out = Py_BuildValue("(nN)", t->rows, columns);
    if (out == NULL)
        return NULL;
    for (int c = 0; c < t->ncols; c++) {
        t->cols[c].nulls = 0;
        t->cols[c].size = 0;
    }
    t->rows = 0;
    return out;
}

static PyObject *gatherer_rows(Gatherer *g, PyObject *arg)
{
    int index = table_index(g, arg);
    return index < 0 ? NULL : PyLong_FromSsize_t(g->tables[index].rows);
}

/* ---------------------------------------------------------------- compiling */

/* A program is made without running any Python code (a name's __hash__, a number's
 * __index__ or a repr could change the lists being compiled): names are exact str, numbers
 * int, and the type's own dict is read. */

/* The offset of `descr`, found under `name` in `type`'s dict, when it is an object slot of
 * `type` or of a base (another type's slot lies elsewhere in the object). */
static Py_ssize_t member_offset(PyTypeObject *type, PyObject *name, PyObject *descr)
{
    if (descr == NULL) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "gather: %s has no field %R", type->tp_name, name);
        return -1;
    }
    if (!Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_ValueError, "gather: %s.%U is not a slot", type->tp_name, name);
        return -1;
    }
    if (!PyType_IsSubtype(type, PyDescr_TYPE(descr))) {
        PyErr_Format(PyExc_ValueError, "gather: %s.%U is another type's slot", type->tp_name,
                     name);
        return -1;
    }
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    if (member->type != T_OBJECT_EX && member->type != T_OBJECT) {
        PyErr_Format(PyExc_ValueError, "gather: %s.%U is not an object slot", type->tp_name,
                     name);
        return -1;
    }
    return member->offset;
}

/* The slot offset of a Struct field: its member descriptor's (msgspec keeps fields in
 * object slots). Anything else is refused: the program reads slots directly. */
static Py_ssize_t field_offset(PyTypeObject *type, PyObject *name)
{
    if (!PyUnicode_CheckExact(name)) {
        PyErr_SetString(PyExc_TypeError, "gather: a field's name is text");
        return -1;
    }
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *dict = PyType_GetDict(type); /* tp_dict is NULL for static builtin types */
#else
    PyObject *dict = Py_XNewRef(type->tp_dict);
#endif
    if (dict == NULL) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "gather: %s has no fields", type->tp_name);
        return -1;
    }
    Py_ssize_t offset = member_offset(type, name, PyDict_GetItemWithError(dict, name));
    Py_DECREF(dict);
    return offset;
}

/* Item i of a program's tuple as a C int: an int in range (no __index__ is called). */
static int int_at(PyObject *tuple, Py_ssize_t i, int *out)
{
    PyObject *item = PyTuple_GET_ITEM(tuple, i);
    if (!PyLong_Check(item)) {
        PyErr_Format(PyExc_TypeError, "gather: a program's number is an int, not %.100s",
                     Py_TYPE(item)->tp_name);
        return -1;
    }
    int overflow = 0;
    long v = PyLong_AsLongAndOverflow(item, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow || v < INT_MIN || v > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "gather: a program's number is out of range");
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int check_table(Gatherer *g, int table)
{
    if (table < 0 || table >= g->ntables) {
        PyErr_Format(PyExc_ValueError, "gather: no table %d", table);
        return -1;
    }
    return 0;
}

/* Whether a column of an op may be -1, "none": each op says, for each of its columns. */
enum { MUST_EXIST = 0, MAY_BE_NONE = 1 };

static int check_column(Gatherer *g, int table, int col, int none)
{
    if (check_table(g, table))
        return -1;
    if (none == MAY_BE_NONE && col == -1)
        return 0;
    if (col < 0 || col >= g->tables[table].ncols) {
        PyErr_Format(PyExc_ValueError, "gather: no column %d of table %d", col, table);
        return -1;
    }
    return 0;
}

static int keep(Gatherer *g, PyObject *value)
{
    return PyList_Append(g->keep, value);
}

static int compile_prefix(Gatherer *g, Op *op, PyObject *prefix)
{
    if (!PyTuple_Check(prefix))
        return PyErr_SetString(PyExc_TypeError, "gather: prefix is a tuple"), -1;
    op->nprefix = (int)PyTuple_GET_SIZE(prefix);
    op->prefix = PyMem_Calloc((size_t)op->nprefix + 1, sizeof(Prefix));
    if (op->prefix == NULL)
        return PyErr_NoMemory(), -1;
    for (int p = 0; p < op->nprefix; p++) {
        PyObject *entry = PyTuple_GET_ITEM(prefix, p);
        Prefix *pre = &op->prefix[p];
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 3)
            return PyErr_SetString(PyExc_TypeError, "gather: (col, source, value)"), -1;
        if (int_at(entry, 0, &pre->col) || int_at(entry, 1, &pre->source))
            return -1;
        if (check_column(g, op->table, pre->col, MUST_EXIST))
            return -1;
        pre->value = PyTuple_GET_ITEM(entry, 2);
        /* the outer table's column: check_reach knows which table that is */
        if (pre->source == FROM_OUTER_COL && int_at(entry, 2, &pre->outer_col))
            return -1;
        if (pre->source < FROM_ID || pre->source > FROM_OUTER_COL)
            return PyErr_SetString(PyExc_ValueError, "gather: unknown prefix source"), -1;
    }
    return 0;
}

/* OP_SOURCES: (op, names, table, type_col, json_col); the JSON column is kept in count_col. */
static int compile_sources(Gatherer *g, PyTypeObject *type, PyObject *tuple, Op *op)
{
    PyObject *names = PyTuple_GET_ITEM(tuple, 1);
    if (!PyTuple_Check(names) || PyTuple_GET_SIZE(names) == 0)
        return PyErr_SetString(PyExc_TypeError, "gather: sources are a tuple of names"), -1;
    if (int_at(tuple, 2, &op->table) || int_at(tuple, 3, &op->col) ||
        int_at(tuple, 4, &op->count_col))
        return -1;
    if (check_column(g, op->table, op->col, MUST_EXIST) ||
        check_column(g, op->table, op->count_col, MUST_EXIST))
        return -1;
    op->arg = names;
    op->noffsets = (int)PyTuple_GET_SIZE(names);
    op->offsets = PyMem_Calloc((size_t)op->noffsets, sizeof(Py_ssize_t));
    if (op->offsets == NULL)
        return PyErr_NoMemory(), -1;
    for (int i = 0; i < op->noffsets; i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        if (!PyUnicode_CheckExact(name))
            return PyErr_SetString(PyExc_TypeError, "gather: a source's name is text"), -1;
        op->offsets[i] = field_offset(type, name);
        if (op->offsets[i] < 0)
            return -1;
    }
    return 0;
}

/* One op from its tuple (see the enum above for each one's fields). */
static int compile_op(Gatherer *g, PyTypeObject *type, PyObject *tuple, Op *op)
{
    if (!PyTuple_Check(tuple) || PyTuple_GET_SIZE(tuple) < 3)
        return PyErr_SetString(PyExc_TypeError, "gather: an op is a tuple"), -1;
    Py_ssize_t size = PyTuple_GET_SIZE(tuple);
    static const Py_ssize_t sizes[] = {4, 5, 3, 6, 8, 5, 5, 5, 5};
    if (int_at(tuple, 0, &op->op))
        return -1;
    if (op->op < 0 || op->op > OP_ORIGINAL || size != sizes[op->op])
        return PyErr_Format(PyExc_ValueError, "gather: op %d with %zd fields", op->op, size),
               -1;
    op->col = op->count_col = op->service_col = -1;
    op->fn = op->arg = Py_None;
    if (op->op == OP_SOURCES)
        return compile_sources(g, type, tuple, op) || keep(g, tuple);
    op->offset = field_offset(type, PyTuple_GET_ITEM(tuple, 1));
    if (op->offset < 0)
        return -1;
    switch (op->op) {
    case OP_SCALAR:
    case OP_DATETIME:
    case OP_JSON:
        if (int_at(tuple, 2, &op->table) || int_at(tuple, 3, &op->col))
            return -1;
        /* a JSON part may be only checked, stored nowhere */
        if (check_column(g, op->table, op->col, op->op == OP_JSON ? MAY_BE_NONE : MUST_EXIST))
            return -1;
        if (op->op != OP_SCALAR)
            op->fn = PyTuple_GET_ITEM(tuple, 4);
        if (op->op == OP_JSON && int_at(tuple, 5, &op->nullable))
            return -1;
        break;
    case OP_NESTED:
        if (int_at(tuple, 2, &op->level))
            return -1;
        break;
    case OP_ITEMS: {
        if (int_at(tuple, 2, &op->table) || int_at(tuple, 3, &op->level) ||
            int_at(tuple, 7, &op->count_col))
            return -1;
        if (check_table(g, op->table) || check_column(g, g->wide, op->count_col, MAY_BE_NONE))
            return -1;
        if (compile_prefix(g, op, PyTuple_GET_ITEM(tuple, 4)))
            return -1;
        op->fn = PyTuple_GET_ITEM(tuple, 5);
        PyObject *cols = PyTuple_GET_ITEM(tuple, 6);
        if (!PyTuple_Check(cols))
            return PyErr_SetString(PyExc_TypeError, "gather: post columns are a tuple"), -1;
        op->npost = (int)PyTuple_GET_SIZE(cols);
        op->post_cols = PyMem_Calloc((size_t)op->npost + 1, sizeof(int));
        if (op->post_cols == NULL)
            return PyErr_NoMemory(), -1;
        for (int p = 0; p < op->npost; p++) {
            if (int_at(cols, p, &op->post_cols[p]) ||
                check_column(g, op->table, op->post_cols[p], MUST_EXIST))
                return -1;
        }
        break;
    }
    case OP_LABELS:
        if (int_at(tuple, 2, &op->table) || check_table(g, op->table))
            return -1;
        if (g->tables[op->table].ncols != 4)
            return PyErr_SetString(PyExc_ValueError, "gather: labels have four columns"), -1;
        op->arg = PyTuple_GET_ITEM(tuple, 3);
        op->fn = PyTuple_GET_ITEM(tuple, 4);
        break;
    case OP_ORIGINAL:
        if (int_at(tuple, 2, &op->table) || int_at(tuple, 3, &op->col))
            return -1;
        if (check_column(g, op->table, op->col, MUST_EXIST))
            return -1;
        op->arg = PyTuple_GET_ITEM(tuple, 4);
        if (!PyUnicode_CheckExact(op->arg))
            return PyErr_SetString(PyExc_TypeError, "gather: an original's path is text"), -1;
        break;
    case OP_EXTRA:
        op->arg = PyTuple_GET_ITEM(tuple, 2);
        if (!PyUnicode_CheckExact(op->arg)) /* a key of the unknown fields: no Python hash */
            return PyErr_SetString(PyExc_TypeError, "gather: an extra's path is text"), -1;
        if (int_at(tuple, 3, &op->own_type) || int_at(tuple, 4, &op->service_col))
            return -1;
        if (check_column(g, g->wide, op->service_col, MAY_BE_NONE))
            return -1;
        break;
    }
    return keep(g, tuple); /* the ops borrow its items */
}

static int compile_levels(Gatherer *g, PyObject *levels)
{
    if (!PyList_Check(levels))
        return PyErr_SetString(PyExc_TypeError, "gather: levels are a list"), -1;
    g->nlevels = (int)PyList_GET_SIZE(levels);
    g->levels = PyMem_Calloc((size_t)g->nlevels + 1, sizeof(Level));
    if (g->levels == NULL)
        return PyErr_NoMemory(), -1;
    for (int i = 0; i < g->nlevels; i++) {
        PyObject *entry = PyList_GET_ITEM(levels, i), *ops;
        PyObject *type;
        if (!PyArg_ParseTuple(entry, "O!O!:level", &PyType_Type, &type, &PyList_Type, &ops))
            return -1;
        if (keep(g, entry))
            return -1;
        Level *l = &g->levels[i];
        l->type = (PyTypeObject *)type;
        l->nops = (int)PyList_GET_SIZE(ops);
        l->ops = PyMem_Calloc((size_t)l->nops + 1, sizeof(Op));
        if (l->ops == NULL)
            return PyErr_NoMemory(), -1;
        for (int o = 0; o < l->nops; o++) {
            if (compile_op(g, l->type, PyList_GET_ITEM(ops, o), &l->ops[o]))
                return -1;
        }
    }
    for (int i = 0; i < g->nlevels; i++) { /* levels named by ops exist */
        for (int o = 0; o < g->levels[i].nops; o++) {
            Op *op = &g->levels[i].ops[o];
            if ((op->op == OP_NESTED || op->op == OP_ITEMS) &&
                (op->level < 0 || op->level >= g->nlevels))
                return PyErr_Format(PyExc_ValueError, "gather: no level %d", op->level), -1;
        }
    }
    return 0;
}

/* A level the records reach (from a root, by nested and items ops), walked with the table
 * its items ops' FROM_OUTER_COL columns are read from: that of the items op that reads the
 * level, the wide table for a root's. Each such column must exist there, and no level may
 * reach itself (read_level would follow nested data without end). `seen[level]`: the
 * outer tables it was walked with (at most 64 tables); `walking`: the levels being walked. */
static int check_reach(Gatherer *g, int level, int outer, uint64_t *seen, char *walking)
{
    if (walking[level])
        return PyErr_Format(PyExc_ValueError, "gather: level %d contains itself", level), -1;
    if (seen[level] & ((uint64_t)1 << outer))
        return 0;
    seen[level] |= (uint64_t)1 << outer;
    if (Py_EnterRecursiveCall(" in gather's levels"))
        return -1;
    walking[level] = 1;
    int status = 0;
    for (int o = 0; status == 0 && o < g->levels[level].nops; o++) {
        Op *op = &g->levels[level].ops[o];
        if (op->op == OP_NESTED) {
            status = check_reach(g, op->level, outer, seen, walking);
        } else if (op->op == OP_ITEMS) {
            for (int p = 0; status == 0 && p < op->nprefix; p++) {
                if (op->prefix[p].source == FROM_OUTER_COL)
                    status = check_column(g, outer, op->prefix[p].outer_col, MUST_EXIST);
            }
            if (status == 0)
                status = check_reach(g, op->level, op->table, seen, walking);
        }
    }
    walking[level] = 0;
    Py_LeaveRecursiveCall();
    return status;
}

/* Every root's levels walked (check_reach). */
static int check_program(Gatherer *g)
{
    uint64_t *seen = PyMem_Calloc((size_t)g->nlevels + 1, sizeof(uint64_t));
    char *walking = PyMem_Calloc((size_t)g->nlevels + 1, 1);
    int status = seen == NULL || walking == NULL ? (PyErr_NoMemory(), -1) : 0;
    for (int r = 0; status == 0 && r < g->nroots; r++)
        status = check_reach(g, g->roots[r], g->wide, seen, walking);
    PyMem_Free(seen);
    PyMem_Free(walking);
    return status;
}

static int compile_tables(Gatherer *g, PyObject *kinds)
{
    if (!PyList_Check(kinds) || PyList_GET_SIZE(kinds) > 64)
        return PyErr_SetString(PyExc_TypeError, "gather: at most 64 tables' kinds"), -1;
    g->ntables = (int)PyList_GET_SIZE(kinds);
    g->tables = PyMem_Calloc((size_t)g->ntables + 1, sizeof(Table));
    if (g->tables == NULL)
        return PyErr_NoMemory(), -1;
    for (int i = 0; i < g->ntables; i++) {
        Py_ssize_t n;
        const char *letters = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(kinds, i), &n);
        if (letters == NULL)
            return -1;
        Table *t = &g->tables[i];
        t->ncols = (int)n;
        t->cols = PyMem_Calloc((size_t)n + 1, sizeof(Column));
        t->scratch = PyMem_Calloc((size_t)n + 1, sizeof(PyObject *));
        if (t->cols == NULL || t->scratch == NULL)
            return PyErr_NoMemory(), -1;
        for (Py_ssize_t c = 0; c < n; c++) {
            if (letters[c] == '\0' || strchr("sdibt", letters[c]) == NULL) /* strchr finds NUL */
                return PyErr_Format(PyExc_ValueError,
                                    "gather: unknown kind at column %zd of table %d", c, i),
                       -1;
            t->cols[c].kind = letters[c];
        }
    }
    return 0;
}

/* The collector sees what the Gatherer holds: a rule that refers back to its owner (a
 * bound method, a closure) makes a cycle, which it can then free. */
static int gatherer_traverse(Gatherer *g, visitproc visit, void *arg)
{
    Py_VISIT(g->dumps);
    Py_VISIT(g->fallback);
    Py_VISIT(g->unset);
    Py_VISIT(g->keep); /* the program's tuples, their rules, raw_type */
    for (int i = 0; g->tables && i < g->ntables; i++) {
        for (int c = 0; g->tables[i].scratch && c < g->tables[i].ncols; c++)
            Py_VISIT(g->tables[i].scratch[c]);
    }
    return 0;
}

/* Breaks a cycle; the ops borrowed from `keep`, so a cleared Gatherer refuses every call
 * that reads (refuse_busy). */
static int gatherer_clear(Gatherer *g)
{
    for (int i = 0; g->tables && i < g->ntables; i++) {
        if (g->tables[i].scratch)
            clear_scratch(&g->tables[i]);
    }
    Py_CLEAR(g->dumps);
    Py_CLEAR(g->fallback);
    Py_CLEAR(g->unset);
    Py_CLEAR(g->keep);
    return 0;
}

static void gatherer_dealloc(Gatherer *g)
{
    PyObject_GC_UnTrack(g);
    for (int i = 0; g->tables && i < g->ntables; i++) {
        Table *t = &g->tables[i];
        for (int c = 0; t->cols && c < t->ncols; c++) {
            PyMem_Free(t->cols[c].validity);
            PyMem_Free(t->cols[c].data);
            PyMem_Free(t->cols[c].offsets);
        }
        if (t->scratch)
            clear_scratch(t);
        PyMem_Free(t->cols);
        PyMem_Free(t->scratch);
    }
    PyMem_Free(g->tables);
    for (int i = 0; g->levels && i < g->nlevels; i++) {
        for (int o = 0; g->levels[i].ops && o < g->levels[i].nops; o++) {
            PyMem_Free(g->levels[i].ops[o].prefix);
            PyMem_Free(g->levels[i].ops[o].post_cols);
            PyMem_Free(g->levels[i].ops[o].offsets);
        }
        PyMem_Free(g->levels[i].ops);
    }
    PyMem_Free(g->levels);
    Py_XDECREF(g->dumps);
    Py_XDECREF(g->fallback);
    Py_XDECREF(g->unset);
    Py_XDECREF(g->keep);
    Py_TYPE(g)->tp_free((PyObject *)g);
}

static PyObject *gatherer_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *kinds, *levels, *roots, *dumps, *fallback, *unset, *id_field, *raw_type;
    int wide, unknown_col, type_col;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs))
        return PyErr_Format(PyExc_TypeError, "Gatherer takes no keywords");
    if (!PyArg_ParseTuple(args, "O!O!O!iiiOOOUO!:Gatherer", &PyList_Type, &kinds,
                          &PyList_Type, &levels, &PyTuple_Type, &roots, &wide, &unknown_col,
                          &type_col, &dumps, &fallback, &unset, &id_field, &PyType_Type,
                          &raw_type))
        return NULL;
    if (!PyExceptionClass_Check(fallback))
        return PyErr_Format(PyExc_TypeError, "Gatherer: fallback is an exception class");
    Gatherer *g = (Gatherer *)type->tp_alloc(type, 0);
    if (g == NULL)
        return NULL;
    g->dumps = Py_NewRef(dumps);
    g->fallback = Py_NewRef(fallback);
    g->unset = Py_NewRef(unset);
    g->keep = PyList_New(0);
    g->wide = wide;
    g->raw_type = (PyTypeObject *)raw_type;
    if (g->keep != NULL && keep(g, raw_type))
        goto fail;
    if (g->keep == NULL || compile_tables(g, kinds))
        goto fail;
    if (check_column(g, wide, unknown_col, MUST_EXIST) ||
        check_column(g, wide, type_col, MUST_EXIST))
        goto fail;
    g->unknown_col = unknown_col;
    g->type_col = type_col;
    if (compile_levels(g, levels))
        goto fail;
    g->nroots = (int)PyTuple_GET_SIZE(roots);
    if (g->nroots < 1 || g->nroots > 8) {
        PyErr_SetString(PyExc_ValueError, "Gatherer: one to eight roots");
        goto fail;
    }
    for (int r = 0; r < g->nroots; r++) {
        if (int_at(roots, r, &g->roots[r]))
            goto fail;
        if (g->roots[r] < 0 || g->roots[r] >= g->nlevels) {
            PyErr_SetString(PyExc_ValueError, "Gatherer: no such root level");
            goto fail;
        }
        g->id_offsets[r] = field_offset(g->levels[g->roots[r]].type, id_field);
        if (g->id_offsets[r] < 0)
            goto fail;
    }
    if (check_program(g))
        goto fail;
    return (PyObject *)g;
fail:
    Py_DECREF(g);
    return NULL;
}

static PyMethodDef gatherer_methods[] = {
    {"read", (PyCFunction)(void (*)(void))gatherer_read, METH_FASTCALL,
     "read(record, deployment_id, unknown, listed_type): the record's rows, or raise with "
     "every table as it was"},
    {"read_many", (PyCFunction)(void (*)(void))gatherer_read_many, METH_FASTCALL,
     "read_many(records, start, decode, listed_type, tags) -> (stop, error): raw records "
     "read from start on, until the end, a record of another type, or one given back"},
    {"take", (PyCFunction)gatherer_take, METH_O,
     "take(table): (rows, [(null_count, validity, offsets, data), ...]); empties the table"},
    {"rows", (PyCFunction)gatherer_rows, METH_O, "rows(table): rows held"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject GathererType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dims._tables._gather.Gatherer",
    .tp_basicsize = sizeof(Gatherer),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Reads decoded records into Arrow column buffers by a compiled program.",
    .tp_new = gatherer_new,
    .tp_dealloc = (destructor)gatherer_dealloc,
    .tp_traverse = (traverseproc)gatherer_traverse,
    .tp_clear = (inquiry)gatherer_clear,
    .tp_free = PyObject_GC_Del,
    .tp_methods = gatherer_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_gather",
    "Decoded deployment records read straight into Arrow column buffers.", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__gather(void)
{
    PyDateTime_IMPORT;
    if (PyDateTimeAPI == NULL)
        return NULL;
    utcoffset_name = PyUnicode_InternFromString("utcoffset");
    if (utcoffset_name == NULL || PyType_Ready(&GathererType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Gatherer", (PyObject *)&GathererType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
