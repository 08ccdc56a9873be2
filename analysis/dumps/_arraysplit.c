/* analysis.dumps._arraysplit: where each element of a JSON array lies, and which are pages.
 *
 * Why it exists: `dims export --from-json` reads a dump's records as raw JSON text. msgspec
 * split the array (one pass over the text) and a second pass looked for pages among the
 * elements (a top-level "resources" key): two passes holding the GIL, before the first
 * record could be read. This is one pass that builds no Python object and lets go of the
 * GIL, so a thread can split the file while the interpreter imports pyarrow
 * (`_reader.read_ahead`), or cut a large file block by block (`_reader._raw_blocks`).
 *
 * Why it can be trusted: it accepts only text that msgspec's `list[Raw]` decode accepts
 * (the same grammar: its whitespace, strings with their escapes and surrogate pairs,
 * control characters refused, numbers, literals, no trailing commas or characters) and
 * gives the same element boundaries. Anything else, or nesting deeper than MAX_DEPTH, is
 * answered None, and the caller splits with msgspec as before, with msgspec's errors. A
 * page is found by its key's raw text; an escaped top-level key is answered "unsure" for
 * that element, which the caller probes with msgspec. tests/storage/test_arraysplit.py holds
 * it to msgspec, on generated JSON and on damaged text, whole and cut into blocks anywhere.
 *
 * split(buffer) -> (offsets, kinds) or None
 *   offsets: bytes of native int64, start and end of each element;
 *   kinds: bytes, one per element: 0 a record (or anything not a page), 1 a page,
 *   2 unsure (an object with an escaped top-level key).
 * split_from(buffer, start, first) -> (offsets, kinds, resume, first, closed) or None
 *   the elements that lie whole in a block of a larger array, from `start` (where an
 *   element, or with `first` the closing bracket, may begin). An element is taken only
 *   with the comma or bracket after it, so one the block cuts (a number too) is left for
 *   the next block, which starts at `resume` (`first`: still the array's first element);
 *   `closed` is the offset after the closing bracket, or -1.
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
/* What a scan returns: the value is whole; not what msgspec accepts; the text ends first
 * (a block of a larger array: the next one says); memory ran out. */
enum { OK = 0, BAD = -1, NOMEM = -2, MORE = -3 };

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
        return MORE;
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
            return BAD;
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

/* A string from its opening quote. `escaped` is set when it holds an escape. */
static int skip_string(Scan *s, int *escaped)
{
    s->pos++;
    for (;;) {
        plain_run(s);
        if (s->pos >= s->len)
            return MORE;
        unsigned char c = s->buf[s->pos++];
        if (c == '"')
            return OK;
        if (c < 0x20)
            return BAD;
        *escaped = 1;
        if (s->pos >= s->len)
            return MORE;
        c = s->buf[s->pos++];
        if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' ||
            c == 't')
            continue;
        if (c != 'u')
            return BAD;
        unsigned int cp, low;
        int status = hex4(s, &cp);
        if (status != OK)
            return status;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
            return BAD;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s->len - s->pos < 6)
                return MORE;
            if (s->buf[s->pos] != '\\' || s->buf[s->pos + 1] != 'u')
                return BAD;
            s->pos += 2;
            if ((status = hex4(s, &low)) != OK)
                return status;
            if (low < 0xDC00 || low > 0xDFFF)
                return BAD;
        }
    }
}

static int is_digit(Scan *s)
{
    return s->pos < s->len && s->buf[s->pos] >= '0' && s->buf[s->pos] <= '9';
}

/* One digit or more; at the end of the text, the next block may hold them. */
static int skip_digits(Scan *s)
{
    Py_ssize_t start = s->pos;
    while (is_digit(s))
        s->pos++;
    return s->pos > start ? OK : s->pos >= s->len ? MORE : BAD;
}

/* A number ends where its characters do: whether the text goes on is for the caller. */
static int skip_number(Scan *s)
{
    int status;
    if (s->buf[s->pos] == '-')
        s->pos++;
    if (s->pos < s->len && s->buf[s->pos] == '0') {
        s->pos++;
        if (is_digit(s))
            return BAD;
    }
    else if ((status = skip_digits(s)) != OK)
        return status;
    if (s->pos < s->len && s->buf[s->pos] == '.') {
        s->pos++;
        if ((status = skip_digits(s)) != OK)
            return status;
    }
    if (s->pos < s->len && (s->buf[s->pos] == 'e' || s->buf[s->pos] == 'E')) {
        s->pos++;
        if (s->pos < s->len && (s->buf[s->pos] == '+' || s->buf[s->pos] == '-'))
            s->pos++;
        if ((status = skip_digits(s)) != OK)
            return status;
    }
    return OK;
}

static int skip_literal(Scan *s, const char *word, Py_ssize_t n)
{
    if (s->len - s->pos < n)
        return MORE;
    if (memcmp(s->buf + s->pos, word, (size_t)n) != 0)
        return BAD;
    s->pos += n;
    return OK;
}

static int skip_value(Scan *s, int depth, char *kind);

/* Whitespace, then a character that must be there. */
static int next_char(Scan *s, unsigned char *c)
{
    skip_ws(s);
    if (s->pos >= s->len)
        return MORE;
    *c = s->buf[s->pos];
    return OK;
}

/* An object's key. With `kind` (an element's own object) it is looked at for "resources". */
static int skip_key(Scan *s, char *kind)
{
    Py_ssize_t start = s->pos + 1;
    int escaped = 0, status = skip_string(s, &escaped);
    if (status != OK || kind == NULL)
        return status;
    if (escaped)
        *kind = *kind == PAGE ? PAGE : UNSURE;
    else if (s->pos - 1 - start == 9 && memcmp(s->buf + start, "resources", 9) == 0)
        *kind = PAGE;
    return OK;
}

/* An array or object from its opening bracket. */
static int skip_container(Scan *s, int depth, char *kind)
{
    int object = s->buf[s->pos] == '{', status;
    unsigned char close = object ? '}' : ']', c;
    if (depth >= MAX_DEPTH)
        return BAD;
    s->pos++;
    for (int first = 1;; first = 0) {
        if ((status = next_char(s, &c)) != OK)
            return status;
        if (c == close) {
            s->pos++;
            return OK;
        }
        if (!first) {
            if (c != ',')
                return BAD;
            s->pos++;
            if ((status = next_char(s, &c)) != OK)
                return status;
        }
        if (object) {
            if (c != '"')
                return BAD;
            if ((status = skip_key(s, kind)) != OK || (status = next_char(s, &c)) != OK)
                return status;
            if (c != ':')
                return BAD;
            s->pos++;
        }
        if ((status = skip_value(s, depth + 1, NULL)) != OK)
            return status;
    }
}

static int skip_value(Scan *s, int depth, char *kind)
{
    unsigned char c;
    int escaped = 0, status = next_char(s, &c);
    if (status != OK)
        return status;
    switch (c) {
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
            return NOMEM;
        e->offsets = offsets;
        char *kinds = PyMem_RawRealloc(e->kinds, (size_t)capacity);
        if (kinds == NULL)
            return NOMEM;
        e->kinds = kinds;
        e->capacity = capacity;
    }
    e->offsets[2 * e->count] = start;
    e->offsets[2 * e->count + 1] = end;
    e->kinds[e->count++] = kind;
    return OK;
}

typedef struct {
    int first;          /* at `resume`: the array's first element, or its closing bracket */
    Py_ssize_t resume;  /* where the next block starts */
    Py_ssize_t closed;  /* after the closing bracket, or -1 */
} Stop;

/* The array's elements from `s->pos` while they lie whole in the text, each taken with
 * the comma or bracket that follows it. */
static int split_part(Scan *s, Elements *e, Stop *stop)
{
    unsigned char c;
    stop->closed = -1;
    for (;;) {
        skip_ws(s);
        stop->resume = s->pos;
        if (s->pos >= s->len)
            return OK;
        if (s->buf[s->pos] == ']' && stop->first) {
            stop->resume = stop->closed = s->pos + 1;
            return OK;
        }
        Py_ssize_t start = s->pos;
        char kind = RECORD;
        int status = skip_value(s, 1, &kind);
        if (status == MORE)
            return OK;
        if (status != OK)
            return status;
        Py_ssize_t end = s->pos;
        if (next_char(s, &c) != OK)
            return OK; /* what follows is in the next block (a number may go on) */
        if (c != ',' && c != ']')
            return BAD;
        if ((status = add(e, start, end, kind)) != OK)
            return status;
        s->pos++;
        stop->first = 0;
        if (c == ']') {
            stop->resume = stop->closed = s->pos;
            return OK;
        }
    }
}

/* A whole array, and nothing after it but whitespace. */
static int split_array(Scan *s, Elements *e)
{
    Stop stop = {1, 0, -1};
    skip_ws(s);
    if (s->pos >= s->len || s->buf[s->pos] != '[')
        return BAD;
    s->pos++;
    int status = split_part(s, e, &stop);
    if (status != OK)
        return status;
    if (stop.closed < 0)
        return BAD; /* the text ends inside the array */
    s->pos = stop.closed;
    skip_ws(s);
    return s->pos == s->len ? OK : BAD;
}

static PyObject *answer(Elements *e, Stop *stop)
{
    PyObject *offsets = PyBytes_FromStringAndSize(
        (const char *)e->offsets, e->count * 2 * (Py_ssize_t)sizeof(int64_t));
    PyObject *kinds = PyBytes_FromStringAndSize(e->kinds, e->count);
    PyObject *result = NULL;
    if (offsets != NULL && kinds != NULL)
        result = stop == NULL ? PyTuple_Pack(2, offsets, kinds)
                              : Py_BuildValue("(OOnOn)", offsets, kinds, stop->resume,
                                              stop->first ? Py_True : Py_False, stop->closed);
    Py_XDECREF(offsets);
    Py_XDECREF(kinds);
    return result;
}

/* Scan `text` from `start` without the GIL: the whole array, or (with `stop`) a block. */
static PyObject *scan(Py_buffer *text, Py_ssize_t start, Stop *stop)
{
    Scan s = {(const unsigned char *)text->buf, text->len, start};
    Elements e = {NULL, NULL, 0, 0};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = stop == NULL ? split_array(&s, &e) : split_part(&s, &e, stop);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (status == NOMEM)
        PyErr_NoMemory();
    else if (status != OK)
        result = Py_NewRef(Py_None);
    else
        result = answer(&e, stop);
    PyMem_RawFree(e.offsets);
    PyMem_RawFree(e.kinds);
    return result;
}

static PyObject *split(PyObject *self, PyObject *arg)
{
    Py_buffer text;
    if (PyObject_GetBuffer(arg, &text, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *result = scan(&text, 0, NULL);
    PyBuffer_Release(&text);
    return result;
}

static PyObject *split_from(PyObject *self, PyObject *args)
{
    Py_buffer text;
    Py_ssize_t start;
    int first;
    if (!PyArg_ParseTuple(args, "y*np", &text, &start, &first))
        return NULL;
    PyObject *result;
    if (start < 0 || start > text.len) {
        PyErr_SetString(PyExc_ValueError, "split_from: start is outside the text");
        result = NULL;
    }
    else {
        Stop stop = {first, start, -1};
        result = scan(&text, start, &stop);
    }
    PyBuffer_Release(&text);
    return result;
}

static PyMethodDef methods[] = {
    {"split", split, METH_O,
     "split(buffer): (offsets, kinds) of a JSON array's elements, or None when unsure."},
    {"split_from", split_from, METH_VARARGS,
     "split_from(buffer, start, first): (offsets, kinds, resume, first, closed) of the "
     "elements of an array's block that lie whole in it, or None when unsure."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_arraysplit",
    "Where each element of a JSON array lies, and which are pages.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__arraysplit(void)
{
    return PyModule_Create(&module);
}
