"""Batches read in worker processes give exactly the tables serial reading gives, in order.

The serial Flattener is the reference: same rows, same order, same rejects (with their
source and index), same counts, with workers or without, a worker killed midway included.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile_servers import within

from dims import _snapshot as orchestrator
from dims._errors import WorkerLost
from dims._pages import Page
from dims._snapshot import export_snapshot, snapshot_from_dump
from dims._tables import Batches, Flattener, RejectedRecordError
from dims._tables import _batches as batches
from dims.sandbox import fleet_dump_bytes, generate_fleet

AT = datetime(2025, 6, 1, 12, tzinfo=UTC)
RAW_ARRAY = msgspec.json.Decoder(list[msgspec.Raw])
#: Records no reader accepts, each for another reason, and one only a full parse rejects.
BAD = [b'{"name": "no id"}', b'{"id": 7}', b"[1, 2]", b'{"id": "x", "created_at": 1e999}']


def _records(n: int, seed: int = 5) -> list[msgspec.Raw]:
    """A real-shaped fleet (fields nobody declared, odd values) with bad records among it."""
    records = RAW_ARRAY.decode(fleet_dump_bytes(generate_fleet(n, seed, real_shaped=True)))
    for position, bad in zip((3, n // 3, n // 2 + 1, n - 2), BAD, strict=True):
        records.insert(position, msgspec.Raw(bad))
    return records


def _pages(records: list[msgspec.Raw], size: int = 50, **page: object) -> list[Page]:
    return [
        Page(records[at : at + size], f"dump.json[{at}..]", first_index=at, **page)  # type: ignore[arg-type]
        for at in range(0, len(records), size)
    ]


def _serial(pages: list[Page], **options: object) -> tuple[dict[str, pa.Table], Flattener]:
    flattener = Flattener(snapshot_at=AT, **options)  # type: ignore[arg-type]
    for page in pages:
        flattener.add_page(page)
    return flattener.take(), flattener


def _batched(
    pages: Iterator[Page] | list[Page], workers: int, batch_records: int = 150, **options: object
) -> tuple[dict[str, pa.Table], Flattener]:
    """Tables read with `workers`; the source waits after its first batch until a worker has
    answered, so that workers read batches (they start slower than a small test reads)."""
    flattener = Flattener(snapshot_at=AT, **options)  # type: ignore[arg-type]
    reader = Batches(flattener, workers=workers, batch_records=batch_records, workers_after=0)

    def patient() -> Iterator[Page]:
        taken = 0
        for page in pages:
            if taken >= batch_records:
                deadline = time.monotonic() + 60
                while not reader.workers_ready and time.monotonic() < deadline:
                    time.sleep(0.01)
                taken = -(10**9)  # once
            taken += len(page.records)
            yield page

    batches = list(reader.run(patient()))
    assert len(batches) > 2, "the test needs batches for the workers"
    assert reader.worker_batches > 0, "no worker read a batch"
    names = batches[0].keys()
    return {n: pa.concat_tables([b[n] for b in batches]) for n in names}, flattener


def _assert_same(got: dict[str, pa.Table], want: dict[str, pa.Table]) -> None:
    assert got.keys() == want.keys()
    for name, table in want.items():
        assert got[name].schema == table.schema, name
        assert got[name].to_pylist() == table.to_pylist(), name


@pytest.mark.parametrize("workers", [1, 2])
def test_workers_give_the_serial_tables_rejects_and_counts(workers):
    pages = _pages(_records(900))
    want, serial = _serial(pages)
    got, batched = _batched(pages, workers)
    _assert_same(got, want)
    assert want["rejected_records"].num_rows == len(BAD)
    assert batched.counts == serial.counts
    assert batched.typed_records == serial.typed_records > 800


def test_listed_types_travel_with_the_pages():
    """Records that do not name their type get the listings' type in a worker too."""
    fleet = generate_fleet(600, 8, untyped_every=7)
    records = RAW_ARRAY.decode(fleet_dump_bytes(fleet))
    ids = [orjson.loads(bytes(r))["id"] for r in records]
    tags = {i: ("prod", "dev")[n % 2] for n, i in enumerate(ids) if n % 3}
    pages = _pages(records, tags=tags)
    want, _ = _serial(pages)
    got, _ = _batched(pages, 1)
    _assert_same(got, want)
    assert set(got["deployments"].column("deployment_type").to_pylist()) >= {"prod", "dev"}


def test_env_values_option_reaches_the_workers():
    fleet = generate_fleet(600, 2, canary_env_value="env-canary-value")
    pages = _pages(RAW_ARRAY.decode(fleet_dump_bytes(fleet)))
    want, _ = _serial(pages, include_env_values=True)
    got, _ = _batched(pages, 1, include_env_values=True)
    _assert_same(got, want)
    assert "env-canary-value" in got["deployment_container_env"].column("value").to_pylist()


def test_strict_mode_raises_the_serial_error_from_a_worker():
    records = RAW_ARRAY.decode(fleet_dump_bytes(generate_fleet(600, 4, real_shaped=True)))
    pages = _pages([*records[:500], msgspec.Raw(BAD[1]), *records[500:]])
    with pytest.raises(RejectedRecordError) as serial:
        _serial(pages, strict=True)
    with pytest.raises(RejectedRecordError) as batched:
        _batched(pages, 1, strict=True)
    assert str(batched.value) == str(serial.value)
    assert "record 500" in str(serial.value)


def _workers_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes()
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid and b"batches import serve" in cmdline:
            found.append(int(entry.name))
    return found


def _signal_workers(signum: int = signal.SIGKILL) -> list[int]:
    """Send `signum` to this process's worker processes, once they are there."""
    signalled: list[int] = []
    deadline = time.monotonic() + 30
    while not signalled and time.monotonic() < deadline:
        for pid in _workers_of(os.getpid()):
            os.kill(pid, signum)
            signalled.append(pid)
        time.sleep(0.01)
    return signalled


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find workers")
def test_a_killed_worker_costs_nothing_but_time():
    pages = _pages(_records(900))
    want, serial = _serial(pages)

    def source() -> Iterator[Page]:
        for n, page in enumerate(pages):
            if n == 9:  # the workers have a batch or two: kill them
                assert _signal_workers()
            yield page

    with pytest.warns(WorkerLost, match="worker process reading records stopped"):
        got, batched = _batched(source(), 1)
    _assert_same(got, want)
    assert batched.counts == serial.counts


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find workers")
def test_a_hung_worker_is_killed_and_its_batch_read_here(monkeypatch):
    """Issue 27 item 7: a worker that stops answering (SIGSTOPped: alive, silent) is treated
    like a dead one after WORKER_SILENCE_S: killed, its batch read here, one warning."""
    monkeypatch.setattr(batches, "WORKER_SILENCE_S", 1.0)
    pages = _pages(_records(900))
    want, serial = _serial(pages)
    stopped: list[int] = []

    def source() -> Iterator[Page]:
        for n, page in enumerate(pages):
            if n == 9:  # the worker has answered a batch or two: stop it
                stopped.extend(_signal_workers(signal.SIGSTOP))
                assert stopped
            yield page

    try:
        with pytest.warns(WorkerLost) as caught:
            got, batched = within(lambda: _batched(source(), 1), 120)
    finally:
        for pid in stopped:  # without the fix, a stopped worker would outlive the test
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    lost = [w for w in caught if issubclass(w.category, WorkerLost)]
    assert len(lost) == 1, [str(w.message) for w in lost]
    assert "did not answer within 1 s" in str(lost[0].message)
    _assert_same(got, want)
    assert batched.counts == serial.counts
    assert not any(map(_alive, stopped))  # killed and reaped, not left stopped


def test_the_silence_bound_is_generous_by_default():
    """A batch on a loaded machine (or a worker's first, imports and all) takes its time."""
    assert batches.WORKER_SILENCE_S >= 60


def test_an_export_with_workers_writes_the_serial_files(tmp_path):
    """Through the writer: the same rows in the same row groups, and the same manifest counts."""
    dump = b"[" + b",".join(bytes(r) for r in _records(1200)) + b"]"
    results = {}
    for workers in (0, 1):
        results[workers] = export_snapshot(
            _pages(RAW_ARRAY.decode(dump), size=100),
            tmp_path / str(workers),
            snapshot_at=AT,
            row_group_records=400,
            workers=workers,
        )
    serial, batched = results[0], results[1]
    assert batched.manifest.records == serial.manifest.records == 1204
    assert batched.manifest.rejected == serial.manifest.rejected == len(BAD)
    assert batched.rows == serial.rows
    for name, folder in serial.paths.items():
        path, other = folder / "part-0.parquet", batched.paths[name] / "part-0.parquet"
        assert pq.read_table(other).to_pylist() == pq.read_table(path).to_pylist(), name
        groups = pq.ParquetFile(other).metadata.num_row_groups
        assert groups == pq.ParquetFile(path).metadata.num_row_groups, name
    deployments = batched.paths["deployments"] / "part-0.parquet"
    assert pq.ParquetFile(deployments).metadata.num_row_groups > 1


def test_workers_start_at_once_only_for_a_source_known_to_be_large():
    assert batches.workers_after(None) == batches.WORKERS_AFTER
    assert batches.workers_after(batches.WORKERS_AT_ONCE_BYTES - 1) == batches.WORKERS_AFTER
    assert batches.workers_after(batches.WORKERS_AT_ONCE_BYTES) == batches.BATCH_RECORDS


def test_an_export_from_a_large_dump_starts_its_workers_at_the_first_full_batch(
    tmp_path, monkeypatch
):
    """The dump's size reaches the batches: "large" here is 1 byte, so that a small
    dump shows it (its 600 records are far below WORKERS_AFTER)."""
    dump = tmp_path / "fleet.json"
    dump.write_bytes(fleet_dump_bytes(generate_fleet(600, 2, real_shaped=True)))
    made: list[Batches] = []

    class Seen(Batches):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(orchestrator, "Batches", Seen)
    monkeypatch.setattr(batches, "BATCH_RECORDS", 200)  # batches of 200 at most
    monkeypatch.setattr(orchestrator, "BATCH_RECORDS", 200)
    for large in (False, True):
        if large:
            monkeypatch.setattr(batches, "WORKERS_AT_ONCE_BYTES", 1)
        result = snapshot_from_dump(dump, tmp_path / str(large), workers=1)
        assert result.manifest.records == 600
        # at the first full batch (the dump's first page, here all of it), or never
        assert (made[-1].workers_started_after is not None) is large


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find workers")
def test_workers_end_when_their_export_is_killed(tmp_path):
    """A SIGKILLed export (no clean-up runs) leaves no worker behind: each sees its pipe close."""
    dump = tmp_path / "fleet.json"
    dump.write_bytes(fleet_dump_bytes(generate_fleet(30_000, 1, real_shaped=True)))
    command = [sys.executable, "-m", "dims._cli", "export", "--workers", "2"]
    export = subprocess.Popen(
        [*command, "--from-json", str(dump), "--out", str(tmp_path / "out")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (workers := _workers_of(export.pid)) and time.monotonic() < deadline:
            assert export.poll() is None, "the export ended before its workers started"
            time.sleep(0.01)
        assert workers, "no worker started"
    finally:
        export.kill()
        export.wait(timeout=30)
    deadline = time.monotonic() + 30
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(_alive, workers))
    assert not (tmp_path / "out" / "deployments").exists()  # nothing published
