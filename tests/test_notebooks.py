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


def _first_code_cell(path):
    notebook = nbformat.read(path, as_version=4)
    return next(c for c in notebook.cells if c.cell_type == "code")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_first_cell_says_where_the_data_comes_from(
    path, tmp_path, monkeypatch, capsys
):
    # The committed cell itself, in a checkout beside a shared copy and
    # elsewhere: $SEQ2SEQ_ATTN_DATA_DIR, the download cache, comes first (the
    # cell printed "data: download" there and read the shared copy).
    setup = _first_code_cell(path).source
    cache = tmp_path / "cache"
    (tmp_path / "project" / "shared" / "data").mkdir(parents=True)
    checkout = "project/checkout/notebooks"
    (tmp_path / checkout).mkdir(parents=True)
    (tmp_path / "other" / "place").mkdir(parents=True)
    for where, environment, data_dir, said in (
        (checkout, None, "../../shared/data", "../../shared/data"),
        (checkout, cache, None, f"{cache} (downloaded there once)"),
        (
            "other/place",
            None,
            None,
            "~/.cache/seq2seq_attn (downloaded there once)",
        ),
    ):
        monkeypatch.chdir(tmp_path / where)
        if environment:
            monkeypatch.setenv("SEQ2SEQ_ATTN_DATA_DIR", str(environment))
        else:
            monkeypatch.delenv("SEQ2SEQ_ATTN_DATA_DIR", raising=False)
        namespace = {}
        exec(setup, namespace)
        assert namespace["DATA_DIR"] == data_dir
        assert capsys.readouterr().out.endswith(f"| data: {said}\n")


# Lines a short run prints as a full run does: what the export writes.
MODE_FREE = ("in the assets",)


def _mode_free_lines(notebook):
    text = "".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", ())
    )
    return [line for line in text.splitlines() if line.endswith(MODE_FREE)]


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
    committed = _mode_free_lines(nbformat.read(path, as_version=4))
    client.execute()
    assert _mode_free_lines(notebook) == committed
    first = notebook.cells[1]["outputs"][0].get("text", "")
    assert "short mode" in first
    assert os.environ["SEQ2SEQ_ATTN_SHORT"] == "1"
