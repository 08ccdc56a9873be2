"""SIGTERM and SIGHUP stop an export the way Ctrl-C does (issue 13, row 5).

Kubernetes stops a CronJob's pod with SIGTERM; a closed terminal sends SIGHUP. Each is sent
to a real `dims export` stalled mid-write (the harness of tests/test_data_safety.py: row
groups on disk in its temporary folder, writers open). The export must say so in one line,
exit 128 + the signal's number, remove its temporary folder, and leave the earlier
snapshot byte-identical and readable by pyarrow and DuckDB.
"""

from __future__ import annotations

import signal

import pytest
import test_data_safety as safety

first_snapshot = safety.first_snapshot  # the fixture: snapshot D1 written by the CLI


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)], ids=["TERM", "HUP"]
)
def test_a_stop_signal_mid_write_exits_with_one_line_and_leaves_nothing(
    first_snapshot, tmp_path, signum, code
):
    out, before, rows = first_snapshot
    with safety.export_stalled_mid_write(out, safety.D2, tmp_path) as child:
        child.send_signal(signum)
        _, stderr = child.communicate(timeout=safety.DEADLINE_S)
    assert child.returncode == code
    name = signal.Signals(signum).name
    assert stderr.strip().splitlines() == [
        f"dims: stopped by {name}; nothing partial was left behind"
    ]
    assert safety.temporaries(out) == []
    assert safety.files(out) == before
    assert all("2025-01-02" not in p for p in safety.visible_partitions(out))
    safety.assert_readable(out, safety.D1, rows)


def test_signal_handlers_are_restored_after_main(tmp_path):
    """In-process callers (notebooks, tests) get their own handlers back."""
    from analysis.cli import main

    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    dump = tmp_path / "d.json"
    dump.write_text("[]")
    assert main(["export", "--from-json", str(dump), "--out", str(tmp_path / "o")]) == 0
    assert {s: signal.getsignal(s) for s in before} == before
