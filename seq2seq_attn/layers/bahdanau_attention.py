"""The alignment model of RNNsearch (Bahdanau et al. 2015, Eq. 6 and A.1.2)."""

import keras
from keras import ops

from seq2seq_attn.layers.masking import masked_softmax
from seq2seq_attn.serialization import initializer_config, register


@register
class BahdanauAttention(keras.layers.Layer):
    """Additive attention: e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j).

    Bahdanau et al. (2015), Eq. 6 and A.1.2: the scores e_ij are normalised by
    a softmax over the source positions j (Eq. 6) into alignment weights
    alpha_ij, and the context is c_i = sum_j alpha_ij h_j (Eq. 5). The key
    projection U_a h_j does not depend on the decoder step, so it is computed
    once per sentence with `project_keys` and can be passed back to every call.

    Args:
        units: n', the size of the alignment model's hidden layer (1000 in
            A.2.2).
        use_bias: add a bias b_a inside the tanh. The paper omits bias terms
            from its equations (A.2) and sets them to zero at the start (B.1).
        kernel_initializer: initializer of W_a and U_a (B.1 uses N(0, 0.001^2)).
        score_initializer: initializer of v_a (B.1 uses zeros).
        bias_initializer: initializer of b_a.

    Call arguments:
        query: decoder state s_{i-1}, [B, Dq] (one step) or [B, Tq, Dq].
        value: annotations h_j, [B, Tv, Dv].
        value_mask: boolean [B, Tv], True on real source positions.
        keys: optional `project_keys(value)`, [B, Tv, units].

    Returns:
        `(context, alignment)`: context [B, Dv] or [B, Tq, Dv], alignment
        [B, Tv] or [B, Tq, Tv]. Alignment is exactly 0 on masked positions and
        sums to 1 over the others.

    Example:
    >>> attention = BahdanauAttention(8)
    >>> keys = attention.project_keys(annotations)
    >>> context, alignment = attention(state, annotations, mask, keys=keys)
    """

    def __init__(
        self,
        units,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        score_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = units
        self.use_bias = use_bias
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.score_initializer = keras.initializers.get(score_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def build(self, query_shape, value_shape):
        self.query_kernel = self.add_weight(
            name="query_kernel",
            shape=(query_shape[-1], self.units),
            initializer=self.kernel_initializer,
        )
        self.key_kernel = self.add_weight(
            name="key_kernel",
            shape=(value_shape[-1], self.units),
            initializer=self.kernel_initializer,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                name="bias",
                shape=(self.units,),
                initializer=self.bias_initializer,
            )
        self.score_vector = self.add_weight(
            name="score_vector",
            shape=(self.units,),
            initializer=self.score_initializer,
        )

    def project_keys(self, value):
        """U_a h_j (+ b_a) for every source position: [B, Tv, units]."""
        keys = ops.matmul(value, self.key_kernel)
        if self.bias is not None:
            keys = keys + self.bias
        return keys

    def read_query_weights(self):
        """`(W_a, v_a)` in the compute dtype, for `align` inside a loop over
        time (read there, each step would read and cast them again)."""
        return tuple(
            ops.cast(w, self.compute_dtype)
            for w in (self.query_kernel, self.score_vector)
        )

    def align(self, query, keys, value_mask=None, query_weights=None):
        """alpha_ij from s_{i-1} and `project_keys(h)` alone (Eq. 6):
        [B, Tv] for a query [B, Dq], [B, Tq, Tv] for [B, Tq, Dq];
        `query_weights` from `read_query_weights`, or None to read them."""
        query_kernel, score_vector = query_weights or (
            self.query_kernel,
            self.score_vector,
        )
        single_step = len(query.shape) == 2
        if single_step:
            query = ops.expand_dims(query, 1)
        projected_query = ops.matmul(query, query_kernel)
        # expand_dims and squeeze, not indexing: inside a loop over time the
        # gradient of keys[:, None] is a zero-filled [B, Tv, units] tensor
        # per step (StridedSliceGrad), that of expand_dims a reshape.
        hidden = ops.tanh(
            ops.expand_dims(projected_query, 2) + ops.expand_dims(keys, 1)
        )
        scores = ops.einsum("bqvu,u->bqv", hidden, score_vector)
        mask = None if value_mask is None else value_mask[:, None, :]
        alignment = masked_softmax(scores, mask)
        return ops.squeeze(alignment, 1) if single_step else alignment

    def call(
        self, query, value, value_mask=None, keys=None, query_weights=None
    ):
        if keys is None:
            keys = self.project_keys(value)
        alignment = self.align(query, keys, value_mask, query_weights)
        if len(query.shape) == 2:
            context = ops.matmul(ops.expand_dims(alignment, 1), value)
            return ops.squeeze(context, 1), alignment
        return ops.matmul(alignment, value), alignment

    def compute_mask(self, query, mask=None):
        return mask, mask

    def compute_output_spec(
        self, query, value, value_mask=None, keys=None, query_weights=None
    ):
        prefix = tuple(query.shape[:-1])
        return (
            keras.KerasTensor(
                prefix + (value.shape[-1],), dtype=self.compute_dtype
            ),
            keras.KerasTensor(
                prefix + (value.shape[1],), dtype=self.compute_dtype
            ),
        )

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "use_bias": self.use_bias,
                **initializer_config(
                    self,
                    "kernel_initializer",
                    "score_initializer",
                    "bias_initializer",
                ),
            }
        )
        return config
