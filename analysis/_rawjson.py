"""JSON text that the grammar allows and the parsers refuse, read part by part.

Why: RFC 8259's grammar takes text that no parser here can turn into values: an escape
naming half of a surrogate pair (`"\\ud800x"`: no Unicode text, so no UTF-8 and no Parquet
string), a number beyond float64 (`1e400`), bytes that are not UTF-8 inside a string.
orjson and msgspec refuse the whole document for one such value, so one record would end
an export of thousands (a dump, a page of the service, an NDJSON line). Here a document
orjson refused is read as its grammar cuts it: an array element by element, a
list-deployments page (`{"resources": [...], ...}`) record by record. Each part is parsed
by orjson, and a part it refuses stays its raw JSON text (`msgspec.Raw`), which the tables
reject alone, with orjson's reason, in rejected_records.

The grammar is the standard library's decoder, which takes lone surrogates and any number,
with `NaN` and `Infinity` refused (they are not JSON). It runs only after orjson has refused
the text, so ordinary documents cost nothing more; text that is not JSON by the grammar
still raises orjson's own error, which names line and column.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any, NoReturn

import msgspec
import orjson

_WHITESPACE = re.compile(r"[ \t\n\r]*")
#: A character no UTF-8 text holds: half a surrogate pair, or a byte that was not UTF-8
#: (decoded with "surrogateescape").
_SURROGATE = re.compile("[\ud800-\udfff]")


def _not_json(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


_GRAMMAR = json.JSONDecoder(parse_constant=_not_json)


def loads(data: bytes | memoryview) -> Any:
    """orjson's parse of `data`; where orjson refuses text that is JSON by the grammar, an
    array's elements and a page's records are parsed one by one and each one orjson
    refuses is a `msgspec.Raw` of its text. Raises orjson's error for text that is not JSON.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        refused = exc
    try:
        return _Text(data).document(raw_records=False)
    except (ValueError, RecursionError):
        raise refused from None


def raw_page(data: bytes | memoryview) -> Any:
    """A list-deployments page with every record as raw JSON text (`msgspec.Raw`), its other
    members parsed; for a page msgspec refused for a value in one record. Raises ValueError
    when `data` is not JSON by the grammar (the page was cut short, say); JSON that is no
    page comes back as `loads` reads it."""
    try:
        return _Text(data).document(raw_records=True)
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


def grammar_loads(data: bytes | memoryview) -> Any:
    """The standard library's parse: lone surrogates and bytes that are not UTF-8 kept in
    strings as surrogates (see `is_text`), numbers beyond float64 as infinities. For what
    only must be found in a record that orjson refuses (its id). ValueError: not JSON."""
    try:
        return _GRAMMAR.decode(bytes(data).decode("utf-8", "surrogateescape"))
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


def is_text(value: str) -> bool:
    """Whether a string is Unicode text (UTF-8 can hold it); `grammar_loads` can give others."""
    return value.isascii() or _SURROGATE.search(value) is None


class _Text:
    """A document's text, decoded so that every byte comes back as it was ("surrogateescape")."""

    def __init__(self, data: bytes | memoryview) -> None:
        self.text = bytes(data).decode("utf-8", "surrogateescape")

    def document(self, *, raw_records: bool) -> Any:
        """The whole text: an array's elements or one element, each read by `element`."""
        text = self.text
        start = self.skip(0)
        if text.startswith("[", start):
            spans, end = self.items(start)
            value: Any = [self.element(a, b, raw_records) for a, b in spans]
        else:
            end = self.value_end(start)
            value = self.element(start, end, raw_records)
        if self.skip(end) != len(text):
            raise ValueError("extra data after the document")
        return value

    def element(self, start: int, end: int, raw_records: bool) -> Any:
        """A page (its records each by `record`), or else a record."""
        if self.text.startswith("{", start):
            members = self.members(start)
            resources = members.get("resources")
            if resources is not None and self.text.startswith("[", resources[0]):
                page = {key: self.record(a, b, raw=False) for key, (a, b) in members.items()}
                spans, _ = self.items(resources[0])
                page["resources"] = [self.record(a, b, raw_records) for a, b in spans]
                return page
        return self.record(start, end, raw_records)

    def record(self, start: int, end: int, raw: bool) -> Any:
        """orjson's parse of a part, or its raw text where orjson refuses it (or `raw`)."""
        data = self.text[start:end].encode("utf-8", "surrogateescape")
        if not raw:
            try:
                return orjson.loads(data)
            except orjson.JSONDecodeError:
                pass
        return msgspec.Raw(data)

    def skip(self, pos: int) -> int:
        match = _WHITESPACE.match(self.text, pos)
        assert match is not None  # the pattern matches the empty string anywhere
        return match.end()

    def value_end(self, pos: int) -> int:
        """Where the value starting at `pos` ends; ValueError when it is not JSON."""
        _value, end = _GRAMMAR.raw_decode(self.text, pos)
        return int(end)

    def items(self, start: int) -> tuple[list[tuple[int, int]], int]:
        """(start, end) of each element of the array at `start`, and where the array ends."""
        text, spans = self.text, list[tuple[int, int]]()
        pos = self.skip(start + 1)
        if text.startswith("]", pos):
            return spans, pos + 1
        while True:
            end = self.value_end(pos)
            spans.append((pos, end))
            pos = self.skip(end)
            if text.startswith("]", pos):
                return spans, pos + 1
            if not text.startswith(",", pos):
                raise ValueError("expected ',' or ']' in an array")
            pos = self.skip(pos + 1)

    def members(self, start: int) -> dict[str, tuple[int, int]]:
        """(start, end) of each member's value of the object at `start`, by key (the last
        of a repeated key, as a parse keeps it)."""
        _value, end = _GRAMMAR.raw_decode(self.text, start)  # the whole object is JSON
        text, found = self.text, {}
        pos = self.skip(start + 1)
        while pos < end - 1:
            key, pos = _GRAMMAR.raw_decode(text, pos)
            pos = self.skip(self.skip(pos) + 1)  # past the colon
            value_end = self.value_end(pos)
            found[key] = (pos, value_end)
            pos = self.skip(value_end)
            pos = self.skip(pos + 1) if text.startswith(",", pos) else pos
        return found


#: What orjson refuses in text the grammar allows, as a reason says it.
_NOT_TEXT = "not Unicode text (half a surrogate pair, or bytes not UTF-8)"
_TOO_LARGE = "a number beyond float64"


def unreadable_part(value: Any, path: str = "") -> str | None:
    """Where a value read by `grammar_loads` holds what orjson refuses, and what: `name: a
    string that is not Unicode text (...)`; None when nothing is found. Paths are the
    tables' (dotted, list positions in brackets); no value is quoted (it may be a secret)."""
    where = path or "record"
    if type(value) is str:
        return None if is_text(value) else f"{where}: a string that is {_NOT_TEXT}"
    if type(value) is float:
        return None if math.isfinite(value) else f"{where}: {_TOO_LARGE}"
    if type(value) is dict:
        if not all(map(is_text, value)):
            return f"{where}: a key that is {_NOT_TEXT}"
        prefix = f"{path}." if path else ""
        return _first_unreadable((prefix + key, item) for key, item in value.items())
    if type(value) is list:
        return _first_unreadable((f"{path}[{i}]", item) for i, item in enumerate(value))
    return None


def _first_unreadable(items: Iterable[tuple[str, Any]]) -> str | None:
    for path, item in items:
        found = unreadable_part(item, path)
        if found is not None:
            return found
    return None
