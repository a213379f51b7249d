"""One matrix for the target embedding and the output projection.

Press & Wolf (2017, "Using the Output Embedding to Improve Language
Models") tie the two: the output layer's weights are the embedding matrix
E, so logits = E h + b. Not in either paper (Bahdanau et al. and Luong et
al. learn E and the output layer apart); a flag, `tie_embeddings`.
"""

import keras
from keras import ops

from seq2seq_attn.serialization import initializer_config, register


@register
class TiedEmbedding(keras.layers.Layer):
    """The embedding E [V, d] read both ways.

    `layer(ids)` looks rows up: E y, [..., d] (as `keras.layers.Embedding`).
    `layer(hidden, reverse=True)` projects onto the vocabulary: float32
    logits E h + b, [..., V], computed in the layer's compute dtype (as
    `VocabularyProjection`). For Luong et al. (2015) h is the attentional
    vector h~_t (Eq. 6, W_s = E); for RNNsearch the maxout layer's t_i
    (Bahdanau et al. 2015, A.2.2, W_o = E). b is the output layer's bias.

    Args:
        input_dim: V, the vocabulary size.
        output_dim: d, the embedding size (the width of h too).
        embeddings_initializer: initializer of E.
        bias_initializer: initializer of b (zeros).
    """

    def __init__(
        self,
        input_dim,
        output_dim,
        embeddings_initializer="uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.embeddings_initializer = keras.initializers.get(
            embeddings_initializer
        )
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(
            name="embeddings",
            shape=(self.input_dim, self.output_dim),
            initializer=self.embeddings_initializer,
        )
        self.output_bias = self.add_weight(
            name="output_bias",
            shape=(self.input_dim,),
            initializer=self.bias_initializer,
        )

    def call(self, inputs, reverse=False):
        embeddings = ops.cast(self.embeddings, self.compute_dtype)
        if not reverse:
            return ops.take(embeddings, ops.cast(inputs, "int32"), axis=0)
        logits = ops.matmul(
            ops.cast(inputs, self.compute_dtype), ops.transpose(embeddings)
        )
        logits = logits + ops.cast(self.output_bias, self.compute_dtype)
        return ops.cast(logits, "float32")

    def compute_output_spec(self, inputs, reverse=False):
        if reverse:
            shape = tuple(inputs.shape[:-1]) + (self.input_dim,)
            return keras.KerasTensor(shape, dtype="float32")
        shape = tuple(inputs.shape) + (self.output_dim,)
        return keras.KerasTensor(shape, dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "input_dim": self.input_dim,
                "output_dim": self.output_dim,
                **initializer_config(
                    self, "embeddings_initializer", "bias_initializer"
                ),
            }
        )
        return config
