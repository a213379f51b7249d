"""The package's shape: import arrows point down, functions stay short."""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "seq2seq_attn"


def _modules(*folders):
    for folder in folders:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            yield path, ast.parse(path.read_text())


def _imported(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def test_nothing_below_loads_model_directories():
    # seq2seq_attn.model_dir builds Translators and models from the files
    # training wrote: it sits above decoding/ and export/, and training/
    # writes the layout (training/layout.py) without loading it back.
    for path, tree in _modules("training", "decoding", "layers", "models"):
        assert "seq2seq_attn.model_dir" not in set(_imported(tree)), path


def test_no_function_is_longer_than_80_lines():
    for path, tree in _modules("."):
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                assert lines <= 80, f"{path}:{node.lineno} {node.name}"
