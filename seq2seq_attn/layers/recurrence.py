"""`scan_over_time`: the recurrences' loop over time steps.

A thin wrapper of `keras.ops.scan` that takes several time-major sequences
and hands each step its slices. The sequences are packed into one tensor for
the scan, because the TensorFlow backend of Keras (3.x up to at least 3.15)
fails to trace `ops.scan` over several sequences whose length is unknown
until run time, which is always the case under `tf.data`.
"""

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

    def packed_step(carry, packed_t):
        slices, start = [], 0
        for width, is_bool, squeeze in layout:
            piece = packed_t[:, start : start + width]
            start += width
            if squeeze:
                piece = piece[:, 0]
            if is_bool:
                piece = piece > 0.5
            slices.append(piece)
        new_carry = step(carry, *slices)
        return new_carry, new_carry

    return ops.scan(packed_step, initial, packed, reverse=reverse)
