"""The progress bar draws on a terminal and stays silent when piped."""

from __future__ import annotations

import io

from analysis import Progress, connect, fetch
from analysis.connection import retry_transport
from analysis.sandbox import Faults, run_sandbox


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
