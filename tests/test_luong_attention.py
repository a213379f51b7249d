import itertools

import numpy as np
import numpy_reference as ref
import pytest

from seq2seq_attn.layers import LuongAttention
from seq2seq_attn.layers.luong_attention import MODES, SCORES

pytestmark = pytest.mark.both_ends  # the layers against NumPy

CASES = list(itertools.product(SCORES, MODES))
LENGTHS = [9, 4, 1]
WINDOW = 2


def _weights(layer):
    return {w.name: np.asarray(w) for w in layer.weights}


@pytest.fixture
def inputs(rng):
    value = rng.normal(size=(3, 9, 6)).astype("float32")
    mask = np.arange(9)[None, :] < np.array(LENGTHS)[:, None]
    query = rng.normal(size=(3, 5, 6)).astype("float32")
    return query, value, mask


def _layer(score, mode):
    return LuongAttention(
        score=score, mode=mode, window=WINDOW, units=5, max_source_length=12
    )


@pytest.mark.parametrize("score,mode", CASES)
def test_matches_equations(score, mode, inputs):
    query, value, mask = inputs
    layer = _layer(score, mode)
    context, alignment = layer(query, value, value_mask=mask)
    weights = _weights(layer)
    for b, length in enumerate(LENGTHS):
        for t in range(query.shape[1]):
            c, a, p_t = ref.luong_attention(
                score, mode, WINDOW, query[b, t], value[b, :length], t, weights
            )
            got = np.asarray(alignment)[b, t]
            np.testing.assert_allclose(got[:length], a, atol=1e-5)
            assert np.all(got[length:] == 0.0)
            np.testing.assert_allclose(np.asarray(context)[b, t], c, atol=1e-5)
            if mode == "local-p":
                assert 0.0 <= p_t <= length


@pytest.mark.parametrize("score,mode", CASES)
def test_single_step_with_position_equals_all_steps(score, mode, inputs):
    """Also with the weights read once, as a loop over time passes them."""
    query, value, mask = inputs
    layer = _layer(score, mode)
    context, alignment = layer(query, value, value_mask=mask)
    keys = layer.project_keys(value)
    # As a loop over time calls it: the weights read once, before the loop.
    read_once = layer.read_query_weights(value.shape[1])
    if score == "location":
        assert tuple(read_once["location_kernel"].shape) == (6, 9)
    for t in range(query.shape[1]):
        for query_weights in (None, read_once):
            c_t, a_t = layer(
                query[:, t],
                value,
                value_mask=mask,
                position=t,
                keys=keys,
                query_weights=query_weights,
            )
            np.testing.assert_allclose(
                np.asarray(a_t), np.asarray(alignment)[:, t], atol=1e-6
            )
            np.testing.assert_allclose(
                np.asarray(c_t), np.asarray(context)[:, t], atol=1e-6
            )


@pytest.mark.parametrize("mode", ["local-m", "local-p"])
def test_local_weights_vanish_outside_window(mode, inputs):
    query, value, mask = inputs
    layer = _layer("general", mode)
    _, alignment = layer(query, value, value_mask=mask)
    alignment = np.asarray(alignment)
    positions = np.arange(9)
    if mode == "local-m":
        centres = np.broadcast_to(np.arange(5)[None, :], (3, 5)).astype(
            "float32"
        )
    else:
        centres = np.asarray(layer.predicted_position(query, mask))
        assert np.all(centres >= 0.0)
        assert np.all(centres <= np.array(LENGTHS)[:, None])
    outside = np.abs(positions[None, None, :] - centres[:, :, None]) > WINDOW
    assert np.all(alignment[outside] == 0.0)
    if mode == "local-m":
        inside = ~outside & mask[:, None, :]
        rows = inside.any(-1)
        np.testing.assert_allclose(alignment.sum(-1)[rows], 1.0, atol=1e-5)
    else:
        assert np.all(alignment.sum(-1) <= 1.0 + 1e-6)


@pytest.mark.parametrize("score,mode", CASES)
def test_padding_invariance(score, mode, rng, inputs):
    query, value, mask = inputs
    layer = _layer(score, mode)
    context, alignment = layer(query, value, value_mask=mask)
    padded_value = np.concatenate(
        [value, rng.normal(size=(3, 3, 6))], 1
    ).astype("float32")
    padded_mask = np.concatenate([mask, np.zeros((3, 3), bool)], axis=1)
    context2, alignment2 = layer(query, padded_value, value_mask=padded_mask)
    np.testing.assert_allclose(
        np.asarray(context2), np.asarray(context), atol=1e-5
    )
    np.testing.assert_allclose(
        np.asarray(alignment2)[..., :9], np.asarray(alignment), atol=1e-6
    )
    assert np.all(np.asarray(alignment2)[..., 9:] == 0.0)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="score must be one of"):
        LuongAttention(score="cosine")
    with pytest.raises(ValueError, match="mode must be one of"):
        LuongAttention(mode="local")
    with pytest.raises(ValueError, match="max_source_length"):
        LuongAttention(score="location")
    with pytest.raises(ValueError, match="one size"):
        LuongAttention(score="dot")(np.zeros((1, 3)), np.zeros((1, 2, 4)))
