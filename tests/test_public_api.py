"""Everything the package and its subpackages export is importable and
documented."""

import importlib
import inspect
import os
import platform
import re
import subprocess
import sys
import textwrap

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
VERBS = ["train", "translate", "evaluate", "build_vocab", "demo", "average"]
# The commands by their first names (`python -m seq2seq_attn.train`), each
# a shim that runs `seq2seq_attn.cli.<verb>`.
CLIS = [
    *(f"seq2seq_attn.{verb}" for verb in VERBS),
    "seq2seq_attn.export.__main__",
    "seq2seq_attn.recipes",
]
COMMAND_MODULES = [f"seq2seq_attn.cli.{verb}" for verb in [*VERBS, "export"]]


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


@pytest.mark.parametrize("name", CLIS + COMMAND_MODULES)
def test_command_lines_have_a_usage_docstring(name):
    spec = importlib.util.find_spec(name)
    source = spec.loader.get_source(name)
    assert source.lstrip().startswith('"""`python -m seq2seq_attn.') or (
        "python -m seq2seq_attn" in source.split('"""')[1]
    ), name


def _run_python(code, cwd):
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip().splitlines()


@pytest.mark.slow  # a fresh interpreter
@pytest.mark.both_ends
def test_import_gives_the_subpackages(tmp_path):
    # An eager package: `import seq2seq_attn` imports every subpackage.
    lines = _run_python(
        """
        import sys
        import seq2seq_attn
        print(sorted(m for m in seq2seq_attn.SUBPACKAGES
                     if f"seq2seq_attn.{m}" not in sys.modules))
        print(seq2seq_attn.layers.GRU.__name__)
        print(seq2seq_attn.models.build_model.__name__)
        print(seq2seq_attn.load_translator.__name__)
        print(seq2seq_attn.decoding.Translator is seq2seq_attn.Translator)
        print(sorted(set(seq2seq_attn.SUBPACKAGES) - set(dir(seq2seq_attn))))
        """,
        tmp_path,
    )
    assert lines[-6:] == [
        "[]",
        "GRU",
        "build_model",
        "load_translator",
        "True",
        "[]",
    ]


@pytest.mark.slow  # a fresh interpreter
@pytest.mark.parametrize("first", ["keras", "tensorflow"])
def test_keras_file_loads_after_import_seq2seq_attn_alone(first, tmp_path):
    # A `.keras` file did not load without importing the modules that
    # register the layers; TensorFlow imports Keras on its own import.
    import keras
    import numpy as np

    from seq2seq_attn.models import ModelConfig, build_model
    from seq2seq_attn.training.optimizers import HalvingSchedule

    model = build_model(
        ModelConfig(
            source_vocab_size=20,
            target_vocab_size=21,
            embedding_dim=6,
            hidden_units=8,
            attention_units=5,
            maxout_units=4,
        )
    )
    model.compile(
        optimizer=keras.optimizers.SGD(HalvingSchedule(1.0, 10, 5)),
        loss="sparse_categorical_crossentropy",
    )
    ids = np.array([[4, 5, 6, 3]], "int32")
    expected = np.asarray(model([ids, ids]))
    model.save(tmp_path / "model.keras")
    lines = _run_python(
        f"""
        import seq2seq_attn
        import {first}
        import keras
        import numpy as np
        model = keras.saving.load_model("model.keras")
        ids = np.array([[4, 5, 6, 3]], "int32")
        print(np.asarray(model([ids, ids])).tolist())
        print(model.optimizer.get_config()["learning_rate"]["class_name"])
        """,
        tmp_path,
    )
    np.testing.assert_allclose(eval(lines[-2]), expected, atol=1e-6)
    assert lines[-1] == "HalvingSchedule"


# A line of TensorFlow's C++ logging, or its CPU-features notice.
TF_LOG_LINE = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] |"
    r"^To enable the following instructions",
    re.M,
)


def _help_of(module, env, cwd):
    """`python -m MODULE --helpshort` in a fresh process: its result."""
    return subprocess.run(
        [sys.executable, "-m", module, "--helpshort"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=env,
    )


@pytest.mark.slow  # a fresh interpreter
@pytest.mark.parametrize("name", CLIS)
def test_command_lines_start_quietly(name, tmp_path):
    # The package imports TensorFlow as it is imported; under `python -m`
    # it sets TensorFlow's log level first (seq2seq_attn/__init__.py).
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    result = _help_of(name.removesuffix(".__main__"), env, tmp_path)
    assert not TF_LOG_LINE.search(result.stderr), result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    if name != "seq2seq_attn.recipes":
        # The first name runs `seq2seq_attn.cli.<verb>` as the main module:
        # --helpshort lists that module's flags.
        assert "\n  --" in result.stdout, result.stdout[-2000:]


ONEDNN_ON = "oneDNN custom operations are on"


@pytest.mark.slow  # a fresh interpreter
@pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64"),
    reason="the train command asks for oneDNN on x86 only",
)
@pytest.mark.parametrize("setting", [None, "0"])
def test_training_asks_for_onednn_unless_the_environment_says(
    setting, tmp_path
):
    # TensorFlow reads TF_ENABLE_ONEDNN_OPTS at its import and, at log level
    # 0, says when its oneDNN kernels are on (on x86 CPUs without AVX-512
    # it leaves them off by itself).
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="0")
    env.pop("TF_ENABLE_ONEDNN_OPTS", None)
    if setting is not None:
        env["TF_ENABLE_ONEDNN_OPTS"] = setting
    result = _help_of("seq2seq_attn.train", env, tmp_path)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert (ONEDNN_ON in result.stderr) == (setting is None), result.stderr


@pytest.mark.slow  # a fresh interpreter
def test_an_export_named_like_its_module_stays_the_export(tmp_path):
    # Importing `decoding.beam_search` (the module) first once set the
    # package's `beam_search` to the module, not the function.
    lines = _run_python(
        """
        import importlib
        module = importlib.import_module("seq2seq_attn.decoding.beam_search")
        from seq2seq_attn.decoding import beam_search, search
        print(callable(beam_search), callable(search))
        print(module.beam_search is beam_search)
        """,
        tmp_path,
    )
    assert lines[-2:] == ["True True", "True"]
