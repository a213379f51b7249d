"""Every committed notebook runs top to bottom in short mode, and carries the
outputs of a full run."""

import os
import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted(
    (pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb")
)


def test_the_four_tutorials_are_there():
    assert [path.name for path in NOTEBOOKS] == [
        "01_rnnsearch.ipynb",
        "02_luong_attention.ipynb",
        "03_decoding_and_evaluation.ipynb",
        "04_export_and_serve.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_notebook_shows_a_full_run(path):
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(cell.get("outputs") for cell in code[:2])
    text = "".join(
        output.get("text", "") for cell in code for output in cell["outputs"]
    )
    assert "full mode" in text and "Traceback" not in text


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_in_short_mode(path, monkeypatch):
    monkeypatch.setenv("SEQ2SEQ_ATTN_SHORT", "1")
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    client = NotebookClient(
        notebook,
        timeout=900,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    first = notebook.cells[1]["outputs"][0].get("text", "")
    assert "short mode" in first
    assert os.environ["SEQ2SEQ_ATTN_SHORT"] == "1"
