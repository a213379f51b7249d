"""Padding masks and the masked softmax shared by the attention layers.

Id 0 is padding everywhere in the package. Masked scores are replaced by a
large negative number that fits the dtype (never `-inf`, which turns a fully
masked row into NaN), and the softmax is multiplied by the mask afterwards so
that masked positions get exactly zero weight.
"""

import keras
from keras import ops

from seq2seq_attn.serialization import register
from seq2seq_attn.special_tokens import PAD_ID


def large_negative(dtype):
    """A finite, very negative score that is safe in `dtype`."""
    if keras.backend.standardize_dtype(dtype) == "float16":
        return -65000.0
    return -1.0e9


def masked_softmax(scores, mask=None):
    """Softmax over the last axis that gives exactly 0 where `mask` is False.

    Args:
        scores: float tensor [..., T].
        mask: boolean tensor broadcastable to `scores`, or None.

    Returns:
        Weights of the shape of `scores`; each row sums to 1 over its unmasked
        positions, and is all zeros if every position is masked.
    """
    if mask is None:
        return ops.softmax(scores, axis=-1)
    mask = ops.cast(mask, "bool")
    scores = ops.where(mask, scores, large_negative(scores.dtype))
    weights = ops.softmax(scores, axis=-1)
    return weights * ops.cast(mask, weights.dtype)


def sequence_lengths(mask):
    """Number of True positions per row of a boolean mask [B, T], as int32."""
    return ops.sum(ops.cast(mask, "int32"), axis=-1)


@register
class PaddingMask(keras.layers.Layer):
    """Boolean mask of the non-padding positions of an id tensor (`PAD_ID`).

    Call arguments:
        ids: integer tensor [B, T].

    Returns:
        Boolean tensor [B, T], True on real tokens.
    """

    def call(self, ids):
        return ops.not_equal(ids, PAD_ID)

    def compute_output_spec(self, ids):
        return keras.KerasTensor(ids.shape, dtype="bool")


@register
class RealPositions(keras.layers.Layer):
    """The real (unpadded) positions of a batch of sequences, as rows.

    The position-wise layers after the recurrence (the deep output, the
    vocabulary projection, and the loss after them) would otherwise spend
    their work on padding too: a quarter of Multi30k's target positions, even
    with batches sorted by length. Training packs their inputs with this
    layer, and the targets with the same mask. How many rows come out
    depends on the mask's values, so the layer does not trace under XLA or
    `jax.jit`.

    Call arguments:
        inputs: tensor [B, T, ...].
        mask: boolean tensor [B, T]; True on real positions.

    Returns:
        [N, ...]: the positions where `mask` is True, in row-major order (the
        order of `tf.boolean_mask(inputs, mask)`).
    """

    def call(self, inputs, mask):
        rows = ops.nonzero(ops.reshape(mask, (-1,)))[0]
        flat = ops.reshape(inputs, (-1,) + tuple(ops.shape(inputs)[2:]))
        return ops.take(flat, rows, axis=0)

    def compute_output_spec(self, inputs, mask):
        return keras.KerasTensor((None,) + inputs.shape[2:], inputs.dtype)


@register
class ReverseSequence(keras.layers.Layer):
    """Reverses the real (unpadded) part of each row, leaving padding in place.

    Source reversal of Sutskever et al. (2014), as used by Luong et al. (2015,
    Table 1): `[a, b, c, 0, 0]` becomes `[c, b, a, 0, 0]`. Applying it twice
    gives the input back, so it also undoes itself on encoder outputs.

    Call arguments:
        inputs: tensor [B, T, ...].
        mask: boolean tensor [B, T]; True on real positions, which must come
            before the padding.

    Returns:
        A tensor of the shape of `inputs`.
    """

    def call(self, inputs, mask):
        lengths = sequence_lengths(mask)
        positions = ops.arange(ops.shape(mask)[1], dtype="int32")
        reversed_positions = lengths[:, None] - 1 - positions[None, :]
        index = ops.where(mask, reversed_positions, positions[None, :])
        while len(index.shape) < len(inputs.shape):
            index = ops.expand_dims(index, -1)
        index = ops.broadcast_to(index, ops.shape(inputs))
        return ops.take_along_axis(inputs, index, axis=1)

    def compute_output_spec(self, inputs, mask):
        return keras.KerasTensor(inputs.shape, dtype=inputs.dtype)
