"""Every deployment, or a loud error: listings as real services serve them, over loopback.

Each test runs a whole export (`take_snapshot`) against the sandbox behaving like a real
service in one way, and asserts the exact set of ids exported and the type of each, or the
error and that nothing was published.

| the service…                                        | outcome                                  |
|-----------------------------------------------------|------------------------------------------|
| caps pages below `limit`                            | every id once, one extra (empty) page    |
| has deployments no typed listing returns            | every id once, those with a null type    |
| answers the last page with an offset that does not  | every id once, one PagingWarning         |
| advance (echo, 0, one back)                         |                                          |
| ignores `offset` (first page again, offset grows)   | PaginationError, nothing published       |
| keeps answering past a ceiling                      | PaginationError, nothing published       |
| sends status, source, source_config.deployment_type | every id once, own type wins, columns    |
| (types newer than the spec included)                |                                          |
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import warnings

import orjson
import pandas as pd
import pytest

from dims import _fetch as fetch
from dims._connection import connect
from dims._errors import PaginationError
from dims._pages import own_type
from dims._snapshot import take_snapshot
from dims._storage import read_table
from dims.sandbox import Faults, generate_fleet, run_sandbox

N = 537  # not a multiple of any page size or cap below


def exported(out) -> dict[str, str | None]:
    """deployment id -> deployment_type, as read back from the Parquet snapshot."""
    frame = read_table(out, "deployments", columns=["id", "deployment_type"])
    assert frame["id"].is_unique
    return {
        row.id: None if pd.isna(row.deployment_type) else row.deployment_type
        for row in frame.itertuples()
    }


def expected_types(fleet) -> dict[str, str | None]:
    """What the export must say: the record's own type, else the listings', else none.

    A type the spec does not list (dev_plus) has no listing: only the record can name it.
    """
    out = {}
    for record in fleet.deployments:
        own = own_type(record)
        listed = fleet.deployment_types[record["id"]]
        listed = listed if listed in fetch.deployment_types() else None
        out[record["id"]] = own if own is not None else listed
    return out


def snapshot(sb, out, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = take_snapshot(connect(sb.base_url), out, **options)
    return result, caught


def nothing_published(out) -> bool:
    return not list(out.glob("*/snapshot_date=*/*.parquet"))


@pytest.mark.parametrize("cap", [25, 7])
def test_a_page_cap_below_limit_loses_nothing(tmp_path, cap):
    with run_sandbox(deployments=N, seed=11, faults=Faults(page_cap=cap)) as sb:
        result, _ = snapshot(sb, tmp_path, page_size=100)
        requests = sb.stats.requests["/v2/deployments"]
    assert exported(tmp_path) == expected_types(sb.fleet)
    assert result.records == N
    # every listing read whole: its pages plus the empty one that ends it; speculation
    # wastes at most a window (8) per listing at its end and once more when it re-aligns
    pages = -(-N // cap) + sum(-(-n // cap) for n in _type_sizes(sb.fleet).values())
    assert pages + 4 <= requests <= pages + 4 + 4 * 8 * 2


def _type_sizes(fleet) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for kind in fleet.deployment_types.values():
        if kind is not None:
            sizes[kind] = sizes.get(kind, 0) + 1
    return sizes


def test_deployments_no_typed_listing_returns_are_exported_with_a_null_type(tmp_path):
    fleet = generate_fleet(N, seed=12, untyped_every=10)
    untyped = {i for i, kind in fleet.deployment_types.items() if kind is None}
    assert len(untyped) == N // 10
    with run_sandbox(fleet=fleet) as sb:
        result, _ = snapshot(sb, tmp_path, page_size=50)
    got = exported(tmp_path)
    assert got == expected_types(fleet)
    assert {i for i, kind in got.items() if kind is None} == untyped
    assert f"none (no typed listing returned them): {len(untyped)}" in result.summary()


@pytest.mark.parametrize("final", ["echo", "zero", "back"])
def test_a_last_page_whose_offset_does_not_advance_loses_nothing(tmp_path, final):
    with run_sandbox(deployments=N, seed=13, faults=Faults(final_offset=final)) as sb:
        _, caught = snapshot(sb, tmp_path, page_size=40)
    assert exported(tmp_path) == expected_types(sb.fleet)
    paging = [w for w in caught if issubclass(w.category, fetch.PagingWarning)]
    # one warning per listing at most (the fleet and the three typed ones)
    assert 1 <= len(paging) <= 4
    assert "does not advance" in str(paging[0].message)


def test_a_service_that_ignores_offset_is_an_error_and_nothing_is_published(tmp_path):
    with run_sandbox(deployments=N, seed=14, faults=Faults(ignore_offset=True)) as sb:
        with pytest.raises(PaginationError, match="ignore `offset`"):
            snapshot(sb, tmp_path, page_size=20)
        # bounded: the first page, two stale pages, and the requests in flight
        assert sb.stats.requests["/v2/deployments"] <= 1 + 4 * (2 + 8)
    assert nothing_published(tmp_path)


def test_a_listing_past_its_ceiling_is_an_error_and_nothing_is_published(tmp_path):
    limits = fetch.FetchLimits(max_pages=5)
    with (
        run_sandbox(deployments=N, seed=15) as sb,
        pytest.raises(PaginationError, match="went past 5 pages"),
    ):
        snapshot(sb, tmp_path, page_size=20, limits=limits)
    assert nothing_published(tmp_path)


def test_real_shaped_records_keep_their_own_type_and_give_status_and_source_columns(tmp_path):
    fleet = generate_fleet(N, seed=16, real_shaped=True)
    with run_sandbox(fleet=fleet) as sb:
        result, _ = snapshot(sb, tmp_path, page_size=100)
    expected = expected_types(fleet)
    got = exported(tmp_path)
    assert got == expected
    # the shape really has all three kinds of type, and a type newer than the spec
    assert "dev_plus" in got.values() and None in got.values()
    own = sum(own_type(r) is not None for r in fleet.deployments)
    assert 0 < own < N
    assert f"from the record: {own:,}" in result.summary()
    frame = read_table(
        tmp_path, "deployments", columns=["id", "status", "source", "unknown_fields_json"]
    )
    by_id = {r["id"]: r for r in fleet.deployments}
    for row in frame.itertuples():
        record = by_id[row.id]
        assert (row.status, row.source) == (record["status"], record["source"])
        unknown = orjson.loads(row.unknown_fields_json)
        assert unknown["status"] == record["status"]
        source_config = record["source_config"]
        if isinstance(source_config, dict):  # null for a few odd records
            own = source_config["deployment_type"]
            assert unknown["source_config.deployment_type"] == own
        else:
            assert "source_config.deployment_type" not in unknown


def test_the_async_fetch_agrees_on_a_capped_partly_typed_fleet():
    fleet = generate_fleet(200, seed=17, untyped_every=7)
    with run_sandbox(fleet=fleet, faults=Faults(page_cap=9, final_offset="zero")) as sb:
        client = connect(sb.base_url)

        async def collect():
            return [p async for p in fetch.afetch_deployments(client, page_size=30)]

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fetch.PagingWarning)
            pages = asyncio.run(collect())
            sync_pages = list(fetch.fetch_deployments(client, page_size=30))
    for got in (pages, sync_pages):
        types = {r["id"]: p.type_of(r) for p in got for r in p.records}
        assert types == expected_types(fleet)
        assert sum(len(p.records) for p in got) == 200


def test_the_sandbox_command_serves_real_service_shapes_and_export_reads_them_whole(tmp_path):
    """`dims sandbox` with every shape at once, `dims export` against it, as a user would."""
    fleet = generate_fleet(60, seed=18, untyped_every=4, real_shaped=True)
    command = [
        sys.executable, "-m", "dims._cli", "sandbox", "--port", "0", "--deployments", "60",
        "--seed", "18", "--page-cap", "7", "--final-offset", "echo", "--untyped-every", "4",
        "--real-shaped",
    ]  # fmt: skip
    server = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        base_url = server.stdout.readline().split(" at ", 1)[1].strip()
        done = subprocess.run(
            [sys.executable, "-m", "dims._cli", "export", "--base-url", base_url,
             "--out", str(tmp_path), "--page-size", "20"],
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    assert done.returncode == 0, done.stderr
    assert exported(tmp_path) == expected_types(fleet)
    assert "does not advance" in done.stderr  # the one warning, as one line
    untyped = sum(kind is None for kind in expected_types(fleet).values())
    assert f"none (no typed listing returned them): {untyped}" in done.stdout


def test_an_integration_id_that_is_not_a_uuid_is_named_not_fatal(tmp_path):
    fleet = generate_fleet(30, seed=19)
    odd = next(r for r in fleet.deployments if (r.get("source_config") or {}).get("integration_id"))
    odd["source_config"]["integration_id"] = "not-a-uuid"
    with run_sandbox(fleet=fleet) as sb:
        result, _ = snapshot(sb, tmp_path)
    assert result.records == 30
    assert "1 integration id(s) referenced by deployments are not UUIDs" in result.summary()
    assert "'not-a-uuid'" in result.summary()
    repositories = read_table(tmp_path, "repositories")
    assert len(repositories) > 0  # the other integrations' repositories are there


def test_the_manifest_says_what_was_asked_and_what_came_back(tmp_path):
    """The evidence that the snapshot is whole, in the manifest the export writes last."""
    fleet = generate_fleet(90, seed=20, untyped_every=9)
    with run_sandbox(fleet=fleet, faults=Faults(page_cap=8)) as sb:
        result, _ = snapshot(sb, tmp_path, page_size=50)
    on_disk = orjson.loads(
        (tmp_path / "_manifests" / f"{result.snapshot_date.isoformat()}.json").read_bytes()
    )
    assert on_disk == result.manifest.to_dict()
    evidence = on_disk["fetch"]
    assert evidence["complete"] is True and evidence["deployments"] == 90
    assert evidence["deployment_type_from"] == {"record": 0, "typed_listing": 80, "none": 10}
    fleet_listing, *typed = evidence["listings"]
    assert (fleet_listing["listing"], fleet_listing["role"]) == ("all", "fleet")
    assert fleet_listing["records"] == 90 and fleet_listing["largest_page"] == 8
    assert fleet_listing["pages"] == 12 + 1  # 90 / 8 rounded up, and the empty page that ends it
    assert sorted(item["listing"] for item in typed) == sorted(fetch.deployment_types())
    assert evidence["integrations"]["unknown_to_service"] == []
    assert on_disk["rows"]["deployments"] == 90


def test_raw_pages_export_the_same_tables_as_parsed_pages(tmp_path):
    """`take_snapshot` reads pages as raw text for the fast reader; a parsed fetch agrees."""
    import datetime as dt

    from dims._snapshot import export_snapshot

    fleet = generate_fleet(250, seed=21, real_shaped=True, untyped_every=6)
    fleet.deployments[3]["source_config"]["region"] = {"name": "eu", "zones": [1, 2]}
    fleet.deployments[4]["created_at"] = "not a date"  # rejected by both, with its reason
    at = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
    tables = {}
    for raw in (False, True):
        with run_sandbox(fleet=fleet, faults=Faults(page_cap=30, truncate_every=7)) as sb:
            client = connect(sb.base_url)
            pages = fetch.fetch_deployments(client, page_size=100, raw=raw)
            if raw:
                pages = list(pages)
                assert all(type(r).__name__ == "Raw" for p in pages for r in p.records)
            out = tmp_path / str(raw)
            export_snapshot(pages, out, snapshot_at=at)
        tables[raw] = {
            name: read_table(out, name).drop(columns="snapshot_date")
            for name in ("deployments", "deployment_containers", "rejected_records")
        }
    for name, frame in tables[False].items():
        pd.testing.assert_frame_equal(frame, tables[True][name], check_like=True)
    assert len(tables[True]["rejected_records"]) == 1


def test_record_keys_read_the_same_from_raw_text_and_parsed_records():
    import msgspec

    from dims._pages import keys_of

    fleet = generate_fleet(120, seed=22, real_shaped=True)
    odd = [
        {"id": 3, "source_config": "text"},
        {"source_config": {"deployment_type": 5, "integration_id": "i"}},
        {"id": "a", "source_config": None},
        {"id": "b", "source_config": {"deployment_type": {"nested": 1}}},
        [1, 2],
        "a string",
    ]
    for record in [*fleet.deployments, *odd]:
        assert keys_of(msgspec.Raw(orjson.dumps(record))) == keys_of(record), record


# --- issue 27: what a mutation pass showed untested --------------------------------------------


@pytest.mark.parametrize(
    "faults",
    [
        Faults(page_cap=7, stuck_offset=True),  # every page answers the offset it was asked
        Faults(page_cap=7, final_offset="echo"),
        Faults(page_cap=25, final_offset="zero"),
        Faults(page_cap=9, final_offset="back"),
    ],
    ids=["cap7-every-offset-echoed", "cap7-last-echoed", "cap25-last-zero", "cap9-last-back"],
)
def test_a_capped_service_whose_offsets_do_not_advance_exports_every_record_once(tmp_path, faults):
    """Both at once: pages below `limit` (so offset + limit would skip records) and response
    offsets that do not advance (so dims counts on by itself, from what it received)."""
    with run_sandbox(deployments=N, seed=23, untyped_every=10, faults=faults) as sb:
        result, caught = snapshot(sb, tmp_path, page_size=40)
    assert exported(tmp_path) == expected_types(sb.fleet)  # each id once, with its type
    assert result.records == N and result.manifest.rows["deployments"] == N
    evidence = result.manifest.to_dict()["fetch"]
    assert evidence["complete"] is True and evidence["duplicates_dropped"] == 0
    fleet_listing = evidence["listings"][0]
    assert fleet_listing["records"] == N and fleet_listing["largest_page"] == faults.page_cap
    assert fleet_listing["offset_fallbacks"] >= 1
    paging = [w for w in caught if issubclass(w.category, fetch.PagingWarning)]
    assert 1 <= len(paging) <= 4  # one per listing at most


@pytest.mark.parametrize("max_records", [N, N - 1])
def test_a_listing_past_its_record_ceiling_is_an_error_and_nothing_is_published(
    tmp_path, max_records
):
    """`FetchLimits.max_records`: a listing of exactly the ceiling is read; one record more
    is an error (pages alone stay far below their own ceiling here)."""
    limits = fetch.FetchLimits(max_records=max_records)
    with run_sandbox(deployments=N, seed=15) as sb:
        if max_records == N:
            result, _ = snapshot(sb, tmp_path, page_size=50, limits=limits)
            assert result.records == N
            return
        with pytest.raises(PaginationError, match=f"went past .* or {N - 1} records"):
            snapshot(sb, tmp_path, page_size=50, limits=limits)
    assert nothing_published(tmp_path)


def test_the_manifest_counts_ids_only_a_typed_listing_returned(tmp_path):
    """`in_typed_listing_only`: 0 on a fleet that holds still; 1 when a deployment created
    while paging comes in a typed listing but not in the fleet listing, which had read
    past its place (the sandbox inserts it in front, after the fleet's first page)."""
    fleet = generate_fleet(90, seed=24)
    with run_sandbox(fleet=fleet) as sb:
        stable, _ = snapshot(sb, tmp_path / "stable", page_size=50, concurrency=1)
    assert stable.manifest.fetch.in_typed_listing_only == 0
    assert "typed listing but not in" not in stable.summary()

    fleet = generate_fleet(90, seed=24)
    _, inserted_type = generate_fleet(90, seed=24).new_deployment()
    assert inserted_type in fetch.deployment_types()  # so a typed listing returns it
    with run_sandbox(fleet=fleet, faults=Faults(insert_while_paging=1)) as sb:
        # one request at a time: the fleet's first page, then the typed listings (the
        # insertion comes with the first of them), then the rest of the fleet
        moved, _ = snapshot(sb, tmp_path / "moved", page_size=50, concurrency=1)
        inserted = sb.stats.inserted_ids
    assert len(inserted) == 1
    assert moved.manifest.fetch.in_typed_listing_only == 1
    assert "1 deployment(s) came in a typed listing but not in" in moved.summary()
    assert inserted[0] not in exported(tmp_path / "moved")  # the fleet listing is the fleet
    assert set(exported(tmp_path / "moved")) == {r["id"] for r in fleet.deployments}
