"""The progress bar draws on a terminal and stays silent when piped."""

from __future__ import annotations

import io
import re
import threading
import time

from dims import Progress
from dims import _fetch as fetch
from dims._connection import connect, retry_transport
from dims.sandbox import Faults, run_sandbox


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def fetch_with(stream) -> Progress:
    faults = Faults(rate_limit_every=4, retry_after_s=0)
    with run_sandbox(deployments=90, seed=1, faults=faults) as sandbox:
        client = connect(sandbox.base_url)
        with Progress(stream) as progress:
            retry_transport(client).on_retry = progress.retry
            list(fetch.fetch_deployments(client, page_size=10, progress=progress))
    return progress


def test_counts_and_draws_on_a_terminal():
    terminal = Terminal()
    progress = fetch_with(terminal)
    assert progress.records == 90 and progress.pages >= 9 and progress.retries >= 1
    # tqdm redraws at most every 0.1 s, so which postfix is drawn depends on timing
    assert "deployments" in terminal.getvalue()


def test_silent_when_piped():
    pipe = io.StringIO()
    progress = fetch_with(pipe)
    assert progress.records == 90
    assert pipe.getvalue() == ""


# --- what it draws, driven directly (issue 29: records, pages, rate, a total when known) -----


def frames(terminal: Terminal) -> list[str]:
    return [frame for frame in terminal.getvalue().split("\r") if frame.strip()]


def test_it_draws_records_pages_retries_the_rate_and_a_known_total():
    terminal = Terminal()
    with Progress(terminal, refresh_s=3600) as progress:  # no redraw but the ones asked for
        progress.describe("fetching")
        progress.page(100)
        progress.page(100)
        progress.retry("HTTP 503")
        progress.total(1000)
        progress.draw()
        last = frames(terminal)[-1]
    assert last.startswith("fetching:  20%|")
    assert "200/1000" in last and "pages=2 retries=1" in last
    assert re.search(r"\d[\d.]*(?:[kM])? deployments/s", last), last


def test_without_a_total_it_draws_the_count_alone():
    terminal = Terminal()
    with Progress(terminal, refresh_s=3600) as progress:
        progress.page(40)
        progress.draw()
        last = frames(terminal)[-1]
    assert last.startswith("40 deployments [") and "pages=1" in last
    assert "%|" not in last and "/" not in last.split("[")[0]


def test_every_page_is_drawn_even_after_a_burst():
    """tqdm's adaptive skipping, after 700 records at once, drew nothing until 700 more came
    (the count stood at 100 for seconds, then jumped to 800): each page is drawn now. The
    waits only let tqdm's 0.1 s between draws pass; nothing here is timed."""
    terminal = Terminal()
    with Progress(terminal, refresh_s=3600) as progress:
        time.sleep(0.15)
        progress.page(700)
        for _ in range(3):
            time.sleep(0.15)
            progress.page(100)
        drawn = frames(terminal)
    counts = {int(m[1]) for f in drawn if (m := re.match(r"(\d+) deployments", f))}
    assert {700, 800, 900, 1000} <= counts, drawn


def test_it_redraws_while_nothing_arrives():
    """A stalled service must not look frozen: frames keep coming with no page at all."""
    terminal = Terminal()
    with Progress(terminal, refresh_s=0.01) as progress:
        progress.page(100)
        seen = len(frames(terminal))
        waited = 0.0
        while len(frames(terminal)) < seen + 3 and waited < 30:  # bounded, never timed
            time.sleep(0.05)
            waited += 0.05
        later = frames(terminal)[seen:]
        assert len(later) >= 3, "no redraw while nothing arrived"
    assert all("100 deployments" in frame for frame in later)
    assert progress.pages == 1 and progress.records == 100


def test_closing_stops_the_redraws():
    terminal = Terminal()
    progress = Progress(terminal, refresh_s=0.01)
    progress.close()
    drawn = terminal.getvalue()
    time.sleep(0.1)
    assert terminal.getvalue() == drawn
    assert [t for t in threading.enumerate() if t.name == "dims-progress"] == []


def test_a_piped_progress_starts_no_thread():
    progress = Progress(io.StringIO())
    assert [t for t in threading.enumerate() if t.name == "dims-progress"] == []
    progress.page(10)
    progress.close()
    assert progress.records == 10
