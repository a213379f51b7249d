"""`scan_over_time`: the recurrences' loop over time steps.

A thin wrapper of `keras.ops.scan` (under TensorFlow, of a `tf.while_loop`
bounded by the sequence length, which XLA needs) that takes several
time-major sequences and hands each step its slices. The sequences are
packed into one tensor for the scan, because the TensorFlow backend of Keras
(3.x up to at least 3.15) fails to trace `ops.scan` over several sequences
whose length is unknown until run time, which is always the case under
`tf.data`.
"""

import keras
import numpy as np
from keras import ops


def swap_batch_and_time(tensor):
    """[B, T, ...] to [T, B, ...] and back (the swap is its own inverse)."""
    return ops.swapaxes(tensor, 0, 1)


def scan_over_time(step, initial, sequences, dtype, reverse=False):
    """Runs `carry = step(carry, *slices)` over the time axis.

    Args:
        step: `step(carry, *slices) -> carry`; each slice is one time step
            [B, D_i] of a sequence (boolean sequences come back boolean).
            The carry is also what is stacked as the output.
        initial: the carry before the first step (a tensor or a tuple).
        sequences: time-major tensors [T, B, D_i] (or [T, B] booleans), whose
            last dimension is known.
        dtype: the float dtype to pack the sequences in.
        reverse: run from the last time step to the first (the stacked
            outputs stay in time order).

    Returns:
        `(last_carry, stacked)`: stacked has a leading time axis on each
        element of the carry.
    """
    pieces, layout = [], []
    for sequence in sequences:
        is_bool = sequence.dtype == "bool"
        if len(sequence.shape) == 2:
            sequence = sequence[:, :, None]
            squeeze = True
        else:
            squeeze = False
        pieces.append(ops.cast(sequence, dtype))
        layout.append((sequence.shape[-1], is_bool, squeeze))
    packed = ops.concatenate(pieces, axis=-1) if len(pieces) > 1 else pieces[0]

    # Split, not sliced, for the cheaper gradient (see `gru_step`).
    boundaries = np.cumsum([width for width, _, _ in layout])[:-1].tolist()

    def step_of_packed(carry, packed_t):
        slices = []
        pieces = (
            ops.split(packed_t, boundaries, axis=-1)
            if boundaries
            else [packed_t]
        )
        for piece, (_, is_bool, squeeze) in zip(pieces, layout, strict=True):
            if squeeze:
                piece = ops.squeeze(piece, -1)
            if is_bool:
                piece = piece > 0.5
            slices.append(piece)
        return step(carry, *slices)

    def packed_step(carry, packed_t):
        new_carry = step_of_packed(carry, packed_t)
        return new_carry, new_carry

    if keras.backend.backend() == "tensorflow":
        return _bounded_tf_scan(step_of_packed, initial, packed, reverse)
    return ops.scan(packed_step, initial, packed, reverse=reverse)


def _bounded_tf_scan(step, initial, packed, reverse):
    """`ops.scan` for TensorFlow, with the while loop bounded by the number
    of time steps (`maximum_iterations`): XLA needs the bound to compile the
    gradient (`--jit_compile`), and Keras's `ops.scan` does not set it."""
    import tensorflow as tf

    steps = tf.shape(packed)[0]
    # Read through a TensorArray, not tf.gather: the gradient of a gather
    # per step is a sparse update per step (1.10x slower training step).
    inputs = tf.TensorArray(
        packed.dtype, size=steps, element_shape=packed.shape[1:]
    ).unstack(packed)
    outputs = tf.nest.map_structure(
        lambda c: tf.TensorArray(c.dtype, size=steps, element_shape=c.shape),
        initial,
    )

    def body(i, carry, outputs):
        t = steps - 1 - i if reverse else i
        carry = step(carry, inputs.read(t))
        outputs = tf.nest.map_structure(
            lambda array, c: array.write(t, c), outputs, carry
        )
        return i + 1, carry, outputs

    _, carry, outputs = tf.while_loop(
        lambda i, *_: i < steps,
        body,
        (tf.constant(0), initial, outputs),
        maximum_iterations=steps,
    )
    return carry, tf.nest.map_structure(lambda array: array.stack(), outputs)
