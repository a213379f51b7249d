import numpy as np

from seq2seq_attn.layers import (
    PaddingMask,
    RealPositions,
    ReverseSequence,
    masked_softmax,
)


def test_reverse_sequence_reverses_real_tokens_only():
    ids = np.array(
        [[5, 6, 7, 0, 0], [8, 9, 10, 11, 12], [4, 0, 0, 0, 0]], "int32"
    )
    mask = PaddingMask()(ids)
    reversed_ids = np.asarray(ReverseSequence()(ids, mask))
    np.testing.assert_array_equal(
        reversed_ids, [[7, 6, 5, 0, 0], [12, 11, 10, 9, 8], [4, 0, 0, 0, 0]]
    )
    again = np.asarray(ReverseSequence()(reversed_ids, mask))
    np.testing.assert_array_equal(again, ids)


def test_masked_softmax_is_exactly_zero_where_masked():
    scores = np.array([[3.0, 1.0, 50.0], [0.0, 0.0, 0.0]], "float32")
    mask = np.array([[True, True, False], [False, False, False]])
    weights = np.asarray(masked_softmax(scores, mask))
    assert weights[0, 2] == 0.0
    np.testing.assert_allclose(weights[0].sum(), 1.0, atol=1e-6)
    assert np.all(weights[1] == 0.0)
    assert np.all(np.isfinite(weights))


def test_real_positions_packs_rows_in_row_major_order():
    import tensorflow as tf

    ids = np.array([[5, 6, 0, 0], [0, 0, 0, 0], [7, 8, 9, 10]], "int32")
    values = np.arange(3 * 4 * 2, dtype="float32").reshape(3, 4, 2)
    mask = PaddingMask()(ids)
    packed = np.asarray(RealPositions()(values, mask))
    np.testing.assert_array_equal(packed, values[ids != 0])
    assert packed.shape == (6, 2)
    # Gradients flow back to the real positions only.
    values = tf.constant(values)
    with tf.GradientTape() as tape:
        tape.watch(values)
        total = tf.reduce_sum(RealPositions()(values, mask))
    gradient = np.asarray(tape.gradient(total, values))
    np.testing.assert_array_equal(gradient[..., 0], ids != 0)
