"""`--out s3://…` against a real S3 server (SeaweedFS on loopback, tests/object_store.py).

The same dump exported to a folder and to the server gives the same tables, read back from
the server by pyarrow (a plain dataset over the table prefixes), by DuckDB (through
`duckdb_connection`) and by `dims report` / `dims sql`. Then the safety promises of the
object-store publisher (dims._storage._remote_target): a racing reader never sees part of
a snapshot, a killed export leaves nothing a reader picks up and the next export cleans it,
a second export waits for the first, and credentials never reach the output.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from datetime import UTC, date, datetime
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from cli_in_process import run
from object_store import S3Server

from dims._dumps import read_dump
from dims._errors import DatasetError, ExportError, ExportWaitWarning, LeaseLost
from dims._snapshot import export_snapshot
from dims._storage import (
    Store,
    duckdb_connection,
    history_counts,
    open_store,
    paths,
    read_arrow,
    read_tables,
    snapshot_dates,
)
from dims._storage import _remote_target as remote_target
from dims._tables import TABLE_NAMES
from dims.sandbox import fleet_dump_bytes, generate_fleet

DIMS = Path(sys.executable).parent / "dims"
D1, D2, D3 = date(2025, 1, 1), date(2025, 1, 2), date(2025, 1, 3)
D1P = f"snapshot_date={D1}"
AT = datetime(2025, 1, 1, 6, tzinfo=UTC)
DEADLINE_S = 60.0
#: Lease renewal and staleness (s) for the tests that need an export's lease to expire: the
#: margin (stale minus two renewals, 4.5 s) is what a busy machine may delay a renewal by.
SHORT_LEASE = (0.25, 5.0)


def dump(tmp_path: Path, name: str, count: int, seed: int) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_bytes(fleet_dump_bytes(generate_fleet(count, seed=seed)))
    return path


def export(source: Path, out: str | Path, day: date = D1, **options: object):
    return export_snapshot(read_dump(source), out, snapshot_date=day, snapshot_at=AT, **options)


def bucket_path(uri: str) -> str:
    return uri.removeprefix("s3://")


def objects(server: S3Server, uri: str) -> dict[str, int]:
    """Every object under the dataset root: key → size."""
    selector = pafs.FileSelector(bucket_path(uri), recursive=True, allow_not_found=True)
    root = len(bucket_path(uri)) + 1
    return {
        info.path[root:]: info.size
        for info in server.filesystem().get_file_info(selector)
        if info.type == pafs.FileType.File
    }


def plain_dataset(server: S3Server, uri: str, table: str) -> pa.Table:
    """What a non-dims reader gets: every Parquet file under the table's prefix, Hive-style."""
    dataset = ds.dataset(
        f"{bucket_path(uri)}/{table}",
        filesystem=server.filesystem(),
        format="parquet",
        partitioning="hive",
    )
    return dataset.to_table()


def short_leases(monkeypatch: pytest.MonkeyPatch) -> None:
    """Leases stale after SHORT_LEASE[1] s instead of a minute (renewed every SHORT_LEASE[0]
    s), so that a dead or paused export's lease expires within the test."""
    monkeypatch.setattr(remote_target, "LEASE_RENEW_S", SHORT_LEASE[0])
    monkeypatch.setattr(remote_target, "LEASE_STALE_S", SHORT_LEASE[1])


def rows_of(table: pa.Table) -> list[dict[str, object]]:
    """The rows without the export's identity, in a stable order (for comparing exports)."""
    table = table.replace_schema_metadata(None)
    return sorted(table.to_pylist(), key=lambda row: json.dumps(row, sort_keys=True, default=str))


def test_an_export_to_s3_reads_back_like_the_same_export_to_a_folder(s3_server, s3_out, tmp_path):
    source = dump(tmp_path, "fleet", 60, seed=1)
    local = export(source, tmp_path / "local")
    remote = export(source, s3_out)

    assert remote.out_dir == s3_out and remote.rows == local.rows
    assert remote.paths["deployments"] == f"{s3_out}/deployments/snapshot_date={D1}/part-0.parquet"
    stored = objects(s3_server, s3_out)
    assert set(stored) == {
        *(f"{table}/snapshot_date={D1}/part-0.parquet" for table in TABLE_NAMES),
        f"_manifests/{D1}.json",
    }  # no staging, no lease left behind
    for table in TABLE_NAMES:
        mine = read_arrow(s3_out, table)
        assert rows_of(mine) == rows_of(read_arrow(tmp_path / "local", table)), table
        plain = plain_dataset(s3_server, s3_out, table)
        assert plain.num_rows == local.rows[table], table
        assert plain.schema.field("snapshot_at").type == pa.timestamp("us", tz="UTC")
    query = (
        "select d.snapshot_date, count(*), sum(c.cpu), count(distinct c.deployment_id), "
        "max(d.snapshot_at)::varchar from deployments d join deployment_components c "
        "on c.deployment_id = d.id group by 1"
    )
    answers = []
    for out in (tmp_path / "local", s3_out):
        with duckdb_connection(out) as connection:
            answers.append(connection.sql(query).fetchall())
            history = connection.sql("select count(*) from deployments_history").fetchall()
            assert history == [(local.rows["deployments"],)]
    assert answers[0] == answers[1] and answers[0][0][0] == D1
    manifest = json.loads(
        s3_server.filesystem().open_input_file(f"{bucket_path(s3_out)}/_manifests/{D1}.json").read()
    )
    assert manifest["files"] == local.manifest.files and manifest["dataset"] == "."


def test_the_cli_exports_reports_and_queries_on_s3(s3_server, s3_out, tmp_path, capsys):
    """`dims export --out s3://…`, then `dims report`, `dims sql` and `dims diff` read it."""
    for day, seed in ((D1, 1), (D2, 2)):
        source = dump(tmp_path, f"fleet{seed}", 40, seed=seed)
        code, out, err = run(
            capsys, "export", "--from-json", str(source), "--out", s3_out,
            "--snapshot-date", day.isoformat(),
        )  # fmt: skip
        assert code == 0, err
        assert f"wrote snapshot {day} to {s3_out}" in out
    code, out, err = run(capsys, "report", "--out", s3_out, "--json")
    assert code == 0, err
    written = json.loads(out)
    assert written["report"] == f"{s3_out}/reports/snapshot_date={D2}/report.html"
    assert "report.html" in written["files"] and "capacity_summary.parquet" in written["files"]
    html = s3_server.filesystem().open_input_file(bucket_path(written["report"])).read()
    assert b"<html" in html.lower()
    code, out, err = run(
        capsys, "sql", "--out", s3_out, "--json",
        "select snapshot_date, count(*) as n from deployments_history group by 1 order by 1",
    )  # fmt: skip
    assert code == 0, err
    assert [row["n"] for row in json.loads(out)] == [40, 40]
    code, out, err = run(capsys, "diff", "--out", s3_out, "--json")
    assert code == 0, err
    assert json.loads(out)["from"] == D1.isoformat()
    # explain reads one deployment's rows of the manifest's object, as from a folder
    local = tmp_path / "local"
    code, _, err = run(capsys, "export", "--from-json", str(source), "--out", str(local),
                       "--snapshot-date", D2.isoformat())  # fmt: skip
    assert code == 0, err
    key = ds.dataset(str(local / "deployments")).to_table(columns=["id"])["id"][7].as_py()
    explained = [run(capsys, "explain", key, "--out", out_dir) for out_dir in (s3_out, str(local))]
    assert explained[0][0] == 0 and explained[0][1] == explained[1][1] and key in explained[0][1]


def test_dims_demo_over_the_sandbox_lands_on_s3(s3_server, s3_out, capsys):
    """The service path (the embedded sandbox over HTTP) to object storage, report included."""
    code, out, err = run(capsys, "demo", "--out", s3_out, "--deployments", "25")
    assert code == 0, err
    assert f"report: {s3_out}/reports/snapshot_date=" in out
    assert read_arrow(s3_out, "deployments").num_rows == 25


# --- whole snapshots: a racing reader, a killed export, one writer at a time ---------------

#: `dims export` that stops at one point of the object-store publish (argv[1]: "commit" =
#: everything uploaded to staging, nothing committed; "publish" = committed and the first
#: table's object published) and waits there, after writing a marker (argv[2]), to be killed.
#: "hold" stops before the commit too (its lease held) until `<marker>.release` exists.
STALLED_EXPORT = """
import signal, sys, time
from pathlib import Path
from dims._cli import main
from dims._storage._remote_target import ObjectStoreTarget

where, marker = sys.argv[1], Path(sys.argv[2])
commit, publish_staged = ObjectStoreTarget._commit, ObjectStoreTarget._publish_staged


def stall():
    marker.write_text(where)
    while True:
        signal.pause()


def stalled_commit(self, manifest):
    if where == "commit":
        stall()
    if where == "hold":
        marker.write_text(where)
        while not marker.with_suffix(".release").exists():
            time.sleep(0.05)
    commit(self, manifest)


def stalled_publish(self, staging, manifest):
    if where != "publish":
        return publish_staged(self, staging, manifest)
    first = sorted(manifest.files.values())[0]
    self.store.copy(f"{staging}/{first}", first)
    stall()


ObjectStoreTarget._commit = stalled_commit
ObjectStoreTarget._publish_staged = stalled_publish
sys.exit(main(sys.argv[3:]))
"""


def stalled_export(where: str, source: Path, out: str, tmp_path: Path) -> subprocess.Popen[str]:
    """A real `dims export` process stopped at `where` of its publish (see STALLED_EXPORT)."""
    marker = tmp_path / f"stalled-{where}"
    child = subprocess.Popen(
        [
            sys.executable, "-c", STALLED_EXPORT, where, str(marker),
            "export", "--from-json", str(source), "--out", out, "--snapshot-date", str(D1),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    deadline = time.monotonic() + DEADLINE_S
    while not marker.exists():
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            raise AssertionError(f"the export did not stall: {child.communicate(timeout=30)}")
        time.sleep(0.05)
    return child


def kill(child: subprocess.Popen[str]) -> None:
    child.kill()  # SIGKILL: no clean-up code runs
    child.communicate(timeout=30)


def dims_view(out: str) -> dict[str, pa.Table]:
    """The latest snapshot's deployments and containers, as dims' readers give them."""
    return read_tables(out, {"deployments": None, "deployment_containers": None})


def one_export(tables: dict[str, pa.Table]) -> str:
    """The one export every table came from (fails on a mix)."""
    (made_by,) = {(t.schema.metadata or {})[b"dims.export_id"] for t in tables.values()}
    assert b"," not in made_by
    return made_by.decode()


def test_a_killed_upload_leaves_the_previous_snapshot_and_the_next_export_cleans_up(
    s3_server, s3_out, tmp_path, monkeypatch
):
    first = export(dump(tmp_path, "first", 50, seed=1), s3_out)
    before = objects(s3_server, s3_out)
    child = stalled_export("commit", dump(tmp_path, "second", 70, seed=2), s3_out, tmp_path)
    try:
        staged = [key for key in objects(s3_server, s3_out) if key.startswith("_staging/")]
        assert len(staged) == len(TABLE_NAMES)  # every table uploaded, none published
        with (
            pytest.warns(ExportWaitWarning, match="another export is writing to"),
            pytest.raises(ExportError, match=r"another export kept .* busy"),
        ):
            export(dump(tmp_path, "third", 10, seed=3), s3_out, lock_timeout=1.0)
    finally:
        kill(child)
    after_kill = objects(s3_server, s3_out)
    assert {k: v for k, v in after_kill.items() if k in before} == before  # nothing changed
    assert one_export(dims_view(s3_out)) == first.manifest.export_id
    assert plain_dataset(s3_server, s3_out, "deployments").num_rows == 50

    # what a first publish killed before its manifest leaves: a day no manifest names, and
    # a stray file in a day that has one; no dims reader looks at either
    fs, root = s3_server.filesystem(), bucket_path(s3_out)
    orphans = [f"deployments/snapshot_date={D3}/part-0.parquet", f"repositories/{D1P}/x.parquet"]
    for key in orphans:
        with fs.open_output_stream(f"{root}/{key}") as stream:
            stream.write(b"PAR1 not really")
    assert snapshot_dates(s3_out) == [D1]

    short_leases(monkeypatch)  # the dead export's lease is soon stale
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExportWaitWarning)  # until that lease is stale
        second = export(dump(tmp_path, "fourth", 30, seed=4), s3_out, D2)
    left = objects(s3_server, s3_out)
    assert not [key for key in left if key.startswith(("_staging/", "_leases/"))]
    assert not set(orphans) & set(left)
    assert one_export(dims_view(s3_out)) == second.manifest.export_id
    assert read_arrow(s3_out, "deployments", D1).num_rows == 50


def test_an_export_killed_mid_publish_is_finished_by_the_next_one(
    s3_server, s3_out, tmp_path, monkeypatch
):
    """Killed after its commit, with one table's object replaced: dims' readers refuse the
    mixed day (never read it as one snapshot); the next export publishes the rest."""
    export(dump(tmp_path, "first", 50, seed=1), s3_out)
    child = stalled_export("publish", dump(tmp_path, "second", 70, seed=2), s3_out, tmp_path)
    kill(child)
    mixed = sorted(TABLE_NAMES)[0]
    with pytest.raises(DatasetError, match=f"being replaced .*{mixed}"):
        read_arrow(s3_out, mixed)
    assert read_arrow(s3_out, "deployments").num_rows == 50  # not yet replaced

    short_leases(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExportWaitWarning)
        export(dump(tmp_path, "third", 30, seed=3), s3_out, D2)
    assert read_arrow(s3_out, "deployments", D1).num_rows == 70  # the killed one, finished
    assert read_arrow(s3_out, mixed, D1).num_rows > 0
    kept = [key for key in objects(s3_server, s3_out) if key.startswith("_replaced/")]
    assert f"_manifests/{D1}.json" in {key.split("/", 2)[2] for key in kept}


# --- fencing: an export paused past its lease, a commit that cannot be finished -------------

#: `dims export` that stops itself (SIGSTOP: every thread, its lease renewer too) right after
#: its first object is uploaded to staging, its leases renewed and stale as in SHORT_LEASE
#: (argv[2], argv[3]); the marker (argv[1]) names that object. SIGCONT lets it go on.
PAUSED_EXPORT = """
import os, signal, sys
from pathlib import Path
from dims._cli import main
from dims._storage import Store
from dims._storage import _remote_target as remote_target

marker = Path(sys.argv[1])
remote_target.LEASE_RENEW_S, remote_target.LEASE_STALE_S = map(float, sys.argv[2:4])
upload = Store.upload


def upload_then_stop(self, local, key):
    upload(self, local, key)
    if not marker.exists():
        marker.write_text(key)
        os.kill(os.getpid(), signal.SIGSTOP)


Store.upload = upload_then_stop
sys.exit(main(sys.argv[4:]))
"""


def stopped(pid: int) -> bool:
    """Is the process stopped (state T in /proc/<pid>/stat)?"""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "T"


def assert_day_is(server: S3Server, out: str, result, day: date) -> None:
    """`day` is wholly `result`'s export: for dims' readers, and for a plain reader, whose
    one object per table carries that export's id and row count."""
    made_by = result.manifest.export_id
    assert one_export(read_tables(out, dict.fromkeys(TABLE_NAMES), day)) == made_by
    manifest = json.loads(
        server.filesystem().open_input_file(f"{bucket_path(out)}/_manifests/{day}.json").read()
    )
    assert manifest["export_id"] == made_by
    for table in TABLE_NAMES:
        key = f"{bucket_path(out)}/{table}/snapshot_date={day}/part-0.parquet"
        with server.filesystem().open_input_file(key) as handle:
            meta = pq.read_metadata(handle)
        assert meta.metadata[b"dims.export_id"] == made_by.encode(), table
        assert meta.num_rows == result.rows[table], table


def left_over(server: S3Server, out: str) -> list[str]:
    return [key for key in objects(server, out) if key.startswith(("_staging/", "_leases/"))]


def test_an_export_paused_past_its_lease_never_publishes(s3_server, s3_out, tmp_path, monkeypatch):
    """Export A is stopped (a real SIGSTOP, every thread) after uploading its first table to
    staging, and stays stopped past its lease; export B takes the dataset over, removes A's
    staging and publishes the same day. Continued, A finds its lease lost and stops before
    its commit, with one line: the day is B's whole, for dims and for a plain reader, and
    the next export finds nothing to trip on."""
    short_leases(monkeypatch)
    export(dump(tmp_path, "first", 40, seed=1), s3_out)
    marker = tmp_path / "paused"
    paused = subprocess.Popen(
        [
            sys.executable, "-c", PAUSED_EXPORT, str(marker), *map(str, SHORT_LEASE),
            "export", "--from-json", str(dump(tmp_path, "a", 3_000, seed=2)),
            "--out", s3_out, "--snapshot-date", str(D1),
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        poll_until(lambda: marker.exists() and stopped(paused.pid), paused, "A to stop")
        assert marker.read_text().endswith(f"/deployments/{D1P}/part-0.parquet")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ExportWaitWarning)  # until A's lease is stale
            taken_over = export(dump(tmp_path, "b", 50, seed=3), s3_out, lock_timeout=DEADLINE_S)
        assert left_over(s3_server, s3_out) == []  # A's lease and staging removed
    finally:
        os.kill(paused.pid, signal.SIGCONT)
    _, err = paused.communicate(timeout=DEADLINE_S)
    assert paused.returncode == 1, err
    (line,) = err.strip().splitlines()
    assert "lost its lease" in line and "nothing of this export was published" in line

    assert_day_is(s3_server, s3_out, taken_over, D1)
    assert (
        len({key.split("/")[1] for key in objects(s3_server, s3_out) if "_replaced/" in key}) == 1
    )
    after = export(dump(tmp_path, "c", 30, seed=4), s3_out, D2)
    assert_day_is(s3_server, s3_out, taken_over, D1)
    assert_day_is(s3_server, s3_out, after, D2)
    assert left_over(s3_server, s3_out) == []


def poll_until(condition, child: subprocess.Popen[str], what: str) -> None:
    """Wait (bounded) for `condition()`, failing at once when `child` ended."""
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            raise AssertionError(f"timed out waiting for {what}: {child.communicate(timeout=30)}")
        time.sleep(0.02)


def test_a_commit_that_cannot_be_finished_is_rolled_back(s3_server, s3_out, tmp_path, monkeypatch):
    """An export killed mid-publish (committed, one table copied) whose staged deployments
    are gone, as an export that had lost its lease left it: the next export puts the
    earlier version back, instead of failing on it for ever, and the exports after it work."""
    first = export(dump(tmp_path, "first", 50, seed=1), s3_out)
    kill(stalled_export("publish", dump(tmp_path, "second", 70, seed=2), s3_out, tmp_path))
    (staged,) = [key for key in objects(s3_server, s3_out) if key.startswith("_staging/")
                 and f"/deployments/{D1P}/" in key]  # fmt: skip
    s3_server.filesystem().delete_file(f"{bucket_path(s3_out)}/{staged}")
    with pytest.raises(DatasetError, match="being replaced"):
        read_tables(s3_out, dict.fromkeys(TABLE_NAMES))

    short_leases(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExportWaitWarning)  # until the killed one's lease is stale
        second = export(dump(tmp_path, "third", 30, seed=3), s3_out, D2, lock_timeout=DEADLINE_S)
    assert_day_is(s3_server, s3_out, first, D1)  # the earlier version, whole again
    assert_day_is(s3_server, s3_out, second, D2)
    assert left_over(s3_server, s3_out) == []
    assert not [key for key in objects(s3_server, s3_out) if key.startswith("_replaced/")]
    again = export(dump(tmp_path, "fourth", 20, seed=4), s3_out)
    assert_day_is(s3_server, s3_out, again, D1)


def test_a_commit_against_a_version_the_day_no_longer_has_changes_nothing(
    s3_server, s3_out, tmp_path
):
    """A commit record made against the day's earlier version (what an export that lost
    its lease may write after the day was published again), its staged files gone: the next
    export removes it and leaves the day as published, its kept version too."""
    export(dump(tmp_path, "first", 50, seed=1), s3_out)
    second = export(dump(tmp_path, "second", 40, seed=2), s3_out)
    stale = {**second.manifest.to_dict(), "export_id": "0123456789abcdef"}  # its basis: the first
    fs, root = s3_server.filesystem(), bucket_path(s3_out)
    with fs.open_output_stream(f"{root}/_staging/{stale['export_id']}/manifest.json") as stream:
        stream.write(json.dumps(stale).encode())
    before = {k: v for k, v in objects(s3_server, s3_out).items() if not k.startswith("_staging/")}

    third = export(dump(tmp_path, "third", 30, seed=3), s3_out, D2)
    after = objects(s3_server, s3_out)
    assert {k: after.get(k) for k in before} == before  # D1 and its kept version untouched
    assert_day_is(s3_server, s3_out, second, D1)
    assert_day_is(s3_server, s3_out, third, D2)
    assert left_over(s3_server, s3_out) == []


def export_interrupted_after_its_first_upload(
    out: str, source: Path, monkeypatch: pytest.MonkeyPatch, happen
) -> LeaseLost:
    """An export (in this process) that runs `happen()` right after its first object is
    staged, and must then stop with LeaseLost before anything is committed: that error."""
    upload, done = Store.upload, []

    def upload_then(self: Store, local: Path, key: str) -> None:
        upload(self, local, key)
        if not done:
            done.append(key)
            happen()

    monkeypatch.setattr(Store, "upload", upload_then)
    with pytest.raises(LeaseLost) as lost:
        export(source, out)
    assert done and "/_staging/" in f"/{done[0]}"
    (line,) = str(lost.value).splitlines()
    assert "nothing of this export was published" in line
    return lost.value


def test_a_lease_rewritten_with_an_older_generation_is_no_longer_held(
    s3_server, s3_out, tmp_path, monkeypatch
):
    """While an export uploads, its lease object is rewritten with the generation before the
    one it holds (a delayed PUT landing late, or a writer replaying an old lease): the
    object is there, with the export's own id and a fresh time, but it is not the lease
    this export last wrote, so the export stops before its commit and the day stays the
    earlier export's."""
    first = export(dump(tmp_path, "first", 40, seed=1), s3_out)
    fs, root = s3_server.filesystem(), bucket_path(s3_out)
    rewritten: list[dict[str, object]] = []

    def rewrite_with_an_older_generation() -> None:
        (key,) = [k for k in objects(s3_server, s3_out) if k.startswith("_leases/")]
        body = json.loads(fs.open_input_file(f"{root}/{key}").read())
        older = {**body, "generation": body["generation"] - 1}
        with fs.open_output_stream(f"{root}/{key}") as stream:
            stream.write(json.dumps(older).encode())
        rewritten.append(older)

    lost = export_interrupted_after_its_first_upload(
        s3_out, dump(tmp_path, "second", 50, seed=2), monkeypatch, rewrite_with_an_older_generation
    )
    (older,) = rewritten
    assert f"its lease holds generation {older['generation']}, not its own" in str(lost)
    assert_day_is(s3_server, s3_out, first, D1)
    assert left_over(s3_server, s3_out) == []  # its staging withdrawn, its lease removed


def test_a_paused_export_stops_at_its_leases_margin_before_the_lease_is_stale(
    s3_server, s3_out, tmp_path, monkeypatch
):
    """An export paused (its clock jumps, as after a SIGSTOP or a frozen VM) for longer than
    its lease's margin, LEASE_STALE_S - 2 * LEASE_RENEW_S, but not as long as LEASE_STALE_S:
    no other export can have taken the dataset yet (the lease is still live to them), and
    it stops anyway, before its commit, since it can no longer be sure of that."""
    first = export(dump(tmp_path, "first", 40, seed=1), s3_out)
    margin = remote_target.LEASE_STALE_S - 2 * remote_target.LEASE_RENEW_S
    paused = margin + remote_target.LEASE_RENEW_S
    assert margin < paused < remote_target.LEASE_STALE_S
    jumped = [0.0]
    clock = SimpleNamespace(monotonic=lambda: time.monotonic() + jumped[0], sleep=time.sleep)
    monkeypatch.setattr(remote_target, "time", clock)
    live: list[list[str]] = []

    def pause() -> None:
        jumped[0] = paused
        other = remote_target.ObjectStoreTarget(s3_out, paths.location(s3_out), "0" * 16)
        other.lease.write()  # what another export starting now does: write, then list
        live.append(other._live_leases(other.lease.key))
        other.store.delete(other.lease.key)

    lost = export_interrupted_after_its_first_upload(
        s3_out, dump(tmp_path, "second", 50, seed=2), monkeypatch, pause
    )
    assert [len(keys) for keys in live] == [1]  # the paused export's lease: live, not stale
    assert "this process was paused" in str(lost)
    assert_day_is(s3_server, s3_out, first, D1)
    assert left_over(s3_server, s3_out) == []


def test_a_copy_from_a_missing_object_is_file_not_found(s3_out):
    """S3 answers a CopyObject of a missing key with NoSuchKey, which pyarrow raises as a bare
    OSError: the store says FileNotFoundError, as for a read (a kept or staged file gone)."""
    with pytest.raises(FileNotFoundError, match="no such object"):
        open_store(s3_out).copy("deployments/nothing.parquet", "elsewhere.parquet")


def test_five_reexports_of_a_day_keep_the_three_newest_replaced_versions(
    s3_server, s3_out, tmp_path
):
    """As in a folder: of the four versions five exports of one day replace, the newest three
    stay in `_replaced/` (the second, third and fourth exports'), each whole and readable."""
    made = [export(dump(tmp_path, f"run{n}", 10 + n, seed=n), s3_out) for n in range(5)]
    kept = sorted(
        {key.split("/")[1] for key in objects(s3_server, s3_out) if key.startswith("_replaced/")}
    )
    assert len(kept) == 3
    for name, result in zip(kept, made[1:4], strict=True):
        folder = f"{s3_out}/_replaced/{name}"
        assert one_export(read_tables(folder, dict.fromkeys(TABLE_NAMES), D1)) == (
            result.manifest.export_id
        )
        assert read_arrow(folder, "deployments", D1).num_rows == result.rows["deployments"]
    assert made[4].manifest.replaced.kept_in == f"_replaced/{kept[-1]}"


def test_a_day_without_a_manifest_is_in_no_history_view(s3_server, s3_out, tmp_path, capsys):
    """Tables of a day whose manifest is missing (a first publish killed before it) are no
    snapshot: not in the day listing, nor in any `<table>_history` view of `dims sql` or
    `duckdb_connection`, nor in the history counts the reports chart."""
    first = export(dump(tmp_path, "first", 30, seed=1), s3_out)
    second = export(dump(tmp_path, "second", 20, seed=2), s3_out, D2)
    fs, root = s3_server.filesystem(), bucket_path(s3_out)
    for table in TABLE_NAMES:  # D3: every table's file there, but no manifest
        fs.copy_file(f"{root}/{table}/{D1P}/part-0.parquet", f"{root}/{table}/snapshot_date={D3}/x")
        fs.move(
            f"{root}/{table}/snapshot_date={D3}/x",
            f"{root}/{table}/snapshot_date={D3}/part-0.parquet",
        )
    assert snapshot_dates(s3_out) == [D1, D2]
    with pytest.raises(DatasetError, match=f"no deployments snapshot dated {D3}"):
        read_arrow(s3_out, "deployments", D3)

    code, out, err = run(
        capsys, "sql", "--out", s3_out, "--json",
        "select snapshot_date, count(*) as n from deployments_history group by 1 order by 1",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out) == [
        {"snapshot_date": str(D1), "n": 30},
        {"snapshot_date": str(D2), "n": 20},
    ]
    with duckdb_connection(s3_out) as connection:
        for table in TABLE_NAMES:
            days = connection.execute(
                f"select snapshot_date, count(*) from {table}_history group by 1 order by 1"
            ).fetchall()
            expected = [(D1, first.rows[table]), (D2, second.rows[table])]
            assert days == [day for day in expected if day[1]], table
    counts = history_counts(s3_out, "deployments", [])
    assert counts.to_dict("records") == [
        {"snapshot_date": str(D1), "rows": 30},
        {"snapshot_date": str(D2), "rows": 20},
    ]


def _read_through_dims(
    s3_out: str, seen: list[str], problems: list[str], refused: list[str]
) -> None:
    """dims' readers: one export's tables whole, or a refusal; never a mix."""
    try:
        tables = dims_view(s3_out)
        ids = set(tables["deployment_containers"]["deployment_id"].to_pylist())
        if not ids <= set(tables["deployments"]["id"].to_pylist()):
            problems.append("containers of deployments the snapshot lacks")
        seen.append(one_export(tables))
    except DatasetError:
        refused.append("dims")  # read while a file was overwritten: never a mix
    except AssertionError as exc:
        problems.append(f"mixed exports: {exc}")


def _read_plainly(
    s3_server, s3_out: str, table: str, counts: set[int], problems: list[str], refused: list[str]
) -> None:
    """A plain pyarrow dataset over the table's prefix: each day's file old or new, whole."""
    try:
        got = plain_dataset(s3_server, s3_out, table)
    except (OSError, pa.ArrowException):
        refused.append("plain")  # a torn read fails; it is never a wrong count
        return
    for row in got.group_by("snapshot_date").aggregate([([], "count_all")]).to_pylist():
        if row["count_all"] not in counts:
            problems.append(f"{table} {row['snapshot_date']}: {row['count_all']}")


def test_a_reader_racing_exports_never_sees_part_of_a_snapshot(s3_server, s3_out, tmp_path):
    """While D1 is replaced and then D2 is added, a reader loops: dims' readers always get
    one export's tables whole (or a 'being replaced' error), and a plain pyarrow dataset over
    each table's prefix sees each day's file whole: the old or the new row count (or a read
    error, when it read an object while it was overwritten)."""
    old, new = dump(tmp_path, "old", 120, seed=1), dump(tmp_path, "new", 90, seed=2)
    first = export(old, s3_out)
    expected = export(new, tmp_path / "local")  # the new version's row counts
    counts = {table: {first.rows[table], expected.rows[table]} for table in TABLE_NAMES}
    seen: list[str] = []
    problems: list[str] = []
    refused: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        for _ in range(2_000):  # bounded; one more read once the exports are done
            last = stop.is_set()
            _read_through_dims(s3_out, seen, problems, refused)
            for table in ("deployments", "deployment_containers"):
                _read_plainly(s3_server, s3_out, table, counts[table], problems, refused)
            if last:
                return

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        while not seen and thread.is_alive():
            time.sleep(0.01)
        second = export(new, s3_out)  # replaces D1 object by object
        third = export(new, s3_out, D2)  # a new day appears table by table
    finally:
        stop.set()
        thread.join(timeout=DEADLINE_S)
    assert not thread.is_alive() and not problems, problems[:5]
    assert seen[0] == first.manifest.export_id and seen[-1] == third.manifest.export_id
    assert set(seen) <= {m.manifest.export_id for m in (first, second, third)}


def test_credentials_never_reach_the_output_and_errors_are_one_line(
    s3_server, s3_out, tmp_path, capsys, monkeypatch
):
    """A refused key: one line naming the dataset, without the key (nor with --debug's
    traceback); a missing bucket: said so, before anything is fetched."""
    source = dump(tmp_path, "fleet", 5, seed=1)
    wrong = "wrong-secret-0123456789abcdef"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", wrong)
    code, out, err = run(capsys, "export", "--from-json", str(source), "--out", s3_out)
    assert code == 1
    (line,) = err.strip().splitlines()
    assert line.startswith(f"dims export: error: cannot reach {s3_out}: ")
    debug = subprocess.run(
        [str(DIMS), "--debug", "sql", "--out", s3_out, "select 1"],
        capture_output=True, text=True, timeout=DEADLINE_S,
    )  # fmt: skip
    assert debug.returncode == 1 and "Traceback" in debug.stderr
    for text in (out, err, debug.stdout, debug.stderr):
        assert wrong not in text and s3_server.access_key not in text

    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", s3_server.secret_key)
    code, _, err = run(
        capsys, "export", "--from-json", str(source), "--out", "s3://no-such-bucket-dims/x"
    )
    assert code == 1 and "the bucket of s3://no-such-bucket-dims/x does not exist" in err

    in_uri = f"s3://{s3_server.access_key}:{wrong}@{s3_server.bucket}/x?region=us-east-1"
    for argv in (("export", "--from-json", str(source)), ("sql", "select 1"), ("report",)):
        code, out, err = run(capsys, *argv, "--out", in_uri)
        assert code == 1 and "credentials or options in the URI are not accepted" in err
        assert wrong not in out + err and s3_server.access_key not in out + err


def test_two_exports_started_together_into_one_prefix_take_turns(s3_server, s3_out, tmp_path):
    """Real processes: the leases make one wait for the other; both succeed, and the day is
    wholly one export's (the manifest's export id in every table's file). The first holds
    its lease until the second says it waits (exports of 60 records are too quick to
    overlap by chance)."""
    dumps = [dump(tmp_path, f"fleet{n}", 60, seed=n) for n in range(2)]
    first = stalled_export("hold", dumps[0], s3_out, tmp_path)
    argv = [str(DIMS), "export", "--out", s3_out, "--snapshot-date", str(D1), "--from-json"]
    waiting = tmp_path / "second.err"
    with waiting.open("w") as err:
        second = subprocess.Popen([*argv, str(dumps[1])], stdout=subprocess.PIPE, stderr=err)
        deadline = time.monotonic() + DEADLINE_S
        while "another export is writing to" not in waiting.read_text():
            assert second.poll() is None and time.monotonic() < deadline, waiting.read_text()
            time.sleep(0.05)
        (tmp_path / "stalled-hold.release").touch()
        outcomes = [first.communicate(timeout=120), second.communicate(timeout=120)]
    assert [first.returncode, second.returncode] == [0, 0], outcomes
    tables = {table: read_arrow(s3_out, table) for table in TABLE_NAMES}
    made_by = one_export(tables)
    manifest = json.loads(
        s3_server.filesystem().open_input_file(f"{bucket_path(s3_out)}/_manifests/{D1}.json").read()
    )
    assert manifest["export_id"] == made_by and manifest["replaced"] is not None
    assert not [
        key for key in objects(s3_server, s3_out) if key.startswith(("_leases/", "_staging/"))
    ]


def test_a_filtered_export_to_s3_has_its_own_root(s3_out, tmp_path):
    result = export(dump(tmp_path, "fleet", 20, seed=1), s3_out, filters={"status": "READY"})
    assert result.out_dir == f"{s3_out}/filtered/status-READY"
    assert result.manifest.dataset == "filtered/status-READY"
    assert read_arrow(result.out_dir, "deployments").num_rows == 20
    with pytest.raises(DatasetError, match="no snapshot of deployments"):
        read_arrow(s3_out, "deployments")  # the fleet's root has no snapshot
