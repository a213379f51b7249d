"""Stacked LSTMs of Luong et al. (2015), Sec. 2 and 4.1, with Zaremba dropout.

Run over a whole sequence, each layer is its own recurrence, so every layer's
input projection is computed for all time steps at once; only the recurrent
matmul runs inside `ops.scan`. `step` advances all layers by one time step,
for decoders whose next input depends on their last output (input feeding).
The weights are read (and, under mixed precision, cast) once, before a loop
over time, not at every step.
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


def lstm_step(projected_input, state, recurrent_kernel):
    """One LSTM update with the input projection already applied.

    Gates in the order (i, f, g, o):
        c' = sigmoid(f) * c + sigmoid(i) * tanh(g),  h' = sigmoid(o) * tanh(c')

    Args:
        projected_input: W x + b, [B, 4n].
        state: `(h, c)`, each [B, n].
        recurrent_kernel: U, [n, 4n].

    Returns:
        `(h', c')`.
    """
    hidden, cell = state
    gates = projected_input + ops.matmul(hidden, recurrent_kernel)
    input_gate, forget_gate, candidate, output_gate = ops.split(
        gates, 4, axis=-1
    )
    cell = ops.sigmoid(forget_gate) * cell + ops.sigmoid(input_gate) * ops.tanh(
        candidate
    )
    return ops.sigmoid(output_gate) * ops.tanh(cell), cell


@register
class StackedLSTM(keras.layers.Layer):
    """`num_layers` LSTMs, each reading the outputs of the one below.

    Dropout (Zaremba et al. 2015, as in Luong 4.1) is applied to the input of
    every layer, never to the recurrent connections, and only in training.
    States are flat tuples `(h_1, c_1, ..., h_L, c_L)`, layer 1 at the bottom.

    Args:
        units: n, the cells per layer (1000 in Luong 4.1).
        num_layers: L (4 in Luong 4.1).
        dropout: the drop probability of each layer's input (0.2 in Luong).
        kernel_initializer, recurrent_initializer, bias_initializer: weights.

    Call arguments:
        inputs: [B, T, D].
        sequence_mask: boolean [B, T]; on masked steps the states are carried
            unchanged and the outputs are zero.
        initial_state: flat tuple of 2L tensors [B, n]; zeros by default.
        training: whether dropout is on.
        mask: the Keras mask of `inputs` (from `Embedding(mask_zero=True)`),
            filled in by Keras; used where `sequence_mask` is not given.
        skip_padding: compute each step only for the rows still inside their
            sequence (the rows sorted longest first for the loops, and put
            back after them; `scan_over_time`'s `live_rows`): the same
            outputs and gradients with less work on a batch of mixed
            lengths. Dropout then draws its masks for the rows in that
            order (as random, not the same draws). TensorFlow without XLA
            only (the number of rows changes from step to step); other
            backends compute every row.

    Returns:
        `(outputs, final_state)`: top-layer outputs [B, T, n] and the flat
        tuple of final states after each row's last real step.
    """

    def __init__(
        self,
        units,
        num_layers=1,
        dropout=0.0,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.units = units
        self.num_layers = num_layers
        self.dropout = dropout
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(
            recurrent_initializer
        )
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.seed_generator = keras.random.SeedGenerator()

    def build(self, inputs_shape):
        # One attribute per weight (kernel_0, ...): TensorFlow checkpoints
        # follow attributes, not lists of variables held by a Keras 3 layer.
        input_size = inputs_shape[-1]
        for layer in range(self.num_layers):
            for name, shape, initializer in (
                (
                    "kernel",
                    (input_size, 4 * self.units),
                    self.kernel_initializer,
                ),
                (
                    "recurrent_kernel",
                    (self.units, 4 * self.units),
                    self.recurrent_initializer,
                ),
                ("bias", (4 * self.units,), self.bias_initializer),
            ):
                setattr(
                    self,
                    f"{name}_{layer}",
                    self.add_weight(
                        name=f"{name}_{layer}",
                        shape=shape,
                        initializer=initializer,
                    ),
                )
            input_size = self.units

    def _per_layer(self, name):
        return [getattr(self, f"{name}_{i}") for i in range(self.num_layers)]

    @property
    def kernels(self):
        """W of every layer, bottom first: [input size, 4n]."""
        return self._per_layer("kernel")

    @property
    def recurrent_kernels(self):
        """U of every layer: [n, 4n]."""
        return self._per_layer("recurrent_kernel")

    @property
    def biases(self):
        """b of every layer: [4n]."""
        return self._per_layer("bias")

    def zero_state(self, batch, dtype=None):
        """A flat tuple of 2L zero tensors [B, n]."""
        zeros = ops.zeros(
            (batch, self.units), dtype=dtype or self.compute_dtype
        )
        return (zeros,) * (2 * self.num_layers)

    def _drop(self, inputs, training):
        if training and self.dropout > 0:
            return keras.random.dropout(
                inputs, self.dropout, seed=self.seed_generator
            )
        return inputs

    def dropout_masks(self, batch, steps, input_size, training):
        """Scaled keep-masks, time-major [T, B, D_l], for each layer's input
        under `step`; None when dropout is off."""
        if not (training and self.dropout > 0):
            return None
        masks = []
        for layer in range(self.num_layers):
            size = input_size if layer == 0 else self.units
            ones = ops.ones((steps, batch, size), dtype=self.compute_dtype)
            masks.append(self._drop(ones, training))
        return tuple(masks)

    def read_weights(self):
        """`(kernels, recurrent_kernels, biases)`: W, U and b of every layer
        as tensors in the compute dtype, for `step` inside a loop over time
        (read there, each step would read and cast every variable again)."""
        return tuple(
            tuple(ops.cast(w, self.compute_dtype) for w in weights)
            for weights in (self.kernels, self.recurrent_kernels, self.biases)
        )

    def step(
        self, inputs, state, dropout_masks=None, weights=None, projected=None
    ):
        """Advances every layer one time step.

        Args:
            inputs: [B, D].
            state: flat tuple of 2L tensors.
            dropout_masks: one [B, D_l] mask per layer (from `dropout_masks`),
                or None.
            weights: `read_weights()`, read before a loop over time; None
                reads the variables here.
            projected: for input feeding, layer 1's W x + b [B, 4n] for a
                leading part of its input, computed for all time steps at
                once before the loop; `inputs` is then the rest of layer 1's
                input, and the first kernel of `weights` its rows of W.

        Returns:
            `(output, state)`: the top layer's h [B, n] and the new flat state.
        """
        kernels, recurrent_kernels, biases = weights or self.read_weights()
        new_state = []
        for layer in range(self.num_layers):
            if dropout_masks is not None:
                inputs = inputs * dropout_masks[layer]
            product = ops.matmul(inputs, kernels[layer])
            if layer == 0 and projected is not None:
                gate_inputs = projected + product
            else:
                gate_inputs = product + biases[layer]
            hidden, cell = lstm_step(
                gate_inputs,
                (state[2 * layer], state[2 * layer + 1]),
                recurrent_kernels[layer],
            )
            new_state += [hidden, cell]
            inputs = hidden
        return inputs, tuple(new_state)

    def call(
        self,
        inputs,
        sequence_mask=None,
        initial_state=None,
        training=None,
        mask=None,
        skip_padding=False,
    ):
        batch, steps = ops.shape(inputs)[0], ops.shape(inputs)[1]
        sequence_mask = mask if sequence_mask is None else sequence_mask
        if sequence_mask is None:
            sequence_mask = ops.ones((batch, steps), dtype="bool")
        if initial_state is None:
            initial_state = self.zero_state(batch)
        if skips_padding(skip_padding):
            states, final_state = with_rows_longest_first(
                lambda inputs, *initial, live_rows: self._states(
                    inputs, initial, training, live_rows=live_rows
                ),
                (inputs, *initial_state),
                sequence_mask,
            )
        else:
            states, final_state = self._states(
                inputs, initial_state, training, mask=sequence_mask
            )
        outputs = states * ops.cast(sequence_mask, states.dtype)[:, :, None]
        return outputs, final_state

    def _states(
        self, inputs, initial_state, training, mask=None, live_rows=None
    ):
        """The top layer's h_t of every step [B, T, n] (past a row's end, its
        last state) and the flat final state, with masked steps carrying the
        state over, or with the rows longest first and only `live_rows`
        stepped."""
        sequence = time_major(inputs)
        mask = None if live_rows is not None else time_major(mask)
        final_state = []
        for layer in range(self.num_layers):
            sequence = self._drop(sequence, training)
            projected = (
                ops.matmul(sequence, self.kernels[layer]) + self.biases[layer]
            )
            last, sequence = _layer_over_time(
                projected,
                (initial_state[2 * layer], initial_state[2 * layer + 1]),
                ops.cast(self.recurrent_kernels[layer], projected.dtype),
                mask,
                live_rows,
            )
            final_state += list(last)
        return time_major(sequence), tuple(final_state)

    def compute_mask(self, inputs, mask=None):
        return mask, None

    def compute_output_spec(
        self,
        inputs,
        sequence_mask=None,
        initial_state=None,
        training=None,
        mask=None,
        skip_padding=False,
    ):
        dtype = self.compute_dtype
        outputs = keras.KerasTensor(
            tuple(inputs.shape[:2]) + (self.units,), dtype=dtype
        )
        state = tuple(
            keras.KerasTensor((inputs.shape[0], self.units), dtype=dtype)
            for _ in range(2 * self.num_layers)
        )
        return outputs, state

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "num_layers": self.num_layers,
                "dropout": self.dropout,
                **initializer_config(
                    self,
                    "kernel_initializer",
                    "recurrent_initializer",
                    "bias_initializer",
                ),
            }
        )
        return config


def _layer_over_time(projected, initial, recurrent_kernel, mask, live_rows):
    """One layer's `lstm_step` over time, from its inputs' W x + b
    (time-major [T, B, 4n]): `(final (h, c), h of every step [T, B, n])`,
    a masked step (time-major `mask`) carrying the state over, or with
    `live_rows` only those rows stepped."""

    def layer_step(state, projected_t, *mask_t):
        new_state = lstm_step(projected_t, state, recurrent_kernel)
        if not mask_t:  # only the live rows step
            return new_state
        return tuple(
            ops.where(mask_t[0][:, None], new, old)
            for new, old in zip(new_state, state, strict=True)
        )

    sequences = (projected,) if mask is None else (projected, mask)
    last, (hidden, _) = scan_over_time(
        layer_step, initial, sequences, projected.dtype, live_rows=live_rows
    )
    return last, hidden
