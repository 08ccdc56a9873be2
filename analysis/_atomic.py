"""Files written whole or not at all: the one way dims replaces a file it writes.

Why: a reader (a dashboard, DuckDB, a script polling the report) must never see half a file,
and a failed write (a full disk, an error midway, a killed process) must leave the earlier
file as it was. Every file dims writes outside a snapshot's work folder goes through
`write_atomic`: the report's files, a FOCUS bill, the catalog, diff's `--changes-out`. The
snapshot writer writes into a work folder and publishes it by renames of its own (a
journal of many files); it takes its fsyncs from here.

How: the content is written to a temporary file beside the target (the same folder, so the
same file system: `os.replace` is then atomic), given the mode a new file would have (not
mkstemp's 0600), flushed to disk, renamed over the target, and the folder flushed so the
rename survives a crash. On any failure the temporary file goes and the target is untouched.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def write_atomic(target: Path, write: Callable[[Path], object]) -> None:
    """`write(temp)` fills a temporary file beside `target` (it exists, empty; a writer that
    must create the file itself may remove it first), which then replaces `target` at once.
    Raises what `write` or the file system raised (an OSError that names no file, or the
    temporary one, names `target`); `target` is then as it was before."""
    folder, prefix = target.parent, f".{target.name}."
    try:
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
        os.close(fd)
        temp = Path(name)
        try:
            write(temp)
            os.chmod(temp, new_file_mode())
            fsync_file(temp)
            os.replace(temp, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
        fsync_folder(folder)
    except OSError as exc:  # named by the file the user knows, not by the temporary one
        if exc.filename is None or Path(exc.filename).name.startswith(prefix):
            raise type(exc)(exc.errno, exc.strerror or str(exc), str(target)) from exc
        raise


def new_file_mode() -> int:
    """0666 less the process umask: the mode `open()` gives a new file, as the dataset has."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def fsync_file(path: Path) -> None:
    """`path`'s content on disk (not only in the page cache) before it is renamed into place."""
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def fsync_folder(path: Path) -> None:
    """A rename in `path` on disk (POSIX: the folder's entry is what a crash could lose)."""
    if os.name != "posix":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
