"""The small surprises of issue 37 (item 6): a `--by label:KEY` nobody has says so and leaves
no table behind for `dims sql`; `make docs` needs only the docs tools."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_in_process import run
from fleet_math import export_fleet
from repo import ROOT

from dims.sandbox import generate_fleet


@pytest.fixture
def dataset(tmp_path) -> Path:
    fleet = generate_fleet(12, seed=8)
    export_fleet(fleet.deployments, dict(fleet.deployment_types), tmp_path / "d", "2025-06-01")
    return tmp_path / "d"


def tables(capsys, out: Path) -> set[str]:
    code, printed, err = run(capsys, "sql", "--out", str(out), "--format", "csv", "show tables")
    assert code == 0, err
    return set(printed.splitlines()[1:])


def test_a_label_nobody_has_warns_and_its_table_replaces_the_last(capsys, dataset):
    code, _, err = run(capsys, "report", "--out", str(dataset), "--by", "label:team")
    assert code == 0 and "warning" not in err, err
    assert "cost_by_label_team" in tables(capsys, dataset)
    code, printed, err = run(capsys, "report", "--out", str(dataset), "--by", "label:nosuch")
    assert code == 0
    assert err.splitlines() == [
        "dims: warning: no deployment has the label 'nosuch': 100% of the cost by label:nosuch "
        "is unallocated (label keys are case-sensitive)"
    ]
    assert "by label:nosuch" in printed
    shown = tables(capsys, dataset)
    assert "cost_by_label_nosuch" in shown and "cost_by_label_team" not in shown
    code, _, err = run(capsys, "sql", "--out", str(dataset), "select * from cost_by_label_team")
    assert code == 1 and "cost_by_label_team does not exist" in err
    # a report without --by keeps the report's own tables only
    assert run(capsys, "report", "--out", str(dataset))[0] == 0
    assert not {t for t in tables(capsys, dataset) if t.startswith("cost_by_label")}


def test_make_docs_sets_up_only_the_docs_tools(tmp_path):
    """`make -n docs` in a fresh venv: the docs extra, neither Spark's jars nor the FOCUS
    validator (what `make venv` adds for the tests)."""
    done = subprocess.run(
        ["make", "-n", "docs", f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "tools/setup-venv.sh docs" in done.stdout and "mkdocs serve" in done.stdout
    assert "setup-venv.sh dev" not in done.stdout
    steps = (ROOT / "tools" / "setup-venv.sh").read_text(encoding="utf-8")
    docs = steps[steps.index("  docs)") : steps.index(";;", steps.index("  docs)"))]
    assert "[docs]" in docs and "spark" not in docs and "focus" not in docs
