"""A progress bar on a terminal, nothing when piped."""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from tqdm import tqdm

#: Seconds between redraws when nothing arrives (at least one a second, so a stall shows).
REFRESH_S = 0.5


class Progress:
    """Counts deployments, pages and retries; draws only when `stream` is a terminal.

    It shows the records so far, the pages, the retries, the elapsed time and the average
    rate, and the total with a bar once one is known (`total`: a dump's record count once
    split). It redraws every `refresh_s` seconds on a thread of its own even when no page
    arrives: a service that stalls looks stalled (the clock runs on, the average rate falls)
    instead of frozen. Each page is drawn as it comes (tqdm's adaptive skipping is off: it
    held the count at 100 for seconds, then jumped to 800).
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        enabled: bool | None = None,
        refresh_s: float = REFRESH_S,
    ) -> None:
        stream = stream or sys.stderr
        if enabled is None:
            enabled = stream.isatty()
        self.pages = 0
        self.records = 0
        self.retries = 0
        #: None when piped: tqdm is imported only to draw (its import is start-up time)
        self._bar: tqdm[None] | None = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if enabled:
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
        if self._bar is not None:
            self._bar.set_description_str(text)

    def draw(self) -> None:
        """Redraw now, whether or not anything arrived (the ticker's thread calls it)."""
        if self._bar is not None:
            self._bar.refresh()

    def _tick(self, every: float) -> None:
        while not self._stop.wait(every):
            self.draw()

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
