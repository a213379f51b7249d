"""Weight initialisations of the papers (Bahdanau B.1, Luong 4.1)."""

import keras
from keras import ops

from seq2seq_attn.serialization import register


@register
class BlockOrthogonal(keras.initializers.Initializer):
    """Side-by-side random orthogonal square blocks: [n, k * n].

    Bahdanau et al. (2015), B.1, initialise every recurrent matrix (U, U_z,
    U_r of each GRU) as a random orthogonal matrix; the package keeps the
    matrices of one GRU or LSTM side by side in one weight, so each n x n
    block is drawn orthogonal on its own.

    Args:
        seed: an integer seed, or None.
    """

    def __init__(self, seed=None):
        self.seed = seed

    def __call__(self, shape, dtype=None):
        rows, columns = shape
        if columns % rows:
            raise ValueError(
                f"BlockOrthogonal needs columns divisible by rows, got {shape}"
            )
        blocks = []
        for index in range(columns // rows):
            seed = None if self.seed is None else self.seed + index
            orthogonal = keras.initializers.Orthogonal(seed=seed)
            blocks.append(orthogonal((rows, rows), dtype=dtype))
        return ops.concatenate(blocks, axis=1)

    def get_config(self):
        return {"seed": self.seed}


def bahdanau_initializers():
    """Bahdanau B.1: orthogonal recurrent matrices, N(0, 0.001^2) for the
    alignment model's W_a and U_a, zero v_a and biases, N(0, 0.01^2) for every
    other weight (embeddings included)."""
    return {
        "kernel": keras.initializers.RandomNormal(stddev=0.01),
        "recurrent": BlockOrthogonal(),
        "attention": keras.initializers.RandomNormal(stddev=0.001),
        "score": keras.initializers.Zeros(),
        "bias": keras.initializers.Zeros(),
        "embedding": keras.initializers.RandomNormal(stddev=0.01),
    }


def luong_initializers(scale=0.1):
    """Luong 4.1: every parameter uniform in [-scale, scale] (scale 0.1)."""
    uniform = keras.initializers.RandomUniform(-scale, scale)
    return dict.fromkeys(
        ("kernel", "recurrent", "attention", "score", "bias", "embedding"),
        uniform,
    )


def glorot_initializers():
    """Keras-style defaults that train well with Adam on small data: Glorot
    uniform, orthogonal recurrent blocks, zero biases."""
    return {
        "kernel": keras.initializers.GlorotUniform(),
        "recurrent": BlockOrthogonal(),
        "attention": keras.initializers.GlorotUniform(),
        "score": keras.initializers.GlorotUniform(),
        "bias": keras.initializers.Zeros(),
        "embedding": keras.initializers.RandomUniform(-0.05, 0.05),
    }


SCHEMES = {
    "bahdanau": bahdanau_initializers,
    "luong": luong_initializers,
    "glorot": glorot_initializers,
}


def initializers_for(scheme, **options):
    """The initializers of a named scheme: "bahdanau", "luong" or "glorot".

    Unseeded: seed the whole model with `keras.utils.set_random_seed`.
    """
    if scheme not in SCHEMES:
        raise ValueError(
            f"initializer must be one of {sorted(SCHEMES)}, got {scheme!r}"
        )
    return SCHEMES[scheme](**options)
