import numpy as np
import numpy_reference as ref
import pytest

from seq2seq_attn.layers import BahdanauAttention

pytestmark = pytest.mark.both_ends  # the layers against NumPy


def _weights(layer):
    return (
        np.asarray(layer.query_kernel),
        np.asarray(layer.key_kernel),
        np.asarray(layer.bias),
        np.asarray(layer.score_vector),
    )


@pytest.fixture
def inputs(rng):
    lengths = [5, 3, 1]
    value = rng.normal(size=(3, 5, 6)).astype("float32")
    mask = np.arange(5)[None, :] < np.array(lengths)[:, None]
    return value, mask, lengths


def test_matches_equation_one_step(rng, inputs):
    value, mask, lengths = inputs
    layer = BahdanauAttention(4, bias_initializer="random_normal")
    query = rng.normal(size=(3, 7)).astype("float32")
    context, alignment = layer(query, value, value_mask=mask)
    for b, length in enumerate(lengths):
        c, alpha = ref.bahdanau_attention(
            query[b], value[b, :length], *_weights(layer)
        )
        np.testing.assert_allclose(
            np.asarray(alignment)[b, :length], alpha, atol=1e-5
        )
        np.testing.assert_allclose(np.asarray(context)[b], c, atol=1e-5)
        assert np.all(np.asarray(alignment)[b, length:] == 0.0)
        assert abs(np.asarray(alignment)[b].sum() - 1.0) < 1e-5


def test_all_steps_equal_single_steps_and_precomputed_keys(rng, inputs):
    value, mask, _ = inputs
    layer = BahdanauAttention(4)
    queries = rng.normal(size=(3, 4, 7)).astype("float32")
    context, alignment = layer(queries, value, value_mask=mask)
    keys = layer.project_keys(value)
    for t in range(4):
        c_t, a_t = layer(queries[:, t], value, value_mask=mask, keys=keys)
        np.testing.assert_allclose(
            np.asarray(c_t), np.asarray(context)[:, t], atol=1e-6
        )
        np.testing.assert_allclose(
            np.asarray(a_t), np.asarray(alignment)[:, t], atol=1e-6
        )


def test_padding_invariance(rng, inputs):
    value, mask, _ = inputs
    layer = BahdanauAttention(4, bias_initializer="random_normal")
    query = rng.normal(size=(3, 2, 7)).astype("float32")
    context, alignment = layer(query, value, value_mask=mask)
    padded_value = np.concatenate(
        [value, rng.normal(size=(3, 4, 6)).astype("float32")], axis=1
    )
    padded_mask = np.concatenate([mask, np.zeros((3, 4), bool)], axis=1)
    context2, alignment2 = layer(query, padded_value, value_mask=padded_mask)
    np.testing.assert_allclose(
        np.asarray(context2), np.asarray(context), atol=1e-6
    )
    np.testing.assert_allclose(
        np.asarray(alignment2)[:, :, :5], np.asarray(alignment), atol=1e-6
    )
    assert np.all(np.asarray(alignment2)[:, :, 5:] == 0.0)


def test_config_round_trip(rng, inputs):
    value, mask, _ = inputs
    layer = BahdanauAttention(4, use_bias=False, name="attention")
    query = rng.normal(size=(3, 7)).astype("float32")
    expected = layer(query, value, value_mask=mask)
    clone = BahdanauAttention.from_config(layer.get_config())
    clone.build((3, 7), value.shape)
    clone.set_weights(layer.get_weights())
    got = clone(query, value, value_mask=mask)
    for a, b in zip(expected, got, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
