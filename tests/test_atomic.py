"""One way to replace a file (`dims._atomic.write_atomic`): whole or not at all.

Over the helper: a write that fails midway leaves no partial file and the earlier file as it
was (its bytes and its inode), and a write that succeeds replaces it with the mode a new
file gets. Through a command: `dims report` whose report.html cannot be written whole (the
file-size limit of its process, a real EFBIG from the kernel) keeps the earlier report.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dims._atomic import new_file_mode, write_atomic

DIMS = Path(sys.executable).parent / "dims"


def _half_then_fail(path: Path) -> None:
    with path.open("wb") as fh:
        fh.write(b"new half")
        fh.flush()
    raise RuntimeError("the writer failed midway")


def test_a_failed_write_leaves_the_earlier_file_and_nothing_else(tmp_path):
    target = tmp_path / "report.html"
    target.write_bytes(b"the earlier report")
    inode = target.stat().st_ino
    with pytest.raises(RuntimeError, match="midway"):
        write_atomic(target, _half_then_fail)
    assert target.read_bytes() == b"the earlier report"
    assert target.stat().st_ino == inode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_a_failed_first_write_leaves_no_file(tmp_path):
    with pytest.raises(RuntimeError):
        write_atomic(tmp_path / "bill.csv", _half_then_fail)
    assert list(tmp_path.iterdir()) == []


def test_a_write_replaces_the_file_whole_with_a_new_files_mode(tmp_path):
    target = tmp_path / "changes.parquet"
    target.write_bytes(b"old")
    os.chmod(target, 0o600)
    write_atomic(target, lambda path: path.write_bytes(b"new and complete"))
    assert target.read_bytes() == b"new and complete"
    assert target.stat().st_mode & 0o777 == new_file_mode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["changes.parquet"]


def _file_size_limit(limit: int) -> None:
    """In the child: files past `limit` bytes cannot be written (EFBIG, not SIGXFSZ)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="needs RLIMIT_FSIZE")
def test_a_report_that_cannot_be_written_whole_keeps_the_earlier_one(tmp_path):
    out = tmp_path / "demo"
    demo = [DIMS, "demo", "--out", out, "--deployments", "40", "--seed", "3"]
    subprocess.run(demo, check=True, capture_output=True)
    (html,) = (out / "reports").rglob("report.html")
    before, inode = html.read_bytes(), html.stat().st_ino
    limit = len(before) // 2  # the Parquet summaries fit, the page does not
    ran = subprocess.run(
        [DIMS, "report", "--out", out],
        capture_output=True, text=True, preexec_fn=lambda: _file_size_limit(limit),
    )  # fmt: skip
    assert ran.returncode != 0, ran.stdout
    (line,) = ran.stderr.strip().splitlines()  # one line, no traceback, naming the file
    assert "File too large" in line and str(html) in line, line
    assert html.read_bytes() == before and html.stat().st_ino == inode
    assert not [p for p in html.parent.iterdir() if p.name.startswith(".")]
