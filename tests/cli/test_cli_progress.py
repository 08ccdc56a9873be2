"""`dims export` on a terminal: the progress bar, with the dump's record count as its total.

Run as a user runs it, with stderr on a pseudo-terminal of a real size (tqdm draws nothing
on a terminal 0 columns wide), and read back what was drawn.
"""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

from dims.sandbox import fleet_dump_bytes, generate_fleet

DIMS = Path(sys.executable).parent / "dims"


def drawn_on_a_terminal(argv: list[str]) -> tuple[int, str]:
    """(exit code, what `dims ARGV` drew on its stderr, a 150-column terminal)."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 150, 0, 0))
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the terminal's last writer has gone
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        done = subprocess.run(
            [str(DIMS), *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=side,
            timeout=120,
        )
    finally:
        os.close(side)
    reader.join(30)
    os.close(main)
    return done.returncode, b"".join(chunks).decode(errors="replace")


def test_an_export_from_a_dump_shows_its_record_count_as_the_total(tmp_path):
    dump = tmp_path / "fleet.json"
    dump.write_bytes(fleet_dump_bytes(generate_fleet(250, seed=2)))
    code, drawn = drawn_on_a_terminal(
        ["export", "--from-json", str(dump), "--out", str(tmp_path / "o")]
    )
    assert code == 0, drawn
    frames = [frame for frame in drawn.split("\r") if frame.strip()]
    assert any(frame.startswith("reading fleet.json:") and "/250 [" in frame for frame in frames), (
        frames
    )
