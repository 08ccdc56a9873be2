"""report.html renders in headless Chromium, offline, with its charts drawn.

Chromium is a Debian package that CI and the Makefile install; this test installs nothing and
is skipped (saying why) only where /usr/bin/chromium is absent.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import fleet_math as fm
import numpy as np
import pytest
from PIL import Image

from analysis import reports
from analysis.reports.charts import PALETTE
from analysis.sandbox import generate_fleet

CHROMIUM = Path("/usr/bin/chromium")
WIDTH, HEIGHT = 1280, 2400

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="/usr/bin/chromium is absent: install the Debian package `chromium` to run this test",
)


def _rgb(hex_color: str) -> tuple[int, int, int]:
    return tuple(int(hex_color[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


@pytest.fixture(scope="module")
def screenshot(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("browser")
    fleet = generate_fleet(200, seed=5)
    fm.export_fleet(fleet.deployments, fleet.deployment_types, work / "data", "2025-06-01")
    report = reports.write_report(work / "data")
    shot = work / "report.png"
    command = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={work / 'profile'}",
        f"--screenshot={shot}",
        f"--window-size={WIDTH},{HEIGHT}",
        report.resolve().as_uri(),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert shot.exists(), (
        f"chromium wrote no screenshot (exit {result.returncode}):\n{result.stderr[-2000:]}"
    )
    return shot


def test_screenshot_is_not_blank(screenshot: Path) -> None:
    image = Image.open(screenshot).convert("RGB")
    assert image.size == (WIDTH, HEIGHT)
    colors = image.getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > 200, "the page rendered nearly uniform"
    most_common = max(colors)[0]
    assert most_common < WIDTH * HEIGHT * 0.95, "the page is almost one colour"


def test_charts_are_drawn(screenshot: Path) -> None:
    """The capacity chart's bars use the chart palette; find its first colours on screen."""
    pixels = np.asarray(Image.open(screenshot).convert("RGB"), dtype=np.int16)
    for hex_color in PALETTE[:2]:  # main and queue, in every fleet
        close = np.abs(pixels - np.array(_rgb(hex_color), dtype=np.int16)) <= 12
        hits = int(close.all(axis=2).sum())
        assert hits > 2000, f"chart colour {hex_color} found on only {hits} pixels"
