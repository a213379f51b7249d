"""Registration of the package's Keras objects for `.keras` save and load."""

import keras

PACKAGE = "seq2seq_attn"


def register(cls):
    """Registers `cls` as serializable under the package name."""
    return keras.saving.register_keras_serializable(package=PACKAGE)(cls)


def initializer_config(layer, *names):
    """The `get_config` entries of a layer's initializer attributes."""
    return {
        name: keras.initializers.serialize(getattr(layer, name))
        for name in names
    }
