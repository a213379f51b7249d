"""Everything the package and its subpackages export is importable and
documented."""

import importlib
import inspect

import pytest

SUBPACKAGES = [
    "seq2seq_attn",
    "seq2seq_attn.layers",
    "seq2seq_attn.models",
    "seq2seq_attn.data",
    "seq2seq_attn.decoding",
    "seq2seq_attn.evaluation",
    "seq2seq_attn.training",
    "seq2seq_attn.export",
]
CLIS = [
    "seq2seq_attn.train",
    "seq2seq_attn.translate",
    "seq2seq_attn.evaluate",
    "seq2seq_attn.build_vocab",
    "seq2seq_attn.demo",
    "seq2seq_attn.export.__main__",
]


def _public(module):
    return [
        (name, getattr(module, name)) for name in getattr(module, "__all__", [])
    ]


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_subpackage_exports_are_importable_and_documented(name):
    module = importlib.import_module(name)
    assert module.__doc__ and module.__doc__.strip(), f"{name} has no docstring"
    for attribute, value in _public(module):
        if isinstance(value, (str, int)):
            continue  # constants such as PAD_ID
        doc = inspect.getdoc(value)
        assert doc and len(doc) > 20, f"{name}.{attribute} is not documented"
        if inspect.isclass(value):
            for method_name, method in vars(value).items():
                if method_name.startswith("_") or not callable(method):
                    continue
                method = getattr(value, method_name)
                if method_name in (
                    "call",
                    "build",
                    "get_config",
                    "compute_output_spec",
                    "compute_mask",
                ):
                    continue  # Keras protocol methods, documented on the class
                assert inspect.getdoc(method), (
                    f"{name}.{attribute}.{method_name}"
                )


def test_every_subpackage_exports_something():
    for name in SUBPACKAGES[1:]:
        assert _public(importlib.import_module(name)), name


@pytest.mark.parametrize("name", CLIS)
def test_command_lines_have_a_usage_docstring(name):
    spec = importlib.util.find_spec(name)
    source = spec.loader.get_source(name)
    assert source.lstrip().startswith('"""`python -m seq2seq_attn.') or (
        "python -m seq2seq_attn" in source.split('"""')[1]
    ), name
