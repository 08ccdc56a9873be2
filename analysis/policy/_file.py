"""A rules file read as hostile input: small, YAML without anchors or aliases, or TOML.

A rules file sits in a repository that many people edit and CI runs on every change, so it is
read the way a price sheet is: at most `MAX_FILE_BYTES`, YAML's anchors and aliases refused
(a few lines can expand beyond memory), nesting too deep is one line, and every message
names the file.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

from analysis.errors import RulesError

#: A rules file is a few dozen lines; a larger file is refused before it is read whole.
MAX_FILE_BYTES = 64 * 1024


class _Refused(yaml.YAMLError):
    """YAML a rules file may not use, at `mark`."""

    def __init__(self, mark: yaml.Mark, problem: str) -> None:
        super().__init__(problem)
        self.problem_mark = mark
        self.problem = problem


class _RulesLoader(yaml.SafeLoader):
    """Safe YAML without anchors and aliases (the "billion laughs" need them)."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.NodeEvent):
            event = self.current_event
            if isinstance(event, yaml.AliasEvent) or event.anchor is not None:
                raise _Refused(event.start_mark, "anchors and aliases (& and *) are not allowed")
        return super().compose_node(parent, index)


def _text(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise RulesError(f"{path}: cannot read the rules file: {exc.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise RulesError(f"{path}: larger than {MAX_FILE_BYTES // 1024} KiB; rules are a few lines")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise RulesError(f"{path}: not UTF-8 text") from None


def _yaml(text: str) -> object:
    loader = _RulesLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def read_file(path: Path) -> object:
    """The parsed content of a YAML or TOML file (TOML by the suffix `.toml`)."""
    text = _text(path)
    try:
        return tomllib.loads(text) if path.suffix.lower() == ".toml" else _yaml(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{path}: not valid TOML: {str(exc)[:120]}") from None
    except _Refused as exc:
        raise RulesError(f"{path}: line {exc.problem_mark.line + 1}: YAML {exc.problem}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        problem = str(getattr(exc, "problem", None) or "cannot parse")[:120]
        raise RulesError(f"{path}: not valid YAML{line}: {problem}") from None
    except RecursionError:
        raise RulesError(f"{path}: nested too deeply to be a rules file") from None
    except ValueError as exc:  # a number too long to convert (Python's 4,300-digit limit)
        raise RulesError(f"{path}: cannot read a value: {str(exc)[:80]}") from None
