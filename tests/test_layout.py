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


# What each floor may import from the package: the floors below it and the
# bottom (modules and the config subpackage, which import no floor).
BOTTOM = {
    "compat",
    "config",
    "folders",
    "initializers",
    "serialization",
    "special_tokens",
}
BELOW = {
    "config": set(),
    "layers": set(),
    "models": {"layers"},
    "data": set(),
}


def _floor(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "seq2seq_attn" else None


def test_the_bottom_imports_no_floor():
    for name in BOTTOM:
        path = PACKAGE / f"{name}.py"
        trees = (
            [ast.parse(path.read_text())]
            if path.is_file()
            else [tree for _, tree in _modules(name)]
        )
        for tree in trees:
            floors = {_floor(m) for m in _imported(tree)}
            assert floors <= {None} | BOTTOM, (name, floors)


def test_import_arrows_point_down():
    # layers/masking.py read the pad id from data/, and data/ read the WMT
    # test sets from evaluation/; the configs lived in three floors.
    for floor, allowed in BELOW.items():
        for path, tree in _modules(floor):
            for module in _imported(tree):
                if _floor(module) in {None, floor} | BOTTOM:
                    continue
                assert _floor(module) in allowed, (path, module)


def test_no_class_is_longer_than_300_lines():
    for path, tree in _modules("."):
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                lines = node.end_lineno - node.lineno + 1
                assert lines <= 300, f"{path}:{node.lineno} {node.name}"
