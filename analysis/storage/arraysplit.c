/* analysis.storage.arraysplit: where each element of a JSON array lies, and which are pages.
 *
 * Why it exists: `dims export --from-json` reads a dump's records as raw JSON text. msgspec
 * split the array (one pass over the text) and a second pass looked for pages among the
 * elements (a top-level "resources" key): two passes holding the GIL, before the first
 * record could be read. This is one pass that builds no Python object and lets go of the
 * GIL, so a thread can split the file while the interpreter imports pyarrow
 * (`analysis.storage.dumpfile`).
 *
 * Why it can be trusted: it accepts only text that msgspec's `list[Raw]` decode accepts
 * (the same grammar: its whitespace, strings with their escapes and surrogate pairs,
 * control characters refused, numbers, literals, no trailing commas or characters) and
 * gives the same element boundaries. Anything else, or nesting deeper than MAX_DEPTH, is
 * answered None, and the caller splits with msgspec as before, with msgspec's errors. A
 * page is found by its key's raw text; an escaped top-level key is answered "unsure" for
 * that element, which the caller probes with msgspec. tests/storage/test_arraysplit.py holds
 * it to msgspec, on generated JSON and on damaged text.
 *
 * split(buffer) -> (offsets, kinds) or None
 *   offsets: bytes of native int64, start and end of each element;
 *   kinds: bytes, one per element: 0 a record (or anything not a page), 1 a page,
 *   2 unsure (an object with an escaped top-level key).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAX_DEPTH 256

enum { RECORD = 0, PAGE = 1, UNSURE = 2 };

typedef struct {
    const unsigned char *buf;
    Py_ssize_t len;
    Py_ssize_t pos;
} Scan;

typedef struct {
    int64_t *offsets; /* start, end of each element */
    char *kinds;
    Py_ssize_t count, capacity;
} Elements;

static void skip_ws(Scan *s)
{
    while (s->pos < s->len) {
        unsigned char c = s->buf[s->pos];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            return;
        s->pos++;
    }
}

static int hex4(Scan *s, unsigned int *out)
{
    if (s->len - s->pos < 4)
        return -1;
    unsigned int cp = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = s->buf[s->pos++];
        if (c >= '0' && c <= '9')
            c -= '0';
        else if (c >= 'a' && c <= 'f')
            c = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            c = c - 'A' + 10;
        else
            return -1;
        cp = (cp << 4) + c;
    }
    *out = cp;
    return 0;
}

/* Past the plain run of a string: bytes that are neither a quote, a backslash nor a
 * control character (16 at a time where SSE2 is there). */
static void plain_run(Scan *s)
{
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i below = _mm_set1_epi8(0x1F);
    while (s->len - s->pos >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s->buf + s->pos));
        __m128i stop = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash));
        stop = _mm_or_si128(stop, _mm_cmpeq_epi8(_mm_max_epu8(v, below), below));
        int mask = _mm_movemask_epi8(stop);
        if (mask != 0) {
            s->pos += __builtin_ctz((unsigned)mask);
            return;
        }
        s->pos += 16;
    }
#endif
    while (s->pos < s->len) {
        unsigned char c = s->buf[s->pos];
        if (c == '"' || c == '\\' || c < 0x20)
            return;
        s->pos++;
    }
}

/* A string from its opening quote; 0, or -1 where msgspec would refuse it. `escaped` is
 * set when it holds an escape. */
static int skip_string(Scan *s, int *escaped)
{
    s->pos++;
    for (;;) {
        plain_run(s);
        if (s->pos >= s->len)
            return -1;
        unsigned char c = s->buf[s->pos++];
        if (c == '"')
            return 0;
        if (c < 0x20)
            return -1;
        *escaped = 1;
        if (s->pos >= s->len)
            return -1;
        c = s->buf[s->pos++];
        if (strchr("\"\\/bfnrt", c) != NULL && c != '\0')
            continue;
        if (c != 'u')
            return -1;
        unsigned int cp, low;
        if (hex4(s, &cp) < 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
            return -1;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s->len - s->pos < 6 || s->buf[s->pos] != '\\' || s->buf[s->pos + 1] != 'u')
                return -1;
            s->pos += 2;
            if (hex4(s, &low) < 0 || low < 0xDC00 || low > 0xDFFF)
                return -1;
        }
    }
}

static int is_digit(Scan *s)
{
    return s->pos < s->len && s->buf[s->pos] >= '0' && s->buf[s->pos] <= '9';
}

static int skip_digits(Scan *s)
{
    Py_ssize_t start = s->pos;
    while (is_digit(s))
        s->pos++;
    return s->pos > start ? 0 : -1;
}

static int skip_number(Scan *s)
{
    if (s->buf[s->pos] == '-')
        s->pos++;
    if (s->pos < s->len && s->buf[s->pos] == '0') {
        s->pos++;
        if (is_digit(s))
            return -1;
    }
    else if (skip_digits(s) < 0)
        return -1;
    if (s->pos < s->len && s->buf[s->pos] == '.') {
        s->pos++;
        if (skip_digits(s) < 0)
            return -1;
    }
    if (s->pos < s->len && (s->buf[s->pos] == 'e' || s->buf[s->pos] == 'E')) {
        s->pos++;
        if (s->pos < s->len && (s->buf[s->pos] == '+' || s->buf[s->pos] == '-'))
            s->pos++;
        if (skip_digits(s) < 0)
            return -1;
    }
    return 0;
}

static int skip_literal(Scan *s, const char *word, Py_ssize_t n)
{
    if (s->len - s->pos < n || memcmp(s->buf + s->pos, word, (size_t)n) != 0)
        return -1;
    s->pos += n;
    return 0;
}

static int skip_value(Scan *s, int depth, char *kind);

/* An array or object from its opening bracket. With `kind` (an element's own object), its
 * top-level keys are looked at for "resources". */
static int skip_container(Scan *s, int depth, char *kind)
{
    int object = s->buf[s->pos] == '{';
    unsigned char close = object ? '}' : ']';
    if (depth >= MAX_DEPTH)
        return -1;
    s->pos++;
    for (int first = 1;; first = 0) {
        skip_ws(s);
        if (s->pos >= s->len)
            return -1;
        if (s->buf[s->pos] == close && first) {
            s->pos++;
            return 0;
        }
        if (!first) {
            if (s->buf[s->pos] == close) {
                s->pos++;
                return 0;
            }
            if (s->buf[s->pos] != ',')
                return -1;
            s->pos++;
            skip_ws(s);
            if (s->pos >= s->len)
                return -1;
        }
        if (object) {
            if (s->buf[s->pos] != '"')
                return -1;
            Py_ssize_t start = s->pos + 1;
            int escaped = 0;
            if (skip_string(s, &escaped) < 0)
                return -1;
            if (kind != NULL) {
                if (escaped)
                    *kind = *kind == PAGE ? PAGE : UNSURE;
                else if (s->pos - 1 - start == 9 && memcmp(s->buf + start, "resources", 9) == 0)
                    *kind = PAGE;
            }
            skip_ws(s);
            if (s->pos >= s->len || s->buf[s->pos] != ':')
                return -1;
            s->pos++;
        }
        if (skip_value(s, depth + 1, NULL) < 0)
            return -1;
    }
}

static int skip_value(Scan *s, int depth, char *kind)
{
    skip_ws(s);
    if (s->pos >= s->len)
        return -1;
    int escaped = 0;
    switch (s->buf[s->pos]) {
    case 'n':
        return skip_literal(s, "null", 4);
    case 't':
        return skip_literal(s, "true", 4);
    case 'f':
        return skip_literal(s, "false", 5);
    case '"':
        return skip_string(s, &escaped);
    case '[':
        return skip_container(s, depth, NULL);
    case '{':
        return skip_container(s, depth, kind);
    default:
        return skip_number(s);
    }
}

static int add(Elements *e, Py_ssize_t start, Py_ssize_t end, char kind)
{
    if (e->count == e->capacity) {
        Py_ssize_t capacity = e->capacity ? 2 * e->capacity : 1024;
        int64_t *offsets = PyMem_RawRealloc(e->offsets, (size_t)capacity * 2 * sizeof(int64_t));
        if (offsets == NULL)
            return -1;
        e->offsets = offsets;
        char *kinds = PyMem_RawRealloc(e->kinds, (size_t)capacity);
        if (kinds == NULL)
            return -1;
        e->kinds = kinds;
        e->capacity = capacity;
    }
    e->offsets[2 * e->count] = start;
    e->offsets[2 * e->count + 1] = end;
    e->kinds[e->count++] = kind;
    return 0;
}

/* The top-level array: 0 when whole and valid, -1 when msgspec may think otherwise, -2
 * when memory ran out. */
static int split_array(Scan *s, Elements *e)
{
    skip_ws(s);
    if (s->pos >= s->len || s->buf[s->pos] != '[')
        return -1;
    s->pos++;
    for (int first = 1;; first = 0) {
        skip_ws(s);
        if (s->pos >= s->len)
            return -1;
        if (s->buf[s->pos] == ']' && first) {
            s->pos++;
            break;
        }
        if (!first) {
            if (s->buf[s->pos] == ']') {
                s->pos++;
                break;
            }
            if (s->buf[s->pos] != ',')
                return -1;
            s->pos++;
            skip_ws(s);
        }
        Py_ssize_t start = s->pos;
        char kind = RECORD;
        if (skip_value(s, 1, &kind) < 0)
            return -1;
        if (add(e, start, s->pos, kind) < 0)
            return -2;
    }
    skip_ws(s);
    return s->pos == s->len ? 0 : -1;
}

static PyObject *split(PyObject *self, PyObject *arg)
{
    Py_buffer text;
    if (PyObject_GetBuffer(arg, &text, PyBUF_SIMPLE) < 0)
        return NULL;
    Scan s = {(const unsigned char *)text.buf, text.len, 0};
    Elements e = {NULL, NULL, 0, 0};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = split_array(&s, &e);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&text);
    PyObject *result = NULL;
    if (status == -2)
        PyErr_NoMemory();
    else if (status < 0)
        result = Py_NewRef(Py_None);
    else {
        PyObject *offsets = PyBytes_FromStringAndSize(
            (const char *)e.offsets, e.count * 2 * (Py_ssize_t)sizeof(int64_t));
        PyObject *kinds = PyBytes_FromStringAndSize(e.kinds, e.count);
        if (offsets != NULL && kinds != NULL)
            result = PyTuple_Pack(2, offsets, kinds);
        Py_XDECREF(offsets);
        Py_XDECREF(kinds);
    }
    PyMem_RawFree(e.offsets);
    PyMem_RawFree(e.kinds);
    return result;
}

static PyMethodDef methods[] = {
    {"split", split, METH_O,
     "split(buffer): (offsets, kinds) of a JSON array's elements, or None when unsure."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "arraysplit",
    "Where each element of a JSON array lies, and which are pages.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_arraysplit(void)
{
    return PyModule_Create(&module);
}
