"""A small settings file (a price sheet, a rules file, a profile) read as hostile input.

Such files sit in repositories many people edit and run in CI, so each is read the same
guarded way, by this one reader: a regular file only (a FIFO, a device or a directory is
refused before it is opened, and the open itself never waits for a writer), at most
`MAX_FILE_BYTES` (a larger file is refused before it is read whole), UTF-8 with or without a
leading BOM, YAML without anchors, aliases or merge keys (a few lines of them can stand for
a value larger than memory, the "billion laughs") or TOML by the suffix `.toml`. A key given
twice at any depth is refused in both (YAML would keep the last silently; TOML's own message
does not name the key), as are an integer past a float's range (it would be an
`OverflowError` where it is used), nesting too deep and numbers too long to convert: each one
line naming the file, the key and the line, never a traceback.
"""

from __future__ import annotations

import ast
import os
import re
import stat
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import yaml

from dims._errors import DimsError

#: A settings file is a few dozen lines; a larger one is refused before it is read whole.
MAX_FILE_BYTES = 64 * 1024
#: YAML's merge key, `<<`.
_MERGE = "tag:yaml.org,2002:merge"
#: A BOM some editors write first; it is no part of the text.
_BOM = "\ufeff"
#: The open never waits: a FIFO swapped in after the check opens at once, and is refused.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class _Refused(yaml.YAMLError):
    """YAML a settings file may not use, at `mark`."""

    def __init__(self, mark: yaml.Mark, problem: str) -> None:
        super().__init__(problem)
        self.problem_mark = mark
        self.problem = problem


class _Twice(Exception):
    """A key given twice: its dotted path and the lines (1-based) of both, the first unknown
    (None) where TOML's parser does not say it."""

    def __init__(self, key: str, first: int | None, second: int) -> None:
        super().__init__(key)
        self.key, self.first, self.second = key, first, second


class _TooLarge(Exception):
    """An integer past a float's range, at `key`."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _GuardedLoader(yaml.SafeLoader):
    """Safe YAML without anchors and aliases: a settings file needs none."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.NodeEvent):  # an alias, or a node that may carry an anchor
            event = self.current_event
            if isinstance(event, yaml.AliasEvent) or event.anchor is not None:
                raise _Refused(event.start_mark, "anchors and aliases (& and *) are not allowed")
        return super().compose_node(parent, index)


def _cut(value: object, limit: int) -> str:
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}…"


def _kind(mode: int) -> str | None:
    """What a file that is not a regular one is ("a FIFO (named pipe)"), None for a file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a file")


def _refuse_special(path: Path, mode: int, what: str, error: type[DimsError]) -> None:
    kind = _kind(mode)
    if kind is not None:
        raise error(
            f"{path}: the {what} file is {kind}, not a regular file; save it to a file and "
            "name that"
        )


def _bytes(path: Path, what: str, error: type[DimsError]) -> bytes:
    """At most `MAX_FILE_BYTES` + 1 of a regular file: checked by its path before it is
    opened (a FIFO with no writer would block the open for ever), opened without waiting, and
    checked again by what was opened (a FIFO swapped in between)."""
    try:
        _refuse_special(path, os.stat(path).st_mode, what, error)
        descriptor = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} file: {exc.strerror}") from None
    try:
        with open(descriptor, "rb", closefd=False) as handle:
            _refuse_special(path, os.fstat(descriptor).st_mode, what, error)
            return handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} file: {exc.strerror}") from None
    finally:
        os.close(descriptor)


def _text(path: Path, what: str, error: type[DimsError]) -> str:
    data = _bytes(path, what, error)
    if len(data) > MAX_FILE_BYTES:
        raise error(
            f"{path}: the {what} file is larger than {MAX_FILE_BYTES // 1024} KiB; "
            f"a {what} file is a few lines"
        )
    try:
        return data.decode("utf-8").removeprefix(_BOM)
    except UnicodeDecodeError:
        raise error(f"{path}: the {what} file is not UTF-8 text") from None


def _dotted(parent: str, key: object) -> str:
    return f"{parent}.{key}" if parent else str(key)


def _yaml_pairs(
    loader: _GuardedLoader, node: yaml.Node, at: str
) -> Iterator[tuple[str, yaml.Node]]:
    """Each child of `node` with its dotted path; a mapping's keys checked to be given once
    (equal as YAML reads them: `fleet` and `'fleet'` are one key)."""
    if isinstance(node, yaml.SequenceNode):
        yield from ((f"{at}[{n}]", child) for n, child in enumerate(node.value))
    if not isinstance(node, yaml.MappingNode):
        return
    seen: dict[object, yaml.Node] = {}
    for key_node, value_node in node.value:
        if key_node.tag == _MERGE:  # `<<` would give its keys again, the node's own winning
            raise _Refused(key_node.start_mark, "merge keys (<<) are not allowed")
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.setdefault(key, key_node)
        except TypeError:  # a key that is a list or a mapping: the constructor refuses it
            continue
        if first is not key_node:
            second = key_node.start_mark.line + 1
            raise _Twice(_dotted(at, key), first.start_mark.line + 1, second)
        yield _dotted(at, key), value_node


def _yaml_once(loader: _GuardedLoader, node: yaml.Node, at: str = "") -> None:
    """Every mapping under `node` gives each key once."""
    for path, child in _yaml_pairs(loader, node, at):
        _yaml_once(loader, child, path)


def _yaml(text: str) -> object:
    loader = _GuardedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _yaml_once(loader, node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


_TOML_AT = re.compile(r"^(?P<problem>.*) \(at line (?P<line>\d+), column \d+\)$")
#: TOML's messages for a key or table given twice that name the key themselves
_TOML_NAMED = re.compile(
    r"^(?:Cannot declare (?P<declared>\(.*\)) twice"
    r"|Cannot mutate immutable namespace (?P<frozen>\(.*\))"
    r"|Duplicate inline table key (?P<inline>'.*'|\".*\"))$"
)
_TOML_PART = r"(?:[A-Za-z0-9_-]+|\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*')"
_TOML_KEY = rf"{_TOML_PART}(?:[ \t]*\.[ \t]*{_TOML_PART})*"
_TOML_HEADER = re.compile(rf"^[ \t]*\[\[?[ \t]*(?P<key>{_TOML_KEY})[ \t]*\]")
_TOML_ASSIGN = re.compile(rf"^[ \t]*(?P<key>{_TOML_KEY})[ \t]*=")


def _toml_parts(written: str) -> tuple[str, ...]:
    """A TOML key as written (`"prod".cpu_core_hour`) as its parts, read by TOML itself."""
    data: object = tomllib.loads(f"{written} = 0")
    parts: list[str] = []
    while isinstance(data, dict):
        ((key, data),) = data.items()
        parts.append(key)
    return tuple(parts)


def _toml_statements(lines: list[str], upto: int) -> Iterator[tuple[int, tuple[str, ...], bool]]:
    """(line, the key's full path, whether a table header) of each statement that starts a
    line, up to line `upto`: what is needed to find a key given twice (a best effort: TOML's
    parser says only where the second one ended)."""
    table: tuple[str, ...] = ()
    for number, text in enumerate(lines[:upto], start=1):
        header = _TOML_HEADER.match(text)
        if header:
            table = _toml_parts(header["key"])
            yield number, table, True
            continue
        assign = _TOML_ASSIGN.match(text)
        if assign:
            yield number, table + _toml_parts(assign["key"]), False


def _toml_twice(text: str, problem: str, line: int) -> _Twice | None:
    """The key TOML's "Cannot overwrite a value" (or "Cannot declare … twice") at `line`
    means, and where it was first given; None where no statement explains it."""
    named = _TOML_NAMED.match(problem)
    if named is not None:
        written = named["declared"] or named["frozen"] or named["inline"]
        key = ast.literal_eval(written)
        key = ".".join(key) if isinstance(key, tuple) else str(key)
        return _Twice(key, None, line) if named["inline"] else _first(text, key, line)
    if problem != "Cannot overwrite a value":
        return None
    statements = list(_toml_statements(text.splitlines(), line))
    if not statements:
        return None
    _, path, _ = statements[-1]
    return _first(text, ".".join(path), line)


def _first(text: str, key: str, line: int) -> _Twice:
    """`key` given twice, the second ending on `line`: the first statement giving it."""
    earlier = list(_toml_statements(text.splitlines(), line))[:-1]
    first = next((n for n, path, _ in earlier if ".".join(path) == key), None)
    return _Twice(key, first, line)


def _toml(text: str) -> object:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = _TOML_AT.match(str(exc))
        if at is None:
            raise
        try:
            twice = _toml_twice(text, at["problem"], int(at["line"]))
        except (tomllib.TOMLDecodeError, ValueError, SyntaxError):  # a key the search misread
            twice = None
        if twice is None:
            raise
        raise twice from None


def _fits(value: object, at: str = "") -> None:
    """Every integer in `value` within a float's range: past it, a figure made from it is an
    `OverflowError` (a budget of 1 followed by 400 zeros)."""
    if isinstance(value, dict):
        for key, item in value.items():
            _fits(item, _dotted(at, key))
    elif isinstance(value, list):
        for number, item in enumerate(value):
            _fits(item, f"{at}[{number}]")
    elif isinstance(value, int) and abs(value) > sys.float_info.max:
        raise _TooLarge(at)


def _parsed(path: Path, text: str) -> object:
    data = _toml(text) if path.suffix.lower() == ".toml" else _yaml(text)
    _fits(data)
    return data


def read_small_file(path: Path, what: str, error: type[DimsError]) -> object:
    """The parsed content of the `what` file at `path` (`what`: "price", "rules"), or one
    `error` line naming the file and the problem."""
    text = _text(path, what, error)
    try:
        return _parsed(path, text)
    except _Twice as twice:
        first = f" (first on line {twice.first})" if twice.first is not None else ""
        raise error(
            f"{path}: line {twice.second}: {_cut(twice.key, 60)} given twice{first}; "
            f"give each key once in a {what} file"
        ) from None
    except _TooLarge as large:
        raise error(
            f"{path}: {_cut(large.key, 60)}: a number past a float's range "
            f"({sys.float_info.max:.1e}), too large to compute with"
        ) from None
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise _syntax(path, what, exc, error) from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to be a {what} file") from None
    except ValueError as exc:  # a number too long to convert (Python's 4,300-digit limit)
        raise error(f"{path}: cannot read a value: {_cut(exc, 80)}") from None


def toml_key_lines(path: Path, what: str, error: type[DimsError]) -> dict[str, int]:
    """The line (1-based) of the statement that first gives each dotted key of the TOML
    file at `path` (a table header for a table): where a message about a value points. A
    best effort, as the duplicate search is; read as guardedly as `read_small_file`."""
    lines: dict[str, int] = {}
    text = _text(path, what, error).splitlines()
    try:
        for number, parts, _ in _toml_statements(text, len(text)):
            lines.setdefault(".".join(parts), number)
    except (tomllib.TOMLDecodeError, ValueError, SyntaxError):  # a key the search misread
        pass
    return lines


def _syntax(path: Path, what: str, exc: Exception, error: type[DimsError]) -> DimsError:
    """The one line for a file that is not valid TOML or YAML, or uses what YAML may not."""
    if isinstance(exc, tomllib.TOMLDecodeError):
        found = _TOML_AT.match(str(exc))
        if found is not None:  # the line first, as every other message of a settings file has
            column = str(exc).rsplit(" ", 1)[-1].rstrip(")")
            problem = f"{found['problem']} (column {column})"
            return error(f"{path}: line {found['line']}: not valid TOML: {_cut(problem, 120)}")
        return error(f"{path}: not valid TOML: {_cut(exc, 120)}")
    if isinstance(exc, _Refused):
        at = exc.problem_mark.line + 1
        return error(f"{path}: line {at}: YAML {exc.problem} in a {what} file")
    mark = getattr(exc, "problem_mark", None)
    line = f" (line {mark.line + 1})" if mark is not None else ""
    problem = getattr(exc, "problem", None) or "cannot parse"
    return error(f"{path}: not valid YAML{line}: {_cut(problem, 120)}")
