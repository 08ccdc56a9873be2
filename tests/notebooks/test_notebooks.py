"""Every notebook runs top to bottom in a real kernel, shows a chart, and is stored clean."""

from __future__ import annotations

import re

import nbformat
import pytest
from nbclient import NotebookClient
from repo import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 4, [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (
                f"{path.name}: strip outputs before committing (nbstripout {path.name})"
            )


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_runs_in_a_real_kernel_and_shows_a_chart(path, tmp_path, monkeypatch):
    for name in ("DIMS_BASE_URL", "DIMS_API_KEY", "DIMS_TENANT_ID"):
        monkeypatch.delenv(name, raising=False)  # the notebooks use their own sandbox
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.chdir(tmp_path)  # anything a notebook writes lands in a temporary folder
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # its kernel's tempfile.mkdtemp()
    (tmp_path / "tmp").mkdir()
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    images = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if "image/png" in output.get("data", {}) or "image/svg+xml" in output.get("data", {})
    ]
    assert images, f"{path.name} shows no chart"
    # item 6 of issue 29: a notebook writes into a temporary (or demo) folder only; the
    # real data's folder is `dims export`'s alone
    written = sorted(p.relative_to(tmp_path).parts[0] for p in tmp_path.iterdir())
    assert written in (["tmp"], []), f"{path.name} wrote {written} in its working folder"
    assert not [p for p in tmp_path.rglob("dims-data")], f"{path.name} wrote a dims-data"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_talks_to_the_service_through_the_sdk(path):
    """Issue 29: the notebooks show `dims.Client`, not the layer under it."""
    notebook = nbformat.read(path, as_version=4)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert "Client(base_url=" in code, f"{path.name} makes no dims.Client"
    for lower in (r"(?<![\w.])connect\(", r"import take_snapshot", r"generated_client\.api"):
        assert not re.search(lower, code), f"{path.name} uses {lower!r}: use the client"
