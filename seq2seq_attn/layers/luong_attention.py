"""Global and local attention of Luong et al. (2015), Sections 3.1 and 3.2."""

import keras
from keras import ops

from seq2seq_attn.layers.masking import masked_softmax, sequence_lengths
from seq2seq_attn.serialization import initializer_config, register

SCORES = ("dot", "general", "concat", "location")
MODES = ("global", "local-m", "local-p")


@register
class LuongAttention(keras.layers.Layer):
    """Luong attention: four score functions, global or local.

    Scores (Luong et al. 2015, Eq. 8 and the location function):
    - `dot`: h_t^T h_s
    - `general`: h_t^T W_a h_s
    - `concat`: v_a^T tanh(W_a [h_t; h_s])
    - `location`: a_t = softmax(W_a h_t), which needs `max_source_length`.

    Alignment a_t(s) is the softmax of the scores over the source positions
    (Eq. 7). Modes (Sec. 3.1 and 3.2):
    - `global`: every unmasked source position.
    - `local-m`: only positions s with |s - p_t| <= D, p_t = t (monotonic);
      the softmax runs over the window, clipped at the sentence's real ends.
    - `local-p`: p_t = S * sigmoid(v_p^T tanh(W_p h_t)) (Eq. 9), S the true
      source length, the window's softmax multiplied by
      exp(-(s - p_t)^2 / (2 sigma^2)), sigma = D / 2 (Eq. 10).
    Positions count from 0 on both sides. With local-m, a target position t
    beyond S + D has an empty window and gets a zero context.

    Args:
        score: one of "dot", "general", "concat", "location".
        mode: one of "global", "local-m", "local-p".
        window: D, the half-width of the local window (10 in Sec. 4.1).
        units: size of the hidden layer of `concat` (v_a) and of local-p's
            position network (v_p); defaults to the query size.
        max_source_length: number of source positions `location` can score.
        kernel_initializer: initializer of every weight (Sec. 4.1 uses uniform
            in [-0.1, 0.1]).

    Call arguments:
        query: target hidden state h_t, [B, Dq] (one step) or [B, Tq, Dq].
        value: source hidden states h_s, [B, Tv, Dv].
        value_mask: boolean [B, Tv], True on real source positions.
        position: decoder position t for local modes: a scalar or [B] for one
            step, [Tq] or [B, Tq] for all steps (default: 0..Tq-1).
        keys: optional `project_keys(value)`.
        query_weights: optional `read_query_weights(Tv)`, read before a
            loop over time.

    Returns:
        `(context, alignment)`: context [B, Dv] or [B, Tq, Dv], alignment
        [B, Tv] or [B, Tq, Tv], exactly 0 on masked positions and outside the
        window; it sums to 1 except with local-p, whose Gaussian scales it
        down.

    Example:
    >>> attention = LuongAttention(score="general", mode="local-p", window=10)
    >>> context, alignment = attention(h_t, source_states, mask, position=t)
    """

    def __init__(
        self,
        score="general",
        mode="global",
        window=10,
        units=None,
        max_source_length=None,
        kernel_initializer="glorot_uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if score not in SCORES:
            raise ValueError(f"score must be one of {SCORES}, got {score!r}")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if score == "location" and not max_source_length:
            raise ValueError("score='location' needs max_source_length > 0")
        if window < 0:
            raise ValueError(f"window must be >= 0, got {window}")
        self.score = score
        self.mode = mode
        self.window = window
        self.units = units
        self.max_source_length = max_source_length
        self.kernel_initializer = keras.initializers.get(kernel_initializer)

    def _weight(self, name, shape):
        return self.add_weight(
            name=name, shape=shape, initializer=self.kernel_initializer
        )

    def build(self, query_shape, value_shape):
        query_size, value_size = query_shape[-1], value_shape[-1]
        units = self.units or query_size
        if self.score == "dot" and query_size != value_size:
            raise ValueError(
                "score='dot' needs query and value of one size, got "
                f"{query_size} and {value_size}"
            )
        if self.score == "general":
            self.kernel = self._weight("kernel", (value_size, query_size))
        elif self.score == "concat":
            self.query_kernel = self._weight(
                "query_kernel", (query_size, units)
            )
            self.key_kernel = self._weight("key_kernel", (value_size, units))
            self.score_vector = self._weight("score_vector", (units,))
        elif self.score == "location":
            self.location_kernel = self._weight(
                "location_kernel", (query_size, self.max_source_length)
            )
        if self.mode == "local-p":
            self.position_kernel = self._weight(
                "position_kernel", (query_size, units)
            )
            self.position_vector = self._weight("position_vector", (units,))

    def project_keys(self, value):
        """The query-independent part of the score, once per sentence."""
        if self.score == "general":
            return ops.matmul(value, self.kernel)
        if self.score == "concat":
            return ops.matmul(value, self.key_kernel)
        return value

    def read_query_weights(self, source_length):
        """The weights that meet the query, in the compute dtype: concat's
        W_a and v_a, location's W_a (its first `source_length` columns, the
        source positions there are), local-p's W_p and v_p; a dict, empty
        for dot and general.

        Read once before a loop over time (read inside, each step would
        read, cast and slice them again), and passed to `call`.
        """
        names = {
            "concat": ("query_kernel", "score_vector"),
            "location": ("location_kernel",),
        }.get(self.score, ())
        if self.mode == "local-p":
            names += ("position_kernel", "position_vector")
        weights = {
            name: ops.cast(getattr(self, name), self.compute_dtype)
            for name in names
        }
        if "location_kernel" in weights:
            location = weights["location_kernel"]
            weights["location_kernel"] = location[:, :source_length]
        return weights

    def _scores(self, query, keys, weights):
        if self.score in ("dot", "general"):
            return ops.einsum("bqd,bvd->bqv", query, keys)
        if self.score == "concat":
            projected = ops.matmul(query, weights["query_kernel"])
            # expand_dims, not indexing: see `BahdanauAttention.align`.
            hidden = ops.tanh(
                ops.expand_dims(projected, 2) + ops.expand_dims(keys, 1)
            )
            return ops.einsum("bqvu,u->bqv", hidden, weights["score_vector"])
        return ops.matmul(query, weights["location_kernel"])

    def predicted_position(self, query, value_mask, query_weights=None):
        """p_t of local-p (Eq. 9): [B, Tq], within [0, S]; `query_weights`
        from `read_query_weights`, or None to read them."""
        if query_weights is None:
            query_weights = self.read_query_weights(None)
        hidden = ops.tanh(ops.matmul(query, query_weights["position_kernel"]))
        gate = ops.sigmoid(
            ops.einsum("bqu,u->bq", hidden, query_weights["position_vector"])
        )
        lengths = ops.cast(sequence_lengths(value_mask), gate.dtype)
        return lengths[:, None] * gate

    def _centre(self, query, value_mask, position, weights):
        if self.mode == "local-p":
            return self.predicted_position(query, value_mask, weights)
        batch, steps = ops.shape(query)[0], ops.shape(query)[1]
        if position is None:
            position = ops.arange(steps)
        return ops.broadcast_to(ops.cast(position, query.dtype), (batch, steps))

    def call(
        self,
        query,
        value,
        value_mask=None,
        position=None,
        keys=None,
        query_weights=None,
    ):
        if keys is None:
            keys = self.project_keys(value)
        if query_weights is None:
            query_weights = self.read_query_weights(ops.shape(value)[1])
        single_step = len(query.shape) == 2
        if single_step:
            query = ops.expand_dims(query, 1)
            if position is not None:
                position = ops.reshape(position, (-1, 1))
        if value_mask is None:
            value_mask = ops.ones(ops.shape(value)[:2], dtype="bool")
        scores = self._scores(query, keys, query_weights)
        mask = ops.broadcast_to(value_mask[:, None, :], ops.shape(scores))
        if self.mode != "global":
            centre = self._centre(query, value_mask, position, query_weights)
            source_positions = ops.cast(
                ops.arange(ops.shape(value)[1]), query.dtype
            )
            distance = source_positions - ops.expand_dims(centre, -1)
            mask = ops.logical_and(mask, ops.abs(distance) <= self.window)
        alignment = masked_softmax(scores, mask)
        if self.mode == "local-p":
            sigma = self.window / 2.0
            alignment = alignment * ops.exp(
                -ops.square(distance) / (2 * sigma**2)
            )
        context = ops.matmul(alignment, value)
        if single_step:
            return ops.squeeze(context, 1), ops.squeeze(alignment, 1)
        return context, alignment

    def compute_mask(self, query, mask=None):
        return mask, mask

    def compute_output_spec(
        self,
        query,
        value,
        value_mask=None,
        position=None,
        keys=None,
        query_weights=None,
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
                "score": self.score,
                "mode": self.mode,
                "window": self.window,
                "units": self.units,
                "max_source_length": self.max_source_length,
                **initializer_config(
                    self,
                    "kernel_initializer",
                ),
            }
        )
        return config
