"""The `dims` CLI: bad input is one line naming the problem; the happy path says what it did.

Bad input: every case exits non-zero with exactly one line on stderr that names the
problem, and no traceback unless --debug is given (then the traceback, for errors dims
raises on purpose). Most cases run in-process through `dims._cli.main` (fast); a few run
`.venv/bin/dims` in a subprocess for the real exit code and stderr.
Happy path: export from the live sandbox, report, a second export on another day, diff;
the printed summary says where it wrote, rows per table, rejected records and time taken.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from cli_in_process import run

from dims._cli import main
from dims._errors import DimsError
from dims._tables import TABLE_NAMES
from dims.sandbox import fleet_dump_bytes, generate_fleet, run_sandbox

DIMS = Path(sys.executable).parent / "dims"
DEAD_URL = "http://127.0.0.1:9"  # nothing listens there


def assert_one_line_error(err: str, *names: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


# --- bad input -----------------------------------------------------------------------------

MALFORMED_URLS = [
    "http://[bad",
    "ftp://deployments.example.com",
    "localhost:8765",
    "127.0.0.1:8765",
    "http://",
    "http://exa mple.com",
    "http://host:notaport",
    "http://host:99999",
]


@pytest.mark.parametrize("url", MALFORMED_URLS)
def test_malformed_base_url(capsys, tmp_path, url):
    code, out, err = run(capsys, "export", "--base-url", url, "--out", str(tmp_path))
    assert code == 1 and out == ""
    line = assert_one_line_error(err, "invalid base URL", repr(url.rstrip("/")))
    assert "ConnectError" not in line  # refused as malformed, not found out by connecting


USAGE_ERRORS = [
    (["--deployment-type", "nightly"], ["--deployment-type", "'nightly'", "dev_free"]),
    (["--page-size", "0"], ["--page-size", "outside 1..100"]),
    (["--page-size", "101"], ["--page-size", "outside 1..100"]),
    (["--page-size", "ten"], ["--page-size", "not a whole number"]),
    (["--remote-reconciled", "maybe"], ["--remote-reconciled", "true or false"]),
    (["--snapshot-date", "2025-13-01"], ["--snapshot-date", "not a date"]),
    (["--concurrency", "0"], ["--concurrency", "outside 1..64"]),
    # issue 13, row 10: numbers that are not a duration (were a traceback or a hang)
    (["--timeout", "-1"], ["--timeout", "expected seconds above 0", "'-1'"]),
    (["--timeout", "0"], ["--timeout", "expected seconds above 0"]),
    (["--timeout", "nan"], ["--timeout", "expected seconds above 0", "'nan'"]),
    (["--timeout", "inf"], ["--timeout", "expected seconds above 0", "'inf'"]),
    (["--timeout", "soon"], ["--timeout", "not a number of seconds"]),
    (["--deadline=-inf"], ["--deadline", "expected seconds above 0"]),
    (["--max-body-mib", "0"], ["--max-body-mib", "outside >= 1"]),
    (["--max-decoded-mib", "lots"], ["--max-decoded-mib", "not a whole number"]),
    # row 12: an empty --out would mean the current folder
    (["--out", ""], ["--out", "empty path", "current folder"]),
    (["--out", "  "], ["--out", "empty path"]),
    (["--from-json", ""], ["--from-json", "empty path"]),
]


@pytest.mark.parametrize(("args", "names"), USAGE_ERRORS, ids=lambda v: " ".join(v))
def test_bad_option_values_are_one_usage_line(capsys, tmp_path, args, names):
    code, out, err = run(capsys, "export", "--base-url", DEAD_URL, "--out", str(tmp_path), *args)
    assert code == 2 and out == ""
    assert_one_line_error(err, "dims export: error:", *names)


BAD_DUMPS = [
    ("not-json.json", b"deployments, as I recall", ["not JSON at line 1 column 1"]),
    ("broken.json", b'[{"id": "a"},\n {"id": ]', ["not JSON at line 2"]),
    ("empty.json", b"", ["the file is empty"]),
    ("blank.json", b"\n  \n", ["the file is empty"]),
    ("object.json", b'{"deployments": []}', ['got an object without "resources"']),
    ("number.json", b"42", ["got a number"]),
    ("page.json", b'{"resources": {"id": "a"}, "offset": 0}', [".resources must be an array"]),
    ("latin1.json", b'[{"name": "caf\xe9"}]', ["not UTF-8"]),
]


@pytest.mark.parametrize(("name", "content", "names"), BAD_DUMPS, ids=[d[0] for d in BAD_DUMPS])
def test_bad_dump_files(capsys, tmp_path, name, content, names):
    dump = tmp_path / name
    dump.write_bytes(content)
    code, out, err = run(capsys, "export", "--from-json", str(dump), "--out", str(tmp_path / "o"))
    assert code == 1 and out == ""
    assert_one_line_error(err, "dims export: error:", str(dump), *names)
    assert not (tmp_path / "o" / "deployments").exists()  # nothing half written


def test_missing_dump_file(capsys, tmp_path):
    missing = tmp_path / "nope.json"
    code, _, err = run(capsys, "export", "--from-json", str(missing), "--out", str(tmp_path))
    assert code == 1
    assert_one_line_error(err, "cannot read dump", str(missing), "No such file")


def test_filters_cannot_be_combined_with_a_dump(capsys, tmp_path):
    dump = tmp_path / "d.json"
    dump.write_text("[]")
    code, _, err = run(
        capsys, "export", "--from-json", str(dump), "--image-version", "0.1", "--out", str(tmp_path)
    )
    assert code == 1
    assert_one_line_error(err, "--from-json", "filters")


def test_unwritable_out_fails_before_any_request(capsys, tmp_path):
    """The folder check comes first: the live sandbox receives no request at all."""
    blocker = tmp_path / "file"
    blocker.write_text("in the way")
    with run_sandbox(deployments=5, seed=1) as sb:
        code, _, err = run(capsys, "export", "--base-url", sb.base_url, "--out", str(blocker / "o"))
        assert sb.stats.total_requests == 0
    assert code == 1
    assert_one_line_error(err, "cannot write to", str(blocker / "o"), "--out")


def test_debug_shows_the_traceback_of_the_same_error(capsys, tmp_path):
    dump = tmp_path / "bad.json"
    dump.write_text("nope")
    with pytest.raises(DimsError, match="not JSON"):
        main(["--debug", "export", "--from-json", str(dump), "--out", str(tmp_path)])
    with pytest.raises(DimsError, match="invalid base URL"):
        main(["--debug", "export", "--base-url", "http://[bad", "--out", str(tmp_path)])


@pytest.mark.parametrize(
    "argv",
    [
        ["export", "--base-url", "http://[bad"],
        ["export", "--from-json", "{dump}"],
        ["report"],  # no dataset yet
    ],
    ids=["malformed-url", "not-json-dump", "report-without-data"],
)
def test_subprocess_exit_codes_and_tracebacks(tmp_path, argv):
    """The real executable: exit 1 and one line; with --debug, the traceback as well."""
    dump = tmp_path / "bad.json"
    dump.write_text("nope")
    argv = [a.format(dump=dump) for a in argv] + ["--out", str(tmp_path / "o")]
    plain = subprocess.run([str(DIMS), *argv], capture_output=True, text=True, timeout=60)
    assert plain.returncode == 1 and plain.stdout == ""
    assert_one_line_error(plain.stderr, f"dims {argv[0]}: error:")
    debug = subprocess.run(
        [str(DIMS), "--debug", *argv], capture_output=True, text=True, timeout=60
    )
    assert debug.returncode == 1
    assert debug.stderr.startswith("Traceback") or "\nTraceback" in debug.stderr
    assert plain.stderr.strip().split(": error: ", 1)[1] in debug.stderr


def test_usage_error_exit_code_in_a_subprocess(tmp_path):
    done = subprocess.run(
        [str(DIMS), "export", "--page-size", "101", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert_one_line_error(done.stderr, "--page-size", "1..100")


# --- the happy path ------------------------------------------------------------------------

SUMMARY = re.compile(
    r"^wrote snapshot (?P<day>\d{4}-\d{2}-\d{2}) to (?P<out>.+) in (?P<seconds>\d+\.\d) s: "
    r"(?P<read>[\d,]+) deployments read, (?P<rejected>[\d,]+) rejected$"
)


def parse_summary(text: str) -> tuple[dict[str, str], dict[str, int]]:
    lines = text.strip().splitlines()
    head = SUMMARY.match(lines[0])
    assert head, lines[0]
    rows = {}
    for line in lines[1:]:
        match = re.match(r"^\s+(\w+)\s+([\d,]+) rows$", line)
        if match:
            rows[match[1]] = int(match[2].replace(",", ""))
    return head.groupdict(), rows


def partition_rows(out: Path, table: str, day: str) -> int:
    return pq.read_metadata(out / table / f"snapshot_date={day}" / "part-0.parquet").num_rows


def test_export_report_export_diff(capsys, tmp_path):
    """The journey of the README: every step says what it wrote, and the numbers are true."""
    out = tmp_path / "data"
    fleet = generate_fleet(60, seed=31)
    with run_sandbox(fleet=fleet) as sb:
        code, printed, err = run(
            capsys, "export", "--base-url", sb.base_url, "--out", str(out),
            "--snapshot-date", "2025-02-01",
        )  # fmt: skip
    assert code == 0, err
    head, rows = parse_summary(printed)
    assert head["day"] == "2025-02-01" and head["out"] == str(out)
    assert int(head["read"]) == len(fleet.deployments)
    assert set(rows) == set(TABLE_NAMES)
    for table, count in rows.items():
        assert partition_rows(out, table, "2025-02-01") == count, table
    assert int(head["rejected"]) == rows["rejected_records"]
    assert rows["deployments"] + rows["rejected_records"] == len(fleet.deployments)
    assert "listings: all (fleet: 60 records" in printed
    assert "from a typed listing: 60" in printed

    code, printed, err = run(capsys, "report", "--out", str(out))
    assert code == 0, err
    # the month's figures, where it went, and the page to open
    assert printed.startswith(f"{len(fleet.deployments)} deployments on 2025-02-01"), printed
    assert "\n  requests    $" in printed and "\n  top types " in printed
    match = re.search(r"\nreport written in \d+\.\d s to (.+) \(report.html and 4 Parquet", printed)
    assert match, printed
    assert (Path(match[1]) / "report.html").is_file()
    assert printed.endswith(f"open: {(Path(match[1]) / 'report.html').resolve()}\n")

    # the second day: three deployments fewer, read from a saved dump
    day1_ids = set(pq.read_table(out / "deployments")["id"].to_pylist())
    dump = tmp_path / "day2.json"
    dump.write_bytes(json.dumps(fleet.deployments[3:]).encode())
    code, printed, err = run(
        capsys, "export", "--from-json", str(dump), "--out", str(out), "--snapshot-date",
        "2025-02-02",
    )  # fmt: skip
    assert code == 0, err
    head, rows = parse_summary(printed)
    assert head["day"] == "2025-02-02" and int(head["read"]) == len(fleet.deployments) - 3

    day2 = pq.read_table(out / "deployments" / "snapshot_date=2025-02-02")
    removed = len(day1_ids - set(day2["id"].to_pylist()))
    code, printed, err = run(capsys, "diff", "--out", str(out))
    assert code == 0, err
    assert printed.startswith("dims diff 2025-02-01 → 2025-02-02")
    assert f"deployments: +0 added, -{removed} removed" in printed
    assert removed >= 1


def test_a_piped_export_prints_no_progress_bar(tmp_path):
    """On a pipe the progress bar stays quiet: stdout is the summary, stderr is empty."""
    dump = tmp_path / "dump.json"
    dump.write_bytes(fleet_dump_bytes(generate_fleet(30, seed=4)))
    done = subprocess.run(
        [str(DIMS), "export", "--from-json", str(dump), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == ""
    head, rows = parse_summary(done.stdout)
    assert int(head["read"]) == 30 and rows["deployments"] + rows["rejected_records"] == 30


# --- pipes (issue 13, row 12) -----------------------------------------------------------------


def closed_pipe() -> int:
    """The write end of a pipe whose reader has already gone (as in `dims … | true`)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    return write_end


@pytest.mark.parametrize(
    "argv", [["report"], ["demo", "--deployments", "20"]], ids=["report", "demo"]
)
def test_a_closed_output_pipe_ends_quietly_with_141(tmp_path, argv):
    """`dims report | true`, `dims demo | head -1`: no "error: Broken pipe", the Unix exit
    of a writer whose reader left (128 + SIGPIPE)."""
    out = tmp_path / "o"
    if argv[0] == "report":
        dump = tmp_path / "d.json"
        dump.write_bytes(fleet_dump_bytes(generate_fleet(20, seed=2)))
        assert main(["export", "--from-json", str(dump), "--out", str(out)]) == 0
    stdout = closed_pipe()
    try:
        done = subprocess.run(
            [str(DIMS), *argv, "--out", str(out)],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(stdout)
    assert done.returncode == 141
    assert done.stderr == ""


def test_from_json_reads_a_pipe_on_dev_stdin(tmp_path):
    """`… | dims export --from-json /dev/stdin`: a pipe is read once, like a file."""
    fleet = generate_fleet(25, seed=6)
    done = subprocess.run(
        [str(DIMS), "export", "--from-json", "/dev/stdin", "--out", str(tmp_path / "o")],
        input=fleet_dump_bytes(fleet),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    head, rows = parse_summary(done.stdout.decode())
    assert int(head["read"]) == 25 and rows["deployments"] + rows["rejected_records"] == 25


def test_an_export_with_figures_no_cluster_runs_warns_in_one_line(capsys, tmp_path):
    """Issue 35: a negative or huge resource_spec figure is exported (exit 0), said once on
    stderr, like a container quantity Kubernetes refuses."""
    dump = tmp_path / "fleet.json"
    dump.write_text(json.dumps([{"id": "a", "source_config": {"resource_spec": {"cpu": -2}}}]))
    code, _, err = run(capsys, "export", "--from-json", str(dump), "--out", str(tmp_path / "o"))
    assert code == 0, err
    warned = [line for line in err.splitlines() if "resource_spec figure" in line]
    assert len(warned) == 1 and warned[0].startswith("dims: warning: 1 resource_spec figure")
    assert "unreadable_values_json" in warned[0]
