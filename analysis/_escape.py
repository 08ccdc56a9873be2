"""Service text is data: how it is written where it leaves dims, so that it stays data.

A deployment's name, namespace, type, version, label or workspace id is whatever the service
sends. Printed raw, it can drive the terminal (ESC, CSI and OSC sequences: OSC 52 writes the
clipboard), move the cursor back over a line (CR), ring (BEL), reorder what is shown (the
bidi overrides and isolates), or start a line of its own (a newline, U+2028): a name holding
`\\nFAIL …` would forge a line of `dims check`. In a CSV cell it can be a spreadsheet formula;
in SQL, a quote ends an identifier and starts a statement. Each boundary has its one rule
here, and every command goes through it:

- a terminal: `printable` (a field: every control character escaped, the newline too, so
  one record stays one line) and `printable_lines` (text the tool laid out in lines: the
  same, but the newlines between its lines kept);
- a CSV cell: `csv_cell` (OWASP's rule against formula injection);
- Markdown (a pull-request comment): `markdown_text` (a table cell or a line of text: one
  line, no HTML, no Markdown of its own);
- SQL: `sql_name` (an identifier) and `sql_text` (a string literal), quotes doubled.

It imports nothing heavy: `dims` prints through it on every command.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "CSV_FORMULA_LEAD",
    "ascii_text",
    "csv_cell",
    "markdown_text",
    "printable",
    "printable_lines",
    "sql_name",
    "sql_text",
]

#: The Unicode categories a terminal acts on or shows as nothing: controls (C0, DEL, C1:
#: ESC, CSI U+009B, CR, BEL, NEL), format characters (the bidi embeddings, overrides and
#: isolates U+202A-202E and U+2066-2069, the marks U+200E/200F, zero-width spaces, BOM),
#: lone surrogates (no encoder writes them), the line and paragraph separators.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
#: Format characters that ordinary text needs, kept: the zero-width joiner and non-joiner
#: (emoji sequences, Persian and Indic scripts) and the tag characters of flag emoji.
_KEPT = frozenset({"\u200c", "\u200d", *map(chr, range(0xE0020, 0xE0080))})
#: The escapes JSON writes for these three; every other character is `\\uXXXX`.
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Runs that may hold an unsafe character: anything but printable ASCII (and, for text laid
#: out in lines, the newline). A run that `str.isprintable()` is kept at C speed.
_CANDIDATES = re.compile(r"[^\x20-\x7e]+")
_CANDIDATES_IN_LINES = re.compile(r"[^\x20-\x7e\n]+")


def _escaped(char: str) -> str:
    """`char` as JSON escapes it: `\\n`, `\\r`, `\\t`, else `\\uXXXX` (a surrogate pair above
    the BMP). So an escape inside a JSON document's string is JSON, and decodes to `char`."""
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _unsafe(char: str) -> bool:
    return unicodedata.category(char) in _UNSAFE_CATEGORIES and char not in _KEPT


def _run(match: re.Match[str]) -> str:
    run = match.group()
    if run.isprintable():  # letters, marks, symbols of any script: as they are
        return run
    return "".join(_escaped(c) if _unsafe(c) else c for c in run)


def printable(text: object) -> str:
    """`text` (service text: a name, a namespace, a version, a label, a cell) as one line a
    terminal shows as written: every control, format and separator character escaped as
    JSON writes it (ESC `\\u001b`, newline `\\n`, U+202E `\\u202e`), ordinary Unicode kept.
    A backslash is kept as it is: the escape is for eyes (`--json` carries the exact text)."""
    shown = text if isinstance(text, str) else str(text)
    return _CANDIDATES.sub(_run, shown)


def printable_lines(text: str) -> str:
    """`printable` for text the tool laid out in lines (what `dims` prints): the newlines
    between its lines are kept, every other unsafe character escaped. The last line of
    defence: it keeps service text from driving the terminal wherever a field escape was
    missed, but only the field's own `printable` keeps a record on one line. JSON stays
    JSON, and exact: inside a string the escapes are JSON's own."""
    return _CANDIDATES_IN_LINES.sub(_run, text)


#: What a CSV cell may not start with (OWASP, CSV injection): a spreadsheet reads such a cell
#: as a formula (`=`, `+`, `-`, `@`) or strips the tab or CR that would hide one.
CSV_FORMULA_LEAD = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text: str) -> str:
    """`text` as a CSV text cell: prefixed with `'` when it starts as a formula would, so a
    spreadsheet shows it as text (CSV only: Parquet keeps the value as it is)."""
    return f"'{text}" if text.startswith(CSV_FORMULA_LEAD) else text


def ascii_text(text: str) -> str:
    """`text` in ASCII alone, for a field whose readers take nothing else (FOCUS 1.2's
    validator holds ChargeDescription to ASCII): a letter with marks as its base letter
    (`é` -> `e`: NFKD, less the combining marks), every other character outside printable
    ASCII (a control character, a symbol, a letter of another script) as its JSON escape
    (`\\n`, `\\u4e2d`), so nothing is lost and nothing drives a terminal."""
    if text.isascii() and text.isprintable():
        return text
    return _NOT_ASCII.sub(_ascii, text)  # the runs of printable ASCII at C speed


_NOT_ASCII = re.compile(r"[^\x20-\x7e]")


def _ascii(match: re.Match[str]) -> str:
    char = match.group()
    base = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    if base and all(" " <= c <= "~" for c in base):
        return base
    return _escaped(char)


def sql_name(name: str) -> str:
    """`name` as an SQL identifier (DuckDB's, the standard's): in double quotes, each double
    quote doubled, so no name ends the identifier early."""
    return '"' + name.replace('"', '""') + '"'


def sql_text(text: str) -> str:
    """`text` as an SQL string literal: in single quotes, each single quote doubled."""
    return "'" + text.replace("'", "''") + "'"


#: ASCII punctuation that means something in CommonMark or GitHub's and GitLab's Markdown
#: (emphasis, code, links, images, headings, lists, tables, strikethrough, footnotes,
#: mentions, references, math); each is written backslash-escaped, which CommonMark allows
#: for any ASCII punctuation. `&`, `<` and `>` are written as entities instead: an escape
#: does not hold inside raw HTML such as a comment's `<details>` block, an entity does.
_MARKDOWN_PUNCTUATION = frozenset("\\`*_{}[]()#+-.!|~@:$^=")
_MARKDOWN_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def markdown_text(text: object) -> str:
    """Service text as Markdown that shows it as written: `printable` first (one line: a
    newline is `\\n`, so no name starts a row or a heading of its own), then every Markdown
    character escaped (a `|` cannot end a table cell, a backtick cannot open code, `<b>` or
    `<!--` is not HTML). A host's renderer shows the text, never markup made from it."""
    out = []
    for char in printable(text):
        if char in _MARKDOWN_ENTITIES:
            out.append(_MARKDOWN_ENTITIES[char])
        elif char in _MARKDOWN_PUNCTUATION:
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)
