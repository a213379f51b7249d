"""`scan_over_time`: the recurrences' loop over time steps.

A thin wrapper of `keras.ops.scan` (under TensorFlow, of a `tf.while_loop`
bounded by the sequence length, which XLA needs) that takes several
time-major sequences and hands each step its slices. The sequences are
packed into one tensor for the scan, because the TensorFlow backend of Keras
(3.x up to at least 3.15) fails to trace `ops.scan` over several sequences
whose length is unknown until run time, which is always the case under
`tf.data`.

Padding can be skipped: with the rows ordered longest first
(`with_rows_longest_first`), the rows still inside their sequence at a step are
the first ones, and each step computes only those (`live_rows`) while the
others keep their carry, as a masked step would.
"""

import keras
import numpy as np
from keras import ops

from seq2seq_attn.layers.masking import sequence_lengths


def swap_batch_and_time(tensor):
    """[B, T, ...] to [T, B, ...] and back (the swap is its own inverse)."""
    return ops.swapaxes(tensor, 0, 1)


def skips_padding(skip_padding):
    """Whether a layer's `skip_padding=True` applies: on TensorFlow, whose
    loop can step a different number of rows each time (not under XLA)."""
    return bool(skip_padding) and keras.backend.backend() == "tensorflow"


def with_rows_longest_first(loop, rows, mask):
    """`loop(*rows, live_rows=...)` with the rows ordered longest first.

    Args:
        loop: returns a structure of batch-major tensors [B, ...] from
            `rows` and `live_rows`, int32 [T], how many rows are still
            inside their sequence at each step (in this order, the first
            ones), for `scan_over_time`.
        rows: tensors with the batch as first axis.
        mask: boolean [B, T], True on real positions, which come first in
            each row.

    Returns:
        The loop's outputs, back in the batch's order.
    """
    lengths = sequence_lengths(mask)
    order = ops.argsort(-lengths)
    steps = ops.arange(ops.shape(mask)[1], dtype="int32")
    live_rows = ops.sum(
        ops.cast(lengths[None, :] > steps[:, None], "int32"), axis=1
    )
    outputs = loop(
        *(ops.take(row, order, axis=0) for row in rows), live_rows=live_rows
    )
    restore = ops.argsort(order)
    return keras.tree.map_structure(
        lambda output: ops.take(output, restore, axis=0), outputs
    )


def scan_over_time(
    step,
    initial,
    sequences,
    dtype,
    reverse=False,
    constants=(),
    live_rows=None,
):
    """Runs `carry = step(carry, *slices, *constants)` over the time axis.

    Args:
        step: `step(carry, *slices, *constants) -> carry`; each slice is one
            time step [B, D_i] of a sequence (boolean sequences come back
            boolean). The carry is also what is stacked as the output.
        initial: the carry before the first step (a tensor or a tuple).
        sequences: time-major tensors [T, B, D_i] (or [T, B] booleans), whose
            last dimension is known.
        dtype: the float dtype to pack the sequences in.
        reverse: run from the last time step to the first (the stacked
            outputs stay in time order).
        constants: tensors with the batch as first axis that every step
            reads (the annotations, say).
        live_rows: int32 [T] from `with_rows_longest_first`, with the rows
            in its order: step t then computes only the first
            `live_rows[t]` rows (of the carry, the slices and the
            constants) and the other rows keep their carry. The number
            of rows changes from step to step, so this is for TensorFlow
            without XLA only.

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

    def step_of_packed(carry, packed_t, *constants):
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
        return step(carry, *slices, *constants)

    def packed_step(carry, packed_t):
        new_carry = step_of_packed(carry, packed_t, *constants)
        return new_carry, new_carry

    if keras.backend.backend() == "tensorflow":
        return _bounded_tf_scan(
            step_of_packed, initial, packed, reverse, constants, live_rows
        )
    if live_rows is not None:
        raise ValueError("live_rows needs the TensorFlow backend")
    return ops.scan(packed_step, initial, packed, reverse=reverse)


def _bounded_tf_scan(step, initial, packed, reverse, constants, live_rows):
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
        if live_rows is None:
            carry = step(carry, inputs.read(t), *constants)
        else:
            carry = _step_first_rows(
                step, carry, inputs.read(t), constants, live_rows[t]
            )
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


def _step_first_rows(step, carry, packed_t, constants, live):
    """`step` on the first `live` rows; the other rows keep their carry.

    Split, not sliced, for the cheaper gradient (see `gru_step`); the carry
    keeps its static shape for the while loop."""
    import tensorflow as tf

    sizes = tf.stack([live, tf.shape(packed_t)[0] - live])

    def first_rows(tensor):
        return tf.split(tensor, sizes, num=2)[0]

    flat_carry = tf.nest.flatten(carry)
    parts = [tf.split(c, sizes, num=2) for c in flat_carry]
    new_carry = step(
        tf.nest.pack_sequence_as(carry, [live_part for live_part, _ in parts]),
        first_rows(packed_t),
        *[first_rows(c) for c in constants],
    )
    merged = []
    for new, (_, rest), old in zip(
        tf.nest.flatten(new_carry), parts, flat_carry, strict=True
    ):
        new = tf.concat([new, rest], axis=0)
        new.set_shape(old.shape)
        merged.append(new)
    return tf.nest.pack_sequence_as(carry, merged)
