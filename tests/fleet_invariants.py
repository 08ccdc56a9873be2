"""What every command must hold on any fleet the spec admits, checked on what it wrote.

The whole-CLI property tests (tests/cli/test_cli_properties.py) and the sandbox's spec-records
mode (tests/sandbox/test_sandbox_spec_records.py) run fleets through `dims` and hold each run
and each file to these:

- no traceback, and only the exit codes the command documents (docs/cli.md);
- no raw control character on stdout or stderr: C0 but newline and tab, C1, and the bidi
  controls (an ESC starts a terminal sequence, OSC 52 writes the clipboard, CR overwrites a
  line, a bidi override reorders what follows);
- no negative, NaN or infinite money or capacity in any file or JSON the command wrote
  (a JSON `NaN`/`Infinity` token included), changes (`delta`) excepted from the sign;
- every record exported once or rejected with its reason.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from cli_in_process import Ran

from dims import _spec as spec

#: C0 but newline and tab, C1, and Unicode's Bidi_Control characters.
RAW_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
#: What each command may exit with on a fleet the spec admits (docs/cli.md): each can do its
#: job, so 0; `dims check` 1 when a rule fails.
#: `dims config` refuses, in one line, a setting no request could carry (a drawn workspace id).
EXITS: dict[str, frozenset[int]] = {"check": frozenset({0, 1}), "config": frozenset({0, 1})}
DONE = frozenset({0})


def raw_controls(text: str) -> list[str]:
    """The raw control characters in `text`, as escapes (what a failure should show)."""
    return sorted({repr(found) for found in RAW_CONTROL.findall(text)})


def held(ran: Ran) -> Ran:
    """`ran` did its job as documented: no traceback, a documented exit code, and nothing on
    stdout or stderr a terminal would read as control."""
    command = ran.argv[0]
    assert ran.escaped is None, f"dims {' '.join(ran.argv)}: traceback\n{ran.escaped}"
    assert "Traceback (most recent call last)" not in ran.err, ran.err
    allowed = EXITS.get(command, DONE)
    assert ran.code in allowed, f"dims {command} exited {ran.code}: {ran.err[-2000:]}"
    for stream, text in (("stdout", ran.out), ("stderr", ran.err)):
        found = raw_controls(text)
        assert not found, f"dims {command}: raw control characters on {stream}: {found}"
    return ran


# --- figures ------------------------------------------------------------------------------


def _no_constant(token: str) -> float:
    raise AssertionError(f"JSON holds {token}: not a number any reader takes")


def strict_json(text: str) -> Any:
    """JSON as every reader takes it: Python's `NaN`, `Infinity` tokens refused."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {text[:3000]}") from None


def numbers(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], float]]:
    """Every number in a JSON value, with the keys on its way (list indexes left out)."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from numbers(item, (*path, str(key)))
    elif isinstance(value, list):
        for item in value:
            yield from numbers(item, path)


def signed_change(path: tuple[str, ...]) -> bool:
    """A change between two snapshots, whose sign is its meaning (diff's `delta`, the cost
    causes, a change's own deltas)."""
    return any(key in ("delta", "cost_causes") or key.endswith("_delta") for key in path)


def assert_sound_figures(
    document: Any, where: str, signed: Callable[[tuple[str, ...]], bool] = signed_change
) -> None:
    """No figure of a JSON document is NaN or infinite, and none is negative but changes."""
    for path, value in numbers(document):
        assert math.isfinite(value), f"{where}: {'.'.join(path)} = {value}"
        assert value >= 0 or signed(path), f"{where}: {'.'.join(path)} = {value}"


def numeric_columns(schema: pa.Schema) -> list[str]:
    return [
        f.name
        for f in schema
        if pa.types.is_integer(f.type)
        or pa.types.is_floating(f.type)
        or pa.types.is_decimal(f.type)
    ]


def assert_sound_table(
    table: pa.Table, where: str, signed: Callable[[str], bool] = lambda name: False
) -> None:
    """No number of a table is NaN or infinite, and none is negative but changes'."""
    for name in numeric_columns(table.schema):
        for value in table.column(name).to_pylist():
            if value is None:
                continue
            assert math.isfinite(value), f"{where}: {name} = {value}"
            assert value >= 0 or signed(name), f"{where}: {name} = {value}"


def assert_sound_parquet(path: Path, signed: Callable[[str], bool] = lambda name: False) -> None:
    assert_sound_table(pq.read_table(path), str(path.name), signed)


# --- the dataset ----------------------------------------------------------------------------


def partition(out: Path, table: str, day: date) -> Path:
    return out / table / f"snapshot_date={day.isoformat()}"


def read_day(out: Path, table: str, day: date) -> pa.Table:
    return pq.read_table(partition(out, table, day))


#: The sources of rejected_records rows that are no deployment (tables/_flattener.py).
OTHER_SOURCES = ("oauth_providers", "repositories integration=")


def assert_each_record_once(records: list[Any], out: Path, day: date, manifest: Any) -> set[str]:
    """Every input record is one deployments row or one rejected_records row with a reason:
    nothing dropped, nothing twice. The ids exported."""
    exported = read_day(out, "deployments", day).column("id").to_pylist()
    rejected = read_day(out, "rejected_records", day).to_pylist()
    assert manifest["rejected"] == len(rejected)
    rejected = [row for row in rejected if not row["source"].startswith(OTHER_SOURCES)]
    assert manifest["records"] == len(records)
    assert manifest["rows"]["deployments"] == len(exported)
    assert len(exported) + len(rejected) == len(records)
    assert len(set(exported)) == len(exported), "a deployment exported twice"
    indexes = {row["record_index"] for row in rejected}
    assert len(indexes) == len(rejected), "a record rejected twice"
    assert all(row["reason"] for row in rejected), rejected
    kept = [r["id"] for i, r in enumerate(records) if i not in indexes]
    assert sorted(exported) == sorted(kept)
    return set(exported)


def assert_each_listed_once(listed: int, table: pa.Table, rejected: pa.Table, source: str) -> None:
    """Providers or repositories: each listed one a row, or a rejected_records row of its
    source with a reason."""
    mine = [r for r in rejected.to_pylist() if r["source"].startswith(source)]
    assert table.num_rows + len(mine) == listed, (source, table.num_rows, mine)
    assert all(row["reason"] for row in mine), mine


def assert_sound_capacity(out: Path, day: date) -> None:
    """The dataset's capacity: the components' figures and the deployments' resource
    columns, each finite and never negative (an unreadable value is null)."""
    assert_sound_table(read_day(out, "deployment_components", day), "deployment_components")
    resources = read_day(out, "deployments", day).select(list(spec.resource_numeric_fields()))
    assert_sound_table(resources, "deployments")


# --- metrics --------------------------------------------------------------------------------


def metric_samples(text: str, openmetrics: bool) -> list[Any]:
    """The samples of `dims metrics`' output, parsed as Prometheus does (a text it cannot
    parse fails here)."""
    if openmetrics:
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
    else:
        from prometheus_client.parser import text_string_to_metric_families
    return [sample for family in text_string_to_metric_families(text) for sample in family.samples]


def assert_sound_metrics(text: str, openmetrics: bool) -> None:
    """Every sample finite and never negative, each series once (a scraper refuses a file
    that repeats one)."""
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    for sample in metric_samples(text, openmetrics):
        where = f"{sample.name}{sample.labels}"
        assert math.isfinite(sample.value) and sample.value >= 0, f"{where} = {sample.value}"
        series = (sample.name, tuple(sorted(sample.labels.items())))
        assert series not in seen, f"series twice: {where}"
        seen.add(series)


# --- a pull-request comment ----------------------------------------------------------------

#: The lines a comment of `dims check --format markdown|github|gitlab` is made of: its own
#: shapes only (a name that forged a heading, a list item or an HTML line would be none).
COMMENT_LINE = re.compile(
    r"(|\| .*|\|[-:|]+\||> \[!(NOTE|CAUTION)\]|> \*\*dims check: .*|\*\*dims check: .*"
    r"|\*\*The month's cost by group against .*|No rule fails\.|No earlier snapshot .*"
    r"|- note .*|- warning: .*|- … cut to fit .*|<!-- dims-check -->"
    r"|<details><summary>Details: every rule, the notes</summary>|</details>)"
)
#: The HTML a comment holds of its own; any other `<` came from service text, unescaped.
OWN_HTML = ("<!-- dims-check -->", "<details><summary>", "</summary>", "</details>")


def cells(row: str) -> int:
    """How many cells a Markdown table row has: its pipes not escaped by a backslash."""
    count, escaped = 0, False
    for char in row:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "|":
            count += 1
    return count - 1


def assert_sound_comment(body: str, host: str) -> None:
    """A comment body whose every line is one of its own shapes, whose every table row has
    its header's cells, with no HTML but its own, and the marker once (github, gitlab)."""
    lines = body.split("\n")
    for line in lines:
        assert COMMENT_LINE.fullmatch(line), f"a line no comment makes: {line!r}"
    rest = body
    for own in OWN_HTML:
        rest = rest.replace(own, "")
    assert "<" not in rest, "HTML from service text"
    assert "`" not in rest.replace("\\`", "").replace("`dims check --json`", ""), "raw backtick"
    assert body.count("<!--") == (host != "markdown"), body[:200]
    width = None
    for line in lines:
        if not line.startswith("|"):
            width = None
            continue
        width = cells(line) if width is None else width
        assert cells(line) == width, f"a row of {cells(line)} cells, its header {width}: {line!r}"
