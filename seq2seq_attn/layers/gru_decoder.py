"""The GRU decoder of RNNsearch and RNNencdec (Bahdanau et al. 2015, A.2.2)."""

import functools

import keras
from keras import ops

from seq2seq_attn.layers.bahdanau_attention import BahdanauAttention
from seq2seq_attn.layers.gru import gru_step, split_recurrent_kernel
from seq2seq_attn.layers.per_sentence import weighted_sum_per_sentence
from seq2seq_attn.layers.recurrence import (
    scan_over_time,
    skips_padding,
    with_rows_longest_first,
)
from seq2seq_attn.layers.recurrence import swap_batch_and_time as time_major
from seq2seq_attn.serialization import initializer_config, register


@register
class GRUDecoder(keras.layers.Layer):
    """Conditional GRU decoder, with or without the alignment model.

    Bahdanau et al. (2015), A.2.2:
        s_0 = tanh(W_s backward h_1)
        c_i = sum_j alpha_ij h_j, alpha from `BahdanauAttention`(s_{i-1}, h)
        z_i = sigmoid(W_z E y_{i-1} + U_z s_{i-1} + C_z c_i), r_i likewise
        s~_i = tanh(W E y_{i-1} + U [r_i * s_{i-1}] + C c_i)
        s_i = (1 - z_i) * s_{i-1} + z_i * s~_i
    With `attention_units=None` this is the RNN Encoder-Decoder of Cho et al.
    (2014a), "if we fix c_i to forward h_Tx" (A.2.2): the context is one
    vector per sentence, given as `memory` [B, Dc], and s_0 = tanh(W_s c).
    W E y_{i-1} of every step is computed outside the recurrence.

    Args:
        units: n, the decoder state size.
        attention_units: n', the alignment model's size, or None for a fixed
            context (RNNencdec).
        kernel_initializer, recurrent_initializer, bias_initializer: for W, C,
            W_s; U; and the biases.
        attention_initializer, score_initializer: W_a and U_a; v_a.

    Call arguments:
        target_embedding: E y_{i-1} for every step, [B, Ty, m].
        memory: annotations [B, Tx, Dc] (attention) or the context [B, Dc].
        summary: the vector s_0 is computed from, [B, Ds].
        memory_mask: boolean [B, Tx] (attention only).
        target_mask: boolean [B, Ty], True on real target positions (which
            come first); `skip_padding` needs it.
        skip_padding: compute each step only for the rows still inside their
            target (the rows sorted longest first for the loop, and put back
            after it; `scan_over_time`'s `live_rows`; past a row's end its
            state, context and alignment repeat). The outputs at real
            positions are the same, with less work on a batch of mixed
            lengths. TensorFlow without XLA only (the number of rows changes
            from step to step); other backends compute every row.

    Returns:
        `(previous_states, contexts, alignments)`: s_{i-1} [B, Ty, n], c_i
        [B, Ty, Dc] and alpha_i [B, Ty, Tx] for every step i; without
        attention, `(previous_states, contexts)`.
    """

    def __init__(
        self,
        units,
        attention_units=None,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        attention_initializer="glorot_uniform",
        score_initializer="glorot_uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = units
        self.attention_units = attention_units
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(
            recurrent_initializer
        )
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.attention_initializer = keras.initializers.get(
            attention_initializer
        )
        self.score_initializer = keras.initializers.get(score_initializer)
        self.attention = None
        if attention_units:
            self.attention = BahdanauAttention(
                attention_units,
                kernel_initializer=self.attention_initializer,
                score_initializer=self.score_initializer,
                bias_initializer=self.bias_initializer,
                name="attention",
            )

    def _weight(self, name, shape, initializer):
        return self.add_weight(name=name, shape=shape, initializer=initializer)

    def build(self, target_embedding_shape, memory_shape, summary_shape):
        n = self.units
        self.init_kernel = self._weight(
            "init_kernel", (summary_shape[-1], n), self.kernel_initializer
        )
        self.init_bias = self._weight("init_bias", (n,), self.bias_initializer)
        self.embedding_kernel = self._weight(
            "embedding_kernel",
            (target_embedding_shape[-1], 3 * n),
            self.kernel_initializer,
        )
        self.context_kernel = self._weight(
            "context_kernel", (memory_shape[-1], 3 * n), self.kernel_initializer
        )
        self.recurrent_kernel = self._weight(
            "recurrent_kernel", (n, 3 * n), self.recurrent_initializer
        )
        self.bias = self._weight("bias", (3 * n,), self.bias_initializer)
        if self.attention is not None:
            self.attention.build((None, n), memory_shape)

    def initial_state(self, summary):
        """s_0 = tanh(W_s summary + b_s), [B, n]."""
        return ops.tanh(ops.matmul(summary, self.init_kernel) + self.init_bias)

    def project_embedding(self, target_embedding):
        """W E y_{i-1} + b for the three gates, for any leading axes."""
        return ops.matmul(target_embedding, self.embedding_kernel) + self.bias

    def project_context(self, context, context_kernel=None):
        """C c for the three gates, for any leading axes (a search projects
        the annotations h_j instead, see `inference_step`)."""
        if context_kernel is None:
            context_kernel = self.context_kernel
        return ops.matmul(context, context_kernel)

    def read_step_weights(self):
        """What `step` reads, cast to the compute dtype once before a loop
        over time: U split by `split_recurrent_kernel`, C, W_a and v_a."""
        dtype = self.compute_dtype
        return (
            split_recurrent_kernel(self.recurrent_kernel, dtype),
            ops.cast(self.context_kernel, dtype),
            None
            if self.attention is None
            else self.attention.read_query_weights(),
        )

    def next_state(self, gate_inputs, state, recurrent_kernel=None):
        """s_i from s_{i-1} and the gates' inputs W E y_{i-1} + C c_i + b,
        [B, 3n]; `recurrent_kernel` as in `step`."""
        return gru_step(
            gate_inputs, state, recurrent_kernel or self.recurrent_kernel
        )

    def project_keys(self, memory):
        """U_a h_j of the alignment model, once per sentence (or None)."""
        if self.attention is None:
            return None
        return self.attention.project_keys(memory)

    def step(
        self,
        projected_embedding,
        state,
        memory,
        keys=None,
        memory_mask=None,
        weights=None,
    ):
        """One decoder step i.

        Args:
            projected_embedding: `project_embedding(E y_{i-1})`, [B, 3n].
            state: s_{i-1}, [B, n].
            memory, keys, memory_mask: as in `call` and `project_keys`.
            weights: `read_step_weights()`, when the caller loops over many
                steps (default: read here).

        Returns:
            `(state, context, alignment)`: s_i [B, n], c_i [B, Dc] and alpha_i
            [B, Tx] (None without attention).
        """
        recurrent_kernel, context_kernel, query_weights = weights or (None,) * 3
        if self.attention is None:
            context, alignment = memory, None
        else:
            # By keyword: Keras fills a None `value_mask` with the Keras
            # mask of `value`, which clashes with a positional None.
            context, alignment = self.attention(
                state,
                memory,
                value_mask=memory_mask,
                keys=keys,
                query_weights=query_weights,
            )
        gate_inputs = projected_embedding + self.project_context(
            context, context_kernel
        )
        return (
            self.next_state(gate_inputs, state, recurrent_kernel),
            context,
            alignment,
        )

    def inference_step(
        self,
        projected_embedding,
        state,
        products,
        memory_mask,
        keys=None,
        sentence=None,
    ):
        """One step i of a search, from the annotations projected once.

        C is linear, so C c_i = sum_j alpha_ij (C h_j) (A.2.2): `products`
        holds C h_j once per source sentence, [S, Tx, 3n + D], and the step
        weighs it with the hypotheses' alignments in one batched matmul
        (`weighted_sum_per_sentence`) instead of gathering h_j for every
        hypothesis and multiplying each c_i by C. Its first 3n columns are
        C h_j; the D after them are any other linear map of h_j (the deep
        output's C_o h_j), weighed with the same alpha_i and returned. Without
        attention (RNNencdec) `products` is C c and the rest for each row,
        [B, 3n + D], and alpha_i is zeros.

        Args:
            projected_embedding: `project_embedding(E y_{i-1})`, [B, 3n].
            state: s_{i-1}, [B, n].
            products: see above.
            memory_mask: boolean [B, Tx].
            keys: `project_keys(h)` of each row's sentence, [B, Tx, n'].
            sentence: int32 [B], each row's sentence in `products`.

        Returns:
            `(state, alignment, rest)`: s_i [B, n], alpha_i [B, Tx] and the
            weighted other columns [B, D].
        """
        if self.attention is None:
            weighted = products
            alignment = ops.zeros(ops.shape(memory_mask), dtype=products.dtype)
        else:
            alignment = self.attention.align(state, keys, memory_mask)
            weighted = weighted_sum_per_sentence(alignment, sentence, products)
        weighted_context, rest = ops.split(weighted, [3 * self.units], axis=-1)
        new_state = self.next_state(
            projected_embedding + weighted_context, state
        )
        return new_state, alignment, rest

    def call(
        self,
        target_embedding,
        memory,
        summary,
        memory_mask=None,
        target_mask=None,
        skip_padding=False,
    ):
        rows = (target_embedding, memory, summary)
        if memory_mask is not None:
            rows += (memory_mask,)
        loop = functools.partial(_teacher_forced, self)
        if skip_padding and target_mask is None:
            raise ValueError(
                f"{self.name}: skip_padding=True needs the target_mask"
            )
        if not skips_padding(skip_padding):
            return loop(*rows)
        return with_rows_longest_first(loop, rows, target_mask)

    def compute_mask(self, target_embedding, mask=None):
        # Every output is per target position: the target's Keras mask.
        return (mask, mask) if self.attention is None else (mask,) * 3

    def compute_output_spec(
        self,
        target_embedding,
        memory,
        summary,
        memory_mask=None,
        target_mask=None,
        skip_padding=False,
    ):
        batch, steps = target_embedding.shape[:2]
        dtype = self.compute_dtype
        outputs = [
            keras.KerasTensor((batch, steps, self.units), dtype=dtype),
            keras.KerasTensor((batch, steps, memory.shape[-1]), dtype=dtype),
        ]
        if self.attention is not None:
            outputs.append(
                keras.KerasTensor((batch, steps, memory.shape[1]), dtype)
            )
        return tuple(outputs)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "attention_units": self.attention_units,
                **initializer_config(
                    self,
                    "kernel_initializer",
                    "recurrent_initializer",
                    "bias_initializer",
                    "attention_initializer",
                    "score_initializer",
                ),
            }
        )
        return config


def _teacher_forced(
    decoder, target_embedding, memory, summary, memory_mask=None, live_rows=None
):
    """`GRUDecoder.call`'s outputs, every row stepped, or with the rows
    longest first and only `live_rows` stepped (see `scan_over_time`)."""
    initial = decoder.initial_state(summary)
    projected = time_major(decoder.project_embedding(target_embedding))
    if decoder.attention is None:
        states = _fixed_context_loop(
            decoder, initial, projected, memory, live_rows
        )
        steps = ops.shape(target_embedding)[1]
        contexts = ops.repeat(memory[:, None, :], steps, axis=1)
        return _previous_states(initial, states), contexts
    states, contexts, alignments = _attention_loop(
        decoder, initial, projected, memory, memory_mask, live_rows
    )
    return (
        _previous_states(initial, states),
        time_major(contexts),
        time_major(alignments),
    )


def _previous_states(initial, states):
    """s_0..s_{Ty-1} from s_1..s_Ty (time-major) as [B, Ty, n]."""
    previous = ops.concatenate([initial[None], states[:-1]], axis=0)
    return time_major(previous)


def _attention_loop(
    decoder, initial, projected, memory, memory_mask, live_rows
):
    """s_i, c_i and alpha_i of every step (time-major) of RNNsearch, with the
    keys U_a h_j projected once and the step's weights read once; `live_rows`
    as in `scan_over_time`."""
    keys = decoder.project_keys(memory)
    weights = decoder.read_step_weights()
    batch, source_steps = ops.shape(memory)[0], ops.shape(memory)[1]
    carry = (
        initial,
        ops.zeros((batch, memory.shape[-1]), dtype=initial.dtype),
        ops.zeros((batch, source_steps), dtype=initial.dtype),
    )
    constants = (memory, keys)
    if memory_mask is not None:
        constants += (memory_mask,)

    def attention_step(carry, projected_t, memory, keys, memory_mask=None):
        return decoder.step(
            projected_t, carry[0], memory, keys, memory_mask, weights=weights
        )

    _, outputs = scan_over_time(
        attention_step,
        carry,
        (projected,),
        projected.dtype,
        constants=constants,
        live_rows=live_rows,
    )
    return outputs


def _fixed_context_loop(decoder, initial, projected, memory, live_rows=None):
    """s_1..s_Ty (time-major) of RNNencdec: C c is the same at every step, so
    it is added to W E y_{i-1} once, outside the loop. `live_rows` as in
    `scan_over_time`."""
    recurrent_kernel, context_kernel, _ = decoder.read_step_weights()
    projected += decoder.project_context(memory, context_kernel)[None]

    def fixed_context_step(state, projected_t):
        return decoder.next_state(projected_t, state, recurrent_kernel)

    _, states = scan_over_time(
        fixed_context_step,
        initial,
        (projected,),
        projected.dtype,
        live_rows=live_rows,
    )
    return states
