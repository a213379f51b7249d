"""seq2seq_attn: attention-based neural machine translation in Keras 3.

Bahdanau, Cho and Bengio (2015, RNNsearch) and Luong, Pham and Manning (2015,
global and local attention), with TensorFlow for data, decoding and export.

`seq2seq_attn.load_translator(model_dir)` translates strings with a trained
model. `import seq2seq_attn` imports the subpackages (`config`, `layers`,
`models`, `data`, `decoding`, `evaluation`, `training`, `export`) and
registers the package's Keras objects, so that `keras.saving.load_model`
reads a `.keras` file of these models after `import seq2seq_attn` alone.
"""

import os
import platform
import sys


def _module_run_by_python_m():
    """The module of `python -m MODULE`, from the interpreter's arguments."""
    for i, arg in enumerate(sys.orig_argv):
        if arg == "-m":
            return sys.orig_argv[i + 1] if i + 1 < len(sys.orig_argv) else None
        if arg.startswith("-m"):
            return arg[2:]
    return None


# `python -m seq2seq_attn.<command>`: while Python finds the command's module
# (importing this package first), `sys.argv[0]` is "-m" (the documented
# behaviour of `python -m`). The commands hide TensorFlow's C++ start-up
# lines (CUDA probing, "failed call to cuInit" on a machine without a GPU,
# CPU features), which TensorFlow writes from its import on: the level is
# set before the imports below. `TF_CPP_MIN_LOG_LEVEL=0` shows them.
# TensorFlow 2.21 writes some of them whatever the level (`compat`
# names the upstream issue), so the commands import it through
# `compat.import_tensorflow_quietly`.
#
# `python -m seq2seq_attn.train` on an x86 CPU also computes with
# TensorFlow's oneDNN kernels. TensorFlow turns them on by itself only where
# the CPU has AVX-512 or AMX; on an AVX2 CPU they train joey_match
# 1.13-1.19x faster than its default kernels, while greedy decoding was
# slower with them (benchmarks/history/near_the_limit.md, "On CPU-2E without
# AVX-512" and "oneDNN for training by default on AVX2"), so only training
# asks for them.
# TensorFlow reads `TF_ENABLE_ONEDNN_OPTS` once, at its import; a value in
# the environment wins (0 turns them off).
TRAIN_COMMANDS = ("seq2seq_attn.train", "seq2seq_attn.cli.train")
if sys.argv[:1] == ["-m"]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if _module_run_by_python_m() in TRAIN_COMMANDS and (
        platform.machine().lower() in ("x86_64", "amd64")
    ):
        os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
    from seq2seq_attn.compat import import_tensorflow_quietly

    import_tensorflow_quietly()

from seq2seq_attn import (  # noqa: E402, F401  (the subpackages, eagerly)
    config,
    data,
    decoding,
    evaluation,
    export,
    initializers,  # registers its Keras objects
    layers,
    models,
    training,
)
from seq2seq_attn.decoding.translator import Translation, Translator  # noqa: E402
from seq2seq_attn.model_dir import load_translator  # noqa: E402

__version__ = "0.2.0"

SUBPACKAGES = (
    "config",
    "data",
    "decoding",
    "evaluation",
    "export",
    "layers",
    "models",
    "training",
)
__all__ = ["Translation", "Translator", "load_translator"]
