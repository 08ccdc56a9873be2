/* dims._tables._unknownkeys: the fields of a raw JSON record that the spec does not name.
 *
 * Why it exists: the fast reader decodes records with msgspec Structs, which can refuse
 * an unknown field but not say what it holds, so a record of a newer service would be
 * decoded twice and parsed again whole by orjson to find its unknown fields. This scan walks the record's text once, without building values,
 * and names each unknown field's path and where its value lies; only those values are
 * then parsed (by orjson, as the careful reader parses them).
 *
 * Why it can be trusted: it looks where the careful reader looks (the levels are compiled
 * from the same plans, typed.UnknownFields) and answers None whenever it is not sure
 * (escaped keys, a repeated key it would descend into, text that is not the JSON it
 * expects), so that the record takes the strict decode and the orjson walk as before.
 * tests/tables/test_compiled_lane.py holds both readers to the same rows.
 *
 * compile(tree) -> levels
 *   tree = (sensitive, {key: None | ("object" | "items", tree)})
 * scan(raw, levels) -> [(path, start, end, sensitive), ...] or None
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define PATH_MAX_BYTES 1024
#define INNER_MAX 32

typedef struct Level Level;

typedef struct {
    char *key; /* NULL: an empty slot */
    Py_ssize_t len;
    char shape; /* 0: a plain field; 'o': an object to look inside; 'a': items to look inside */
    Level *inner;
} Entry;

struct Level {
    int sensitive;
    size_t mask; /* slots - 1 (a power of two) */
    Entry *slots;
};

static uint64_t hash_of(const char *key, Py_ssize_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)key[i]) * 1099511628211ULL;
    return h;
}

static Entry *lookup(const Level *level, const char *key, Py_ssize_t len)
{
    for (size_t i = hash_of(key, len) & level->mask;; i = (i + 1) & level->mask) {
        Entry *e = &level->slots[i];
        if (e->key == NULL)
            return NULL;
        if (e->len == len && memcmp(e->key, key, (size_t)len) == 0)
            return e;
    }
}

static void level_free(Level *level)
{
    if (level == NULL)
        return;
    for (size_t i = 0; i <= level->mask; i++) {
        PyMem_Free(level->slots[i].key);
        level_free(level->slots[i].inner);
    }
    PyMem_Free(level->slots);
    PyMem_Free(level);
}

static Level *level_compile(PyObject *tree, int depth);

static int entry_set(Entry *e, PyObject *key, PyObject *inner, int depth)
{
    Py_ssize_t len;
    const char *utf8 = PyUnicode_AsUTF8AndSize(key, &len);
    if (utf8 == NULL)
        return -1;
    e->key = PyMem_Malloc((size_t)len + 1);
    if (e->key == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(e->key, utf8, (size_t)len);
    e->len = len;
    if (inner == Py_None)
        return 0;
    const char *shape;
    PyObject *subtree;
    if (!PyArg_ParseTuple(inner, "sO", &shape, &subtree))
        return -1;
    if (strcmp(shape, "object") != 0 && strcmp(shape, "items") != 0) {
        PyErr_Format(PyExc_ValueError, "compile: unknown shape %s", shape);
        return -1;
    }
    e->shape = shape[0] == 'o' ? 'o' : 'a';
    e->inner = level_compile(subtree, depth + 1);
    return e->inner == NULL ? -1 : 0;
}

static Level *level_compile(PyObject *tree, int depth)
{
    int sensitive;
    PyObject *known, *key, *inner;
    if (depth > 16) {
        PyErr_SetString(PyExc_ValueError, "compile: levels nested too deep");
        return NULL;
    }
    if (!PyArg_ParseTuple(tree, "pO!", &sensitive, &PyDict_Type, &known))
        return NULL;
    size_t slots = 8;
    while (slots < (size_t)PyDict_GET_SIZE(known) * 2)
        slots *= 2;
    Level *level = PyMem_Calloc(1, sizeof(Level));
    if (level == NULL)
        return (Level *)PyErr_NoMemory();
    level->sensitive = sensitive;
    level->mask = slots - 1;
    level->slots = PyMem_Calloc(slots, sizeof(Entry));
    if (level->slots == NULL) {
        PyMem_Free(level);
        return (Level *)PyErr_NoMemory();
    }
    Py_ssize_t pos = 0;
    while (PyDict_Next(known, &pos, &key, &inner)) {
        Py_ssize_t len;
        const char *utf8 = PyUnicode_AsUTF8AndSize(key, &len);
        size_t i = utf8 ? hash_of(utf8, len) & level->mask : 0;
        while (utf8 && level->slots[i].key != NULL)
            i = (i + 1) & level->mask;
        if (utf8 == NULL || entry_set(&level->slots[i], key, inner, depth) < 0) {
            level_free(level);
            return NULL;
        }
    }
    return level;
}

/* ---- the scan */

typedef struct {
    const char *buf;
    Py_ssize_t len, pos;
    char path[PATH_MAX_BYTES];
    Py_ssize_t path_len;
    PyObject *found;
} Scan;

/* Each step answers 0 (go on), 1 (not sure: the caller decodes the record the slow way)
 * or -1 (a Python error). */
#define UNSURE 1

static void skip_ws(Scan *s)
{
    while (s->pos < s->len) {
        char c = s->buf[s->pos];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            return;
        s->pos++;
    }
}

static int expect(Scan *s, char c)
{
    skip_ws(s);
    if (s->pos >= s->len || s->buf[s->pos] != c)
        return UNSURE;
    s->pos++;
    return 0;
}

/* Past a string whose opening quote is at pos; *escaped says whether it had a backslash.
 * memchr (vectorised in libc) finds the closing quote; a quote after an odd run of
 * backslashes is part of the string. */
static int skip_string(Scan *s, int *escaped)
{
    const char *from = s->buf + s->pos + 1, *end = s->buf + s->len;
    *escaped = 0;
    while (from < end) {
        const char *quote = memchr(from, '"', (size_t)(end - from));
        if (quote == NULL)
            return UNSURE;
        if (!*escaped && memchr(from, '\\', (size_t)(quote - from)) != NULL)
            *escaped = 1;
        const char *back = quote;
        while (back > from && back[-1] == '\\')
            back--;
        from = quote + 1;
        if ((quote - back) % 2 == 0) {
            s->pos = from - s->buf;
            return 0;
        }
    }
    return UNSURE;
}

/* Whether a byte ends a number or a literal. */
static int ends_scalar(char c)
{
    return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Past one value of any kind, without looking inside it. */
static int skip_value(Scan *s)
{
    int escaped, depth = 0;
    skip_ws(s);
    do {
        if (s->pos >= s->len)
            return UNSURE;
        char c = s->buf[s->pos];
        if (c == '"') {
            if (skip_string(s, &escaped))
                return UNSURE;
            continue;
        }
        if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']')
            depth--;
        else if (depth == 0) { /* a number or a literal: up to what ends it */
            Py_ssize_t start = s->pos;
            while (s->pos < s->len && !ends_scalar(s->buf[s->pos]))
                s->pos++;
            return s->pos > start ? 0 : UNSURE;
        }
        s->pos++;
    } while (depth > 0);
    return depth == 0 ? 0 : UNSURE;
}

static int path_push(Scan *s, const char *part, Py_ssize_t len)
{
    if (s->path_len + len >= PATH_MAX_BYTES)
        return UNSURE;
    memcpy(s->path + s->path_len, part, (size_t)len);
    s->path_len += len;
    return 0;
}

static int report(Scan *s, const char *key, Py_ssize_t key_len, Py_ssize_t start, int sensitive)
{
    Py_ssize_t mark = s->path_len;
    if (path_push(s, key, key_len))
        return UNSURE;
    PyObject *path = PyUnicode_DecodeUTF8(s->path, s->path_len, "strict");
    s->path_len = mark;
    if (path == NULL) {
        PyErr_Clear(); /* not UTF-8: the careful reader says so */
        return UNSURE;
    }
    PyObject *item = Py_BuildValue("(NnnO)", path, start, s->pos, sensitive ? Py_True : Py_False);
    if (item == NULL)
        return -1;
    int status = PyList_Append(s->found, item);
    Py_DECREF(item);
    return status;
}

static int scan_object(Scan *s, const Level *level);

static int is_null(Scan *s)
{
    skip_ws(s);
    return s->len - s->pos >= 4 && memcmp(s->buf + s->pos, "null", 4) == 0;
}

/* Into an object or array: *empty when it closes at once (and is then passed). */
static int open_container(Scan *s, char open, char close, int *empty)
{
    if (expect(s, open))
        return UNSURE;
    skip_ws(s);
    *empty = s->pos < s->len && s->buf[s->pos] == close;
    if (*empty)
        s->pos++;
    return 0;
}

/* After a member or an item: a comma (*more) or the closing bracket. */
static int after_element(Scan *s, char close, int *more)
{
    skip_ws(s);
    *more = s->pos < s->len && s->buf[s->pos] == ',';
    if (*more) {
        s->pos++;
        return 0;
    }
    return expect(s, close);
}

/* "[i]." written into `out` (room for 24 bytes); its length. By hand: snprintf cost more
 * than the rest of an item's scan. */
static int index_part(char *out, Py_ssize_t i)
{
    char digits[20];
    int n = 0, len = 0;
    do {
        digits[n++] = (char)('0' + i % 10);
        i /= 10;
    } while (i > 0);
    out[len++] = '[';
    while (n > 0)
        out[len++] = digits[--n];
    out[len++] = ']';
    out[len++] = '.';
    return len;
}

/* An array of objects of `inner`, each at `key[i].`. */
static int scan_items(Scan *s, const Level *inner, const char *key, Py_ssize_t key_len)
{
    Py_ssize_t mark = s->path_len;
    int empty, more = 1, status = open_container(s, '[', ']', &empty);
    if (status || empty)
        return status;
    for (Py_ssize_t i = 0; more; i++) {
        char index[24];
        int n = index_part(index, i);
        status = path_push(s, key, key_len) || path_push(s, index, n);
        if (!status)
            status = scan_object(s, inner);
        s->path_len = mark;
        if (status || (status = after_element(s, ']', &more)))
            return status;
    }
    return 0;
}

/* The value of a field to look inside; null is skipped, as the careful reader skips it. */
static int scan_inner(Scan *s, const Entry *e)
{
    if (is_null(s))
        return skip_value(s);
    if (e->shape == 'a')
        return scan_items(s, e->inner, e->key, e->len);
    Py_ssize_t mark = s->path_len;
    int status = path_push(s, e->key, e->len) || path_push(s, ".", 1);
    if (!status)
        status = scan_object(s, e->inner);
    s->path_len = mark;
    return status;
}

static int scan_member(Scan *s, const Level *level, const Entry **seen, int *n_seen)
{
    int escaped, status;
    skip_ws(s);
    if (s->pos >= s->len || s->buf[s->pos] != '"')
        return UNSURE;
    Py_ssize_t key_start = s->pos + 1;
    if (skip_string(s, &escaped) || escaped)
        return UNSURE; /* an escaped key: orjson knows what it spells */
    Py_ssize_t key_len = s->pos - 1 - key_start;
    if (expect(s, ':'))
        return UNSURE;
    const Entry *e = lookup(level, s->buf + key_start, key_len);
    if (e == NULL) {
        skip_ws(s);
        Py_ssize_t start = s->pos;
        status = skip_value(s);
        return status ? status : report(s, s->buf + key_start, key_len, start, level->sensitive);
    }
    if (!e->shape)
        return skip_value(s);
    for (int i = 0; i < *n_seen; i++) {
        if (seen[i] == e)
            return UNSURE; /* a repeated key: which one counts is the parser's choice */
    }
    if (*n_seen == INNER_MAX)
        return UNSURE;
    seen[(*n_seen)++] = e;
    return scan_inner(s, e);
}

static int scan_object(Scan *s, const Level *level)
{
    const Entry *seen[INNER_MAX];
    int n_seen = 0, empty, more = 1, status = open_container(s, '{', '}', &empty);
    if (status || empty)
        return status;
    while (more) {
        status = scan_member(s, level, seen, &n_seen);
        if (status || (status = after_element(s, '}', &more)))
            return status;
    }
    return 0;
}

/* ---- the module */

#define CAPSULE_NAME "dims._tables._unknownkeys.levels"

static void levels_destroy(PyObject *capsule)
{
    level_free(PyCapsule_GetPointer(capsule, CAPSULE_NAME));
}

static PyObject *compile(PyObject *module, PyObject *tree)
{
    (void)module;
    Level *level = level_compile(tree, 0);
    if (level == NULL)
        return NULL;
    PyObject *capsule = PyCapsule_New(level, CAPSULE_NAME, levels_destroy);
    if (capsule == NULL)
        level_free(level);
    return capsule;
}

static PyObject *scan(PyObject *module, PyObject *args)
{
    (void)module;
    Py_buffer raw;
    PyObject *capsule;
    if (!PyArg_ParseTuple(args, "y*O:scan", &raw, &capsule))
        return NULL;
    const Level *level = PyCapsule_GetPointer(capsule, CAPSULE_NAME);
    Scan *s = level == NULL ? NULL : PyMem_Malloc(sizeof(Scan));
    if (s == NULL) {
        PyBuffer_Release(&raw);
        return level == NULL ? NULL : PyErr_NoMemory();
    }
    s->buf = raw.buf;
    s->len = raw.len;
    s->pos = 0;
    s->path_len = 0;
    s->found = PyList_New(0);
    int status = s->found == NULL ? -1 : scan_object(s, level);
    if (status == 0) {
        skip_ws(s);
        status = s->pos == s->len ? 0 : UNSURE;
    }
    PyObject *found = s->found;
    PyMem_Free(s);
    PyBuffer_Release(&raw);
    if (status == 0)
        return found;
    Py_XDECREF(found);
    if (status < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"compile", compile, METH_O, "compile(tree): the levels to look in, for scan()."},
    {"scan", scan, METH_VARARGS,
     "scan(raw, levels): (path, start, end, sensitive) of each unknown field, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_unknownkeys",
    "The fields of a raw JSON record that the spec does not name.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__unknownkeys(void)
{
    return PyModule_Create(&module);
}
