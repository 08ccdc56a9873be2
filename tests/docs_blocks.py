"""The fenced code blocks of README.md and docs/**/*.md, read as the docs test runs them.

A block is what a reader copies: ```python, ```sh / ```bash / ```console (commands), the
settings files (```yaml / ```toml whose first line names the file, `# rules.yaml`), and what
is only shown (```text, ```sql, …). The HTML comment right before a block (blank lines
between allowed) says how it runs:

- `<!-- not run: why -->`: it cannot run here (a CI job posting to GitHub, a real cloud URL,
  the test suite itself); the docs test lists these with their reasons.
- `<!-- sandbox -->`: it talks to the service, so it runs against the sandbox: the DIMS_*
  variables name it, and an `export DIMS_X=…` line of the block (the reader's own values)
  takes the sandbox's value instead.
- `<!-- exit 1 allowed -->`: each line is its own command and may exit 0 or 1 (the gate's
  "a rule failed"); a block of `dims check` examples is that.
- anything else (`<!-- walkthrough -->`, none): it runs as written, and must exit 0.

Marks combine with `;` (`<!-- sandbox; exit 1 allowed -->`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from repo import ROOT

#: Languages whose blocks run: python in a fresh interpreter, the others through bash.
PYTHON = ("python",)
SHELL = ("sh", "bash", "console")
#: Settings files: written into the page's folder under the name their first line gives,
#: then read by dims' own loader of that kind (tests/docs/test_docs_blocks.py: LOADERS).
SETTINGS = ("yaml", "toml")
#: Only shown: output, SQL for other engines, the layout of a folder.
SHOWN = ("text", "sql", "")

_FENCE = re.compile(
    r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```$", re.M | re.S
)
_MARK = re.compile(r"<!--\s*(?P<mark>[^>]*?)\s*-->\s*\Z")
_FILE_NAME = re.compile(r"^#\s*(?P<name>[\w.-]+\.(?:ya?ml|toml))\b")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository
    line: int  # of the opening fence
    lang: str
    text: str
    mark: str  # the comment before it, "" when none

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def marks(self) -> tuple[str, ...]:
        return tuple(part.strip() for part in self.mark.split(";") if part.strip())

    @property
    def not_run(self) -> str | None:
        """Why it does not run, when it is marked so."""
        found = re.fullmatch(r"not run:\s*(.+)", self.mark, re.S)
        return found[1].strip() if found else None

    @property
    def against_sandbox(self) -> bool:
        return "sandbox" in self.marks

    @property
    def allowed_exit(self) -> int | None:
        """The exit code besides 0 each of its lines may give (`exit 1 allowed`)."""
        found = [re.fullmatch(r"exit (\d+) allowed", mark) for mark in self.marks]
        return next((int(f[1]) for f in found if f), None)

    @property
    def file_name(self) -> str | None:
        """The settings file a yaml/toml block is (its first line: `# name.yaml`)."""
        found = _FILE_NAME.match(self.text)
        return found["name"] if found else None

    def commands(self) -> str:
        """A shell block as bash runs it: a console block's `$ ` lines only."""
        if self.lang != "console":
            return self.text
        lines = [line[2:] for line in self.text.splitlines() if line.startswith("$ ")]
        return "\n".join(lines) + "\n"


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks_of(page: Path) -> list[Block]:
    return blocks_in(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))


def blocks_in(text: str, page: str) -> list[Block]:
    """The blocks of a page's Markdown `text`, in order (fences indented in a list too)."""
    found = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()]
        mark = _MARK.search(before.rstrip() + "\n")
        indent = len(match["indent"])
        body = "".join(line[indent:] + "\n" for line in match["body"].splitlines())
        found.append(
            Block(
                page=page,
                line=before.count("\n") + 1,
                lang=match["lang"],
                text=body,
                mark=mark["mark"] if mark else "",
            )
        )
    return found


def every_block() -> list[Block]:
    return [block for page in pages() for block in blocks_of(page)]
