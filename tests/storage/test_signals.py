"""SIGTERM and SIGHUP stop an export the way Ctrl-C does (issue 13, row 5).

Kubernetes stops a CronJob's pod with SIGTERM; a closed terminal sends SIGHUP. Each is sent
to a real `dims export` stalled mid-write (the harness of tests/storage/test_data_safety.py: row
groups on disk in its temporary folder, writers open). The export must say so in one line,
exit 128 + the signal's number, remove its temporary folder, and leave the earlier
snapshot byte-identical and readable by pyarrow and DuckDB. Also as PID 1 of its own PID
namespace, as in a container: the kernel delivers PID 1 only the signals it handles.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

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
    with safety.export_stalled_mid_write(out, safety.D2) as child:
        child.send_signal(signum)
        _, stderr = child.communicate(timeout=safety.HANG_S)
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
    from dims._cli import main

    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    dump = tmp_path / "d.json"
    dump.write_text("[]")
    assert main(["export", "--from-json", str(dump), "--out", str(tmp_path / "o")]) == 0
    assert {s: signal.getsignal(s) for s in before} == before


def _pid_namespaces() -> bool:
    """Whether `unshare --pid --fork` works here (root, or user namespaces allowed)."""
    if shutil.which("unshare") is None:
        return False
    try:
        done = subprocess.run(
            ["unshare", "--pid", "--fork", "sh", "-c", "echo $$"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and done.stdout.strip() == "1"


def _namespaced_pids(host_pid: int) -> list[str]:
    """The process's pid in each PID namespace it is in, outermost first."""
    status = Path(f"/proc/{host_pid}/status").read_text()
    return next(line for line in status.splitlines() if line.startswith("NSpid:")).split()[1:]


@pytest.mark.skipif(
    not _pid_namespaces(), reason="`unshare --pid --fork` is not available here (needs root)"
)
def test_sigterm_reaches_an_export_running_as_pid_1(first_snapshot):
    """Without a handler, SIGTERM to PID 1 is dropped: Kubernetes would wait out its grace
    period and SIGKILL the export, leaving its temporary folder behind."""
    out, before, rows = first_snapshot
    unshared = ("unshare", "--pid", "--fork")
    with safety.export_stalled_mid_write(out, safety.D2, unshared) as child:
        children = Path(f"/proc/{child.pid}/task/{child.pid}/children").read_text().split()
        export = int(children[0])
        assert _namespaced_pids(export)[-1] == "1"  # it really is PID 1 in its namespace
        os.kill(export, signal.SIGTERM)
        _, stderr = child.communicate(timeout=safety.HANG_S)
    assert child.returncode == 143, stderr
    (line,) = stderr.strip().splitlines()
    assert line == "dims: stopped by SIGTERM; nothing partial was left behind"
    assert safety.temporaries(out) == []
    assert safety.files(out) == before
    safety.assert_readable(out, safety.D1, rows)
