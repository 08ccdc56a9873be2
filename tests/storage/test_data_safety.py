"""Data safety: earlier snapshots survive anything an export can suffer.

An export is killed (SIGINT, SIGKILL) in a subprocess while it is writing. The subprocess
runs the real `dims export` (`dims._cli.main`) with one change: its dump reader is a
generator that yields a few pages (flushed to disk as row groups), says so on a pipe and
then waits for more input forever. So the test knows the export is mid-write, temporary
Parquet files open and half written, when it sends the signal; no timing guesses: the test
waits for what the child does (its line on the pipe, or the pipe's end should it die; its
exit), never for a time, however loaded the machine is.
Afterwards the earlier snapshot must read back byte-identical through pyarrow and DuckDB,
readers must see no partition of the killed day, and the next export must succeed and clear
what a SIGKILL left behind.

Then the rules of issues 12 and 13, each on a real filesystem with real processes: links in
--out are never followed, a day is published whole or not at all (a junk file in the way
rolls back what was moved), one writer per folder (two exports into one day never mix; a
second one waits for the lock), a re-run keeps the replaced version, an empty export over a
fleet is refused, and a filtered export never touches the fleet's snapshot.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from datetime import date
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from dims._cli import main
from dims._pages import Page
from dims._snapshot import export_snapshot
from dims._storage import read_table
from dims._tables import TABLE_NAMES
from dims.sandbox import fleet_dump_bytes, generate_fleet, run_sandbox

DIMS = Path(sys.executable).parent / "dims"
D1, D2 = date(2025, 1, 1), date(2025, 1, 2)
PART = "part-0.parquet"
#: Bounds a wait only so that a hang fails instead of stopping the run: each wait is for an
#: event (a line, an exit), which a loaded machine delays, but not by ten minutes.
HANG_S = 600.0
MID_WRITE = b"mid-write\n"

#: `dims export --from-json <any>` whose dump never ends: 6 pages, a line on the pipe whose
#: descriptor is argv[1], then waiting.
STALLED_EXPORT = """
import os, signal, sys

import dims._snapshot
from dims._cli import main
from dims._storage import read_table
from dims._pages import Page
from dims.sandbox import generate_fleet

ready = int(sys.argv[1])
fleet = generate_fleet(300, seed=3)


def endless_dump(path, **options):
    for start in range(0, 300, 50):
        yield Page(fleet.deployments[start : start + 50], source=f"dump[{start}]")
    os.write(ready, b"mid-write\\n")  # pages 1-6 handed on: row groups 1-5 on disk
    while True:
        signal.pause()  # waiting for input that never comes; a signal ends it


def small_row_groups(*args, **options):  # flush every page, so data is on disk
    return export_snapshot(*args, row_group_records=50, **options)


export_snapshot = dims._snapshot.export_snapshot
dims._snapshot.read_dump = endless_dump
dims._snapshot.export_snapshot = small_row_groups
sys.exit(main(sys.argv[2:]))
"""


def dims(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(DIMS), *args], capture_output=True, text=True, timeout=120)


def files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def visible_partitions(out: Path) -> set[str]:
    """What a reader globbing `DIR/*/snapshot_date=*/` sees."""
    return {str(p.relative_to(out)) for p in out.glob("*/snapshot_date=*/")}


def temporaries(out: Path) -> list[Path]:
    return [p for p in out.iterdir() if p.name.startswith(".tmp-")]


def assert_readable(out: Path, day: date, rows: dict[str, int]) -> None:
    """Every table of `day` reads through pyarrow and DuckDB with the expected row counts."""
    for table in TABLE_NAMES:
        folder = out / table / f"snapshot_date={day.isoformat()}"
        assert pq.read_table(folder).num_rows == rows[table], table
        ((count,),) = duckdb.sql(
            f"select count(*) from read_parquet('{out}/{table}/*/*.parquet', "
            f"hive_partitioning=true) where snapshot_date = '{day.isoformat()}'"
        ).fetchall()
        assert count == rows[table], table


def poll(condition, what: str) -> None:
    """Wait for `condition()` (readiness, not a sleep to sync), bounded only against a hang."""
    deadline = time.monotonic() + HANG_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def export_args(out: Path, day: date, dump: Path | str = "unused.json") -> list[str]:
    return ["export", "--from-json", str(dump), "--out", str(out), "--snapshot-date", str(day)]


@contextlib.contextmanager
def export_stalled_mid_write(
    out: Path, day: date, wrapper: Sequence[str] = ()
) -> Iterator[subprocess.Popen]:
    """A `dims export` of `day` stalled mid-write: row groups are on disk in its temporary
    folder and its writers are open. Yields the process (`wrapper`'s, when the export runs
    under one, such as `unshare`), killed on exit if still alive."""
    read_end, write_end = os.pipe()
    script = [sys.executable, "-c", STALLED_EXPORT, str(write_end)]
    child = subprocess.Popen(
        [*wrapper, *script, *export_args(out, day)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        pass_fds=(write_end,),
    )
    os.close(write_end)  # the child holds the only writing end: its death ends the pipe
    try:
        with os.fdopen(read_end, "rb") as ready:
            said = _line_or_end(ready)
        assert said == MID_WRITE, (said, child.poll() is None or child.communicate())
        part = f"deployments/snapshot_date={day.isoformat()}/part-0.parquet"
        (tmp,) = temporaries(out)
        # One row group in flight at most (each flush waits for the one before): rows
        # groups 1-5 are written by the time the dump gave its last page.
        assert (tmp / part).stat().st_size > 10_000
        with pytest.raises(Exception, match=r"magic bytes|footer|Parquet"):
            pq.read_table(tmp / part)  # the half-written file is not a Parquet file yet
        yield child
    finally:
        if child.poll() is None:
            child.kill()
        child.communicate(timeout=HANG_S)


def _line_or_end(stream) -> bytes:
    """The next line of `stream`, or b"" at its end (the writer died): whichever comes."""
    readable, _, _ = select.select([stream], [], [], HANG_S)
    assert readable, f"nothing on the pipe in {HANG_S:.0f} s: the child hangs"
    return stream.readline()


@pytest.fixture
def first_snapshot(tmp_path):
    """Snapshot D1, written by the CLI from a saved dump; returns (out, files, row counts)."""
    fleet = generate_fleet(120, seed=5)
    dump = tmp_path / "d1.json"
    dump.write_bytes(fleet_dump_bytes(fleet))
    out = tmp_path / "data"
    assert (
        main(
            ["export", "--from-json", str(dump), "--out", str(out), "--snapshot-date", "2025-01-01"]
        )
        == 0
    )
    rows = {t: pq.read_table(out / t / "snapshot_date=2025-01-01").num_rows for t in TABLE_NAMES}
    assert rows["deployments"] > 0
    return out, files(out), rows


def test_sigint_mid_write_exits_130_with_one_line_and_leaves_nothing(first_snapshot, tmp_path):
    """Ctrl-C: the CLI says so in one line, removes its temporary folder, D1 is untouched."""
    out, before, rows = first_snapshot
    with export_stalled_mid_write(out, D2) as child:
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=HANG_S)
    assert child.returncode == 130
    assert stderr.strip().splitlines() == ["dims: interrupted; nothing partial was left behind"]
    assert "Traceback" not in stderr
    assert temporaries(out) == []
    assert files(out) == before
    assert all("2025-01-02" not in p for p in visible_partitions(out))
    assert_readable(out, D1, rows)


@pytest.mark.parametrize("day", [D2, D1], ids=["new-day", "same-day"])
def test_sigkill_mid_write_leaves_earlier_snapshots_and_the_next_export_cleans_up(
    first_snapshot, tmp_path, day
):
    """SIGKILL cannot be caught: the temporary folder stays, but no reader sees it, the
    earlier snapshot (also the one being replaced) reads back intact, and the next export
    succeeds and removes the dead process's leftovers."""
    out, before, rows = first_snapshot
    with export_stalled_mid_write(out, day) as child:
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=HANG_S)
    assert child.returncode == -signal.SIGKILL
    left = temporaries(out)
    assert len(left) == 1  # invisible to readers: a dot folder outside every table's folder
    assert {p: b for p, b in files(out).items() if not p.startswith(".tmp-")} == before
    assert all("2025-01-02" not in p for p in visible_partitions(out))
    assert_readable(out, D1, rows)

    small = tmp_path / "d2.json"
    small.write_bytes(fleet_dump_bytes(generate_fleet(15, seed=9)))
    again = ["export", "--from-json", str(small), "--out", str(out), "--snapshot-date", str(D2)]
    assert main(again) == 0
    assert temporaries(out) == []
    assert_readable(out, D1, rows)
    written = pq.read_table(out / "deployments" / "snapshot_date=2025-01-02").num_rows
    rejected = pq.read_table(out / "rejected_records" / "snapshot_date=2025-01-02").num_rows
    assert written + rejected == 15 and written > 0


def test_unwritable_output_folder_is_one_line_before_any_fetch(tmp_path):
    """The folder is checked first: with nothing listening at the base URL, the error is
    still about the folder, so no fetch was attempted."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the output folder should be")
    done = dims(
        "export",
        "--base-url",
        "http://127.0.0.1:9",
        "--retries",
        "0",
        "--out",
        str(blocker / "out"),
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("dims export: error: cannot write to ")
    assert str(blocker / "out") in lines[0] and "--out" in lines[0]
    assert "Connection refused" not in done.stderr and "ConnectError" not in done.stderr
    assert "Traceback" not in done.stderr


def test_a_full_rerun_the_same_day_replaces_that_day_and_keeps_the_earlier_one(tmp_path, capsys):
    """Second export of D1 wins completely: its rows, its content, no file of the first.
    The first is kept, readable, in DIR/_replaced/, and the export says so."""
    out = tmp_path / "data"
    fleets = [generate_fleet(40, seed=1), generate_fleet(25, seed=2)]
    for n, fleet in enumerate(fleets):
        dump = tmp_path / f"run{n}.json"
        dump.write_bytes(fleet_dump_bytes(fleet))
        assert main(export_args(out, D1, dump)) == 0
        if n == 0:
            first = files(out)
            first_ids = set(read_table(out, "deployments", D1)["id"])
    said = capsys.readouterr().out
    (kept,) = (out / "_replaced").iterdir()
    assert "replaced the earlier snapshot of that day" in said and str(kept) in said
    assert set(read_table(kept, "deployments", D1)["id"]) == first_ids  # recoverable
    manifest = json.loads((out / "_manifests" / "2025-01-01.json").read_text())
    assert manifest["replaced"]["kept_in"] == f"_replaced/{kept.name}"
    assert manifest["replaced"]["deployments"] == len(first_ids)
    second = fleets[1]
    deployments = pq.read_table(out / "deployments" / "snapshot_date=2025-01-01")
    readable = [
        r for r in second.deployments if isinstance(r, dict) and isinstance(r.get("id"), str)
    ]
    assert set(deployments["id"].to_pylist()) <= {r["id"] for r in readable}
    rejected = pq.read_table(out / "rejected_records" / "snapshot_date=2025-01-01").num_rows
    assert deployments.num_rows + rejected == len(second.deployments)
    assert visible_partitions(out) == {f"{t}/snapshot_date=2025-01-01" for t in TABLE_NAMES}
    for table in TABLE_NAMES:
        folder = out / table / "snapshot_date=2025-01-01"
        assert [p.name for p in folder.iterdir()] == ["part-0.parquet"], table
    assert files(out) != first

    # the same second run into a fresh folder gives the same rows, table by table
    fresh = tmp_path / "fresh"
    assert (
        main(
            [
                "export",
                "--from-json",
                str(tmp_path / "run1.json"),
                "--out",
                str(fresh),
                "--snapshot-date",
                "2025-01-01",
            ]
        )
        == 0
    )
    for table in TABLE_NAMES:
        replaced = pq.read_table(out / table / "snapshot_date=2025-01-01").drop_columns(
            ["snapshot_at"]
        )
        clean = pq.read_table(fresh / table / "snapshot_date=2025-01-01").drop_columns(
            ["snapshot_at"]
        )
        assert replaced.to_pylist() == clean.to_pylist(), table


# --- never outside --out, whole days, one writer (issue 13) ----------------------------------


def one_error_line(done: subprocess.CompletedProcess) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def small_dump(tmp_path: Path, name: str, count: int, seed: int) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_bytes(fleet_dump_bytes(generate_fleet(count, seed=seed)))
    return path


def test_five_reexports_of_a_day_keep_the_three_newest_replaced_versions(tmp_path):
    """Five exports of one day: the four versions replaced are kept, pruned to the newest
    three (the second, third and fourth exports'), each whole and readable; the first's is
    gone."""
    out = tmp_path / "data"
    made = []
    for n in range(5):
        fleet = generate_fleet(10 + n, seed=n)
        result = export_snapshot([Page(fleet.deployments, source="t")], out, snapshot_date=D1)
        made.append((result.manifest.export_id, {r["id"] for r in fleet.deployments}))
    kept = sorted((out / "_replaced").iterdir())
    assert len(kept) == 3
    for folder, (export_id, ids) in zip(kept, made[1:4], strict=True):
        manifest = json.loads((folder / "_manifests" / f"{D1}.json").read_text())
        assert manifest["export_id"] == export_id
        assert set(read_table(folder, "deployments", D1)["id"]) == ids
    latest = json.loads((out / "_manifests" / f"{D1}.json").read_text())
    assert latest["export_id"] == made[4][0]
    assert latest["replaced"]["kept_in"] == f"_replaced/{kept[-1].name}"


@pytest.mark.parametrize("day", [D1, D2], ids=["rerun-day", "new-day"])
def test_a_partition_folder_that_is_a_link_is_replaced_as_a_link(first_snapshot, tmp_path, day):
    """The link moves aside (recoverable); nothing in the folder it points to is touched."""
    out, _, rows = first_snapshot
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("not dims's")
    (elsewhere / "part-0.parquet").write_bytes(b"someone else's file")
    outside = files(elsewhere)
    link = out / "deployment_labels" / f"snapshot_date={day}"
    if day == D1:
        link.rename(tmp_path / "the-real-d1-labels")
    link.symlink_to(elsewhere, target_is_directory=True)

    done = dims(*export_args(out, day, small_dump(tmp_path, "d2", 20, seed=4)))
    assert done.returncode == 0, done.stderr
    assert files(elsewhere) == outside
    assert not link.is_symlink() and [p.name for p in link.iterdir()] == ["part-0.parquet"]
    (kept,) = (out / "_replaced").iterdir()
    moved = kept / "deployment_labels" / f"snapshot_date={day}"
    assert moved.is_symlink() and moved.resolve() == elsewhere.resolve()
    assert "replaced the earlier snapshot" in done.stdout
    if day == D2:
        assert_readable(out, D1, rows)


def test_a_part_file_that_is_a_link_is_replaced_not_written_through(first_snapshot, tmp_path):
    out, _, _ = first_snapshot
    precious = tmp_path / "precious.bin"
    precious.write_bytes(b"not dims's")
    part = out / "repositories" / "snapshot_date=2025-01-01" / PART
    part.unlink()
    part.symlink_to(precious)

    done = dims(*export_args(out, D1, small_dump(tmp_path, "again", 20, seed=4)))
    assert done.returncode == 0, done.stderr
    assert precious.read_bytes() == b"not dims's"
    assert not part.is_symlink() and pq.read_metadata(part).num_rows >= 0
    (kept,) = (out / "_replaced").iterdir()
    assert (kept / "repositories" / "snapshot_date=2025-01-01" / PART).is_symlink()


@pytest.mark.parametrize("link", ["deployment_labels", "_manifests", "_replaced"])
def test_a_folder_dims_writes_through_that_is_a_link_is_refused(first_snapshot, tmp_path, link):
    """A table folder (or the manifests' or replaced versions' folder) that is a link would
    take writes outside --out: one line, nothing of the day published, the target untouched."""
    out, _, _ = first_snapshot
    elsewhere = tmp_path / "elsewhere"
    if (out / link).exists():
        (out / link).rename(elsewhere)
    else:
        elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("not dims's")
    (out / link).symlink_to(elsewhere, target_is_directory=True)
    outside, before = files(elsewhere), files(out)

    line = one_error_line(dims(*export_args(out, D2, small_dump(tmp_path, "d2", 20, seed=4))))
    assert f"{out / link} is a symbolic link" in line
    assert files(elsewhere) == outside and files(out) == before
    assert all("2025-01-02" not in p for p in visible_partitions(out))
    assert temporaries(out) == []


def test_a_junk_file_where_a_day_folder_goes_publishes_nothing_of_that_day(
    first_snapshot, tmp_path
):
    """Deployments are published last, so twelve tables are in place when their step fails:
    every one is rolled back, and the error says which path was in the way."""
    out, _, rows = first_snapshot
    junk = out / "deployments" / "snapshot_date=2025-01-02"
    junk.write_text("a file where the day's folder goes")
    before = files(out)

    line = one_error_line(dims(*export_args(out, D2, small_dump(tmp_path, "d2", 20, seed=4))))
    assert line.startswith("dims export: error: cannot publish the 2025-01-02 snapshot")
    assert str(junk) in line and "nothing of that day was published" in line
    assert files(out) == before
    assert all("2025-01-02" not in p for p in visible_partitions(out))
    assert temporaries(out) == [] and not (out / "_replaced").exists()
    assert_readable(out, D1, rows)


def test_a_failed_publish_of_a_rerun_day_puts_the_earlier_version_back(first_snapshot, tmp_path):
    """Re-running D1 swaps twelve tables' files, then fails on the thirteenth: the twelve get
    their earlier files back, byte for byte, and no half-made kept version stays."""
    out, _, _ = first_snapshot
    deployments = out / "deployments" / "snapshot_date=2025-01-01"
    deployments.rename(tmp_path / "moved-away")
    deployments.write_text("junk")
    before = files(out)

    line = one_error_line(dims(*export_args(out, D1, small_dump(tmp_path, "again", 20, seed=4))))
    assert "the earlier version is back in place" in line
    assert files(out) == before
    assert temporaries(out) == [] and not (out / "_replaced").exists()


def stamps(out: Path, day: date) -> set[bytes]:
    """The export ids of every table's file of `day`, and of its manifest."""
    found = {
        pq.read_metadata(out / table / f"snapshot_date={day}" / "part-0.parquet").metadata[
            b"dims.export_id"
        ]
        for table in TABLE_NAMES
    }
    manifest = json.loads((out / "_manifests" / f"{day}.json").read_text())
    return found | {manifest["export_id"].encode()}


def test_two_exports_into_one_folder_and_day_never_mix(tmp_path):
    """Real processes started together: the lock makes one wait for the other, both succeed,
    and the day is wholly one export's: one export id in every file and the manifest, and
    every container row belongs to a deployment of that day."""
    out = tmp_path / "data"
    dumps = [small_dump(tmp_path, f"fleet{n}", 150, seed=n) for n in range(2)]
    for _ in range(3):
        exports = [
            subprocess.Popen(
                [str(DIMS), *export_args(out, D1, dump)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for dump in dumps
        ]
        outcomes = [child.communicate(timeout=120) for child in exports]
        assert [child.returncode for child in exports] == [0, 0], outcomes
        assert len(stamps(out, D1)) == 1
        ((orphans,),) = duckdb.sql(
            f"select count(*) from read_parquet('{out}/deployment_containers/*/*.parquet') c "
            f"where c.deployment_id not in (select id from "
            f"read_parquet('{out}/deployments/*/*.parquet'))"
        ).fetchall()
        assert orphans == 0
        assert temporaries(out) == []


def test_a_second_export_waits_for_the_lock_and_judges_leftovers_by_it(first_snapshot, tmp_path):
    """While another writer holds the lock, an export says it waits and removes nothing (the
    work folder might be the other writer's). Once the lock is free it runs, and removes
    work folders the lock proves dead, though the PID in the name (1) is alive here."""
    out, _, _ = first_snapshot
    leftover = out / ".tmp-2025-01-02-1-abcd"
    (leftover / "deployments").mkdir(parents=True)
    import fcntl

    with open(out / ".dims.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        stderr = tmp_path / "stderr.txt"
        with open(stderr, "w") as sink:
            child = subprocess.Popen(
                [str(DIMS), *export_args(out, D2, small_dump(tmp_path, "d2", 20, seed=4))],
                stdout=subprocess.DEVNULL,
                stderr=sink,
            )
        try:
            poll(lambda: "waiting" in stderr.read_text(), "the export to say it waits")
            assert leftover.is_dir() and child.poll() is None
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
    assert child.wait(timeout=HANG_S) == 0
    (line,) = stderr.read_text().strip().splitlines()
    assert line.startswith(f"dims: warning: another export is writing to {out}; waiting")
    assert not leftover.exists()
    assert read_table(out, "deployments", D2).shape[0] > 0


# --- snapshots are not destroyed by accident (issue 12) --------------------------------------


def test_an_empty_export_over_a_fleet_is_refused_unless_allowed(first_snapshot, tmp_path):
    out, before, _ = first_snapshot
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    line = one_error_line(dims(*export_args(out, D2, empty)))
    assert "found 0 deployments" in line and "2025-01-01" in line and "--allow-empty" in line
    assert files(out) == before and temporaries(out) == []

    done = dims(*export_args(out, D2, empty), "--allow-empty")
    assert done.returncode == 0, done.stderr
    assert read_table(out, "deployments", D2).empty


def test_a_filtered_export_never_touches_the_fleets_snapshot(first_snapshot):
    """`--name-contains` with a typo finds nothing: its snapshot goes to its own root, the
    filters in its metadata and manifest, and the fleet's snapshot of that day stays."""
    out, before, _ = first_snapshot
    with run_sandbox(deployments=60, seed=2) as sandbox:
        args = ["--base-url", sandbox.base_url, "--out", str(out), "--snapshot-date", str(D1)]
        typo = dims("export", *args, "--name-contains", "no-such-name", "--json")
        assert typo.returncode == 0, typo.stderr
        some = dims("export", *args, "--name-contains", "a")
        assert some.returncode == 0, some.stderr
    assert {p: b for p, b in files(out).items() if not p.startswith("filtered/")} == before
    manifest = json.loads(typo.stdout)
    assert manifest["filters"] == {"name_contains": "no-such-name"}
    assert manifest["dataset"] == "filtered/name_contains-no-such-name"
    root = out / manifest["dataset"]
    assert read_table(root, "deployments", D1).empty
    metadata = pq.read_metadata(
        root / "deployments" / "snapshot_date=2025-01-01" / "part-0.parquet"
    )
    assert json.loads(metadata.metadata[b"dims.filters"]) == {"name_contains": "no-such-name"}
    assert "filtered (name_contains=a)" in some.stdout
    assert not read_table(out / "filtered" / "name_contains-a", "deployments", D1).empty


def test_a_probe_swept_by_a_running_export_is_no_error(tmp_path, monkeypatch):
    """check_writable's probe folder has a work folder's name, so an export holding the lock
    may sweep it between its creation and removal (seen in CI: two exports started
    together, the second failed with "No such file or directory"). The probe proved the
    folder writable; that it is gone is no error."""
    from dims._storage import check_writable, paths

    real_rmdir = Path.rmdir
    swept: list[str] = []

    def sweep_first(self: Path) -> None:
        if self.name.startswith(f"{paths.TMP_PREFIX}probe-"):
            real_rmdir(self)  # the other export's sweep
            swept.append(self.name)
        real_rmdir(self)

    monkeypatch.setattr(Path, "rmdir", sweep_first)
    check_writable(tmp_path / "data")
    assert swept and not list((tmp_path / "data").iterdir())
