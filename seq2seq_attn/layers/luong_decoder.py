"""The attentional LSTM decoder of Luong et al. (2015), Sec. 3 and 3.3."""

import keras
from keras import ops

from seq2seq_attn.layers.lstm import StackedLSTM
from seq2seq_attn.layers.luong_attention import LuongAttention
from seq2seq_attn.layers.recurrence import (
    scan_over_time,
    skips_padding,
    with_rows_longest_first,
)
from seq2seq_attn.layers.recurrence import swap_batch_and_time as time_major
from seq2seq_attn.serialization import initializer_config, register


@register
class LuongDecoder(keras.layers.Layer):
    """Stacked LSTM decoder with attention on its top layer.

    Luong et al. (2015): the top hidden state h_t attends over the source
    (`LuongAttention`) and gives the attentional vector
        h~_t = tanh(W_c [c_t; h_t])                               (Eq. 5)
    from which `p(y_t | y_<t, x) = softmax(W_s h~_t)` (Eq. 6; W_s is the
    model's output projection). With input feeding (Sec. 3.3) h~_{t-1} is
    concatenated to the embedding of the next input; without it, the LSTM runs
    over all steps first and the attention and h~ are computed for all steps
    at once. With `score=None` there is no attention (the "base" model of
    Table 1) and h~_t = h_t.

    Args:
        units: n, the cells per layer.
        num_layers: L.
        score, mode, window, attention_units, max_source_length: passed to
            `LuongAttention`; `score=None` for no attention.
        input_feeding: feed h~_{t-1} to the next step (Sec. 3.3).
        dropout: Zaremba dropout on each LSTM layer's input and on h~.
        kernel_initializer, recurrent_initializer, bias_initializer: weights.

    Call arguments:
        target_embedding: embeddings of y_0..y_{Ty-1}, [B, Ty, m].
        memory: source hidden states h_s, [B, Tx, Dv].
        memory_mask: boolean [B, Tx]; by default the Keras mask of `memory`
            (from `Embedding(mask_zero=True)` through the encoder).
        initial_state: the encoder's final flat LSTM state (2L tensors),
            required (a keyword where `memory_mask` is left to Keras).
        training: whether dropout is on.
        target_mask: boolean [B, Ty], True on real target positions (padding
            at the end); `skip_padding` needs it.
        skip_padding: compute each step only for the rows still inside their
            target (the rows sorted longest first for the loop, and put back
            after it): the same outputs and gradients at the real positions
            with less work on a batch of mixed lengths; past a row's end the
            outputs are not computed (its last ones are repeated). Dropout
            then draws its masks for the rows in that order. TensorFlow
            without XLA only (the number of rows changes from step to step).

    Returns:
        `(attentional, alignments)`: h~_t [B, Ty, n] and a_t [B, Ty, Tx];
        without attention, `attentional` alone.
    """

    def __init__(
        self,
        units,
        num_layers=1,
        score="general",
        mode="global",
        window=10,
        input_feeding=True,
        dropout=0.0,
        attention_units=None,
        max_source_length=None,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if input_feeding and score is None:
            raise ValueError("input_feeding needs attention (a score)")
        self.units = units
        self.num_layers = num_layers
        self.score = score
        self.mode = mode
        self.window = window
        self.input_feeding = input_feeding
        self.dropout = dropout
        self.attention_units = attention_units
        self.max_source_length = max_source_length
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(
            recurrent_initializer
        )
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.lstm = StackedLSTM(
            units,
            num_layers,
            dropout=dropout,
            kernel_initializer=self.kernel_initializer,
            recurrent_initializer=self.recurrent_initializer,
            bias_initializer=self.bias_initializer,
            name="lstm",
        )
        self.attention = None
        if score is not None:
            self.attention = LuongAttention(
                score=score,
                mode=mode,
                window=window,
                units=attention_units,
                max_source_length=max_source_length,
                kernel_initializer=self.kernel_initializer,
                name="attention",
            )
        self.seed_generator = keras.random.SeedGenerator()

    def build(self, target_embedding_shape, memory_shape):
        input_size = target_embedding_shape[-1]
        if self.input_feeding:
            input_size += self.units
        self.lstm.build((None, None, input_size))
        if self.attention is not None:
            self.attention.build((None, self.units), memory_shape)
            self.combine_kernel = self.add_weight(
                name="combine_kernel",
                shape=(memory_shape[-1] + self.units, self.units),
                initializer=self.kernel_initializer,
            )

    def attentional(self, context, hidden, combine_kernel=None):
        """h~ = tanh(W_c [c; h]) (Eq. 5), for any leading axes; W_c read
        before a loop over time may be given."""
        if combine_kernel is None:
            combine_kernel = self.combine_kernel
        combined = ops.concatenate([context, hidden], axis=-1)
        return ops.tanh(ops.matmul(combined, combine_kernel))

    def project_keys(self, memory):
        """The attention's query-independent part, once per sentence."""
        if self.attention is None:
            return None
        return self.attention.project_keys(memory)

    def initial_state(self, encoder_state):
        """The decoder state before step 0: the encoder's final LSTM state,
        then h~_0 = 0 with input feeding."""
        state = tuple(encoder_state)
        if self.input_feeding:
            state += (ops.zeros_like(state[0]),)
        return state

    def step(
        self,
        embedding,
        position,
        state,
        memory,
        keys=None,
        memory_mask=None,
        dropout_masks=None,
    ):
        """One decoder step t.

        Args:
            embedding: embedding of y_{t-1}, [B, m].
            position: t, a scalar or [B] (used by local attention).
            state: from `initial_state` or the previous step.
            memory, keys, memory_mask: as in `call` and `project_keys`.
            dropout_masks: per-layer masks of `StackedLSTM.dropout_masks`.

        Returns:
            `(attentional, alignment, state)`: h~_t [B, n], a_t [B, Tx] (None
            without attention) and the new state.
        """
        lstm_state = state[: 2 * self.num_layers]
        inputs = embedding
        if self.input_feeding:
            inputs = ops.concatenate([embedding, state[-1]], axis=-1)
        hidden, lstm_state = self.lstm.step(inputs, lstm_state, dropout_masks)
        return self._attend(
            hidden, lstm_state, position, memory, keys, memory_mask
        )

    def _attend(
        self,
        hidden,
        lstm_state,
        position,
        memory,
        keys,
        memory_mask,
        combine_kernel=None,
        query_weights=None,
    ):
        """`step`'s outputs from the top layer's new h_t."""
        if self.attention is None:
            return hidden, None, lstm_state
        context, alignment = self.attention(
            hidden,
            memory,
            value_mask=memory_mask,
            position=position,
            keys=keys,
            query_weights=query_weights,
        )
        attentional = self.attentional(context, hidden, combine_kernel)
        if self.input_feeding:
            return attentional, alignment, lstm_state + (attentional,)
        return attentional, alignment, lstm_state

    def call(
        self,
        target_embedding,
        memory,
        memory_mask=None,
        initial_state=None,
        training=None,
        target_mask=None,
        skip_padding=False,
    ):
        if initial_state is None:
            raise ValueError(
                "LuongDecoder needs initial_state, the encoder's final state"
            )
        if skip_padding and target_mask is None:
            raise ValueError(
                f"{self.name}: skip_padding=True needs the target_mask"
            )
        loop = _with_feeding if self.input_feeding else _without_feeding
        return loop(
            self,
            target_embedding,
            memory,
            memory_mask,
            initial_state,
            training,
            target_mask,
            skips_padding(skip_padding),
        )

    def _drop(self, inputs, training):
        if training and self.dropout > 0:
            return keras.random.dropout(
                inputs, self.dropout, seed=self.seed_generator
            )
        return inputs

    def compute_mask(self, target_embedding, mask=None):
        # Every output is per target position: the target's Keras mask.
        return mask if self.attention is None else (mask, mask)

    def compute_output_spec(
        self,
        target_embedding,
        memory,
        memory_mask=None,
        initial_state=None,
        training=None,
        target_mask=None,
        skip_padding=False,
    ):
        batch, steps = target_embedding.shape[:2]
        attentional = keras.KerasTensor(
            (batch, steps, self.units), dtype=self.compute_dtype
        )
        if self.attention is None:
            return attentional
        alignments = keras.KerasTensor(
            (batch, steps, memory.shape[1]), dtype=self.compute_dtype
        )
        return attentional, alignments

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "num_layers": self.num_layers,
                "score": self.score,
                "mode": self.mode,
                "window": self.window,
                "input_feeding": self.input_feeding,
                "dropout": self.dropout,
                "attention_units": self.attention_units,
                "max_source_length": self.max_source_length,
                **initializer_config(
                    self,
                    "kernel_initializer",
                    "recurrent_initializer",
                    "bias_initializer",
                ),
            }
        )
        return config


def _without_feeding(
    decoder,
    target_embedding,
    memory,
    memory_mask,
    initial_state,
    training,
    target_mask,
    skip_padding,
):
    """`LuongDecoder.call` without input feeding: the LSTM over all steps,
    then the attention and h~ for all steps at once."""
    masks = {} if target_mask is None else {"sequence_mask": target_mask}
    hidden, _ = decoder.lstm(
        target_embedding,
        initial_state=tuple(initial_state),
        training=training,
        skip_padding=skip_padding,
        **masks,
    )
    if decoder.attention is None:
        return decoder._drop(hidden, training)
    context, alignments = decoder.attention(
        hidden,
        memory,
        value_mask=memory_mask,
        keys=decoder.project_keys(memory),
    )
    attentional = decoder.attentional(context, hidden)
    return decoder._drop(attentional, training), alignments


def _with_feeding(
    decoder,
    target_embedding,
    memory,
    memory_mask,
    initial_state,
    training,
    target_mask,
    skip_padding,
):
    """`LuongDecoder.call` with input feeding: the teacher-forced loop, over
    the rows longest first where it skips the padding."""
    if not skip_padding:
        return _teacher_forced_feeding(
            decoder,
            target_embedding,
            memory,
            memory_mask,
            initial_state,
            training,
        )
    if memory_mask is None:
        memory_mask = ops.ones(ops.shape(memory)[:2], dtype="bool")
    return with_rows_longest_first(
        lambda embedding, memory, memory_mask, *initial, live_rows: (
            _teacher_forced_feeding(
                decoder,
                embedding,
                memory,
                memory_mask,
                initial,
                training,
                live_rows,
            )
        ),
        (target_embedding, memory, memory_mask, *initial_state),
        target_mask,
    )


def _teacher_forced_feeding(
    decoder,
    target_embedding,
    memory,
    memory_mask,
    initial_state,
    training,
    live_rows=None,
):
    """`LuongDecoder.call` with input feeding (Sec. 3.3): the loop over the
    target's time steps, teacher-forced; `(h~ [B, Ty, n], a [B, Ty, Tx])`.

    It runs `decoder.step`'s equations with the weights read once (the
    attention's too), and the embeddings' share of layer 1's input product
    computed before the loop. With `live_rows` (the rows longest first, see
    `scan_over_time`) each step computes only the rows still inside their
    target.
    """
    batch = ops.shape(target_embedding)[0]
    projected, masks, weights = _projected_embeddings(
        decoder, target_embedding, training
    )
    combine_kernel = ops.cast(decoder.combine_kernel, decoder.compute_dtype)
    query_weights = decoder.attention.read_query_weights(ops.shape(memory)[1])
    state = decoder.initial_state(initial_state)
    alignment = ops.zeros((batch, ops.shape(memory)[1]), dtype=state[0].dtype)
    # One position per row, so that a step of fewer rows splits it too.
    position = ops.zeros((batch,), dtype="int32")
    sequences = (projected,) + tuple(masks or ())
    # What every step reads, per row (split with the live rows).
    keys = decoder.project_keys(memory)
    constants = (memory, memory_mask) + (() if keys is None else (keys,))

    def feeding_step(carry, projected_t, *rest):
        state, _, position = carry
        step_masks = rest[: len(sequences) - 1]
        memory, memory_mask, *keys = rest[len(sequences) - 1 :]
        hidden, lstm_state = decoder.lstm.step(
            state[-1],
            state[: 2 * decoder.num_layers],
            step_masks or None,
            weights,
            projected_t,
        )
        _, alignment, state = decoder._attend(
            hidden,
            lstm_state,
            position,
            memory,
            keys[0] if keys else None,
            memory_mask,
            combine_kernel,
            query_weights,
        )
        return state, alignment, position + 1

    _, (states, alignments, _) = scan_over_time(
        feeding_step,
        (state, alignment, position),
        sequences,
        target_embedding.dtype,
        constants=constants,
        live_rows=live_rows,
    )
    attentional = time_major(states[-1])
    return decoder._drop(attentional, training), time_major(alignments)


def _projected_embeddings(decoder, target_embedding, training):
    """`(projected, masks, weights)`: the embeddings' share of layer 1's
    input product for every step, time-major, computed before the loop
    (through the embeddings' part of layer 1's dropout mask); the other
    dropout masks of every step (layer 1's for h~_{t-1} first; None without
    dropout); and the weights the loop reads (`_split_first_kernel`)."""
    batch, steps = (
        ops.shape(target_embedding)[0],
        ops.shape(target_embedding)[1],
    )
    width = target_embedding.shape[-1]
    masks = decoder.lstm.dropout_masks(
        batch, steps, width + decoder.units, training
    )
    embedding_kernel, weights = _split_first_kernel(decoder, width)
    embedded = time_major(target_embedding)
    if masks is not None:
        embedding_mask, feeding_mask = ops.split(masks[0], [width], axis=-1)
        embedded = embedded * embedding_mask
        masks = (feeding_mask,) + masks[1:]
    biases = weights[2]
    projected = ops.matmul(embedded, embedding_kernel) + biases[0]
    return projected, masks, weights


def _split_first_kernel(decoder, width):
    """`(embedding_kernel, weights)`: layer 1 reads [E y_{t-1}; h~_{t-1}],
    so its W splits into the rows for the embeddings (of width `width`),
    whose product the loop computes for all steps at once before it, and
    those for h~_{t-1}, the only product left in the loop; `weights` are
    `StackedLSTM.read_weights()` with the latter as layer 1's kernel."""
    kernels, recurrent_kernels, biases = decoder.lstm.read_weights()
    embedding_kernel, feeding_kernel = ops.split(kernels[0], [width], axis=0)
    return embedding_kernel, (
        (feeding_kernel,) + kernels[1:],
        recurrent_kernels,
        biases,
    )
