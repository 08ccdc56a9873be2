"""The compiled lane writes exactly the rows the careful reader writes, or gives way.

Every test flattens the same JSON twice: once as raw record text (`msgspec.Raw`, what
`read_dump(raw=True)` yields and `dims export --from-json` uses), which goes through the
compiled lane (`_gather.c`) with the careful reader as fallback, and once parsed by orjson,
which only the careful reader sees. Every table must be equal, rejected_records included, and
the compiled lane must actually take the ordinary records (or the speed-up is gone
unnoticed). Where `_gather.c` was not built the careful reader reads every record, and says
so once (the last tests here).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spec_records import ANY_JSON, hostile_records, valid_records
from test_properties import invalid_record

from dims import NotCompiledWarning
from dims._dumps import read_dump
from dims._pages import Page
from dims._snapshot import export_snapshot
from dims._tables import Flattener
from dims._tables import _gathered as gathered
from dims._tables import _rules as t
from dims._tables._layout import Layout
from dims._tables._typed import EXPECTED_EXTRAS, UnknownFields, shape_type
from dims.sandbox import fleet_dump_bytes, generate_fleet

AT = datetime(2025, 6, 1, 12, tzinfo=UTC)
RAW_ARRAY = msgspec.json.Decoder(list[msgspec.Raw])
DIMS = Path(sys.executable).parent / "dims"


def flatten_both(
    data: bytes, *, include_env_values: bool = False, deployment_type: str | None = "prod"
) -> tuple[dict[str, pa.Table], dict[str, pa.Table], Flattener]:
    """(tables from raw text, tables from parsed records, the raw flattener)."""
    out = []
    for records in (RAW_ARRAY.decode(data), orjson.loads(data)):
        flattener = Flattener(snapshot_at=AT, include_env_values=include_env_values)
        flattener.add_page(Page(records, source="test", deployment_type=deployment_type))
        out.append((flattener.take(), flattener))
    (typed, typed_flattener), (careful, _) = out
    return typed, careful, typed_flattener


def assert_same_tables(typed: dict[str, pa.Table], careful: dict[str, pa.Table]) -> None:
    assert typed.keys() == careful.keys()
    for name, table in careful.items():
        assert typed[name].schema == table.schema, name
        assert typed[name].to_pylist() == table.to_pylist(), name


# --- the sandbox fleet: every awkward value it has ------------------------------------------


@pytest.mark.parametrize("include_env_values", [False, True])
def test_fleet_reads_the_same_and_mostly_typed(include_env_values):
    fleet = generate_fleet(1500, seed=3, canary_env_value="env-canary-value")
    typed, careful, flattener = flatten_both(
        fleet_dump_bytes(fleet), include_env_values=include_env_values
    )
    assert_same_tables(typed, careful)
    assert typed["deployments"].num_rows == 1500
    assert typed["deployment_container_env"].num_rows > 0
    # Every record the careful reader accepts, unknown fields or not, takes the fast path.
    assert flattener.typed_records == 1500


def test_expected_extras_stay_typed_and_land_in_unknown_fields():
    record = generate_fleet(1, seed=1).deployments[0]
    record["status"] = "READY"
    record["source"] = {"kind": "github", "n": 3}
    record["source_config"]["deployment_type"] = "dev_zero"
    data = orjson.dumps([record])
    typed, careful, flattener = flatten_both(data)
    assert_same_tables(typed, careful)
    assert flattener.typed_records == 1
    row = typed["deployments"].to_pylist()[0]
    assert row["deployment_type"] == "dev_zero"  # the record's own type wins over the listing
    assert orjson.loads(row["unknown_fields_json"]) == {
        "status": "READY",
        "source": {"kind": "github", "n": 3},
        "source_config.deployment_type": "dev_zero",
    }
    # status is text, so it is a column too; a source that is not text stays JSON only
    assert (row["status"], row["source"]) == ("READY", None)
    assert set(EXPECTED_EXTRAS) == {"Deployment", "SourceConfig"}


def test_a_real_shaped_fleet_reads_the_same_all_typed_with_status_and_source_columns():
    fleet = generate_fleet(600, seed=5, real_shaped=True)
    typed, careful, flattener = flatten_both(fleet_dump_bytes(fleet), deployment_type=None)
    assert_same_tables(typed, careful)
    rows = typed["deployments"].to_pylist()
    assert [(r["status"], r["source"]) for r in rows] == [
        (d["status"], d["source"]) for d in fleet.deployments
    ]
    assert {r["deployment_type"] for r in rows} >= {"dev_plus", None, "prod"}
    # the fields the real service sends, and fields nobody declared, never cost the fast path
    assert any("future_flag" in str(r["unknown_fields_json"]) for r in rows)
    assert flattener.typed_records == 600


def _add_unknown_fields_everywhere(record: dict[str, Any], n: int) -> None:
    """Fields a newer service might add, at every level the careful reader looks at."""
    record[f"revision_count_{n % 3}"] = n
    source_config = record.get("source_config")
    if not isinstance(source_config, dict):
        return
    source_config["region"] = {"name": "eu-west-1", "zones": [n, "b"]}
    spec_ = source_config.get("resource_spec")
    if not isinstance(spec_, dict):
        return
    spec_["gpu"] = n % 2
    for key in ("volumes", "volume_mounts", "image_pull_secrets"):
        for item in spec_.get(key) or ():
            item["added_in_v2"] = [n]
    for container in [*(spec_.get("sidecars") or ()), *(spec_.get("init_containers") or ())]:
        container["startupProbe"] = {"period": n}
        (container.get("resources") or {})["claims"] = [{"name": "gpu"}]
        for entry in container.get("env") or ():
            entry["secretish"] = f"maybe-a-secret-{n}"  # inside an env entry: redacted
        for mount in container.get("volumeMounts") or ():
            mount["recursiveReadOnly"] = "Enabled"  # inside JSON text: stays there
    for secret in record.get("secrets") or ():
        secret["rotated_at"] = f"hidden-{n}"  # inside a secret entry: redacted


def test_unknown_fields_at_every_level_stay_on_the_fast_path_and_read_the_same():
    fleet = generate_fleet(400, seed=9, real_shaped=True, canary_env_value="env-canary")
    for n, record in enumerate(fleet.deployments):
        if n % 3 == 0:
            _add_unknown_fields_everywhere(record, n)
    for include_env_values in (False, True):
        typed, careful, flattener = flatten_both(
            fleet_dump_bytes(fleet), include_env_values=include_env_values
        )
        assert_same_tables(typed, careful)
        # every record that the careful reader accepts, the fast reader takes
        assert flattener.typed_records == typed["deployments"].num_rows
    unknown = [
        orjson.loads(r or "{}") for r in typed["deployments"]["unknown_fields_json"].to_pylist()
    ]
    paths = {path for fields in unknown for path in fields}
    assert "source_config.resource_spec.gpu" in paths
    assert any(p.endswith("].env[0].secretish") for p in paths)
    assert all(
        "hidden-" not in str(v) and "maybe-a-secret" not in str(v)
        for u in unknown
        for v in u.values()
    )
    assert not any("recursiveReadOnly" in p for p in paths)


# --- generated records: valid, invalid, and with unknown fields anywhere -----------------------


def _with_extras(record: Any, extras: list[tuple[str, Any]]) -> Any:
    """The record with unknown or expected-extra keys added at their dotted paths."""
    if not isinstance(record, dict):
        return record
    out = copy.deepcopy(record)
    for path, value in extras:
        *parents, key = path.split(".")
        target = out
        for parent in parents:  # as deep as the record's objects go
            if not isinstance(target.get(parent), dict):
                break
            target = target[parent]
        target[key] = value
    return out


EXTRA_KEYS = st.sampled_from(
    [
        "status",
        "source",
        "source_config.deployment_type",
        "source_config.future_flag",
        "source_config.resource_spec.gpu",
        "source_config.listener_config.zone",
        "zz",
    ]
)


@given(
    good=st.lists(valid_records(), max_size=3),
    bad=st.lists(invalid_record(), max_size=2),
    extras=st.lists(st.tuples(EXTRA_KEYS, ANY_JSON), max_size=2),
    order=st.randoms(use_true_random=False),
    include_env_values=st.booleans(),
)
def test_generated_records_read_the_same_both_ways(good, bad, extras, order, include_env_values):
    records = [*good, *(record for record, _ in bad)]
    if records and extras:
        records[0] = _with_extras(records[0], extras)
    order.shuffle(records)
    try:
        data = orjson.dumps(records)
    except TypeError:  # an integer orjson cannot write: no such dump exists
        return
    typed, careful, _ = flatten_both(data, include_env_values=include_env_values)
    assert_same_tables(typed, careful)


@given(
    good=st.lists(hostile_records(), max_size=4),
    bad=st.lists(invalid_record(), max_size=2),
    order=st.randoms(use_true_random=False),
    ascii_only=st.booleans(),
    include_env_values=st.booleans(),
)
def test_records_the_spec_admits_read_the_same_both_ways(
    good, bad, order, ascii_only, include_env_values
):
    """Records drawn the spec's way, off the sandbox's path (tests/spec_records.py HOSTILE:
    numbers over the float range and integers past 64 bits, terminal control and bidi in
    text, free-form objects of any shape, both spellings of a field, fields the spec does not
    name at every level), and invalid ones among them: the fast lane and the careful reader
    give identical tables, rejected_records included. The dump is the standard library's
    JSON (orjson cannot write an integer past 64 bits), escaped to ASCII or raw UTF-8."""
    records = [*good, *(record for record, _ in bad)]
    order.shuffle(records)
    data = json.dumps(records, ensure_ascii=ascii_only).encode()
    typed, careful, _ = flatten_both(data, include_env_values=include_env_values)
    assert_same_tables(typed, careful)
    assert typed["rejected_records"].num_rows >= len(bad)


# --- values where the two parsers differ --------------------------------------------------------


def test_integers_beyond_64_bits_in_free_form_json_take_the_careful_path():
    """msgspec keeps 2**70 exact, orjson reads it as a float: the careful text is kept."""
    record = generate_fleet(1, seed=1).deployments[0]
    data = orjson.dumps([record]).replace(
        b'"labels":{', b'"labels":{"huge":1180591620717411303424,', 1
    )
    typed, careful, flattener = flatten_both(data)
    assert_same_tables(typed, careful)
    assert flattener.typed_records == 0
    labels = {row["key"]: row["value"] for row in typed["deployment_labels"].to_pylist()}
    assert labels["huge"] == "1.1805916207174113e+21"


@pytest.mark.parametrize(
    ("field", "text"),
    [
        ("created_at", b'"2025-06-01"'),  # a date only: the careful conversion decides
        ("created_at", b'"not a date"'),  # rejected with its reason
        ("created_at", b'"2016-12-31T23:59:60Z"'),  # a leap second: second 59
        ("created_at", b'"2016-12-31T12:00:60Z"'),  # no leap second there: rejected
        ("updated_at", b'"0001-01-01T00:00:00+01:00"'),  # year 0 in UTC: rejected
        ("updated_at", b'"9999-12-31T23:59:59-01:00"'),  # year 10000 in UTC: rejected
        ("name", b"null"),
        ("name", b"3"),
        ("latest_revision_id", b"true"),
    ],
)
def test_odd_values_read_the_same(field, text):
    record = generate_fleet(1, seed=2).deployments[0]
    record[field] = "@@"
    data = orjson.dumps([record]).replace(b'"@@"', text)
    typed, careful, _ = flatten_both(data)
    assert_same_tables(typed, careful)


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("2016-12-31T23:59:60Z", datetime(2016, 12, 31, 23, 59, 59, tzinfo=UTC)),
        ("2016-12-31T23:59:60.250Z", datetime(2016, 12, 31, 23, 59, 59, 250000, tzinfo=UTC)),
        ("2016-12-31T15:59:60-08:00", datetime(2016, 12, 31, 23, 59, 59, tzinfo=UTC)),
        ("2016-12-31 23:59:60.5+00:00", datetime(2016, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)),
    ],
)
def test_a_leap_second_is_second_59_in_every_reader(text, stored):
    """Issue 27, item 5: RFC 3339's leap second no longer rejects the record."""
    record = generate_fleet(1, seed=2).deployments[0]
    record["created_at"] = text
    typed, careful, flattener = flatten_both(orjson.dumps([record]))
    assert_same_tables(typed, careful)
    assert flattener.typed_records == 1 and typed["rejected_records"].num_rows == 0
    assert typed["deployments"]["created_at"].to_pylist() == [stored]


@pytest.mark.parametrize(
    "text",
    [
        "0001-01-01T00:00:00+01:00",  # 0000-12-31T23:00:00Z
        "9999-12-31T23:59:59-01:00",  # 10000-01-01T00:59:59Z
        "0001-01-01T00:59:60+01:00",  # a leap second in year 0
        "0001-01-01T00:00:00.5+00:01",
    ],
)
def test_an_instant_outside_years_1_to_9999_is_refused_with_its_reason(tmp_path, text):
    """Issue 27, item 5: such a date-time was exported, and reading the table back
    (`to_pylist`, pandas objects) raised. Now the record is rejected saying why."""
    records = [generate_fleet(1, seed=i).deployments[0] for i in range(3)]
    records[1]["updated_at"] = text
    typed, careful, _ = flatten_both(orjson.dumps(records))
    assert_same_tables(typed, careful)
    (rejected,) = typed["rejected_records"].to_pylist()
    assert rejected["record_index"] == 1
    assert (
        rejected["reason"]
        == f"updated_at: date-time outside years 1-9999 in UTC, got string {text!r}"
    )
    path = tmp_path / "dump.json"
    path.write_bytes(orjson.dumps(records))
    result = export_snapshot(read_dump(path, raw=True), tmp_path / "out")
    assert (result.records, result.rejected) == (3, 1)
    for part in (tmp_path / "out").glob("*/*/*.parquet"):
        pq.read_table(part).to_pylist()  # every timestamp reads back as a Python datetime


def test_quantities_kubernetes_refuses_are_null_in_every_lane_and_counted():
    """Issue 27, item 4: "١٢", "٣Gi", "２", " 2 " are no quantities: the container's row
    stays, those columns are null (never 0), the rest is read, and every lane counts them."""
    record = _busy_record_with_sidecar()
    sidecar = record["source_config"]["resource_spec"]["sidecars"][0]
    sidecar["resources"] = {
        "requests": {"cpu": "١٢", "memory": "٣Gi"},
        "limits": {"cpu": "２", "memory": "1k"},
    }
    record["source_config"]["resource_spec"]["init_containers"] = [
        {"name": "spaced", "resources": {"requests": {"cpu": " 2 "}, "limits": {"cpu": "3"}}}
    ]
    typed, careful, flattener = flatten_both(orjson.dumps([record]))
    assert_same_tables(typed, careful)
    assert flattener.typed_records == 1
    rows = {r["name"]: r for r in typed["deployment_containers"].to_pylist()}
    sidecar_row, init_row = rows[sidecar["name"]], rows["spaced"]
    assert [sidecar_row[c] for c in ("cpu_request", "memory_request_mb", "cpu_limit")] == [None] * 3
    assert sidecar_row["memory_limit_mb"] == pytest.approx(1000 / 2**20)  # 1k is 1000 bytes
    assert (init_row["cpu_request"], init_row["cpu_limit"]) == (None, 3.0)
    assert orjson.loads(sidecar_row["resources_requests_json"]) == {"cpu": "١٢", "memory": "٣Gi"}
    assert flattener.counts["unreadable_quantities"] == 4


def _busy_record_with_sidecar() -> dict[str, Any]:
    records = generate_fleet(40, seed=7).deployments
    return next(
        r
        for r in records
        if ((r.get("source_config") or {}).get("resource_spec") or {}).get("sidecars")
    )


@pytest.mark.parametrize("text", [b"1e999", b"-1e400"])
def test_a_record_only_a_full_parse_rejects_is_kept_aside_not_fatal(tmp_path, text):
    """Issue 13, row 13: one such record must not abort the export of the others."""
    records = [generate_fleet(1, seed=i).deployments[0] for i in range(3)]
    records[1]["source_config"]["resource_spec"]["cpu"] = "@@"
    records[1]["secrets"] = [{"name": "TOKEN", "value": "secret-ish canary value"}]
    path = tmp_path / "dump.json"
    path.write_bytes(orjson.dumps(records).replace(b'"@@"', text))
    result = export_snapshot(read_dump(path, raw=True), tmp_path / "out")
    assert (result.records, result.rejected) == (3, 1)
    out = tmp_path / "out"
    rejected = pq.read_table(next((out / "rejected_records").glob("*/*.parquet"))).to_pylist()
    assert [(r["source"], r["record_index"]) for r in rejected] == [("dump.json[0..2]", 1)]
    assert rejected[0]["reason"].startswith("record: not valid JSON (")
    assert rejected[0]["record_json"] is None  # text that cannot be parsed cannot be redacted
    assert b"secret-ish" not in b"".join(p.read_bytes() for p in out.rglob("*.parquet"))
    ids = pq.read_table(next((out / "deployments").glob("*/*.parquet")))["id"].to_pylist()
    assert ids == [records[0]["id"], records[2]["id"]]


def test_raw_dump_pages_and_records_mix(tmp_path):
    """An array may hold records and list-deployments pages: pages are found in raw mode."""
    fleet = generate_fleet(6, seed=4).deployments
    page = {"resources": fleet[3:6], "offset": 3, "limit": 3}
    path = tmp_path / "mixed.json"
    path.write_bytes(orjson.dumps([*fleet[:3], page]))
    pages = list(read_dump(path, raw=True))
    assert [type(r) for r in pages[0].records] == [msgspec.Raw] * 3
    assert pages[1].records == fleet[3:6] and pages[1].source == "mixed.json[3].resources"


# --- the scan for unknown fields (_unknownkeys.c): what it finds, and where it is not sure ---

SCAN_CASES = {
    # (what replaces the record's opening brace, whether the scan is sure of the record)
    "plain unknown fields": (b'{"zz":[1,{"a":"x\\"}]"}],"yy":null,', True),
    "a key given twice": (b'{"zz":1,"zz":{"b":2},', True),
    "an escaped unknown key": (b'{"future\\u005fflag":1,', False),
    "an escaped key spelling a known one": (b'{"na\\u006de":"x",', False),
    "a value only orjson refuses": (b'{"zz":1e999,', True),
    "a repeated object it looks inside": (b'{"source_config":{"q":1},', False),
    "whitespace everywhere": (b'{ "zz" :\n [ 1 , 2 ]\t,\r\n', True),
    "a key that is not UTF-8": (b'{"z\xffz":1,', False),
}


@pytest.mark.parametrize("case", SCAN_CASES)
def test_the_scan_for_unknown_fields_reads_the_same_or_gives_way(case):
    prefix, sure = SCAN_CASES[case]
    record = generate_fleet(1, seed=4, real_shaped=True).deployments[0]
    record["secrets"] = [{"name": "TOKEN", "value": "v", "rotated": "hidden-value"}]
    record["source_config"]["resource_spec"]["gpu_v2"] = {"count": 1}
    data = b"[" + prefix + orjson.dumps(record)[1:] + b"]"
    try:
        typed, careful, _ = flatten_both(data)
    except orjson.JSONDecodeError:  # only the raw side can read this dump: it rejects it
        flattener = Flattener(snapshot_at=AT)
        flattener.add_page(Page(RAW_ARRAY.decode(data), source="t"))
        rejected = flattener.take()["rejected_records"].to_pylist()
        assert [r["reason"].split(" (")[0] for r in rejected] == ["record: not valid JSON"]
        assert flattener.typed_records == 0
    else:
        assert_same_tables(typed, careful)
    found = UnknownFields(Layout(include_env_values=False)).find(RAW_ARRAY.decode(data)[0])
    assert (found is not None) is sure
    if case == "plain unknown fields":
        assert found is not None
        paths = {path: sensitive for path, _, _, sensitive in found}
        assert paths == {
            "zz": False,
            "yy": False,
            "source_config.resource_spec.gpu_v2": False,
            "secrets[0].rotated": True,
        }
        unknown = orjson.loads(typed["deployments"]["unknown_fields_json"][0].as_py())
        assert unknown["zz"] == [1, {"a": 'x"}]'}]
        assert unknown["secrets[0].rotated"] != "hidden-value"


SCANNED = orjson.dumps(
    {
        **generate_fleet(1, seed=6, real_shaped=True).deployments[0],
        "zz": {"a": ['x"]\\', 1.5, None]},
        "secrets": [{"name": "T", "value": "v", "rotated": "hidden"}],
    }
)
JSON_BYTES = st.sampled_from(list(b'{}[]",:\\ \n0123456789eE-+.aflnrstu\xff\x00'))


@settings(max_examples=400, deadline=None)
@given(
    edits=st.lists(
        st.tuples(st.integers(0, len(SCANNED) - 1), st.lists(JSON_BYTES, max_size=4)),
        min_size=1,
        max_size=4,
    )
)
def test_the_scan_of_damaged_text_finds_what_a_parse_finds_or_gives_way(edits):
    """Bytes replaced anywhere in a record: the scan never reads past the text or crashes,
    and when it is sure of text that parses, it names the fields the orjson walk names."""
    text = bytearray(SCANNED)
    for at, replacement in edits:
        text[at : at + len(replacement) or at + 1] = bytes(replacement)
    raw = msgspec.Raw(bytes(text))
    unknown_fields = UnknownFields(Layout(include_env_values=False))
    found = unknown_fields.find(raw)
    try:
        parsed = orjson.loads(bytes(text))
        walked: dict[str, Any] = {}
        unknown_fields.collect(raw, walked)
    except (orjson.JSONDecodeError, AttributeError, TypeError):
        return  # not a record the lenient Structs would take: the careful reader's
    if found is not None and isinstance(parsed, dict):
        scanned: dict[str, Any] = {}
        unknown_fields.parse(raw, found, scanned)
        assert scanned == walked


def test_the_scan_is_sure_of_ordinary_text_escapes_included():
    """Escaped quotes and backslashes in values: the scan reads them (giving way on them
    would quietly cost the fast path its speed)."""
    found = UnknownFields(Layout(include_env_values=False)).find(msgspec.Raw(SCANNED))
    assert found is not None
    assert {path for path, *_ in found} >= {"zz", "secrets[0].rotated"}


def test_the_scan_names_items_past_the_ninth_as_the_parse_does():
    """Item paths with indices of several digits (`secrets[10].x`, `secrets[123].x`)."""
    record = generate_fleet(1, seed=6, real_shaped=True).deployments[0]
    record["secrets"] = [{"name": f"S{i}", "value": "v", "x": i} for i in range(124)]
    raw = msgspec.Raw(orjson.dumps(record))
    unknown_fields = UnknownFields(Layout(include_env_values=False))
    found = unknown_fields.find(raw)
    assert found is not None
    scanned: dict[str, Any] = {}
    walked: dict[str, Any] = {}
    unknown_fields.parse(raw, found, scanned)
    unknown_fields.collect(raw, walked)
    assert scanned == walked
    assert {"secrets[0].x", "secrets[9].x", "secrets[10].x", "secrets[123].x"} <= set(scanned)


def test_only_records_with_unknown_fields_are_scanned(monkeypatch):
    """The strict decode says whether a record has fields the spec does not name; the
    scan runs only for those (it walks every byte: most records need no such walk)."""
    scanned: list[int] = []
    find = UnknownFields.find

    def counting(self: UnknownFields, raw: msgspec.Raw) -> Any:
        scanned.append(len(raw))
        return find(self, raw)

    records = generate_fleet(40, seed=3).deployments
    for record in records[:10]:
        record["source_config"]["future_flag"] = True
    raws = RAW_ARRAY.decode(orjson.dumps(records))
    walk = UnknownFields(Layout(include_env_values=False))
    with_unknown = []
    for raw in raws:  # the careful walk says which records have unknown fields
        found: dict[str, Any] = {}
        walk.collect(raw, found)
        with_unknown.append(bool(found))
    assert with_unknown[:10] == [True] * 10 and not all(with_unknown)
    monkeypatch.setattr(UnknownFields, "find", counting)
    flattener = Flattener(snapshot_at=AT)
    flattener.add_page(Page(raws, source="t"))
    tables = flattener.take()
    assert flattener.typed_records == 40
    assert scanned == [len(raw) for raw, has in zip(raws, with_unknown, strict=True) if has]
    unknown = tables["deployments"]["unknown_fields_json"].to_pylist()
    assert all("source_config.future_flag" in u for u in unknown[:10])


def test_a_scan_that_sees_no_unknown_field_the_decode_refused_gives_way_to_a_parse(monkeypatch):
    """Should the scan ever miss a field the strict Structs refuse, the record's unknown
    fields come from one parse of it, not from the scan's empty answer."""
    monkeypatch.setattr(UnknownFields, "find", lambda self, raw: [])
    record = generate_fleet(1, seed=3).deployments[0]
    record["source_config"]["future_flag"] = [1, 2]
    flattener = Flattener(snapshot_at=AT)
    flattener.add_page(Page(RAW_ARRAY.decode(orjson.dumps([record])), source="t"))
    unknown = flattener.take()["deployments"]["unknown_fields_json"][0].as_py()
    assert flattener.typed_records == 1
    assert orjson.loads(unknown)["source_config.future_flag"] == [1, 2]


# --- shapes the decode checks ---------------------------------------------------------------


def _shapes() -> list[tuple[str, Any]]:
    """Every free-form part's (name, shape) whose shape a msgspec type checks."""
    layout = Layout(False)
    plans = [layout.deployment_plan, layout.containers.plan, layout.env.plan]
    plans += [table.plan for table in layout.items.values()]
    found: dict[str, Any] = {}
    while plans:
        plan = plans.pop()
        for key, (op, _kind, _index, _nullable, extra) in plan.steps.items():
            if op == t.NESTED:
                plans.append(extra)
            elif op in (t.JSON, t.CHECK) and shape_type(extra) is not None:
                found[f"{plan.schema}.{key}"] = extra
    return sorted(found.items())


SHAPES = _shapes()


def test_the_decode_checks_the_shapes_of_the_real_service_parts():
    names = {name for name, _ in SHAPES}
    assert {"Container.command", "Container.envFrom", "Volume.configMap"} <= names


@settings(max_examples=300, deadline=None)
@given(shape=st.sampled_from(SHAPES), value=ANY_JSON)
def test_a_shape_type_accepts_what_the_careful_check_accepts(shape, value):
    """Where msgspec checks a part's shape in C, it accepts exactly the values the careful
    check accepts (null aside: the reader decides on it by the spec's nullability)."""
    name, extra = shape
    if value is None:
        return
    prop, must_object, _hide = extra
    try:
        t.check_shape(value, prop, must_object, name, False)
        careful = True
    except t.Reject:
        careful = False
    try:
        data = orjson.dumps(value)
    except TypeError:  # an integer orjson cannot write: no such dump exists
        return
    try:
        msgspec.json.decode(data, type=shape_type(extra))
        decoded = True
    except msgspec.ValidationError:
        decoded = False
    assert decoded == careful, (name, value)


# --- a build without the compiled lane -------------------------------------------------------


def test_without_the_compiled_lane_the_careful_reader_reads_every_record_and_says_so_once(
    monkeypatch: pytest.MonkeyPatch,
):
    """Where `_gather.c` was not built, raw records go to the careful reader: the same
    tables, none read by a fast lane, and one NotCompiledWarning a process, naming the
    module and the cost, however many Flatteners read raw records."""
    data = fleet_dump_bytes(generate_fleet(300, seed=5))
    compiled, careful, _ = flatten_both(data)
    monkeypatch.setattr(gathered, "gather", None)
    gathered.say_not_built.cache_clear()
    with pytest.warns(NotCompiledWarning) as said:
        without, _, flattener = flatten_both(data)
        flatten_both(data)
    assert_same_tables(without, careful)
    assert_same_tables(without, compiled)
    assert flattener.typed_records == 0
    assert len(said) == 1
    message = str(said[0].message)
    assert "_gather" in message and "careful reader" in message and "slowly" in message


def test_an_export_without_the_compiled_lane_writes_the_same_files_and_one_line(tmp_path):
    """The whole command where `_gather.c` is left out (`DIMS_NO_C`, as if no compiler was
    found at install): the same deployments file, and the notice is one stderr line."""
    dump = tmp_path / "dump.json"
    dump.write_bytes(fleet_dump_bytes(generate_fleet(200, seed=6)))
    files = {}
    for lane, left_out in (("compiled", ""), ("careful", "gather")):
        env = {**os.environ, "DIMS_NO_C": left_out}
        ran = subprocess.run(
            [DIMS, "export", "--from-json", dump, "--out", tmp_path / lane],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        said = [line for line in ran.stderr.splitlines() if "_gather" in line]
        assert len(said) == (1 if left_out else 0), ran.stderr
        (part,) = (tmp_path / lane / "deployments").rglob("*.parquet")
        files[lane] = pq.read_table(part).drop(["snapshot_at"]).to_pylist()
    assert files["careful"] == files["compiled"]
