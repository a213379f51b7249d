"""Gated recurrent units as in Bahdanau et al. (2015), A.1.1 and A.2.1.

The input projections W x_t of every time step are computed at once, outside
the recurrence; only the recurrent part U h_{t-1} runs inside `ops.scan`.
"""

import keras
from keras import ops

from seq2seq_attn.layers.recurrence import (
    scan_over_time,
    skips_padding,
    with_rows_longest_first,
)
from seq2seq_attn.layers.recurrence import swap_batch_and_time as time_major
from seq2seq_attn.serialization import initializer_config, register


def split_recurrent_kernel(recurrent_kernel, dtype=None):
    """`((U_z U_r) [n, 2n], U [n, n])` from the [n, 3n] kernel, cast to
    `dtype`: done once per sequence, outside the loop over time, so that no
    step slices (or casts) the kernel again."""
    units = ops.shape(recurrent_kernel)[0]
    if dtype is not None:
        recurrent_kernel = ops.cast(recurrent_kernel, dtype)
    return recurrent_kernel[:, : 2 * units], recurrent_kernel[:, 2 * units :]


def gru_step(projected_input, previous, recurrent_kernel):
    """One GRU update with the input projection already applied.

    Bahdanau et al. (2015), A.2.1:
        z = sigmoid(W_z x + U_z h),  r = sigmoid(W_r x + U_r h)
        h~ = tanh(W x + U [r * h]),  h' = (1 - z) * h + z * h~

    Args:
        projected_input: [B, 3n], W x (+ bias) for the gates (z, r, h~).
        previous: h, [B, n].
        recurrent_kernel: [n, 3n], (U_z, U_r, U) side by side, or its two
            parts from `split_recurrent_kernel`.

    Returns:
        h', [B, n].
    """
    if not isinstance(recurrent_kernel, tuple):
        recurrent_kernel = split_recurrent_kernel(recurrent_kernel)
    gates_kernel, candidate_kernel = recurrent_kernel
    units = previous.shape[-1]
    # Split, not sliced: the gradient of a split is one concatenation, that
    # of each slice a zero-filled [B, 3n] tensor to add up (StridedSliceGrad
    # and AddN were a sixth of a training step's op time).
    gate_inputs, candidate_input = ops.split(
        projected_input, [2 * units], axis=-1
    )
    gates = ops.sigmoid(gate_inputs + ops.matmul(previous, gates_kernel))
    update, reset = ops.split(gates, 2, axis=-1)
    candidate = ops.tanh(
        candidate_input + ops.matmul(reset * previous, candidate_kernel)
    )
    return (1.0 - update) * previous + update * candidate


@register
class GRU(keras.layers.Layer):
    """A masked GRU over a sequence (Bahdanau et al. 2015, A.1.1).

    On a masked step the state is carried unchanged and the output is zero.
    With `go_backwards=True` the sequence is read from its end; since the state
    stays at its initial value across the trailing padding, the backward pass
    of each sentence starts at its last real token.

    Args:
        units: n, the state size.
        go_backwards: read the sequence from the last position to the first.
        kernel_initializer: initializer of W (B.1: N(0, 0.01^2)).
        recurrent_initializer: initializer of U (B.1: orthogonal blocks).
        bias_initializer: initializer of the bias (B.1: zeros).

    Call arguments:
        inputs: [B, T, D].
        sequence_mask: boolean [B, T], True on real positions (padding at
            the end).
        initial_state: [B, n]; zeros by default.
        mask: the Keras mask of `inputs` (from `Embedding(mask_zero=True)`),
            filled in by Keras; used where `sequence_mask` is not given.
        skip_padding: compute each step only for the rows still inside their
            sequence (the rows sorted longest first for the loop, and put
            back after it; `scan_over_time`'s `live_rows`): the same
            outputs with less work on a batch of mixed lengths. TensorFlow
            without XLA only (the number of rows changes from step to
            step); other backends compute every row.

    Returns:
        `(outputs, final_state)`: outputs [B, T, n] (h_t, zero where masked),
        final_state [B, n] (the state after the last real token read).
    """

    def __init__(
        self,
        units,
        go_backwards=False,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = units
        self.go_backwards = go_backwards
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(
            recurrent_initializer
        )
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def build(self, inputs_shape):
        self.kernel = self.add_weight(
            name="kernel",
            shape=(inputs_shape[-1], 3 * self.units),
            initializer=self.kernel_initializer,
        )
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel",
            shape=(self.units, 3 * self.units),
            initializer=self.recurrent_initializer,
        )
        self.bias = self.add_weight(
            name="bias",
            shape=(3 * self.units,),
            initializer=self.bias_initializer,
        )

    def call(
        self,
        inputs,
        sequence_mask=None,
        initial_state=None,
        mask=None,
        skip_padding=False,
    ):
        batch, steps = ops.shape(inputs)[0], ops.shape(inputs)[1]
        mask = mask if sequence_mask is None else sequence_mask
        if mask is None:
            mask = ops.ones((batch, steps), dtype="bool")
        if initial_state is None:
            initial_state = ops.zeros(
                (batch, self.units), dtype=self.compute_dtype
            )
        if skips_padding(skip_padding):
            states, final_state = with_rows_longest_first(
                self._states, (inputs, initial_state), mask
            )
        else:
            states, final_state = self._states(inputs, initial_state, mask)
        outputs = states * ops.cast(mask, states.dtype)[:, :, None]
        return outputs, final_state

    def _states(self, inputs, initial_state, mask=None, live_rows=None):
        """h_t of every step [B, T, n] (past a row's end, its last state)
        and the final state: masked steps carry the state over, or, with
        the rows longest first, only `live_rows` are stepped
        (`scan_over_time`)."""
        projected = ops.matmul(inputs, self.kernel) + self.bias
        kernels = split_recurrent_kernel(self.recurrent_kernel, projected.dtype)
        if live_rows is None:
            sequences = (time_major(projected), time_major(mask))

            def step(previous, projected_t, mask_t):
                state = gru_step(projected_t, previous, kernels)
                return ops.where(mask_t[:, None], state, previous)

        else:
            sequences = (time_major(projected),)

            def step(previous, projected_t):
                return gru_step(projected_t, previous, kernels)

        final_state, states = scan_over_time(
            step,
            initial_state,
            sequences,
            projected.dtype,
            reverse=self.go_backwards,
            live_rows=live_rows,
        )
        return time_major(states), final_state

    def compute_mask(self, inputs, mask=None):
        return mask, None

    def compute_output_spec(
        self,
        inputs,
        sequence_mask=None,
        initial_state=None,
        mask=None,
        skip_padding=False,
    ):
        return (
            keras.KerasTensor(
                tuple(inputs.shape[:2]) + (self.units,),
                dtype=self.compute_dtype,
            ),
            keras.KerasTensor(
                (inputs.shape[0], self.units), dtype=self.compute_dtype
            ),
        )

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "go_backwards": self.go_backwards,
                **initializer_config(
                    self,
                    "kernel_initializer",
                    "recurrent_initializer",
                    "bias_initializer",
                ),
            }
        )
        return config


@register
class BidirectionalGRU(keras.layers.Layer):
    """The RNNsearch encoder: a forward and a backward GRU (Bahdanau A.2.1).

    Annotations are h_j = [forward h_j; backward h_j] (Eq. 7). The backward
    GRU starts at each sentence's last real token. The layer also returns
    backward h_1, from which the decoder's first state s_0 = tanh(W_s
    backward h_1) is computed (A.2.2).

    Args:
        units: n, the state size of each direction (1000 in A.2.3).
        kernel_initializer, recurrent_initializer, bias_initializer: as in
            `GRU`, for both directions.

    Call arguments:
        inputs: source embeddings E x, [B, T, m]. One embedding matrix serves
            both directions (A.2.1).
        sequence_mask: boolean [B, T], True on real tokens, padding at the end.
        mask: the Keras mask of `inputs` (from `Embedding(mask_zero=True)`),
            filled in by Keras; used where `sequence_mask` is not given.
        skip_padding: as in `GRU`, for both directions.

    Returns:
        `(annotations, backward_first)`: annotations [B, T, 2n], zero on
        padding; backward_first [B, n], the backward state at position 1.
    """

    def __init__(
        self,
        units,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = units
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(
            recurrent_initializer
        )
        self.bias_initializer = keras.initializers.get(bias_initializer)
        initializers = dict(
            kernel_initializer=self.kernel_initializer,
            recurrent_initializer=self.recurrent_initializer,
            bias_initializer=self.bias_initializer,
        )
        self.forward = GRU(units, name="forward", **initializers)
        self.backward = GRU(
            units, go_backwards=True, name="backward", **initializers
        )

    def build(self, inputs_shape):
        self.forward.build(inputs_shape)
        self.backward.build(inputs_shape)

    def call(self, inputs, sequence_mask=None, mask=None, skip_padding=False):
        sequence_mask = mask if sequence_mask is None else sequence_mask
        forward_states, _ = self.forward(
            inputs, sequence_mask=sequence_mask, skip_padding=skip_padding
        )
        backward_states, backward_first = self.backward(
            inputs, sequence_mask=sequence_mask, skip_padding=skip_padding
        )
        annotations = ops.concatenate(
            [forward_states, backward_states], axis=-1
        )
        return annotations, backward_first

    def compute_mask(self, inputs, mask=None):
        return mask, None

    def compute_output_spec(
        self, inputs, sequence_mask=None, mask=None, skip_padding=False
    ):
        return (
            keras.KerasTensor(
                tuple(inputs.shape[:2]) + (2 * self.units,),
                dtype=self.compute_dtype,
            ),
            keras.KerasTensor(
                (inputs.shape[0], self.units), dtype=self.compute_dtype
            ),
        )

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                **initializer_config(
                    self,
                    "kernel_initializer",
                    "recurrent_initializer",
                    "bias_initializer",
                ),
            }
        )
        return config
