"""seq2seq_attn: attention-based neural machine translation in Keras 3.

Bahdanau, Cho and Bengio (2015, RNNsearch) and Luong, Pham and Manning (2015,
global and local attention), with TensorFlow for data, decoding and export.

`seq2seq_attn.load_translator(model_dir)` translates strings with a trained
model; the subpackages (`layers`, `models`, `data`, `decoding`,
`evaluation`, `training`, `export`) are imported on first use, so that
`import seq2seq_attn` does not start TensorFlow. Once Keras is imported, the
package's Keras objects are registered, so that `keras.saving.load_model`
reads a `.keras` file of these models after `import seq2seq_attn` alone.
"""

from seq2seq_attn import _lazy

__version__ = "0.1.0"

SUBPACKAGES = (
    "data",
    "decoding",
    "evaluation",
    "export",
    "layers",
    "models",
    "training",
)
_EXPORTS = {
    "load_translator": "seq2seq_attn.model_dir",
    "Translation": "seq2seq_attn.decoding.translator",
    "Translator": "seq2seq_attn.decoding.translator",
}
# The modules that register Keras objects (`serialization.register`).
KERAS_OBJECT_MODULES = (
    "seq2seq_attn.initializers",
    "seq2seq_attn.layers",
    "seq2seq_attn.training.optimizers",
)
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = _lazy.lazy_exports(__name__, _EXPORTS, SUBPACKAGES)


def _register_keras_objects():
    import importlib

    for module in KERAS_OBJECT_MODULES:
        importlib.import_module(module)


_lazy.after_import("keras", _register_keras_objects)
