"""A progress bar on a terminal; when piped, a line every few seconds if asked (a CI log)."""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

from ._escape import printable

if TYPE_CHECKING:
    from tqdm import tqdm

#: Seconds between redraws when nothing arrives (at least one a second, so a stall shows).
REFRESH_S = 0.5
#: Seconds between the lines of a long fetch on a stream that is no terminal (`dims export
#: 2>log`, a CI job): a log shows it is alive without a line per page.
LINE_EVERY_S = 5.0


class Progress:
    """Counts deployments, pages and retries; draws a bar when `stream` is a terminal, and
    when it is not, writes one line every `line_every_s` seconds (None, the default: nothing).

    It shows the records so far, the pages, the retries, the elapsed time and the average
    rate, and the total with a bar once one is known (`total`: a dump's record count once
    split). It redraws every `refresh_s` seconds on a thread of its own even when no page
    arrives: a service that stalls looks stalled (the clock runs on, the average rate falls)
    instead of frozen. Each page is drawn as it comes (tqdm's adaptive skipping is off: it
    held the count at 100 for seconds, then jumped to 800). A line (`dims: reading x.json:
    1,200 deployments, 3 pages, 0 retries, 5 s`) is written whether or not anything arrived
    since the last, for the same reason; `enabled=False` draws and writes nothing.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        enabled: bool | None = None,
        refresh_s: float = REFRESH_S,
        line_every_s: float | None = None,
    ) -> None:
        stream = stream or sys.stderr
        terminal = stream.isatty()
        if enabled is None:
            enabled = terminal or line_every_s is not None
        self.pages = 0
        self.records = 0
        self.retries = 0
        #: None when piped: tqdm is imported only to draw (its import is start-up time)
        self._bar: tqdm[None] | None = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._stream = stream
        self._what = ""
        self._started = time.monotonic()
        if enabled and not terminal and line_every_s is not None:
            self._ticker = threading.Thread(
                target=self._lines, args=(line_every_s,), name="dims-progress", daemon=True
            )
            self._ticker.start()
        elif enabled:
            from tqdm import tqdm

            self._bar = tqdm(
                total=None,
                unit=" deployments",
                file=stream,
                dynamic_ncols=True,
                leave=False,
                miniters=1,  # draw every page (tqdm redraws at most every 0.1 s anyway)
                smoothing=0,  # the average rate, which falls while nothing arrives
            )
            self._postfix()
            self._ticker = threading.Thread(
                target=self._tick, args=(refresh_s,), name="dims-progress", daemon=True
            )
            self._ticker.start()

    def page(self, records: int) -> None:
        self.pages += 1
        self.records += records
        if self._bar is not None:
            self._postfix()
            self._bar.update(records)

    def retry(self, reason: str = "") -> None:
        self.retries += 1
        self._postfix()

    def total(self, records: int) -> None:
        """The number of records the whole source holds, once known: a bar and a percentage."""
        if self._bar is not None:
            self._bar.total = records
            self._bar.refresh()

    def describe(self, text: str) -> None:
        self._what = text
        if self._bar is not None:
            self._bar.set_description_str(text)

    def draw(self) -> None:
        """Redraw now, whether or not anything arrived (the ticker's thread calls it)."""
        if self._bar is not None:
            self._bar.refresh()

    def _tick(self, every: float) -> None:
        while not self._stop.wait(every):
            self.draw()

    def line(self) -> str:
        """The progress so far as one line, as a log shows it."""
        what = f"{printable(self._what)}: " if self._what else ""
        elapsed = time.monotonic() - self._started
        return (
            f"dims: {what}{self.records:,} deployments, {self.pages:,} pages, "
            f"{self.retries:,} retries, {elapsed:.0f} s"
        )

    def _lines(self, every: float) -> None:
        while not self._stop.wait(every):
            try:
                print(self.line(), file=self._stream, flush=True)
            except (OSError, ValueError):  # the log has gone: the export goes on
                return

    def _postfix(self) -> None:
        if self._bar is not None:
            postfix = f"pages={self.pages} retries={self.retries}"
            self._bar.set_postfix_str(postfix, refresh=False)

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
