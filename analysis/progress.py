"""A progress bar on a terminal, nothing when piped."""

from __future__ import annotations

import sys
from typing import TextIO

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
        self._bar = tqdm(
            total=None,
            unit=" deployments",
            file=stream,
            disable=not enabled,
            dynamic_ncols=True,
            leave=False,
        )

    def page(self, records: int) -> None:
        self.pages += 1
        self.records += records
        self._bar.update(records)
        self._postfix()

    def retry(self, reason: str = "") -> None:
        self.retries += 1
        self._postfix()

    def describe(self, text: str) -> None:
        self._bar.set_description_str(text)

    def _postfix(self) -> None:
        self._bar.set_postfix_str(f"pages={self.pages} retries={self.retries}", refresh=False)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
