"""The maxout deep output of RNNsearch (Bahdanau et al. 2015, A.2.2)."""

import functools

import keras
from keras import ops

from seq2seq_attn.serialization import initializer_config, register


@register
class MaxoutDeepOutput(keras.layers.Layer):
    """Deep output with one maxout hidden layer, then the vocabulary logits.

    Bahdanau et al. (2015), A.2.2:
        t~_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i      (2l units)
        t_i  = [max(t~_{i,2j-1}, t~_{i,2j})]_{j=1..l}       (l units)
        logits_i = W_o t_i
    The equations omit biases (A.2); this layer has them, starting at zero
    (B.1). Every input may have any leading axes, so the layer runs once over
    all decoder steps, outside the recurrence.

    Args:
        units: l, the size of the maxout layer (500 in A.2.3).
        vocab_size: K_y, the number of target words; None leaves W_o out
            (a tied model projects t_i through its target embedding,
            `TiedEmbedding`), and the layer returns t_i [..., units].
        pool_size: how many pre-activations each maxout unit takes (2).
        kernel_initializer: initializer of U_o, V_o, C_o and W_o (B.1 uses
            N(0, 0.01^2)).
        bias_initializer: initializer of both biases.

    Call arguments:
        state: s_{i-1}, [..., n].
        previous_embedding: E y_{i-1}, [..., m].
        context: c_i, [..., Dc].

    Returns:
        float32 logits [..., vocab_size].
    """

    def __init__(
        self,
        units,
        vocab_size,
        pool_size=2,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.supports_masking = True  # per position: the state's mask
        self.units = units
        self.vocab_size = vocab_size
        self.pool_size = pool_size
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def _kernel(self, name, shape):
        return self.add_weight(
            name=name, shape=shape, initializer=self.kernel_initializer
        )

    def build(self, state_shape, previous_embedding_shape, context_shape):
        width = self.units * self.pool_size
        self.state_kernel = self._kernel(
            "state_kernel", (state_shape[-1], width)
        )
        self.embedding_kernel = self._kernel(
            "embedding_kernel", (previous_embedding_shape[-1], width)
        )
        self.context_kernel = self._kernel(
            "context_kernel", (context_shape[-1], width)
        )
        self.maxout_bias = self.add_weight(
            name="maxout_bias",
            shape=(width,),
            initializer=self.bias_initializer,
        )
        if self.vocab_size is None:
            return
        self.output_kernel = self._kernel(
            "output_kernel", (self.units, self.vocab_size)
        )
        self.output_bias = self.add_weight(
            name="output_bias",
            shape=(self.vocab_size,),
            initializer=self.bias_initializer,
        )

    def project_context(self, context):
        """C_o c, for any leading axes (see `GRUDecoder.project_context`)."""
        return ops.matmul(context, self.context_kernel)

    def maxout(self, state, previous_embedding, projected_context):
        """t_i, the maxout hidden layer, from s_{i-1}, E y_{i-1} and C_o c_i:
        [..., units]."""
        pre_activation = (
            ops.matmul(state, self.state_kernel)
            + ops.matmul(previous_embedding, self.embedding_kernel)
            + projected_context
            + self.maxout_bias
        )
        shape = ops.shape(pre_activation)[:-1] + (self.units, self.pool_size)
        # The max of the pool's pre-activations as an elementwise maximum of
        # its pieces: on CPU 2-6x faster, forward and backward, than a max
        # over the innermost axis of 2.
        pieces = ops.unstack(ops.reshape(pre_activation, shape), axis=-1)
        return functools.reduce(ops.maximum, pieces)

    def logits(self, state, previous_embedding, projected_context):
        """float32 logits [..., vocab_size] from s_{i-1}, E y_{i-1} and
        C_o c_i (`project_context`); t_i where `vocab_size` is None."""
        hidden = self.maxout(state, previous_embedding, projected_context)
        if self.vocab_size is None:
            return hidden
        logits = ops.matmul(hidden, self.output_kernel) + self.output_bias
        return ops.cast(logits, "float32")

    def call(self, state, previous_embedding, context):
        return self.logits(
            state, previous_embedding, self.project_context(context)
        )

    def compute_output_spec(self, state, previous_embedding, context):
        if self.vocab_size is None:
            shape = tuple(state.shape[:-1]) + (self.units,)
            return keras.KerasTensor(shape, dtype=self.compute_dtype)
        shape = tuple(state.shape[:-1]) + (self.vocab_size,)
        return keras.KerasTensor(shape, dtype="float32")

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "vocab_size": self.vocab_size,
                "pool_size": self.pool_size,
                **initializer_config(
                    self,
                    "kernel_initializer",
                    "bias_initializer",
                ),
            }
        )
        return config
