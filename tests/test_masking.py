import numpy as np

from seq2seq_attn.layers import PaddingMask, ReverseSequence, masked_softmax


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


def test_on_real_positions_computes_real_rows_only(rng):
    import tensorflow as tf

    from seq2seq_attn.layers.masking import on_real_positions

    mask = np.array([[True, True, False], [True, False, False]])
    x = tf.constant(rng.normal(size=(2, 3, 4)).astype("float32"))
    kernel = tf.constant(rng.normal(size=(4, 5)).astype("float32"))
    seen_rows = []

    def project(rows):
        seen_rows.append(rows.shape[0])
        return tf.tanh(rows @ kernel)

    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        packed = on_real_positions(project, mask, x)
        full = tf.tanh(x @ kernel)
        weights = tf.constant(rng.normal(size=(2, 3, 5)).astype("float32"))
        packed_objective = tf.reduce_sum(packed * weights)
        full_objective = tf.reduce_sum(
            tf.where(mask[..., None], full * weights, 0.0)
        )
    assert seen_rows == [3]  # the three real positions, not all six
    assert packed.shape == (2, 3, 5)
    np.testing.assert_allclose(packed.numpy()[mask], full.numpy()[mask])
    assert np.all(packed.numpy()[~mask] == 0.0)
    packed_gradient = tape.gradient(packed_objective, x).numpy()
    full_gradient = tape.gradient(full_objective, x).numpy()
    np.testing.assert_allclose(packed_gradient, full_gradient, atol=1e-6)
    assert np.all(packed_gradient[~mask] == 0.0)
