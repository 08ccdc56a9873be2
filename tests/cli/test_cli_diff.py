"""`dims demo --roll-out` makes a real diff; `dims diff` and `dims report` speak to scripts."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from dims._cli import main


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "data"
    code = main(
        ["demo", "--out", str(out), "--deployments", "60", "--seed", "3", "--roll-out", "9.0.0",
         "--share", "0.5"]
    )  # fmt: skip
    assert code == 0
    return out


def test_diff_lists_every_changed_deployment_as_json_and_parquet(demo, tmp_path, capsys):
    capsys.readouterr()
    changes_file = tmp_path / "changes.parquet"
    assert main(["diff", "--out", str(demo), "--json", "--changes-out", str(changes_file)]) == 0
    printed = json.loads(capsys.readouterr().out)
    every = printed["changes"]
    changes = [c for c in every if c["change"] in ("upgrade", "changed")]
    # half the fleet moved to 9.0.0: each is listed once, with its versions before and after
    assert (
        len(changes) == printed["counts"]["upgrades"] + printed["counts"]["other_version_changes"]
    )
    assert 20 <= len(changes) <= 30
    assert {c["to_version"] for c in changes} == {"9.0.0"}
    assert len({c["deployment_id"] for c in changes}) == len(changes)
    # the demo's second day also adds, removes and resizes: listed as such
    kinds = {c["change"] for c in every} - {"upgrade", "changed"}
    assert kinds == {"added", "removed", "capacity"}
    assert sum(c["change"] == "added" for c in every) == printed["counts"]["added"] >= 1
    table = pq.read_table(changes_file).to_pylist()
    assert sorted(r["deployment_id"] for r in table) == sorted(c["deployment_id"] for c in every)
    assert not list(tmp_path.glob(".*tmp*"))  # written whole, nothing left beside it


def test_diff_on_a_terminal_names_the_deployments(demo, capsys):
    capsys.readouterr()
    assert main(["diff", "--out", str(demo)]) == 0
    out = capsys.readouterr().out
    assert "changed deployments (" in out and "→ 9.0.0" in out


def test_report_json_says_where_everything_went(demo, capsys):
    capsys.readouterr()
    assert main(["report", "--out", str(demo), "--json"]) == 0
    written = json.loads(capsys.readouterr().out)
    assert written["report"].endswith("report.html")
    assert {"report.html", "capacity_summary.parquet", "image_version_summary.parquet"} <= set(
        written["files"]
    )


def test_diff_prints_counts_as_whole_numbers(demo, capsys):
    capsys.readouterr()
    assert main(["diff", "--out", str(demo)]) == 0
    line = next(
        x
        for x in capsys.readouterr().out.splitlines()
        if x.strip().startswith("deployments ") and "→" in x
    )
    assert line.split()[1:4] == ["60", "→", "60"]  # not 60.00


def test_diff_of_days_nothing_priced_says_unknown_never_nan_or_zero(tmp_path, capsys):
    """Totals of a day whose deployments are all unpriced (no resource_spec) are unknown:
    null in the JSON (it held NaN, which no strict JSON reader takes) and `unknown` on the
    terminal (it printed `nan`, and the month's cost as `$0.00 → $0.00`)."""
    out = tmp_path / "data"
    ids = [f"6f1c2b8e-0000-4000-8000-00000000000{n}" for n in (1, 2)]
    for day, records in (("2025-06-01", ids[:1]), ("2025-06-02", ids)):
        dump = tmp_path / f"{day}.json"
        dump.write_text(json.dumps([{"id": i} for i in records]))
        assert main(["export", "--from-json", str(dump), "--out", str(out), "--snapshot-date",
                     day, "--json"]) == 0  # fmt: skip
    capsys.readouterr()

    assert main(["diff", "--out", str(out), "--json"]) == 0
    printed = capsys.readouterr().out
    result = json.loads(printed, parse_constant=lambda token: pytest.fail(f"JSON holds {token}"))
    totals = {row["measure"]: row for row in result["capacity_totals"]}
    assert totals["cpu_request_cores_max_scale"]["from_value"] is None
    assert totals["cpu_request_cores_max_scale"]["delta"] is None
    assert totals["deployments"]["to_value"] == 2

    assert main(["diff", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "nan" not in text.lower().replace("unknown", "")
    assert "monthly cost, requests at max scale: unknown → unknown (n/a)" in text
    cpu = next(line for line in text.splitlines() if "cpu_request_cores_max_scale" in line)
    assert cpu.split() == ["cpu_request_cores_max_scale", "unknown", "→", "unknown", "(n/a)"]
