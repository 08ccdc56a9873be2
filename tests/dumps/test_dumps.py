"""Saved dumps (`dims export --from-json`): every accepted shape and every bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec
import orjson
import pytest
from hostile_servers import within

from dims._dumps import _reader as dumps
from dims._dumps import read_dump
from dims._errors import DimsError, DumpError
from dims._snapshot import export_snapshot
from dims.sandbox import fleet_dump_bytes, generate_fleet

RECORDS = [
    {"id": f"id-{i}", "name": f'agent "{i}", ünï\ncode', "created_at": "2024-01-01T00:00:00Z"}
    for i in range(7)
]


def write(tmp_path: Path, name: str, content: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def parsed(record):
    """A record as parsed JSON: `read_dump(raw=True)` yields array records as raw text."""
    return orjson.loads(memoryview(record)) if type(record) is msgspec.Raw else record


def records_of(pages) -> list:
    return [parsed(record) for page in pages for record in page.records]


def located(pages) -> list[tuple[str, int, str]]:
    """(source, record_index, id) for every record: where a rejected record would point."""
    return [
        (page.source, page.first_index + i, parsed(record)["id"])
        for page in pages
        for i, record in enumerate(page.records)
    ]


#: Both ways of reading an array: parsed records, and raw record text (the export's way).
RAW = pytest.mark.parametrize("raw", [False, True], ids=["parsed", "raw"])


# --- accepted shapes ---------------------------------------------------------------------


@RAW
def test_array_of_records(tmp_path, raw):
    path = write(tmp_path, "dump.json", orjson.dumps(RECORDS))
    pages = list(read_dump(path, page_size=3, raw=raw))
    assert records_of(pages) == RECORDS
    assert [p.source for p in pages] == ["dump.json[0..2]", "dump.json[3..5]", "dump.json[6..6]"]
    assert located(pages)[4] == ("dump.json[3..5]", 4, "id-4")
    assert all(p.deployment_type is None for p in pages)


@RAW
def test_one_page(tmp_path, raw):
    path = write(tmp_path, "page.json", json.dumps({"resources": RECORDS, "offset": 7}, indent=2))
    pages = list(read_dump(path, page_size=5, raw=raw))
    assert records_of(pages) == RECORDS
    assert located(pages)[6] == ("page.json.resources", 6, "id-6")


@RAW
def test_array_of_pages_and_mixed_elements(tmp_path, raw):
    content = [
        {"resources": RECORDS[:3], "offset": 3},
        {"resources": RECORDS[3:5], "offset": 5},
        RECORDS[5],
        RECORDS[6],
        {"resources": [], "offset": 5},
    ]
    path = write(tmp_path, "pages.json", json.dumps(content, indent=1))
    pages = list(read_dump(path, raw=raw))
    assert records_of(pages) == RECORDS
    assert located(pages) == [
        ("pages.json[0].resources", 0, "id-0"),
        ("pages.json[0].resources", 1, "id-1"),
        ("pages.json[0].resources", 2, "id-2"),
        ("pages.json[1].resources", 0, "id-3"),
        ("pages.json[1].resources", 1, "id-4"),
        ("pages.json[2..3]", 2, "id-5"),
        ("pages.json[2..3]", 3, "id-6"),
    ]


@RAW
def test_pages_among_records_are_found_when_streamed(tmp_path, monkeypatch, raw):
    fleet = generate_fleet(40, seed=6).deployments
    content = [*fleet[:15], {"resources": fleet[15:30], "offset": 30}, 7, *fleet[30:]]
    path = write(tmp_path, "mixed.json", json.dumps(content, indent=1))
    whole = list(read_dump(path, page_size=10, raw=raw))
    monkeypatch.setattr(dumps, "WHOLE_FILE_LIMIT", 0)
    monkeypatch.setattr(dumps, "_CHUNK", 4096)
    streamed = list(read_dump(path, page_size=10, raw=raw))
    assert records_of(streamed) == records_of(whole) == [*fleet[:30], 7, *fleet[30:]]
    assert [(p.source, p.first_index) for p in streamed] == [
        (p.source, p.first_index) for p in whole
    ]
    assert [p.source for p in whole][:4] == [
        "mixed.json[0..9]",
        "mixed.json[10..14]",
        "mixed.json[15].resources",
        "mixed.json[15].resources",
    ]


def test_ndjson_records_point_at_their_line(tmp_path):
    lines = [orjson.dumps(r).decode() for r in RECORDS[:3]]
    lines += ["", orjson.dumps(RECORDS[3]).decode()]
    lines += [orjson.dumps({"resources": RECORDS[4:], "offset": 7}).decode()]
    path = write(tmp_path, "dump.ndjson", "\n".join(lines) + "\n")
    pages = list(read_dump(path, page_size=2))
    assert records_of(pages) == RECORDS
    assert located(pages) == [
        ("dump.ndjson:lines 1-2", 1, "id-0"),
        ("dump.ndjson:lines 1-2", 2, "id-1"),
        ("dump.ndjson:lines 3-3", 3, "id-2"),
        ("dump.ndjson:lines 5-5", 5, "id-3"),
        ("dump.ndjson:line 6.resources", 0, "id-4"),
        ("dump.ndjson:line 6.resources", 1, "id-5"),
        ("dump.ndjson:line 6.resources", 2, "id-6"),
    ]


def test_ndjson_is_recognised_without_its_extension(tmp_path):
    path = write(tmp_path, "dump.json", "\n".join(orjson.dumps(r).decode() for r in RECORDS))
    assert records_of(read_dump(path)) == RECORDS


def test_single_line_ndjson_file(tmp_path):
    path = write(tmp_path, "one.jsonl", orjson.dumps(RECORDS[0]))
    assert records_of(read_dump(path)) == [RECORDS[0]]


@RAW
def test_byte_order_mark_and_empty_array(tmp_path, raw):
    path = write(tmp_path, "bom.json", b"\xef\xbb\xbf" + orjson.dumps(RECORDS))
    assert records_of(read_dump(path, raw=raw)) == RECORDS
    assert list(read_dump(write(tmp_path, "empty.json", " [ ] "), raw=raw)) == []


@RAW
def test_records_that_are_not_objects_pass_through_to_be_rejected(tmp_path, raw):
    path = write(tmp_path, "odd.json", '[1, "x", null, [2]]')
    assert records_of(read_dump(path, raw=raw)) == [1, "x", None, [2]]


@RAW
@pytest.mark.parametrize("pretty", [False, True])
def test_streamed_arrays_equal_whole_file_parsing(tmp_path, monkeypatch, pretty, raw):
    fleet = generate_fleet(60, seed=5)
    content = json.dumps(fleet.deployments, indent=2 if pretty else None, ensure_ascii=False)
    path = write(tmp_path, "big.json", content)
    whole = list(read_dump(path, page_size=25, raw=raw))
    monkeypatch.setattr(dumps, "WHOLE_FILE_LIMIT", 0)
    monkeypatch.setattr(dumps, "_CHUNK", 997)  # records straddle every chunk boundary
    streamed = list(read_dump(path, page_size=25, raw=raw))
    assert [(p.source, p.first_index) for p in streamed] == [
        (p.source, p.first_index) for p in whole
    ]
    assert records_of(streamed) == records_of(whole) == fleet.deployments


@RAW
def test_escaped_quotes_and_backslash_runs_split_like_whole_file_parsing(
    tmp_path, monkeypatch, raw
):
    # Strings full of what the chunk scan must not read as structure: escaped quotes after
    # runs of backslashes (odd and even, some longer than the scan's 64-byte look-back),
    # brackets and commas inside strings.
    tricky = ['\\"', '\\\\"', "\\" * 70 + '"', "\\" * 71, '"},{"', "]]}}", '{"a": [1, "\\"]}']
    records = [
        {
            "id": f"d{i}",
            "annotations": {f"k{j}": tricky[(i + j) % len(tricky)] * (j + 1) for j in range(7)},
        }
        for i in range(300)
    ]
    path = write(tmp_path, "tricky.json", json.dumps(records))
    whole = records_of(read_dump(path, raw=raw))
    monkeypatch.setattr(dumps, "WHOLE_FILE_LIMIT", 0)
    monkeypatch.setattr(dumps, "_CHUNK", 1009)
    monkeypatch.setattr(dumps, "_TAIL", 700)
    assert records_of(read_dump(path, raw=raw)) == whole == records


def test_a_sandbox_dump_exports(tmp_path):
    fleet = generate_fleet(120, seed=2, canary_secret="CANARY-DUMP-SECRET")
    path = write(tmp_path, "fleet.json", fleet_dump_bytes(fleet))
    result = export_snapshot(read_dump(path), tmp_path / "out")
    assert result.rows["deployments"] + result.rejected == 120
    for part in (tmp_path / "out").rglob("*"):
        if part.is_file():
            assert b"CANARY-DUMP-SECRET" not in part.read_bytes()


# --- bad input ----------------------------------------------------------------------------


BAD_DUMPS = [
    ("empty.json", b"", "the file is empty"),
    ("blank.json", b"  \n\t\n", "the file is empty"),
    ("text.json", b"hello", "not JSON at line 1 column 1"),
    ("broken.json", b'[{"id": "a"},\n {"id": }]', "not JSON at line 2"),
    ("number.json", b"42", "got a number"),
    ("string.json", b'"deployments"', "got a string"),
    ("null.json", b"null", "got null"),
    ("object.json", b'{\n "id": "a"\n}', 'got an object without "resources"'),
    ("resources.json", b'{"resources": {"id": "a"}, "offset": 0}', ".resources must be an array"),
    ("inner.json", b'[{"resources": 5}]', "inner.json[0].resources must be an array"),
    ("trailing.json", b'[{"id": "a"}] [1]', "not JSON at line 1"),
    ("latin1.json", b'["caf\xe9"]', "not UTF-8"),
    ("bad.ndjson", b'{"id": "a"}\n{"id": \n', "not JSON at line 2"),
    # issue 13, row 10: nesting deeper than the parsers go (was a RecursionError)
    ("deep.json", b"[" * 100_000, "depth limit exceeded"),
    ("deep-closed.json", b"[" * 100_000 + b"]" * 100_000, "depth limit exceeded"),
    ("deep-record.json", b'[{"id": "a", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]", "depth"),
    ("deep.ndjson", b'{"id": "a"}\n' + b"[" * 100_000 + b"\n", "not JSON at line 2"),
]


@RAW
@pytest.mark.parametrize(("name", "content", "message"), BAD_DUMPS, ids=[b[0] for b in BAD_DUMPS])
def test_bad_dumps_are_one_line_errors_naming_the_file(tmp_path, name, content, message, raw):
    path = write(tmp_path, name, content)
    with pytest.raises(DumpError) as info:
        list(read_dump(path, raw=raw))
    text = str(info.value)
    assert message in text
    assert str(path) in text
    assert "\n" not in text
    assert isinstance(info.value, DimsError)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'[{"id": "a"}, {"id": "b"', "not JSON at line 1"),
        (b'[{"id": "a"}\n\n {"id": "b"}]', "line 3 column 2: expected ',' or ']'"),
        (b'[{"id": "a"}, ]', "not JSON at line 1"),
        (b'[{"id": "a"}] trailing', "unexpected data after the array"),
        (b'[{"id": "a"},\n{"id": tru}]', "not JSON at line 2"),
        (b"[" * 100_000, "nested too deeply|depth limit exceeded"),
    ],
)
@RAW
def test_bad_streamed_arrays(tmp_path, monkeypatch, content, message, raw):
    monkeypatch.setattr(dumps, "WHOLE_FILE_LIMIT", 0)
    monkeypatch.setattr(dumps, "_CHUNK", 5)
    path = write(tmp_path, "s.json", content)
    with pytest.raises(DumpError, match=message):
        list(read_dump(path, raw=raw))


def test_missing_file(tmp_path):
    with pytest.raises(DumpError, match=r"cannot read dump .*nope.json: No such file"):
        read_dump(tmp_path / "nope.json")


def test_shape_errors_come_before_the_first_page(tmp_path):
    path = write(tmp_path, "n.json", "42")
    with pytest.raises(DumpError):
        read_dump(path)  # no iteration needed


# --- the record size limit (issue 13, row 11) ------------------------------------------------

LIMIT = 10_000
SMALL = {"id": "small", "name": "fits"}
HUGE = {"id": "huge", "name": "x" * (3 * LIMIT)}


def array_with_a_huge_record(tmp_path: Path) -> Path:
    return write(tmp_path, "huge.json", json.dumps([SMALL, SMALL, HUGE, SMALL]))


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_a_record_over_the_size_limit_is_a_one_line_error(tmp_path, monkeypatch, streamed):
    """Read as text (raw, or in chunks), a record over the limit stops the reading there."""
    path = array_with_a_huge_record(tmp_path)
    if streamed:
        monkeypatch.setattr(dumps, "WHOLE_FILE_LIMIT", 0)
        monkeypatch.setattr(dumps, "_CHUNK", 997)
    for raw in [True, False] if streamed else [True]:
        with pytest.raises(DumpError) as info:
            list(read_dump(path, raw=raw, max_record_bytes=LIMIT))
        text = str(info.value)
        assert str(path) in text and "element 2" in text and "\n" not in text
        assert "larger than 10,000 bytes (the record size limit" in text
        assert records_of(read_dump(path, raw=raw, max_record_bytes=4 * LIMIT))[2] == HUGE


def test_an_ndjson_line_over_the_size_limit_is_a_one_line_error(tmp_path):
    lines = [json.dumps(r) for r in (SMALL, HUGE, SMALL)]
    path = write(tmp_path, "huge.ndjson", "\n".join(lines) + "\n")
    with pytest.raises(DumpError, match=r"huge.ndjson: line 2 is larger than 10,000 bytes"):
        list(read_dump(path, max_record_bytes=LIMIT))
    assert len(records_of(read_dump(path, max_record_bytes=4 * LIMIT))) == 3


def test_a_huge_string_is_never_held_whole(tmp_path, monkeypatch):
    """A 48 MiB string, a 1 MiB limit: the reading stops with a few chunks in memory (Python's
    own allocations, traced), never the whole string (row 11: 1 GiB took 9.4 GB)."""
    import tracemalloc

    monkeypatch.setattr(dumps, "WHOLE_FILE_LIMIT", 1024)
    monkeypatch.setattr(dumps, "_CHUNK", 1024 * 1024)
    size = 48 * 1024 * 1024
    path = tmp_path / "one-huge-string.json"
    with path.open("w") as fh:
        fh.write(json.dumps([SMALL])[:-1] + ', {"id": "huge", "name": "')
        for _ in range(size // 65536):
            fh.write("y" * 65536)
        fh.write('"}, ' + json.dumps(SMALL) + "]")
    tracemalloc.start()
    try:
        with pytest.raises(DumpError, match=r"element 1 .* larger than 1,048,576 bytes"):
            list(read_dump(path, raw=True, max_record_bytes=1024 * 1024))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < size // 3  # a few chunks of reading, not the string


# --- pipes (issue 13, row 12) -----------------------------------------------------------------


def fill_fifo(fifo: Path, content: bytes) -> subprocess.Popen:
    """A writer in its own process (opening a FIFO blocks until a reader comes)."""
    source = fifo.with_suffix(".source")
    source.write_bytes(content)
    code = "import sys; open(sys.argv[2], 'wb').write(open(sys.argv[1], 'rb').read())"
    return subprocess.Popen([sys.executable, "-c", code, str(source), str(fifo)])


@pytest.mark.parametrize("name", ["dump.json", "dump.ndjson", "63"])
def test_a_named_pipe_is_read_once_like_a_file(tmp_path, name, monkeypatch):
    private = tmp_path / "tmp"  # the copy's folder, apart from other tests' copies
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    fifo = tmp_path / name
    os.mkfifo(fifo)
    content = "\n".join(json.dumps(r) for r in RECORDS) if name != "dump.json" else RECORDS
    writer = fill_fifo(
        fifo, (content if isinstance(content, str) else json.dumps(content)).encode()
    )
    try:
        pages = within(lambda: list(read_dump(fifo, page_size=3, raw=True)))
    finally:
        writer.wait(timeout=60)
    assert records_of(pages) == RECORDS
    assert pages[0].source.startswith(name)  # the pipe's name, not the copy's
    assert list(private.iterdir()) == []  # the copy was made there, and removed


def test_errors_in_a_piped_dump_name_the_pipe(tmp_path):
    fifo = tmp_path / "dump.json"
    os.mkfifo(fifo)
    writer = fill_fifo(fifo, b'[{"id": "a"},\n {"id": ]')
    try:
        with pytest.raises(DumpError) as info:
            within(lambda: list(read_dump(fifo, raw=True)))
    finally:
        writer.wait(timeout=60)
    assert str(info.value).startswith(f"{fifo}: not JSON at line 2")
