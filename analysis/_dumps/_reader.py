"""Read a saved dump of deployments (`dims export --from-json FILE`) as a stream of Pages.

Accepted shapes (what `dims export --from-json` documents): a JSON array of deployment
records; one list-deployments response page `{"resources": [...], "offset": n}`; a JSON
array of such pages; or NDJSON with one record or one page per line. Elements of an
array may mix records and pages.

Why it reads the way it does:
- The collector is paused for a whole-file parse only; streamed parsing relies on the
  caller (`export_snapshot` pauses it for the whole export, see dims._gcpause).
- Large arrays are parsed a few megabytes at a time, because parsing 100,000 records at
  once costs well over 1 GB of Python objects: a vectorised scan (numpy) of each buffer's
  tail finds where a top-level element ends, and orjson parses the whole elements before it
  (`_chunked_array`; as fast as parsing the file whole). Anything unusual, including every
  syntax error, hands over to the careful reader (the standard library's `raw_decode` over
  a sliding text buffer, `_stream_array`), which reports line and column. Files under
  `WHOLE_FILE_LIMIT` are parsed at once with orjson. NDJSON is parsed line by line.
- `raw=True` (what `dims export --from-json` uses) skips the parse for arrays: msgspec cuts
  the text into the records' raw JSON text and finds the pages among them, so the typed
  reader in `dims._tables` can decode each record straight into typed Structs. A file up
  to `WHOLE_FILE_LIMIT * _RAW_WHOLE_FACTOR` is split whole; a larger one is cut a few
  megabytes at a time (`_chunked_array`). No C module splits it: one did not clear the bar
  a C module must (docs/benchmarks.md, "What each C module buys").
- A record that is not a valid deployment is not an error here: it goes on to the flattener,
  which lists it in rejected_records. Nor is one holding a value the JSON grammar allows and
  no parser reads (a lone surrogate, 1e400): wherever orjson refuses the text, the grammar
  cuts it (`dims._rawjson`) and that record alone stays raw text for the tables to
  reject. A file that is not JSON, is empty or has the wrong shape is a `DumpError`: one
  line naming the file and the problem.
- `Page.source` names where the records are (`dump.json[0..999]`, `dump.json[3].resources`,
  `dump.ndjson:lines 1-1000`) and `record_index` (first_index + i) is the position in that
  array; for NDJSON records it is the line number, so a rejected record is easy to find.
- Hostile files stay bounded: a record larger than `max_record_bytes` (default 64 MiB; no
  deployment comes near) is a DumpError as soon as the reading holds that much of it,
  never a 9 GB parse; nesting too deep for the parsers is a DumpError, not RecursionError.
  The limit holds where records are read as text (arrays read raw or in chunks, NDJSON
  lines); a file small enough to be parsed whole is bounded by its own size.
- A pipe (`/dev/stdin`, a FIFO) is copied to a temporary file first, because the shape is
  found by looking at the file more than once; messages still name the pipe.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Generator, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

import msgspec
import orjson

from dims import _rawjson as rawjson
from dims._errors import DumpError
from dims._gcpause import paused_gc
from dims._pages import Page

if TYPE_CHECKING:
    import numpy as np

#: Files up to this size are parsed whole with orjson; larger arrays are read in chunks.
WHOLE_FILE_LIMIT = 16 * 1024 * 1024
#: Raw reading holds a file's bytes, not a Python object per value, so it reads files this
#: many times larger whole: cheaper than cutting it in chunks (docs/benchmarks.md).
_RAW_WHOLE_FACTOR = 4
_CHUNK = 4 * 1024 * 1024
#: The largest record (or NDJSON line) read; larger ones are a DumpError. No real deployment
#: is a thousandth of this; a 1 GiB string in a dump is damage, not data.
MAX_RECORD_BYTES = 64 * 1024 * 1024
_EXPECTED = (
    "expected a JSON array of deployments, a list-deployments page "
    '({"resources": [...], "offset": n}), a JSON array of such pages, or NDJSON'
)
_NDJSON_SUFFIXES = {".ndjson", ".jsonl"}
_WHITESPACE = " \t\r\n"
_BLANK = _WHITESPACE.encode()
_BOM = b"\xef\xbb\xbf"


def read_dump(
    path: str | os.PathLike[str],
    *,
    page_size: int = 1000,
    raw: bool = False,
    max_record_bytes: int = MAX_RECORD_BYTES,
    on_total: Callable[[int], object] | None = None,
) -> Iterator[Page]:
    """Yield the dump's records as Pages of at most `page_size` records.

    The file's shape is checked before the first page is yielded; a JSON syntax error in a
    streamed array or in an NDJSON line surfaces when the reading gets there.

    With `raw=True` the records of a top-level array come as `msgspec.Raw` (each one's JSON
    text, unparsed) for the Flattener's compiled lane; pages inside the array, a single page
    and NDJSON still come parsed. The array's syntax is checked as it is split; what only
    a full parse finds (a number out of range, bad UTF-8 in a string) is reported by the
    Flattener with the record's position.

    `on_total(n)` is told how many records the dump holds where that is known before the
    reading (an array split whole), for a progress bar's total.
    """
    path = Path(path)
    if page_size < 1 or max_record_bytes < 1:
        raise ValueError("page_size and max_record_bytes must be at least 1")
    if _is_pipe(path):
        options = {"raw": raw, "max_record_bytes": max_record_bytes, "on_total": on_total}
        return _read_pipe(path, page_size=page_size, **options)
    limit = max_record_bytes
    first = _first_char(path)
    if path.suffix.lower() in _NDJSON_SUFFIXES:
        return _read_ndjson(path, page_size, limit)
    if first == "[":
        return _read_array(path, page_size, raw, limit, on_total)
    if first == "{" and _is_ndjson(path, limit):
        return _read_ndjson(path, page_size, limit)
    document = _load_whole(path)
    if isinstance(document, dict) and "resources" in document:
        return iter(_split_page(path, document, path.name, page_size))
    raise DumpError(f"{path}: {_EXPECTED}; got {_shape(document)}")


def _read_array(
    path: Path, page_size: int, raw: bool, limit: int, on_total: Callable[[int], object] | None
) -> Iterator[Page]:
    """A top-level array: split whole, parsed whole, or read in blocks, by its size."""
    if raw and _size(path) <= WHOLE_FILE_LIMIT * _RAW_WHOLE_FACTOR:
        elements = _split_whole(path, limit)
        if on_total is not None:
            on_total(_records_in(elements))
        return _pages_of_elements(path, _indexed(elements), page_size)
    if _size(path) <= WHOLE_FILE_LIMIT:
        return _pages_of_elements(path, enumerate(_load_whole(path)), page_size)
    return _pages_of_elements(path, _chunked_array(path, raw, limit), page_size)


# --- shapes -----------------------------------------------------------------------------


#: A blank NDJSON line: the next record starts a new page (record_index is a line number).
_GAP = object()


def _group(
    path: Path,
    elements: Iterable[tuple[int, Any]],
    page_size: int,
    label: Callable[[int], str],
    page: Callable[[Path, list[Any], int], Page],
) -> Iterator[Page]:
    """Group (index, value) pairs into Pages: runs of records, and each page element on its own.

    A `_Run` value stands for consecutive records from `index` on, taken in bulk.
    """
    pager = _Pager(path, page_size, page)
    for index, value in elements:
        if type(value) is _Run:
            yield from pager.add_run(index, value)
        elif value is _GAP or (isinstance(value, dict) and "resources" in value):
            yield from pager.flush()
            if isinstance(value, dict):
                yield from _split_page(path, value, label(index), page_size)
        else:
            full = pager.add(index, value)
            if full is not None:
                yield full
    yield from pager.flush()


class _Pager:
    """Records collected into pages of `page_size`, each knowing the index it starts at."""

    def __init__(
        self, path: Path, page_size: int, page: Callable[[Path, list[Any], int], Page]
    ) -> None:
        self.path, self.page_size, self.page = path, page_size, page
        self.batch: list[Any] = []
        self.start = 0

    def add(self, index: int, value: Any) -> Page | None:
        """Add one record; the page it fills, if it fills one."""
        if not self.batch:
            self.start = index
        self.batch.append(value)
        if len(self.batch) < self.page_size:
            return None
        full, self.batch = self.page(self.path, self.batch, self.start), []
        return full

    def add_run(self, index: int, run: _Run) -> Iterator[Page]:
        """Add consecutive records from `index` on, slice by slice; the pages they fill."""
        taken = 0
        while taken < len(run):
            if not self.batch:
                self.start = index + taken
            more = min(self.page_size - len(self.batch), len(run) - taken)
            self.batch.extend(run[taken : taken + more])
            taken += more
            if len(self.batch) >= self.page_size:
                yield self.page(self.path, self.batch, self.start)
                self.batch = []

    def flush(self) -> Iterator[Page]:
        """The page of the records collected so far, if any."""
        if self.batch:
            yield self.page(self.path, self.batch, self.start)
            self.batch = []


def _pages_of_elements(
    path: Path, elements: Iterable[tuple[int, Any]], page_size: int
) -> Iterator[Page]:
    return _group(path, elements, page_size, lambda i: f"{path.name}[{i}]", _record_page)


def _record_page(path: Path, records: list[Any], start: int) -> Page:
    end = start + len(records) - 1
    return Page(records=records, source=f"{path.name}[{start}..{end}]", first_index=start)


def _split_page(path: Path, page: dict[str, Any], where: str, page_size: int) -> list[Page]:
    resources = page["resources"]
    if not isinstance(resources, list):
        raise DumpError(
            f"{path}: {where}.resources must be an array of deployments, got {_shape(resources)}"
        )
    return [
        Page(
            records=resources[i : i + page_size],
            source=f"{where}.resources",
            first_index=i,
        )
        for i in range(0, len(resources), page_size)
    ]


def _shape(value: Any) -> str:
    if type(value) is msgspec.Raw:
        return "a value no parser here reads"
    if isinstance(value, dict):
        return 'an object without "resources"'
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return "a number"
    return "a string"


# --- reading ------------------------------------------------------------------------------


def _is_pipe(path: Path) -> bool:
    """A pipe, FIFO, socket or terminal: something that can be read only once."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False  # reading reports it
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def _read_pipe(path: Path, **options: Any) -> Iterator[Page]:
    """Copy the pipe to a temporary file of the same name and read that; messages name
    the pipe, and the copy goes when the reading ends (or fails)."""
    folder = tempfile.TemporaryDirectory(prefix="dims-dump-")
    copy = Path(folder.name) / (path.name or "dump")
    try:
        with path.open("rb") as source, copy.open("wb") as target:
            shutil.copyfileobj(source, target, _CHUNK)
        pages = read_dump(copy, **options)
    except OSError as exc:
        folder.cleanup()
        raise _unreadable(path, exc) from None
    except DumpError as exc:
        folder.cleanup()
        raise DumpError(str(exc).replace(str(copy), str(path))) from None
    return _from_copy(pages, copy, path, folder)


def _from_copy(
    pages: Iterator[Page], copy: Path, path: Path, folder: tempfile.TemporaryDirectory[str]
) -> Iterator[Page]:
    try:
        yield from pages
    except DumpError as exc:
        raise DumpError(str(exc).replace(str(copy), str(path))) from None
    finally:
        folder.cleanup()


def _too_large(path: Path, what: str, limit: int) -> DumpError:
    return DumpError(
        f"{path}: {what} is larger than {limit:,} bytes (the record size limit, "
        "max_record_bytes); no deployment is that large: check the dump"
    )


def _check_sizes(path: Path, elements: list[Any], first_index: int, limit: int) -> None:
    """Raw records (msgspec.Raw: their JSON text) must fit the record size limit."""
    for i, element in enumerate(elements):
        if type(element) is msgspec.Raw and len(element) > limit:
            where = f"element {first_index + i} ({len(element):,} bytes)"
            raise _too_large(path, where, limit)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError as exc:
        raise _unreadable(path, exc) from None


def _unreadable(path: Path, exc: OSError) -> DumpError:
    return DumpError(f"cannot read dump {path}: {exc.strerror or exc}")


def _first_char(path: Path) -> str:
    """The first character that is not whitespace (or a byte-order mark), or an error."""
    try:
        with path.open("r", encoding="utf-8-sig") as fh:
            while True:
                chunk = fh.read(64 * 1024)
                if not chunk:
                    raise DumpError(f"{path}: the file is empty; {_EXPECTED}")
                stripped = chunk.lstrip(_WHITESPACE)
                if stripped:
                    return stripped[0]
    except UnicodeDecodeError as exc:
        raise DumpError(f"{path}: not UTF-8 text (byte {exc.start}); {_EXPECTED}") from None
    except OSError as exc:
        raise _unreadable(path, exc) from None


class _Run(list[Any]):
    """Consecutive elements of an array that are all records (no page among them)."""


class _PageProbe(msgspec.Struct):
    resources: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


_RAW_ELEMENTS = msgspec.json.Decoder(list[msgspec.Raw])
_PROBE = msgspec.json.Decoder(_PageProbe)
_PROBES = msgspec.json.Decoder(list[_PageProbe])


def _raw_elements(data: bytes) -> list[Any]:
    """The elements of a JSON array as raw JSON text, pages among them parsed."""
    return _elements(data)


def _elements(data: bytes) -> list[Any]:
    """The elements from two passes of msgspec: one splits the elements, one looks only for
    a top-level "resources" key in each (skipping the rest). A msgspec.DecodeError means
    the text is not JSON."""
    elements = _RAW_ELEMENTS.decode(data)
    try:
        probes = _PROBES.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError):  # an element is not an object
        return [_page_or_raw(element) for element in elements]
    if all(probe.resources is msgspec.UNSET for probe in probes):
        return _Run(elements)
    return [
        element if probe.resources is msgspec.UNSET else rawjson.loads(memoryview(element))
        for element, probe in zip(elements, probes, strict=True)
    ]


def _page_or_raw(value: msgspec.Raw) -> Any:
    """An element that is a page (an object with "resources"), parsed; a record stays raw."""
    try:
        if _PROBE.decode(value).resources is msgspec.UNSET:
            return value
    except (msgspec.ValidationError, msgspec.DecodeError):
        return value  # not an object: the flattener rejects it
    return rawjson.loads(memoryview(value))


def _records_in(elements: list[Any]) -> int:
    """How many records an array's elements hold: one each, a page's resources each."""
    if type(elements) is _Run:
        return len(elements)
    return sum(
        len(element["resources"])
        if type(element) is dict and type(element.get("resources")) is list
        else 1
        for element in elements
    )


def _indexed(elements: list[Any]) -> Iterable[tuple[int, Any]]:
    return [(0, elements)] if type(elements) is _Run else enumerate(elements)


def _split_whole(path: Path, limit: int) -> list[Any]:
    """The elements of a whole-file array as raw JSON text; `_load_whole` reports errors."""
    try:
        data = path.read_bytes().removeprefix(_BOM)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    try:
        elements = _elements(data)
    except (msgspec.DecodeError, RecursionError):  # not JSON, or nested beyond msgspec
        whole: list[Any] = _load_whole(path)  # raises with line and column (orjson: depth 1024)
        return whole
    _check_sizes(path, elements, 0, limit)
    return elements


def _load_whole(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if raw.startswith(_BOM):
        raw = raw[3:]
    try:
        with paused_gc():
            return rawjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _not_json(path, exc.lineno, exc.colno, exc.msg) from None


def _not_json(path: Path, line: int, column: int, message: str) -> DumpError:
    return DumpError(f"{path}: not JSON at line {line} column {column}: {message}")


def _is_ndjson(path: Path, limit: int) -> bool:
    """Whether the first line is a whole JSON value with more content after it."""
    with path.open("rb") as fh:
        first_line = fh.readline(limit + 1)
        try:
            rawjson.loads(first_line)
        except orjson.JSONDecodeError:
            return False  # e.g. a pretty-printed page
        return any(line.strip() for line in iter(lambda: fh.readline(), b""))


def _read_ndjson(path: Path, page_size: int, limit: int) -> Iterator[Page]:
    def label(number: int) -> str:
        return f"{path.name}:line {number}"

    return _group(path, _ndjson_values(path, limit), page_size, label, _line_page)


def _lines(fh: Any, path: Path, limit: int) -> Iterator[bytes]:
    """The file's lines, none read beyond `limit` bytes (plus its newline)."""
    number = 0
    while line := fh.readline(limit + 1):
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            raise _too_large(path, f"line {number}", limit)
        yield line


def _ndjson_values(path: Path, limit: int) -> Iterator[tuple[int, Any]]:
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise _unreadable(path, exc) from None
    with fh:
        for number, line in enumerate(_lines(fh, path, limit), start=1):
            if not line.strip():
                yield number, _GAP
                continue
            try:
                yield number, rawjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise _not_json(path, number, exc.colno, exc.msg) from None


def _line_page(path: Path, records: list[Any], first_line: int) -> Page:
    last = first_line + len(records) - 1
    return Page(
        records=records, source=f"{path.name}:lines {first_line}-{last}", first_index=first_line
    )


class _Window:
    """A sliding window of the file's text that remembers line numbers of dropped text."""

    def __init__(self, fh: TextIO) -> None:
        self.fh = fh
        self.text = fh.read(_CHUNK)
        self.eof = not self.text
        self.dropped_lines = 0  # newlines in text already dropped
        self.line_start = 0  # offset of the current line's start, relative to `text`

    def drop(self, upto: int) -> None:
        """Forget text before `upto`: offsets into `text` shift down by `upto`."""
        newline = self.text.rfind("\n", 0, upto)
        if newline >= 0:
            self.dropped_lines += self.text.count("\n", 0, upto)
            self.line_start = newline + 1
        self.line_start -= upto
        self.text = self.text[upto:]

    def extend(self) -> None:
        more = self.fh.read(_CHUNK)
        self.eof = not more
        self.text += more

    def where(self, at: int) -> tuple[int, int]:
        """(line, column), both from 1, of offset `at` in `text`."""
        newline = self.text.rfind("\n", 0, at)
        line_start = newline + 1 if newline >= 0 else self.line_start
        return self.dropped_lines + self.text.count("\n", 0, at) + 1, at - line_start + 1


def _stream_array(path: Path, limit: int) -> Iterator[tuple[int, Any]]:
    """Yield (index, element) of a top-level JSON array, holding about one chunk in memory
    (or one element, up to `limit` characters)."""
    try:
        fh = path.open("r", encoding="utf-8-sig")
    except OSError as exc:
        raise _unreadable(path, exc) from None
    with fh:
        yield from _ArrayStream(path, fh, limit).elements()


#: What `_ArrayStream.decode` returns when the element runs past the window.
_READ_ON = object()


class _ArrayStream:
    """A top-level JSON array read element by element through a `_Window` of its text."""

    def __init__(self, path: Path, fh: TextIO, limit: int) -> None:
        self.path, self.fh, self.limit = path, fh, limit
        self.window = _Window(fh)
        self.decoder = json.JSONDecoder()
        self.pos = self.window.text.index("[") + 1

    def elements(self) -> Iterator[tuple[int, Any]]:
        index = 0
        expect_comma = after_comma = False
        while True:
            char = self.next_char()
            if char == "]" and not after_comma:
                self.check_rest()
                return
            if expect_comma:
                if char != ",":
                    raise self.fail(self.pos, "expected ',' or ']' after an array element")
                self.pos += 1
                expect_comma, after_comma = False, True
                continue
            element = self.decode(index)
            if element is _READ_ON:
                continue
            yield index, element
            index += 1
            expect_comma, after_comma = True, False
            if self.pos > _CHUNK:  # keep the window to about one chunk
                self.window.drop(self.pos)
                self.pos = 0

    def fail(self, at: int, message: str) -> DumpError:
        return _not_json(self.path, *self.window.where(at), message)

    def next_char(self) -> str:
        """The next character that is not whitespace, reading on as needed."""
        window = self.window
        while True:
            text = window.text
            pos = self.pos
            while pos < len(text) and text[pos] in _WHITESPACE:
                pos += 1
            self.pos = pos
            if pos < len(text) or window.eof:
                break
            window.drop(pos)
            self.pos = 0
            window.extend()
        if self.pos >= len(window.text):
            raise self.fail(self.pos, "the array is not closed (the file ends early)")
        return window.text[self.pos]

    def check_rest(self) -> None:
        """Nothing but whitespace may follow the closing bracket."""
        text = self.window.text
        rest = text[self.pos + 1 :].strip(_WHITESPACE) or self.fh.read(_CHUNK).strip(_WHITESPACE)
        if rest:
            raise self.fail(self.pos + 1, "unexpected data after the array")

    def decode(self, index: int) -> Any:
        """Element `index`, which starts at `pos`; `_READ_ON` when it runs past the window
        (what is done is dropped and the next chunk read, to try again)."""
        text = self.window.text
        pos = self.pos
        try:
            _found, self.pos = self.decoder.raw_decode(text, pos)
        except RecursionError:
            raise self.fail(pos, "nested too deeply to read") from None
        except json.JSONDecodeError as exc:
            truncated = exc.pos >= len(text) - 32 or exc.msg.startswith("Unterminated")
            if self.window.eof or not truncated:
                raise self.fail(exc.pos, exc.msg) from None
            if len(text) - pos > self.limit:
                line, column = self.window.where(pos)
                where = f"element {index} (from line {line} column {column})"
                raise _too_large(self.path, where, self.limit) from None
            self.window.drop(pos)
            self.pos = 0
            self.window.extend()
            return _READ_ON
        return self.exact(pos)

    def exact(self, pos: int) -> Any:
        """The element from `pos` to `self.pos` as orjson reads it, as every other path
        reads a dump: the standard library's parse keeps lone surrogates and reads 1e400 as
        an infinity, so an element orjson refuses comes as its raw text (`rawjson.loads`),
        which the tables reject alone; NaN and the like are not JSON."""
        try:
            return rawjson.loads(self.window.text[pos : self.pos].encode())
        except orjson.JSONDecodeError as exc:
            raise self.fail(pos + exc.pos, exc.msg) from None


# --- the fast path for large arrays: byte ranges of whole elements, parsed by orjson --------

#: Where a chunk may end is searched for in its last this many bytes.
_TAIL = 256 * 1024
#: A buffer with no element end in its tail grows up to this size before the careful reader.
_MAX_CHUNK = 256 * 1024 * 1024
_OPEN, _CLOSE, _QUOTE, _BACKSLASH = (ord(c) for c in '{}"\\')
_OPEN_ARRAY, _CLOSE_ARRAY = ord("["), ord("]")
_AFTER_STRING = frozenset(b":,}] \t\r\n")
_NEXT_TOKEN = re.compile(rb"[ \t\r\n]*(.)", re.DOTALL)


def _chunked_array(path: Path, raw: bool, limit: int) -> Iterator[tuple[int, Any]]:
    """Yield (index, element) of a large top-level array, a few megabytes at a time.

    The file is read in blocks; in the last `_TAIL` bytes of the buffer a vectorised scan
    (numpy) finds where a top-level element ends, and everything before that point is parsed
    by orjson as one array. Only orjson decides what the bytes mean: a chunk is used only
    when `[` + chunk + `]` parses, which it cannot when the cut falls inside a string or a
    nested value. Anything unusual (an element larger than the buffer, a syntax error, a
    guess that does not parse) hands over to `_stream_array`, which skips the elements
    already yielded and reports errors with their line and column.
    """
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise _unreadable(path, exc) from None
    with fh:
        reader = _ChunkedArray(path, fh, raw, limit)
        if (yield from reader.elements()):
            return
    # The careful path: re-read from the start, skipping what was already yielded.
    for i, element in _stream_array(path, limit):
        if i >= reader.index:
            yield i, element


class _HandOver(Exception):
    """The fast path stops here: the careful reader goes on (or says what is wrong)."""


class _ChunkedArray:
    """The state of `_chunked_array`: the buffer, where the next element starts in it, how
    many bytes to have in hand before cutting, and how many elements were yielded."""

    def __init__(self, path: Path, fh: BinaryIO, raw: bool, limit: int) -> None:
        self.path, self.fh, self.raw, self.limit = path, fh, raw, limit
        self.index = 0
        self.block = max(_CHUNK, 1)
        # A buffer grows up to this while one element does not end; then the careful reader
        # says where it starts and whether it is over the record size limit.
        self.most = min(_MAX_CHUNK, max(2 * self.block, 2 * limit))
        buf = fh.read(self.block)
        if buf.startswith(_BOM):
            buf = buf[3:]
        self.buf = buf
        self.start = buf.find(b"[") + 1
        self.wanted = 2 * self.block  # bytes to have in hand before looking for a cut

    def elements(self) -> Generator[tuple[int, Any], None, bool]:
        """Yield (index, element) chunk by chunk; True when the array was read to its end,
        False when the careful reader must take over from `index`."""
        try:
            while True:
                cut = self.cut()
                if cut is None:
                    continue
                chunk, end = cut
                elements = self.parse(chunk, end)
                del chunk
                if elements is None:
                    continue
                self.move_past(end)
                self.wanted = 2 * self.block
                if self.raw:
                    _check_sizes(self.path, elements, self.index, self.limit)
                for element in _indexed(elements):
                    yield self.index + element[0], element[1]
                self.index += len(elements)
                del elements
                if self.start == len(self.buf) and end == len(self.buf):
                    return True
        except _HandOver:
            return False

    def cut(self) -> tuple[bytes, int] | None:
        """`[` + the next whole elements + `]`, and where they end in the buffer; None when
        more must be read first."""
        buf = self.buf
        if len(buf) - self.start < self.wanted:
            more = self.fh.read(self.block)
            self.buf = buf = b"".join((memoryview(buf)[self.start :], more))  # one copy
            self.start = 0
            if more:
                return None
            return b"[" + buf, len(buf)  # the rest, with the closing bracket
        found = _element_end(buf, self.start)
        if found is None:  # an element larger than the tail: read on, up to a limit
            self.grow()
            return None
        return b"".join((b"[", memoryview(buf)[self.start : found], b"]")), found

    def parse(self, chunk: bytes, end: int) -> list[Any] | None:
        """The chunk's elements; None when the cut fell inside an element (read on)."""
        try:
            if not self.raw and len(chunk) > self.limit:
                _measure(self.path, chunk, self.index, self.limit)
            return _parse_chunk(chunk, self.raw)
        except orjson.JSONDecodeError as exc:
            inside = exc.pos >= len(chunk) - 1 or exc.msg == "unexpected end of data"
            if end == len(self.buf) or not inside:
                raise _HandOver from None  # a syntax error: the careful reader reports where
            self.grow()  # the cut was inside one element: read on and cut later
            return None

    def grow(self) -> None:
        """Have twice as much in hand before the next cut, up to `most`."""
        if self.wanted >= self.most:
            raise _HandOver
        self.wanted *= 2

    def move_past(self, end: int) -> None:
        """The next element starts after the comma that follows `end`."""
        if end == len(self.buf):
            self.start = end
            return
        after = _after_comma(self.buf, end)
        if after is None:
            raise _HandOver
        self.start = after


def _parse_chunk(chunk: bytes, raw: bool) -> list[Any]:
    """The chunk's elements, parsed or as raw JSON text; orjson's error when it is not JSON."""
    with paused_gc():
        if raw:
            try:
                return _raw_elements(chunk)
            except (msgspec.DecodeError, RecursionError):
                pass  # orjson says where and why
        parsed: list[Any] = orjson.loads(chunk)
        return parsed


def _measure(path: Path, chunk: bytes, first_index: int, limit: int) -> None:
    """A parsed chunk larger than the record size limit may hold a record over it: measure
    its elements as raw text first (one more pass in C, only for such chunks)."""
    try:
        elements = _raw_elements(chunk)
    except (msgspec.DecodeError, RecursionError):
        return  # orjson's parse says where and why
    _check_sizes(path, elements, first_index, limit)


def _after_comma(buf: bytes, end: int) -> int | None:
    match = _NEXT_TOKEN.match(buf, end)
    return match.end() if match and match.group(1) == b"," else None


def _element_end(buf: bytes, start: int) -> int | None:
    """A position just after a top-level `}` or `]` in buf's tail, followed by `,`; or None.

    The tail is scanned without knowing whether it begins inside a string: the parity is the
    one under which closing quotes are followed by `:`, `,`, `}`, `]` or whitespace, as in
    JSON. Nesting depth is relative to the tail's start; top-level ends are the closing
    brackets at the lowest depth reached (the tail spans many elements). A wrong guess is
    caught by parsing the chunk.
    """
    import numpy as np  # here, not above: only large files need it

    tail_start = max(start, len(buf) - _TAIL)
    tail = np.frombuffer(buf, np.uint8, offset=tail_start)
    quotes = np.flatnonzero(tail == _QUOTE)
    if len(quotes):
        escaped = quotes[quotes > 0]
        escaped = escaped[tail[escaped - 1] == _BACKSLASH]
        if len(escaped):
            drop = [q for q in escaped.tolist() if _odd_backslashes(buf, tail_start + q)]
            quotes = quotes[~np.isin(quotes, drop)]
    parity = _parity(tail, quotes)
    brackets = np.flatnonzero(
        (tail == _OPEN) | (tail == _CLOSE) | (tail == _OPEN_ARRAY) | (tail == _CLOSE_ARRAY)
    )
    # Quotes at or before a bracket; outside strings when that count plus parity is even.
    before = np.searchsorted(quotes, brackets, side="right")
    brackets = brackets[(before + parity) % 2 == 0]
    if not len(brackets):
        return None
    chars = tail[brackets]
    closing = (chars == _CLOSE) | (chars == _CLOSE_ARRAY)
    depth = np.cumsum(np.where(closing, -1, 1))
    lowest = depth.min()
    ends = brackets[closing & (depth == lowest)]
    for end in reversed(ends.tolist()):
        position: int = tail_start + end + 1
        if _after_comma(buf, position) is not None:
            return position
    return None


def _odd_backslashes(buf: bytes, quote: int) -> bool:
    """Whether the quote at `quote` is escaped (bytes, not numpy: a scalar each is slow)."""
    before = buf[max(0, quote - 64) : quote]
    run = len(before) - len(before.rstrip(b"\\"))
    if run == len(before) and quote > len(before):  # a run longer than 64: count it all
        run = quote - len(buf[:quote].rstrip(b"\\"))
    return run % 2 == 1


def _parity(tail: np.ndarray, quotes: np.ndarray) -> int:
    """0 when the tail starts outside a string, 1 inside: the likelier reading of its quotes."""
    import numpy as np  # see _element_end

    sample = quotes[:201]
    following = tail[np.minimum(sample + 1, len(tail) - 1)]
    fits = np.isin(following, np.frombuffer(bytes(_AFTER_STRING), np.uint8))
    # With parity 0 the quotes at odd positions close strings; with parity 1, the even ones.
    odd, even = fits[1::2], fits[0::2]
    odd_share = odd.mean() if len(odd) else 0.0
    even_share = even.mean() if len(even) else 0.0
    return 0 if odd_share >= even_share else 1
