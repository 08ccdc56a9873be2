"""Read a saved dump of deployments (`dims export --from-json FILE`) as a stream of Pages.

Accepted shapes (what `dims export --from-json` documents): a JSON array of deployment
records; one list-deployments response page `{"resources": [...], "offset": n}`; a JSON
array of such pages; or NDJSON with one record or one page per line. Elements of an
array may mix records and pages.

Why it reads the way it does:
- The collector is paused for a whole-file parse only; streamed parsing relies on the
  caller (`export_snapshot` pauses it for the whole export, see analysis.gcpause).
- Large arrays are parsed a few megabytes at a time, because parsing 100,000 records at
  once costs well over 1 GB of Python objects: a vectorised scan (numpy) of each buffer's
  tail finds where a top-level element ends, and orjson parses the whole elements before it
  (`_chunked_array`; as fast as parsing the file whole). Anything unusual, including every
  syntax error, hands over to the careful reader (the standard library's `raw_decode` over
  a sliding text buffer, `_stream_array`), which reports line and column. Files under
  `WHOLE_FILE_LIMIT` are parsed at once with orjson. NDJSON is parsed line by line.
- `raw=True` (what `dims export --from-json` uses) skips the parse for arrays: msgspec
  splits each chunk into the records' raw JSON text in C and a second C pass finds the
  pages among them, so the typed reader in `analysis.tables` can decode each record
  straight into typed Structs. The same cuts, the same errors and the same Page sources.
- A record that is not a valid deployment is not an error here: it goes on to the flattener,
  which lists it in rejected_records. A file that is not JSON, is empty or has the wrong
  shape is a `DumpError`: one line naming the file and the problem.
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
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import orjson

from analysis.errors import DumpError
from analysis.gcpause import paused_gc
from analysis.pages import Page

#: Files up to this size are parsed whole with orjson; larger arrays are read in chunks.
WHOLE_FILE_LIMIT = 16 * 1024 * 1024
#: Raw reading holds a file's bytes, not a Python object per value, so it reads files this
#: many times larger whole (cheaper than the chunk cutting; about 5% of a 20k export).
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


def read_dump(
    path: str | os.PathLike[str],
    *,
    page_size: int = 1000,
    raw: bool = False,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Iterator[Page]:
    """Yield the dump's records as Pages of at most `page_size` records.

    The file's shape is checked before the first page is yielded; a JSON syntax error in a
    streamed array or in an NDJSON line surfaces when the reading gets there.

    With `raw=True` the records of a top-level array come as `msgspec.Raw` (each one's JSON
    text, unparsed) for the Flattener's typed reader; pages inside the array, a single page
    and NDJSON still come parsed. The array's syntax is checked as it is split; what only
    a full parse finds (a number out of range, bad UTF-8 in a string) is reported by the
    Flattener with the record's position.
    """
    path = Path(path)
    if page_size < 1 or max_record_bytes < 1:
        raise ValueError("page_size and max_record_bytes must be at least 1")
    if _is_pipe(path):
        return _read_pipe(path, page_size=page_size, raw=raw, max_record_bytes=max_record_bytes)
    limit = max_record_bytes
    first = _first_char(path)
    if path.suffix.lower() in _NDJSON_SUFFIXES:
        return _read_ndjson(path, page_size, limit)
    if first == "[":
        if raw and _size(path) <= WHOLE_FILE_LIMIT * _RAW_WHOLE_FACTOR:
            return _pages_of_elements(path, _indexed(_split_whole(path, limit)), page_size)
        if _size(path) <= WHOLE_FILE_LIMIT:
            return _pages_of_elements(path, enumerate(_load_whole(path)), page_size)
        return _pages_of_elements(path, _chunked_array(path, raw, limit), page_size)
    if first == "{" and _is_ndjson(path, limit):
        return _read_ndjson(path, page_size, limit)
    document = _load_whole(path)
    if isinstance(document, dict) and "resources" in document:
        return iter(_split_page(path, document, path.name, page_size))
    raise DumpError(f"{path}: {_EXPECTED}; got {_shape(document)}")


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
    batch: list[Any] = []
    start = 0
    for index, value in elements:
        if type(value) is _Run:
            taken = 0
            while taken < len(value):
                if not batch:
                    start = index + taken
                more = min(page_size - len(batch), len(value) - taken)
                batch.extend(value[taken : taken + more])
                taken += more
                if len(batch) >= page_size:
                    yield page(path, batch, start)
                    batch = []
            continue
        if value is _GAP or (isinstance(value, dict) and "resources" in value):
            if batch:
                yield page(path, batch, start)
                batch = []
            if isinstance(value, dict):
                yield from _split_page(path, value, label(index), page_size)
            continue
        if not batch:
            start = index
        batch.append(value)
        if len(batch) >= page_size:
            yield page(path, batch, start)
            batch = []
    if batch:
        yield page(path, batch, start)


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
    """The elements of a JSON array as raw JSON text, pages among them parsed.

    Two passes in C: one splits the elements, one looks only for a top-level "resources"
    key in each (skipping the rest); a msgspec.DecodeError means the text is not JSON.
    """
    elements = _RAW_ELEMENTS.decode(data)
    try:
        probes = _PROBES.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError):  # an element is not an object
        return [_page_or_raw(element) for element in elements]
    if all(probe.resources is msgspec.UNSET for probe in probes):
        return _Run(elements)
    return [
        element if probe.resources is msgspec.UNSET else orjson.loads(memoryview(element))
        for element, probe in zip(elements, probes, strict=True)
    ]


def _page_or_raw(value: msgspec.Raw) -> Any:
    """An element that is a page (an object with "resources"), parsed; a record stays raw."""
    try:
        if _PROBE.decode(value).resources is msgspec.UNSET:
            return value
    except (msgspec.ValidationError, msgspec.DecodeError):
        return value  # not an object: the flattener rejects it
    return orjson.loads(memoryview(value))


def _indexed(elements: list[Any]) -> Iterable[tuple[int, Any]]:
    return [(0, elements)] if type(elements) is _Run else enumerate(elements)


def _split_whole(path: Path, limit: int) -> list[Any]:
    """The elements of a whole-file array as raw JSON text; `_load_whole` reports errors."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _unreadable(path, exc) from None
    try:
        elements = _raw_elements(data.removeprefix(b"\xef\xbb\xbf"))
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
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        with paused_gc():
            return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _not_json(path, exc.lineno, exc.colno, exc.msg) from None


def _not_json(path: Path, line: int, column: int, message: str) -> DumpError:
    return DumpError(f"{path}: not JSON at line {line} column {column}: {message}")


def _is_ndjson(path: Path, limit: int) -> bool:
    """Whether the first line is a whole JSON value with more content after it."""
    with path.open("rb") as fh:
        first_line = fh.readline(limit + 1)
        try:
            orjson.loads(first_line)
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
                yield number, orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise _not_json(path, number, exc.colno, exc.msg) from None


def _line_page(path: Path, records: list[Any], first_line: int) -> Page:
    last = first_line + len(records) - 1
    return Page(
        records=records, source=f"{path.name}:lines {first_line}-{last}", first_index=first_line
    )


class _Window:
    """A sliding window of the file's text that remembers line numbers of dropped text."""

    def __init__(self, fh: Any) -> None:
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
    decoder = json.JSONDecoder()
    try:
        fh = path.open("r", encoding="utf-8-sig")
    except OSError as exc:
        raise _unreadable(path, exc) from None
    with fh:
        window = _Window(fh)

        def fail(at: int, message: str) -> DumpError:
            return _not_json(path, *window.where(at), message)

        pos = window.text.index("[") + 1
        index = 0
        expect_comma = after_comma = False
        while True:
            while True:  # skip whitespace, reading on as needed
                text = window.text
                while pos < len(text) and text[pos] in _WHITESPACE:
                    pos += 1
                if pos < len(text) or window.eof:
                    break
                window.drop(pos)
                pos = 0
                window.extend()
            text = window.text
            if pos >= len(text):
                raise fail(pos, "the array is not closed (the file ends early)")
            char = text[pos]
            if char == "]" and not after_comma:
                rest = text[pos + 1 :].strip(_WHITESPACE) or fh.read(_CHUNK).strip(_WHITESPACE)
                if rest:
                    raise fail(pos + 1, "unexpected data after the array")
                return
            if expect_comma:
                if char != ",":
                    raise fail(pos, "expected ',' or ']' after an array element")
                pos += 1
                expect_comma, after_comma = False, True
                continue
            try:
                element, end = decoder.raw_decode(text, pos)
            except RecursionError:
                raise fail(pos, "nested too deeply to read") from None
            except json.JSONDecodeError as exc:
                truncated = exc.pos >= len(text) - 32 or exc.msg.startswith("Unterminated")
                if window.eof or not truncated:
                    raise fail(exc.pos, exc.msg) from None
                if len(text) - pos > limit:
                    line, column = window.where(pos)
                    where = f"element {index} (from line {line} column {column})"
                    raise _too_large(path, where, limit) from None
                # The element runs past the window: drop what is done, read on, retry.
                window.drop(pos)
                pos = 0
                window.extend()
                continue
            yield index, element
            index += 1
            pos = end
            expect_comma, after_comma = True, False
            if pos > _CHUNK:  # keep the window to about one chunk
                window.drop(pos)
                pos = 0


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
    index = 0
    block = max(_CHUNK, 1)
    # A buffer grows up to this while one element does not end; then the careful reader
    # says where it starts and whether it is over the record size limit.
    most = min(_MAX_CHUNK, max(2 * block, 2 * limit))
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise _unreadable(path, exc) from None
    with fh:
        buf = fh.read(block)
        if buf.startswith(b"\xef\xbb\xbf"):
            buf = buf[3:]
        start = buf.find(b"[") + 1
        wanted = 2 * block  # bytes to have in hand before looking for a cut
        while True:
            if len(buf) - start < wanted:
                more = fh.read(block)
                buf = buf[start:] + more
                start = 0
                if more:
                    continue
                chunk, end = b"[" + buf, len(buf)  # the rest, with the closing bracket
            else:
                found = _element_end(buf, start)
                if found is None:  # an element larger than the tail: read on, up to a limit
                    if wanted >= most:
                        break
                    wanted *= 2
                    continue
                end = found
                chunk = b"[" + buf[start:end] + b"]"
            try:
                if not raw and len(chunk) > limit:
                    _measure(path, chunk, index, limit)
                elements = _parse_chunk(chunk, raw)
            except orjson.JSONDecodeError as exc:
                inside = exc.pos >= len(chunk) - 1 or exc.msg == "unexpected end of data"
                if end == len(buf) or not inside or wanted >= most:
                    break  # a syntax error: the careful reader reports where
                wanted *= 2  # the cut was inside one element: read on and cut later
                continue
            del chunk
            if end == len(buf):
                start = end
            else:
                after = _after_comma(buf, end)
                if after is None:
                    break
                start = after
            wanted = 2 * block
            if raw:
                _check_sizes(path, elements, index, limit)
            for element in _indexed(elements):
                yield index + element[0], element[1]
            index += len(elements)
            del elements
            if start == len(buf) and end == len(buf):
                return
    # The careful path: re-read from the start, skipping what was already yielded.
    for i, element in _stream_array(path, limit):
        if i >= index:
            yield i, element


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
    tail_start = max(start, len(buf) - _TAIL)
    tail = np.frombuffer(buf, np.uint8, offset=tail_start)
    quotes = np.flatnonzero(tail == _QUOTE)
    if len(quotes):
        escaped = quotes[quotes > 0]
        escaped = escaped[tail[escaped - 1] == _BACKSLASH]
        if len(escaped):
            drop = [q for q in escaped.tolist() if _odd_backslashes(tail, q)]
            quotes = np.setdiff1d(quotes, np.array(drop, dtype=quotes.dtype))
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


def _odd_backslashes(tail: np.ndarray, quote: int) -> bool:
    run = 0
    at = quote - 1
    while at >= 0 and tail[at] == _BACKSLASH:
        run += 1
        at -= 1
    return run % 2 == 1


def _parity(tail: np.ndarray, quotes: np.ndarray) -> int:
    """0 when the tail starts outside a string, 1 inside: the likelier reading of its quotes."""
    sample = quotes[:201]
    following = tail[np.minimum(sample + 1, len(tail) - 1)]
    fits = np.isin(following, np.frombuffer(bytes(_AFTER_STRING), np.uint8))
    # With parity 0 the quotes at odd positions close strings; with parity 1, the even ones.
    odd, even = fits[1::2], fits[0::2]
    odd_share = odd.mean() if len(odd) else 0.0
    even_share = even.mean() if len(even) else 0.0
    return 0 if odd_share >= even_share else 1
