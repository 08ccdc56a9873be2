"""Flattening on every core: batches of pages go to worker processes, tables come back in order.

Why: reading records into rows is pure Python (one object per value), so the GIL keeps it
on one core, and on a large export it is most of the time. A batch of raw records is
independent of every other batch, so worker processes read batches while the parent reads
the source, reads batches of its own when the workers are busy, and writes the tables.

How, and what it guarantees:
- Tables come back in the order of the pages, so the files hold the same rows in the same
  order as a serial export; only raw records (`msgspec.Raw`) travel, as bytes, with their
  page's source, offsets and the listed types of their ids.
- Workers start only once a source has given `WORKERS_AFTER` records (and fills a batch),
  so an export that one process reads sooner than a new interpreter starts never pays for
  them. Each is a new interpreter that imports this module
  alone and talks pickles over its stdin and stdout: never a fork of a parent that may run
  threads, and never a second run of the parent's `__main__` (which multiprocessing's spawn
  and forkserver would do to a script without a main guard, `python -m dims._cli`
  included).
- Workers are in their own session, so a terminal's Ctrl-C reaches the parent alone, which
  stops them (end of their pipe); a worker that dies (killed for memory, say) costs a
  warning and time: its batch is read in the parent, which reads on alone. A worker that
  hangs (stopped, deadlocked) would make the parent wait for ever, so one that has not
  answered a batch within `WORKER_SILENCE_S` is killed and counts as dead.
- Counts (records, rejected, typed) of every batch are added to the parent's Flattener, so
  the manifest and the summary read one set of counts; in strict mode the first rejected
  record raises in the parent, as it would serially.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import msgspec
import pyarrow as pa

from dims._arrowpool import building_pool
from dims._errors import NotCompiledWarning
from dims._errors import WorkerLost as WorkerLost
from dims._pages import Page, keys_of

from ._flattener import Flattener

#: Deployments per batch: small enough to share work evenly between the parent and the
#: workers at 20,000 records, large enough that sending a batch costs little.
BATCH_RECORDS = 2_500
#: Batches read here that may wait for an earlier one a worker still reads.
HELD_BATCHES = 6
#: Records a source must have given before workers start: below it, this process reads
#: the rest sooner than a new interpreter starts (imports, the fast reader) and answers
#: (docs/benchmarks.md, "The worker pool, re-measured").
WORKERS_AFTER = 20_000
#: A source known to hold at least this many bytes of records (a dump file's size) starts
#: its workers at its first full batch: its work repays a new interpreter from the start
#: (docs/benchmarks.md, "The worker pool, re-measured").
WORKERS_AT_ONCE_BYTES = 100_000_000
#: Seconds a worker may send nothing while it has a batch before it is taken for hung and
#: killed (its batch is then read here). A batch takes well under a second, but a worker's
#: first one waits for its interpreter to start, and a loaded machine slows both tenfold:
#: generous, since killing a slow worker costs the export its help.
WORKER_SILENCE_S = 120.0


def workers_after(source_bytes: int | None) -> int:
    """Records a source gives before workers start, from its size in bytes when known."""
    if source_bytes is not None and source_bytes >= WORKERS_AT_ONCE_BYTES:
        return BATCH_RECORDS
    return WORKERS_AFTER


def default_workers() -> int:
    """One worker per core beside the parent's, at most 3 (the parent must keep up)."""
    return max(0, min(3, (os.cpu_count() or 1) - 1))


@dataclass(frozen=True, slots=True)
class Batch:
    """The tables of a batch of pages, and what reading it counted."""

    tables: dict[str, pa.Table]
    #: What the batch added to each of Flattener.counts.
    counts: dict[str, int]
    typed: int
    #: Deployments per workspace whose own tenant_id names another (Flattener.tenant_mismatches).
    mismatches: dict[str, int]


@dataclass(frozen=True, slots=True)
class _Work:
    """A page as it travels to a worker: raw records as bytes, the rest as they were."""

    records: list[bytes]
    source: str
    deployment_type: str | None
    first_index: int
    tags: dict[str, str] | None
    tenant_id: str | None

    @classmethod
    def of(cls, page: Page) -> _Work:
        tags = None
        if page.tags is not None:  # only the ids of this page: the mapping is the fleet's
            ids = (keys_of(record).id for record in page.records)
            tags = {i: page.tags[i] for i in ids if i is not None and i in page.tags}
        records = [bytes(record) for record in page.records]
        return cls(
            records, page.source, page.deployment_type, page.first_index, tags, page.tenant_id
        )

    def page(self) -> Page:
        records: list[Any] = [msgspec.Raw(record) for record in self.records]
        return Page(
            records,
            self.source,
            self.deployment_type,
            self.first_index,
            self.tags,
            tenant_id=self.tenant_id,
        )


def read_batch(flattener: Flattener, pages: Iterable[Page]) -> Batch:
    """Read `pages` into tables with `flattener`, counting only what this batch added."""
    before = dict(flattener.counts), flattener.typed_records
    mismatched = flattener.tenant_mismatches.copy()
    for page in pages:
        flattener.add_page(page)
    tables = flattener.take()
    counts, typed = before
    return Batch(
        tables,
        {name: count - counts[name] for name, count in flattener.counts.items()},
        flattener.typed_records - typed,
        dict(flattener.tenant_mismatches - mismatched),
    )


# --- the worker processes ------------------------------------------------------------------

#: How a worker starts: a new interpreter that imports only this module (never the parent's
#: `__main__`, which multiprocessing's spawn and forkserver would run again), from where the
#: parent found it (an installed package, or a source checkout on the parent's path).
_SERVE = (
    "import sys; sys.path.insert(0, sys.argv[1]); from dims._tables._batches import serve; serve()"
)
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


class _Lost(Exception):
    """The worker process ended without answering (the message says why, when known)."""


def _send(stream: IO[bytes], value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(8, "little"))
    stream.write(data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    """The next value, or None at the end of the stream."""
    head = stream.read(8)
    if len(head) < 8:
        return None
    size = int.from_bytes(head, "little")
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


def serve() -> None:
    """A worker's life: its Flattener's options, then batches in and Batches (or the
    exception a batch raised) out, until the parent closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C does
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing printed may corrupt the answers
    warnings.simplefilter("ignore", NotCompiledWarning)  # the parent says it, once
    options = _receive(requests)
    if options is None:
        return
    with building_pool():
        _answer(requests, answers, options)


def _answer(requests: IO[bytes], answers: IO[bytes], options: dict[str, Any]) -> None:
    flattener = Flattener(**options)
    flattener.prepare()  # the fast reader compiled while the parent reads its first batch
    while (work := _receive(requests)) is not None:
        try:
            answer: Batch | Exception = read_batch(flattener, [item.page() for item in work])
        except Exception as exc:  # the parent raises it, as reading there would have
            answer = exc
            flattener = Flattener(**options)  # a fresh one: no state of the failed batch
        try:
            _send(answers, answer)
        except OSError:  # the parent is gone (killed, or stopped waiting): so is the work
            return


class _Worker:
    """One worker process, asked one batch at a time."""

    def __init__(self, options: dict[str, Any]) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-c", _SERVE, _PACKAGE_ROOT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # a terminal's Ctrl-C goes to the parent alone
        )
        #: Why the watchdog killed it ("" while it has not).
        self._killed = ""
        self._ask(options)

    def read(self, work: list[_Work]) -> Batch:
        """The worker's Batch for `work`; _Lost when it dies, or hangs and is killed (sending
        and receiving both block on a stopped worker: the kill ends either)."""
        watchdog = threading.Timer(WORKER_SILENCE_S, self._hung, (WORKER_SILENCE_S,))
        watchdog.daemon = True
        watchdog.start()
        try:
            self._ask(work)
            assert self._process.stdout is not None
            answer = _receive(self._process.stdout)
        finally:
            watchdog.cancel()
        if answer is None:
            raise _Lost(self._killed)
        if isinstance(answer, Exception):
            raise answer
        assert isinstance(answer, Batch)
        return answer

    def _ask(self, value: object) -> None:
        assert self._process.stdin is not None
        try:
            _send(self._process.stdin, value)
        except (BrokenPipeError, OSError):
            raise _Lost(self._killed) from None

    def _hung(self, silence: float) -> None:
        """The watchdog's verdict: silent too long. Killed, so the pipes end (a stopped
        process dies of SIGKILL too)."""
        self._killed = f"did not answer within {silence:g} s: killed"
        with contextlib.suppress(OSError):
            self._process.kill()

    def close(self) -> None:
        """End of the pipe: the worker returns; killed if it does not within seconds."""
        with contextlib.suppress(OSError):
            assert self._process.stdin is not None
            self._process.stdin.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()


class _Workers:
    """Up to `count` worker processes, started when first needed, each busy with one batch;
    a thread per process waits for its answers (waiting on a pipe releases the GIL)."""

    def __init__(self, count: int, options: dict[str, Any]) -> None:
        self._options = options
        self._threads = ThreadPoolExecutor(count, thread_name_prefix="dims-batches")
        self._idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
        self._all: list[_Worker] = []
        self._lock = threading.Lock()
        #: Whether a worker has answered: it has started, and takes batches at full rate.
        self.answered = False
        for _ in range(count):  # they start (import, compile) while the parent reads on
            with contextlib.suppress(_Lost):
                self._idle.put(self._new())

    def submit(self, work: list[_Work]) -> Future[Batch]:
        return self._threads.submit(self._read, work)

    def _new(self) -> _Worker:
        try:
            worker = _Worker(self._options)
        except OSError:  # no process can start here (limits, sandboxing): read here
            raise _Lost() from None
        with self._lock:
            self._all.append(worker)
        return worker

    def _read(self, work: list[_Work]) -> Batch:
        try:
            worker = self._idle.get_nowait()
        except queue.Empty:
            worker = self._new()
        batch = worker.read(work)  # a lost worker is not put back
        self.answered = True
        self._idle.put(worker)
        return batch

    def close(self) -> None:
        self._threads.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            for worker in self._all:
                worker.close()
            self._all.clear()


# --- the parent's side ---------------------------------------------------------------------


class Batches:
    """Pages in, tables out per batch, in page order; the reading shared with `workers`.

    `workers=0` reads every batch in this process (the same code path as serial reading).
    """

    def __init__(
        self,
        flattener: Flattener,
        *,
        workers: int,
        batch_records: int = BATCH_RECORDS,
        workers_after: int = WORKERS_AFTER,
    ) -> None:
        self._flattener = flattener
        self._workers = max(0, workers)
        self._batch_records = max(1, batch_records)
        self._workers_after = workers_after
        self._seen = 0
        self._pool: _Workers | None = None
        #: Batches the workers read (the rest were read here).
        self.worker_batches = 0
        #: Records seen when the workers were started (None: never).
        self.workers_started_after: int | None = None
        #: Batches in order: read already, or being read by a worker (with its pages, read
        #: here instead should the worker die).
        self._queue: deque[Batch | _Sent] = deque()

    def run(
        self, pages: Iterable[Page], progress: Callable[[int], Any] | None = None
    ) -> Iterator[dict[str, pa.Table]]:
        """The tables of each batch, in order, as soon as the batches before it are read."""
        try:
            for group, full in self._groups(pages, progress):
                self._seen += sum(len(page.records) for page in group)
                if full and self._seen >= self._workers_after:
                    self._start()
                self._queue.append(self._read(group))
                # Never wait for a worker while this process can read on, within a bound
                # on the batches held (the tables of a batch are a few MB).
                yield from self._ready(limit=2 * self._workers + HELD_BATCHES)
            yield from self._ready(limit=0)
        finally:
            self._stop()

    def _groups(
        self, pages: Iterable[Page], progress: Callable[[int], Any] | None
    ) -> Iterator[tuple[list[Page], bool]]:
        """Groups of pages of at least `batch_records` records (the last may be smaller),
        each with whether it is full: a source that fills one is worth workers."""
        group: list[Page] = []
        size = 0
        for page in pages:
            group.append(page)
            size += len(page.records)
            if progress is not None:
                progress(len(page.records))
            if size >= self._batch_records:
                yield group, True
                group, size = [], 0
        if group:
            yield group, False

    def _read(self, group: list[Page]) -> Batch | _Sent:
        """Send the group to a worker when one is ready for it, else read it here. Until a
        worker has answered once (a new interpreter takes a moment to start) it is sent
        one batch; then two per worker, so none waits between batches."""
        pool = self._pool
        in_flight = sum(isinstance(item, _Sent) for item in self._queue)
        ready = pool is not None and in_flight < (2 * self._workers if pool.answered else 1)
        if pool is not None and ready and self._workers and _all_raw(group):
            return _Sent(group, pool.submit([_Work.of(page) for page in group]))
        return read_batch(self._flattener, group)

    @property
    def workers_ready(self) -> bool:
        """Whether a worker has answered (a started interpreter takes batches at full rate)."""
        return self._pool is not None and self._pool.answered

    def _start(self) -> None:
        """Start the workers (once): their interpreters start while this one reads."""
        if self._pool is None and self._workers:
            self.workers_started_after = self._seen
            flattener = self._flattener
            options = {
                "snapshot_at": flattener.snapshot_at,
                "include_env_values": flattener.include_env_values,
                "strict": flattener.strict,
                "listed_by": flattener.listed_by,
            }
            self._pool = _Workers(self._workers, options)

    def _ready(self, *, limit: int) -> Iterator[dict[str, pa.Table]]:
        """Hand over finished batches in order; wait for the oldest while more than `limit`."""
        queue = self._queue
        while queue and (len(queue) > limit or _done(queue[0])):
            item = queue.popleft()
            yield (self._received(item) if isinstance(item, _Sent) else item).tables

    def _received(self, sent: _Sent) -> Batch:
        """A worker's batch, counted here. Read here instead when no worker has answered yet
        (still starting: this process would only wait; the worker's copy is dropped), or
        when the workers broke (killed by the kernel for memory, say): the export goes on
        in this process alone."""
        assert self._pool is not None
        if not self._pool.answered and not sent.future.done():
            sent.future.cancel()
            return read_batch(self._flattener, sent.pages)
        try:
            batch = sent.future.result()
        except _Lost as lost:
            self._broken(str(lost))
            return read_batch(self._flattener, sent.pages)
        self._flattener.add_counts(batch.counts, batch.typed, batch.mismatches)
        self.worker_batches += 1
        return batch

    def _broken(self, why: str) -> None:
        if self._workers:
            warnings.warn(WorkerLost(why), stacklevel=1)
        self._workers = 0

    def _stop(self) -> None:
        for item in self._queue:
            if isinstance(item, _Sent):
                item.future.cancel()
        self._queue.clear()
        if self._pool is not None:
            self._pool.close()
            self._pool = None


@dataclass(frozen=True, slots=True)
class _Sent:
    """A batch a worker is reading, and its pages."""

    pages: list[Page]
    future: Future[Batch]


def _done(item: Batch | _Sent) -> bool:
    return not isinstance(item, _Sent) or item.future.done()


def _all_raw(group: list[Page]) -> bool:
    """Only raw records travel: parsed ones are read where they are."""
    return all(type(record) is msgspec.Raw for page in group for record in page.records)
