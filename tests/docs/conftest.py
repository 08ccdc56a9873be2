"""The docs blocks that do not run here, listed at the end of the run with their reasons."""

from __future__ import annotations

import pytest
from docs_blocks import every_block


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    skipped = [block for block in every_block() if block.not_run is not None]
    terminalreporter.section(f"docs blocks not run here: {len(skipped)}")
    for block in skipped:
        terminalreporter.line(f"{block.where} ({block.lang}): {block.not_run}")
