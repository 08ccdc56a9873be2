"""A small settings file (a price sheet, a rules file) read as hostile input.

Such files sit in repositories many people edit and run in CI, so each is read the same
guarded way: at most `MAX_FILE_BYTES` (a larger file is refused before it is read whole),
UTF-8, YAML without anchors and aliases (a few lines of them can stand for a value larger
than memory, the "billion laughs") or TOML by the suffix `.toml`, nesting too deep and numbers
too long to convert as one line; every message names the file and what it was to be.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

from analysis.errors import DimsError

#: A settings file is a few dozen lines; a larger one is refused before it is read whole.
MAX_FILE_BYTES = 64 * 1024


class _Refused(yaml.YAMLError):
    """YAML a settings file may not use, at `mark`."""

    def __init__(self, mark: yaml.Mark, problem: str) -> None:
        super().__init__(problem)
        self.problem_mark = mark
        self.problem = problem


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


def _text(path: Path, what: str, error: type[DimsError]) -> str:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} file: {exc.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise error(
            f"{path}: the {what} file is larger than {MAX_FILE_BYTES // 1024} KiB; "
            f"a {what} file is a few lines"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"{path}: the {what} file is not UTF-8 text") from None


def _yaml(text: str) -> object:
    loader = _GuardedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def read_small_file(path: Path, what: str, error: type[DimsError]) -> object:
    """The parsed content of the `what` file at `path` (`what`: "price", "rules"), or one
    `error` line naming the file and the problem."""
    text = _text(path, what, error)
    try:
        return tomllib.loads(text) if path.suffix.lower() == ".toml" else _yaml(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {_cut(exc, 120)}") from None
    except _Refused as exc:
        at = exc.problem_mark.line + 1
        raise error(f"{path}: line {at}: YAML {exc.problem} in a {what} file") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "cannot parse"
        raise error(f"{path}: not valid YAML{line}: {_cut(problem, 120)}") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to be a {what} file") from None
    except ValueError as exc:  # a number too long to convert (Python's 4,300-digit limit)
        raise error(f"{path}: cannot read a value: {_cut(exc, 80)}") from None
