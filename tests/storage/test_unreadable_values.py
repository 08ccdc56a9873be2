"""A record holding a value no parser reads is one rejected record, never the end of an export.

JSON's grammar allows a string escape naming half of a surrogate pair (`"\\ud800x"`) and a
number beyond float64 (`1e400`); orjson and msgspec refuse them, and one such record used to
end the whole export (issue 27, item 3): a small dump and an NDJSON line with "not JSON", a
page over HTTP with "a proxy is cutting responses" after every retry, a dump over 64 MiB
with a traceback. Now, from every source and every reading path: one rejected_records row
naming the record and the field, the other records exported, exit code 0 as for any
rejected record (`--strict` still stops at it).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pyarrow.parquet as pq
import pytest
from cli_in_process import run
from hostile_servers import lists_records, serve, within
from hypothesis import given, settings
from hypothesis import strategies as st

from dims import _fetch as fetch
from dims import _rawjson as rawjson
from dims._connection import RetryPolicy, connect
from dims._dumps import _reader as dumps
from dims._dumps import read_dump
from dims._pages import keys_of
from dims._snapshot import export_snapshot
from dims._tables import _batches as batches
from dims.sandbox import generate_fleet

DIMS = Path(sys.executable).parent / "dims"
#: (the field that holds it, its JSON text, the path and the words the reason must name)
BAD_VALUES = {
    "a lone high surrogate": ("name", b'"\\ud800x"', "name: a string that is not Unicode"),
    "a lone low surrogate in a label": (
        "label",
        b'"a\\udc00"',
        "source_config.resource_spec.labels.team: a string that is not Unicode",
    ),
    "1e400": ("cpu", b"1e400", "source_config.resource_spec.cpu: a number beyond float64"),
    "a lone surrogate in a new field's name": (
        "key",
        b'"f\\udfff"',
        "source_config: a key that is not Unicode",
    ),
}
BAD = pytest.mark.parametrize("bad", BAD_VALUES)


def texts(n: int, bad: str, at: tuple[int, ...] = (1,), seed: int = 3) -> list[bytes]:
    """`n` fleet records as JSON text, those at `at` holding the bad value."""
    field, text, _reason = BAD_VALUES[bad]
    records = generate_fleet(n, seed=seed).deployments
    for i in at:
        config = records[i]["source_config"] = records[i].get("source_config") or {}
        spec = config["resource_spec"] = config.get("resource_spec") or {}
        if field == "name":
            records[i]["name"] = "@@"
        elif field == "label":
            spec["labels"] = {**(spec.get("labels") or {}), "team": "@@"}
        elif field == "key":
            config["@@"] = True
        else:
            spec["cpu"] = "@@"
    return [orjson.dumps(record).replace(b'"@@"', text) for record in records]


def ids_of(record_texts: list[bytes], but: tuple[int, ...] = (1,)) -> list[str]:
    return [orjson.loads(t)["id"] for i, t in enumerate(record_texts) if i not in but]


def table(out: Path, name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted((out / name).glob("*/*.parquet")):
        rows += pq.read_table(path).to_pylist()
    return rows


def assert_one_rejected(out: Path, bad: str, expected_ids: list[str], where: tuple[str, int]):
    rejected = table(out, "rejected_records")
    assert [(r["source"], r["record_index"]) for r in rejected] == [where]
    assert rejected[0]["reason"].startswith("record: not valid JSON (")
    assert BAD_VALUES[bad][2] in rejected[0]["reason"]
    assert rejected[0]["record_json"] is None  # text no parser reads cannot be redacted
    assert [r["id"] for r in table(out, "deployments")] == expected_ids


# --- dumps: every shape, small and large --------------------------------------------------------


def _shapes(record_texts: list[bytes]) -> dict[str, tuple[str, bytes, tuple[str, int]]]:
    """(file name, content, (source, record_index) of record 1) for every dump shape."""
    joined = b",".join(record_texts)
    return {
        "array": ("dump.json", b"[" + joined + b"]", ("dump.json[0..5]", 1)),
        "ndjson": ("dump.ndjson", b"\n".join(record_texts) + b"\n", ("dump.ndjson:lines 1-6", 2)),
        "page": (
            "page.json",
            b'{"resources":[' + joined + b'],"offset":6}',
            ("page.json.resources", 1),
        ),
        "array of pages": (
            "pages.json",
            b'[{"resources":[' + joined + b'],"offset":6}]',
            ("pages.json[0].resources", 1),
        ),
    }


SHAPES = pytest.mark.parametrize("shape", ["array", "ndjson", "page", "array of pages"])


@BAD
@SHAPES
def test_a_small_dump_exports_all_but_that_record(tmp_path, capsys, bad, shape):
    record_texts = texts(6, bad)
    name, content, where = _shapes(record_texts)[shape]
    (tmp_path / name).write_bytes(content)
    code, out, err = run(
        capsys, "export", "--from-json", str(tmp_path / name), "--out", str(tmp_path / "out")
    )
    assert (code, err) == (0, "")
    assert "1 record(s) could not be read" in out
    assert_one_rejected(tmp_path / "out", bad, ids_of(record_texts), where)


@BAD
@SHAPES
@pytest.mark.parametrize("raw", [False, True], ids=["parsed", "raw"])
def test_every_reading_of_a_dump_keeps_the_record_apart(tmp_path, monkeypatch, bad, shape, raw):
    """Files read in chunks and blocks as large ones are (limits made small), parsed or raw:
    the careful reader takes over at the record and leaves it raw for the tables to reject."""
    monkeypatch.setattr(dumps, "WHOLE_FILE_LIMIT", 0)
    monkeypatch.setattr(dumps, "_CHUNK", 1009)
    monkeypatch.setattr(dumps, "_TAIL", 700)
    record_texts = texts(6, bad, at=(1, 4))
    name, content, where = _shapes(record_texts)[shape]
    (tmp_path / name).write_bytes(content)
    result = export_snapshot(read_dump(tmp_path / name, raw=raw, page_size=4), tmp_path / "out")
    assert (result.records, result.rejected) == (6, 2)
    rejected = table(tmp_path / "out", "rejected_records")
    first = where[1]  # record 1: its index, or its line
    assert [r["record_index"] for r in rejected] == [first, first + 3]
    assert all(BAD_VALUES[bad][2] in r["reason"] for r in rejected)
    assert [r["id"] for r in table(tmp_path / "out", "deployments")] == ids_of(
        record_texts, but=(1, 4)
    )


#: Where the big dump's bad records are: near its start, and after workers have started.
BIG_DUMP_BAD = (5, batches.WORKERS_AFTER + 5_000)


@pytest.fixture(scope="module")
def big_dump(tmp_path_factory) -> tuple[Path, list[bytes]]:
    """An array dump over 64 MiB (the size read block by block) with a lone surrogate in
    two records (`BIG_DUMP_BAD`)."""
    clean = texts(300, "a lone high surrogate", at=())
    dirty = texts(300, "a lone high surrogate", at=tuple(range(300)))
    copies: list[bytes] = []
    size = 0
    while size <= 65 * 2**20:  # the same records again, each under a new id
        text = (dirty if len(copies) in BIG_DUMP_BAD else clean)[len(copies) % 300]
        old_id = rawjson.grammar_loads(text)["id"].encode()
        copies.append(text.replace(old_id, b"%08d-0000-4000-8000-000000000000" % len(copies)))
        size += len(copies[-1]) + 2
    path = tmp_path_factory.mktemp("big") / "big.json"
    path.write_bytes(b"[" + b",\n".join(copies) + b"]")
    return path, copies


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_dump_over_64_mib_exports_all_but_those_records(tmp_path, big_dump, workers):
    path, copies = big_dump
    assert path.stat().st_size > 64 * 2**20
    bad = [i for i, text in enumerate(copies) if b"\\ud800" in text]
    assert bad == list(BIG_DUMP_BAD)
    done = subprocess.run(
        [DIMS, "export", "--from-json", path, "--out", tmp_path / "out", "--workers", workers],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert f"{len(bad)} record(s) could not be read" in done.stdout
    rejected = table(tmp_path / "out", "rejected_records")
    assert [r["record_index"] for r in rejected] == bad
    deployments = pq.read_table(
        next((tmp_path / "out" / "deployments").glob("*/*.parquet")), columns=["id"]
    )
    assert deployments.num_rows == len(copies) - len(bad)


def test_strict_mode_still_stops_at_the_record(tmp_path, capsys):
    record_texts = texts(6, "1e400")
    (tmp_path / "d.ndjson").write_bytes(b"\n".join(record_texts))
    code, _out, err = run(
        capsys,
        "export",
        "--strict",
        "--from-json",
        str(tmp_path / "d.ndjson"),
        "--out",
        str(tmp_path / "out"),
    )
    assert code != 0
    assert "d.ndjson:lines 1-6 record 2: record: not valid JSON" in err
    assert not (tmp_path / "out" / "deployments").exists()


def test_text_that_is_not_json_is_still_an_error(tmp_path):
    """The grammar decides: NaN, a cut record, a trailing comma stay one DumpError line."""
    record_texts = texts(3, "1e400")
    for damaged in (b"NaN", b'{"id": "x",}', b'{"id": "x"'):
        path = tmp_path / "d.ndjson"
        path.write_bytes(b"\n".join([record_texts[0], damaged, record_texts[2]]))
        with pytest.raises(dumps.DumpError, match="not JSON at line 2"):
            list(read_dump(path))


# --- the service: a page holding such a record --------------------------------------------------

FAST = RetryPolicy(retries=1, initial_backoff=0.005, max_backoff=0.01, jitter=0.0)


@BAD
@pytest.mark.parametrize("raw", [False, True], ids=["parsed", "raw"])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_page_of_the_service_keeps_its_other_records(bad, raw, mode):
    record_texts = texts(5, bad, at=(2,))
    with serve(lists_records(record_texts)) as server:
        client = connect(server.base_url, retry=FAST)
        if mode == "sync":
            pages = within(lambda: list(fetch.fetch_deployments(client, page_size=3, raw=raw)))
        else:

            async def collect() -> list[Any]:
                return [p async for p in fetch.afetch_deployments(client, page_size=3, raw=raw)]

            pages = within(lambda: asyncio.run(collect()))
    records = [record for page in pages for record in page.records]
    assert len(records) == 5
    assert type(records[2]) is msgspec.Raw and bytes(records[2]) == record_texts[2]
    # the record is still known by its id (once in the fleet, its integration listed)
    assert keys_of(records[2]).id == rawjson.grammar_loads(record_texts[2])["id"]


@BAD
def test_an_export_from_the_service_rejects_only_that_record(tmp_path, bad):
    record_texts = texts(5, bad, at=(2,))
    with serve(lists_records(record_texts)) as server:
        done = within(
            lambda: subprocess.run(
                [DIMS, "export", "--base-url", server.base_url, "--out", tmp_path / "out"],
                capture_output=True,
                text=True,
                env={"PATH": "/usr/bin:/bin", "DIMS_API_KEY": "k"},
            )
        )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert "proxy" not in done.stdout
    assert_one_rejected(tmp_path / "out", bad, ids_of(record_texts, but=(2,)), ("page offset=0", 2))


# --- the grammar reading itself ---------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
UNREADABLE = st.sampled_from([b'"\\ud800"', b'"x\\udfffy"', b"1e400", b"-1E+999", b'"\xff"'])


@settings(max_examples=200, deadline=None)
@given(
    elements=st.lists(st.tuples(JSON_VALUES, st.none() | UNREADABLE), max_size=5),
    space=st.sampled_from([b"", b" ", b"\n\t "]),
    as_page=st.booleans(),
)
def test_the_grammar_reading_parses_each_part_or_keeps_its_text(elements, space, as_page):
    """Parts orjson reads come as orjson reads them; a part holding what it refuses comes as
    its exact text; whitespace anywhere, and a page read record by record."""
    parts = [
        orjson.dumps(value) if bad is None else b'{"k":[1,%s],"v":%s}' % (bad, orjson.dumps(value))
        for value, bad in elements
    ]
    array = b"[" + space + (b"," + space).join(parts) + space + b"]"
    text = b'{"offset":1,%s"resources":%s}' % (space, array) if as_page else array
    found = rawjson.loads(text)
    items = found["resources"] if as_page else found
    assert len(items) == len(parts)
    for item, part, (_value, bad) in zip(items, parts, elements, strict=True):
        if bad is None:
            assert item == orjson.loads(part)
        else:
            assert type(item) is msgspec.Raw and bytes(item) == part
    if as_page:
        assert found["offset"] == 1
