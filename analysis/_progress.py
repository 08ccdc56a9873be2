"""A progress bar on a terminal, nothing when piped."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from tqdm import tqdm


class Progress:
    """Counts deployments, pages and retries; draws only when `stream` is a terminal."""

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None) -> None:
        stream = stream or sys.stderr
        if enabled is None:
            enabled = stream.isatty()
        self.pages = 0
        self.records = 0
        self.retries = 0
        #: None when piped: tqdm is imported only to draw (about 30 ms of start-up)
        self._bar: tqdm[None] | None = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(
                total=None, unit=" deployments", file=stream, dynamic_ncols=True, leave=False
            )

    def page(self, records: int) -> None:
        self.pages += 1
        self.records += records
        if self._bar is not None:
            self._bar.update(records)
        self._postfix()

    def retry(self, reason: str = "") -> None:
        self.retries += 1
        self._postfix()

    def describe(self, text: str) -> None:
        if self._bar is not None:
            self._bar.set_description_str(text)

    def _postfix(self) -> None:
        if self._bar is not None:
            postfix = f"pages={self.pages} retries={self.retries}"
            self._bar.set_postfix_str(postfix, refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
